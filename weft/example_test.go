package weft_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/weft"
)

// shoutGraphs is a registry with one Go graph, "shout": its node upper-cases
// the input's text.
func shoutGraphs() *graph.Registry {
	graphs := graph.NewRegistry()
	err := graphs.Register(&graph.Graph{
		ID:       "shout",
		Channels: []graph.Channel{{Name: "text"}},
		Nodes: []graph.Node{{Name: "up", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
			s, _ := in.Values["text"].(string)
			return graph.State{"text": strings.ToUpper(s) + "!"}, nil
		}}},
		Edges: []graph.Edge{{From: graph.START, To: "up"}},
	})
	if err != nil {
		panic(err)
	}
	return graphs
}

// A Go program embeds the whole server and serves its own graph over the
// LangGraph Agent Server API: each graph gets a system assistant named after
// it, so a client (an official SDK, or curl) runs it at once:
//
//	curl -s $URL/runs/wait -H 'content-type: application/json' \
//	  -d '{"assistant_id":"shout","input":{"text":"hi"}}'
//
// answers {"text":"HI!"}. With DATABASE_URL empty, the server runs a managed
// PostgreSQL under ./.weft.
func ExampleStart() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := weft.Start(ctx, shoutGraphs(), weft.Options{
		Addr:        "127.0.0.1:0", // a free port: see srv.URL()
		DatabaseURL: os.Getenv("DATABASE_URL"),
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("serving the shout graph at", srv.URL())
	select {
	case <-ctx.Done(): // SIGINT or SIGTERM
	case err := <-srv.Done(): // the server stopped on its own
		log.Print(err)
	}
	// Drain requests; runs in progress go back to the queue and resume at
	// the next start.
	if err := srv.Shutdown(context.Background()); err != nil {
		log.Fatal(err)
	}
}

// A Go program serves its graph as a worker of a Weft server running
// elsewhere (started with -workers 0, or serving other graphs): it registers
// the graph there and executes its runs, while the server keeps threads,
// runs and streams. A server with WEFT_AUTH=keys takes the worker's runs
// only with a key of the worker scope (weft keys create --scope worker).
func ExampleRunWorker() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := weft.RunWorker(ctx, "http://127.0.0.1:8123", shoutGraphs(), weft.WorkerOptions{
		APIKey:      os.Getenv("WEFT_API_KEY"), // "" for a server without auth
		Concurrency: 4,                         // runs at once
	})
	// On SIGINT or SIGTERM RunWorker stops the runs in progress at their
	// current step, gives them back to the queue and returns nil.
	if err != nil {
		log.Fatal(err)
	}
}
