package workersuite_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/server"
)

// With the built-in demo graphs, a worker's foo_bar is a 409 that says how
// to leave them out.
func TestWorkerCannotShadowBuiltinGraph(t *testing.T) {
	withDemos := startWith(t, func(c *server.Config) { c.Graphs = nil })
	conflict := withDemos.Do("POST", "/dispatch/graphs", map[string]any{"graph_id": "foo_bar", "drawable": jsGraph["drawable"]})
	if conflict.Status != http.StatusConflict || !strings.Contains(string(conflict.Body), "WEFT_BUILTIN_GRAPHS=false") {
		t.Fatalf("registering a demo graph id with the demos on: %d %s", conflict.Status, conflict.Body)
	}

}

// Without the built-in demo graphs (-builtin-graphs false), no demo
// assistant is listed and a worker serves its own foo_bar (the in-process
// pool, having no graph, claims none of its runs).
func TestBuiltinGraphsCanBeLeftOut(t *testing.T) {
	s := startWith(t, func(c *server.Config) { c.Graphs, c.NoBuiltinGraphs = nil, true })
	var found []map[string]any
	s.Must(http.StatusOK, "POST", "/assistants/search", map[string]any{}).JSON(t, &found)
	if len(found) != 0 {
		t.Fatalf("assistants without the demos: %s", js(found))
	}
	reg := map[string]any{"graph_id": "foo_bar", "worker_id": "w", "drawable": jsGraph["drawable"]}
	s.Must(http.StatusOK, "POST", "/dispatch/graphs", reg)
	tid := newThread(t, s)
	run := create(t, s, tid, map[string]any{"assistant_id": "foo_bar"})
	time.Sleep(300 * time.Millisecond) // in-process workers would have claimed it by now
	runStatus(t, s, tid, run["run_id"].(string), "pending")
	var got []claimed
	s.Must(http.StatusOK, "POST", "/dispatch/claim", map[string]any{"worker_id": "w", "graph_ids": []string{"foo_bar"}}).JSON(t, &got)
	if len(got) != 1 || got[0].Run.RunID != run["run_id"] {
		t.Fatalf("the worker's claim of its foo_bar run: %s", js(got))
	}
}
