// Command hello is the smallest Go program serving its own graph with an
// embedded Weft server: `go run ./examples/hello`, then
//
//	curl -s localhost:8123/runs/wait -H 'content-type: application/json' \
//	  -d '{"assistant_id":"hello","input":{"name":"Ada"}}'
//
// answers {"name":"Ada","greeting":"Hello, Ada!"}.
package main

import (
	"context"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/weft"
)

func main() {
	graphs := graph.NewRegistry()
	err := graphs.Register(&graph.Graph{
		ID:       "hello",
		Channels: []graph.Channel{{Name: "name"}, {Name: "greeting"}},
		Nodes: []graph.Node{{Name: "greet", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
			name, _ := in.Values["name"].(string)
			return graph.State{"greeting": "Hello, " + name + "!"}, nil
		}}},
		Edges: []graph.Edge{{From: graph.START, To: "greet"}},
	})
	if err != nil {
		panic(err)
	}
	weft.Main(graphs) // flags and env as the weft binary: WEFT_ADDR, DATABASE_URL, ...
}
