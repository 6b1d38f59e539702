package runs_test

import (
	"net/http"
	"testing"

	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

// The helpers below play an external worker over HTTP for the tests of
// runs' own behaviour (input and value references). The worker suites
// themselves live in internal/workersuite, which has its own copy.

// external starts a server without in-process workers: runs wait for an
// external worker, here the test itself over HTTP.
func external(t *testing.T, edit func(*server.Config)) *servertest.Server {
	return startWith(t, func(c *server.Config) {
		c.Workers = 0
		if edit != nil {
			edit(c)
		}
	})
}

type claimed struct {
	Dispatch struct {
		DispatchID string `json:"dispatch_id"`
		Attempt    int    `json:"attempt"`
		ThreadID   string `json:"thread_id"`
	} `json:"dispatch"`
	Run struct {
		RunID  string         `json:"run_id"`
		Kwargs map[string]any `json:"kwargs"`
	} `json:"run"`
	ClaimToken string `json:"claim_token"`
}

func claim(t *testing.T, s *servertest.Server, worker string, limit, waitMS int) []claimed {
	t.Helper()
	var out []claimed
	s.Must(http.StatusOK, "POST", "/dispatch/claim", map[string]any{"worker_id": worker, "graph_ids": []string{"foo_bar"},
		"limit": limit, "wait_ms": waitMS}).JSON(t, &out)
	return out
}

// claimRun creates a foo_bar run on a new thread and claims it as an
// external worker would.
func claimRun(t *testing.T, s *servertest.Server) (tid, runID string, c claimed) {
	t.Helper()
	tid = newThread(t, s)
	run := create(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}})
	got := claim(t, s, "ext-proj", 1, 5000)
	if len(got) != 1 || got[0].Run.RunID != run["run_id"] {
		t.Fatalf("claimed %s", js(got))
	}
	return tid, run["run_id"].(string), got[0]
}

// pausedCheckpoint is foo_bar after node_a with node_b scheduled (a
// pending task: the thread shows it as interrupted).
func pausedCheckpoint(id string, foo string, complete bool) map[string]any {
	v1, v2 := "00000000000000000000000000000001.0.5", "00000000000000000000000000000002.0.5"
	return map[string]any{
		"parent_checkpoint_id": "",
		"checkpoint": map[string]any{"v": 4, "id": id, "ts": "2026-11-23T00:00:00Z",
			"channel_values":   map[string]any{"foo": foo, "bar": []any{"a"}, "branch:to:node_b": nil},
			"channel_versions": map[string]any{"foo": v1, "bar": v1, "branch:to:node_b": v2},
			"versions_seen":    map[string]any{"node_a": map[string]any{}}},
		"metadata":     map[string]any{"source": "loop", "step": 1},
		"new_versions": map[string]any{"foo": v1, "bar": v1, "branch:to:node_b": v2},
		"complete":     complete,
	}
}
