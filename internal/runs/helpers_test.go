package runs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/builtin"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// calls counts node executions of the test graphs, keyed by "<tag>:<node>"
// (each test uses its own tag), and failB says how many more times node b
// of "fan" fails for a tag.
var (
	callsMu sync.Mutex
	calls   = map[string]int{}
	failB   = map[string]int{}
)

func count(key string) int {
	callsMu.Lock()
	defer callsMu.Unlock()
	return calls[key]
}

func tagOf(in graph.NodeInput) string { s, _ := in.Values["tag"].(string); return s }

// testGraphs are the built-in graphs plus:
//
//	fan:  START → a, b (in parallel) → join; each appends its name to log
//	      and streams {"node": name} as custom data; b fails while failB[tag] > 0.
//	loop: START → inc → inc → … (n+1 each time) until n reaches 1000.
func testGraphs() *graph.Registry {
	r := builtin.Graphs()
	node := func(name string) graph.NodeFunc {
		return func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
			tag := tagOf(in)
			in.Custom(map[string]any{"node": name})
			callsMu.Lock()
			calls[tag+":"+name]++
			fail := name == "b" && failB[tag] > 0
			if fail {
				failB[tag]--
			}
			callsMu.Unlock()
			if fail {
				return nil, errors.New("b failed on purpose")
			}
			return graph.State{"log": []any{name}}, nil
		}
	}
	must := func(g *graph.Graph) {
		if err := r.Register(g); err != nil {
			panic(err)
		}
	}
	must(&graph.Graph{
		ID:       "fan",
		Channels: []graph.Channel{{Name: "tag"}, {Name: "log", Kind: graph.Append, Default: []any{}}},
		Nodes:    []graph.Node{{Name: "a", Func: node("a")}, {Name: "b", Func: node("b")}, {Name: "join", Func: node("join")}},
		Edges: []graph.Edge{{From: graph.START, To: "a"}, {From: graph.START, To: "b"},
			{From: "a", To: "join"}, {From: "b", To: "join"}, {From: "join", To: graph.END}},
	})
	must(&graph.Graph{
		ID:       "loop",
		Channels: []graph.Channel{{Name: "n", Default: float64(0)}},
		Nodes: []graph.Node{{Name: "inc", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
			return graph.State{"n": number(in.Values["n"]) + 1}, nil
		}}},
		Edges: []graph.Edge{{From: graph.START, To: "inc"}, {From: "inc", Targets: []string{"inc", graph.END},
			Route: func(v graph.State) ([]string, error) {
				if number(v["n"]) >= 1000 {
					return []string{graph.END}, nil
				}
				return []string{"inc"}, nil
			}}},
	})
	// cfg: START → see; see (a Command node, Ends after and END) writes
	// what it sees of the run and goes to configurable.goto when set
	// ("after" or "__end__"); after appends "after" to log.
	must(&graph.Graph{
		ID:       "cfg",
		Channels: []graph.Channel{{Name: "seen"}, {Name: "log", Kind: graph.Append, Default: []any{}}},
		Nodes: []graph.Node{
			{Name: "see", Ends: []string{"after", graph.END}, Command: func(ctx context.Context, in graph.NodeInput) (graph.Command, error) {
				var gotoNodes []string
				if to, _ := in.Configurable()["goto"].(string); to != "" {
					gotoNodes = []string{to}
				}
				return graph.Command{Update: graph.State{"seen": map[string]any{
					"configurable": in.Configurable(), "tags": in.Config["tags"], "context": in.Context,
					"run_id": in.Run.RunID, "thread_id": in.Run.ThreadID, "assistant_id": in.Run.AssistantID,
					"graph_id": in.Run.GraphID, "node": in.Run.Node, "step": in.Run.Step,
				}}, Goto: gotoNodes}, nil
			}},
			{Name: "after", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
				return graph.State{"log": []any{"after"}}, nil
			}},
		},
		Edges: []graph.Edge{{From: graph.START, To: "see"}},
	})
	// parask: START → asker, slow (in parallel); asker interrupts at once,
	// slow returns after 300 ms, so the asker's interrupt is committed on
	// its own before the run ends.
	must(&graph.Graph{
		ID:       "parask",
		Channels: []graph.Channel{{Name: "log", Kind: graph.Append, Default: []any{}}},
		Nodes: []graph.Node{
			{Name: "asker", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
				r, err := in.Interrupt("go on?")
				if err != nil {
					return nil, err
				}
				return graph.State{"log": []any{r}}, nil
			}},
			{Name: "slow", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(300 * time.Millisecond):
				}
				return graph.State{"log": []any{"slow"}}, nil
			}},
		},
		Edges: []graph.Edge{{From: graph.START, To: "asker"}, {From: graph.START, To: "slow"}},
	})
	return r
}

// number reads a JSON number (float64 fresh from a node, json.Number once
// read back from the database).
func number(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case json.Number:
		f, _ := n.Float64()
		return f
	}
	return 0
}

// start runs a server with the test graphs and two in-process workers.
func start(t *testing.T) *servertest.Server {
	return startWith(t, nil)
}

func startWith(t *testing.T, edit func(*server.Config)) *servertest.Server {
	t.Helper()
	t.Parallel()
	return servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) {
		c.Graphs = testGraphs()
		if edit != nil {
			edit(c)
		}
	})
}

func newThread(t *testing.T, s *servertest.Server) string {
	t.Helper()
	return s.Must(http.StatusOK, "POST", "/threads", map[string]any{}).Map(t)["thread_id"].(string)
}

// wait creates a run with runs/wait and returns the result document.
func wait(t *testing.T, s *servertest.Server, tid string, body map[string]any) map[string]any {
	t.Helper()
	return s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs/wait", body).Map(t)
}

// create creates a run (POST /threads/{tid}/runs) and returns it.
func create(t *testing.T, s *servertest.Server, tid string, body map[string]any) map[string]any {
	t.Helper()
	return s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs", body).Map(t)
}

// runStatus polls until the run has status want (within 20 s).
func runStatus(t *testing.T, s *servertest.Server, tid, rid string, want ...string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := s.Do("GET", "/threads/"+tid+"/runs/"+rid, nil)
		if r.Status == http.StatusOK {
			run := r.Map(t)
			for _, w := range want {
				if run["status"] == w {
					return run
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %s: status %v, want %v", rid, run["status"], want)
			}
		} else if time.Now().After(deadline) {
			t.Fatalf("run %s: GET %d %s", rid, r.Status, r.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stateUntil polls the thread's state until ok accepts its values (within 20 s):
// tests wait for a committed step, not for a guessed duration.
func stateUntil(t *testing.T, s *servertest.Server, tid string, ok func(values map[string]any) bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		values, _ := state(t, s, tid)["values"].(map[string]any)
		if ok(values) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("thread %s: state never reached the wanted values; last %s", tid, js(values))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The reads and checks every suite of runs shares (servertest).
var (
	thread   = servertest.Thread
	state    = servertest.State
	history  = servertest.History
	js       = servertest.JS
	wantJSON = servertest.WantJSON
	dbCount  = servertest.DBCount
)

var _ = fmt.Sprint

// expireKeepLatest expires thread tid, whose ttl strategy is keep_latest,
// and waits for the TTL sweeper to prune it to its latest checkpoint.
func expireKeepLatest(t *testing.T, s *servertest.Server, tid string) {
	t.Helper()
	if _, err := s.DB.Exec(context.Background(), `UPDATE threads SET expires_at = now() - interval '1 second' WHERE thread_id = $1`, tid); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(history(t, s, tid)) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the expired thread was not pruned")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
