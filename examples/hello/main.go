// Command hello is the smallest Go program serving its own graph with an
// embedded Weft server: `go run ./examples/hello`, then
//
//	curl -s localhost:8123/runs/wait -H 'content-type: application/json' \
//	  -d '{"assistant_id":"hello","input":{"name":"Ada"}}'
//
// answers {"name":"Ada","greeting":"Hello, Ada!"}.
//
// With WEFT_URL set it is a worker of a Weft server running elsewhere
// instead: it registers the graph there and executes its runs, while the
// server keeps threads, runs and streams (start the server with
// -workers 0, or serving other graphs):
//
//	WEFT_URL=http://localhost:8123 go run ./examples/hello
package main

import (
	"context"
	"os"

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
	if os.Getenv("WEFT_URL") != "" {
		weft.WorkerMain(graphs) // WEFT_URL, WEFT_WORKER_ID, WEFT_WORKER_CONCURRENCY
	}
	weft.Main(graphs) // flags and env as the weft binary: WEFT_ADDR, DATABASE_URL, ...
}
