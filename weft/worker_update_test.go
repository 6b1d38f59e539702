package weft

import (
	"context"
	"net/http"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/weftdev/weft/graph"
)

// update_state on a thread of a Go worker's graph is applied by the worker
// with the graph's reducers and edges, without running the graph: before,
// the worker took the update's run for an ordinary one and executed the
// thread's pending nodes (an interrupted thread re-ran its interrupting
// node), and update_state answered 409. Found by cmd/weft-soak.
func TestWorkerUpdateState(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	var ranA, ranAsk atomic.Int32
	g := &graph.Graph{ID: "go_upd",
		Channels: []graph.Channel{{Name: "log", Kind: graph.Append, Default: []any{}}, {Name: "approved"}},
		Nodes: []graph.Node{
			{Name: "a", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
				ranA.Add(1)
				return graph.State{"log": []any{"a"}}, nil
			}},
			{Name: "ask", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
				ranAsk.Add(1)
				r, err := in.Interrupt("ok?")
				if err != nil {
					return nil, err
				}
				return graph.State{"approved": r}, nil
			}},
		},
		Edges: []graph.Edge{{From: graph.START, To: "a"}, {From: "a", To: "ask"}, {From: "ask", To: graph.END}}}
	startWorker(t, srv, registry(t, g), WorkerOptions{WorkerID: "go-upd"})
	tid := srv.Must(200, "POST", "/threads", map[string]any{}).Map(t)["thread_id"].(string)
	srv.Must(200, "POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "go_upd", "input": map[string]any{"log": []any{"in"}}})
	if ranA.Load() != 1 || ranAsk.Load() != 1 {
		t.Fatalf("before the update: a ran %d times, ask %d", ranA.Load(), ranAsk.Load())
	}

	up := srv.Must(200, "POST", "/threads/"+tid+"/state", map[string]any{"values": map[string]any{"log": []any{"edit"}}}).Map(t)
	if up["checkpoint"] == nil && up["checkpoint_id"] == nil {
		t.Fatalf("update_state answered %v", up)
	}
	st := srv.Must(200, "GET", "/threads/"+tid+"/state", nil).Map(t)
	values := st["values"].(map[string]any)
	if !reflect.DeepEqual(values["log"], []any{"in", "a", "edit"}) {
		t.Fatalf("log after the update = %v, want the reducer's [in a edit]", values["log"])
	}
	if !reflect.DeepEqual(st["next"], []any{"ask"}) {
		t.Fatalf("next after an update as a = %v, want [ask]", st["next"])
	}
	if ranA.Load() != 1 || ranAsk.Load() != 1 {
		t.Fatalf("the update ran the graph: a ran %d times, ask %d", ranA.Load(), ranAsk.Load())
	}
	var runs []map[string]any
	srv.Must(200, "GET", "/threads/"+tid+"/runs", nil).JSON(t, &runs)
	if len(runs) != 1 {
		t.Fatalf("%d runs after the update, want the first only (the update's run is deleted)", len(runs))
	}

	// LangGraph's refusals are a 400 with the message, and change nothing.
	r := srv.Do("POST", "/threads/"+tid+"/state", map[string]any{"values": map[string]any{"log": []any{"x"}}, "as_node": "nope"})
	if r.Status != http.StatusBadRequest {
		t.Fatalf("update as an unknown node: %d %s", r.Status, r.Body)
	}

}
