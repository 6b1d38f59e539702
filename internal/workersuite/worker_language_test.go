package workersuite_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/pregel"
)

// A graph registered with "language": "python" gets Python LangGraph's
// task ids in state reads (xxh3-128, pregel.PythonTaskID), so the writes
// and subgraph checkpoints Python's executor files under them attach to
// their task; without it LangGraph.js's. Any other language is refused.
func TestWorkerGraphLanguageDecidesTaskIDs(t *testing.T) {
	s := external(t, nil)
	for _, lang := range []string{"cobol", "Python", " "} {
		g := map[string]any{}
		for k, v := range jsGraph {
			g[k] = v
		}
		g["language"] = lang
		if msg := s.Must(http.StatusUnprocessableEntity, "POST", "/dispatch/graphs", g).Map(t)["detail"]; msg == nil || !strings.Contains(msg.(string), "language") {
			t.Fatalf("language %q: detail %v", lang, msg)
		}
	}
	cpID := "1f000000-0000-6000-8000-000000000001"
	taskOf := func(lang string) string {
		g := map[string]any{}
		for k, v := range jsGraph {
			g[k] = v
		}
		g["language"] = lang
		s.Must(http.StatusOK, "POST", "/dispatch/graphs", g)
		tid := newThread(t, s)
		run := create(t, s, tid, map[string]any{"assistant_id": "js_echo"})
		c := claimOne(t, s, "js_echo")
		v1 := "00000000000000000000000000000001.0.1"
		cp := map[string]any{"v": 4, "id": cpID, "ts": "2026-11-23T00:00:00.000Z",
			"channel_values":   map[string]any{"messages": []any{"hi"}, "branch:to:talk": nil},
			"channel_versions": map[string]any{"messages": v1, "branch:to:talk": v1},
			"versions_seen":    map[string]any{}}
		s.Must(http.StatusOK, "POST", "/dispatch/"+c.Dispatch.DispatchID+"/commit", map[string]any{"claim_token": c.ClaimToken,
			"checkpoints": []any{map[string]any{"parent_checkpoint_id": "", "checkpoint": cp,
				"metadata": map[string]any{"source": "loop", "step": 0, "run_id": run["run_id"]}, "new_versions": map[string]any{"messages": v1, "branch:to:talk": v1}}}})
		tasks := s.Must(http.StatusOK, "GET", "/threads/"+tid+"/state", nil).Map(t)["tasks"].([]any)
		if len(tasks) != 1 || tasks[0].(map[string]any)["name"] != "talk" {
			t.Fatalf("language %q: tasks %s", lang, js(tasks))
		}
		return tasks[0].(map[string]any)["id"].(string)
	}
	cfg := checkpoints.Config{CheckpointID: cpID}
	if got, want := taskOf("python"), pregel.PythonTaskID(cfg, 0, "talk", []any{pregel.PullPath, "talk"}); got != want {
		t.Errorf("python graph's task id %s, want Python LangGraph's %s", got, want)
	}
	if got, want := taskOf("js"), pregel.TaskID(cfg, 0, "talk", []any{pregel.PullPath, "talk"}); got != want {
		t.Errorf("js graph's task id %s, want LangGraph.js's %s", got, want)
	}
}
