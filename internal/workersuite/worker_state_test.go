package workersuite_test

import (
	"net/http"
	"testing"
)

// State reads of a worker's graph (no Go definition on the server) list the
// nodes a step triggers in the graph's declaration order, as its runtime
// schedules them, not by name; the values are shown as stored.
func TestWorkerGraphStateOrdersNextByDeclaration(t *testing.T) {
	s := external(t, nil)
	s.Must(http.StatusOK, "POST", "/dispatch/graphs", map[string]any{
		"graph_id": "fan_out", "worker_id": "test",
		"drawable": map[string]any{
			"nodes": []any{map[string]any{"id": "__start__"}, map[string]any{"id": "zeta"}, map[string]any{"id": "alpha"},
				map[string]any{"id": "__end__"}},
			"edges": []any{map[string]any{"source": "__start__", "target": "zeta"}, map[string]any{"source": "__start__", "target": "alpha"},
				map[string]any{"source": "zeta", "target": "__end__"}, map[string]any{"source": "alpha", "target": "__end__"}},
		},
		"state_schema": map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{}}},
	})
	tid := newThread(t, s)
	run := create(t, s, tid, map[string]any{"assistant_id": "fan_out", "input": map[string]any{"x": 1}})
	c := claimOne(t, s, "fan_out")
	v := "00000000000000000000000000000001.0.1"
	cp := map[string]any{"v": 4, "id": "1f000000-0000-6000-8000-000000000001", "ts": "2026-11-23T00:00:00.000Z",
		"channel_values":   map[string]any{"x": 1, "branch:to:zeta": nil, "branch:to:alpha": nil},
		"channel_versions": map[string]any{"x": v, "branch:to:zeta": v, "branch:to:alpha": v},
		"versions_seen":    map[string]any{"__input__": map[string]any{}}}
	s.Must(http.StatusOK, "POST", "/dispatch/"+c.Dispatch.DispatchID+"/commit", map[string]any{"claim_token": c.ClaimToken,
		"checkpoints": []any{map[string]any{"parent_checkpoint_id": "", "checkpoint": cp,
			"metadata":     map[string]any{"source": "loop", "step": 0, "run_id": run["run_id"]},
			"new_versions": map[string]any{"x": v, "branch:to:zeta": v, "branch:to:alpha": v}}}})

	for _, path := range []string{"/threads/" + tid + "/state", "/threads/" + tid + "/history"} {
		r := s.Must(http.StatusOK, "GET", path, nil)
		var st struct {
			Next   []string       `json:"next"`
			Values map[string]any `json:"values"`
		}
		if path[len(path)-1] == 'y' {
			var list []struct {
				Next   []string       `json:"next"`
				Values map[string]any `json:"values"`
			}
			r.JSON(t, &list)
			if len(list) != 1 {
				t.Fatalf("history: %s", r.Body)
			}
			st.Next, st.Values = list[0].Next, list[0].Values
		} else {
			r.JSON(t, &st)
		}
		wantJSON(t, path+" next", st.Next, `["zeta","alpha"]`)
		wantJSON(t, path+" values", st.Values, `{"x":1}`)
	}
}
