package workersuite_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/server/servertest"
)

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

func threadView(t *testing.T, s *servertest.Server, tid string) string {
	t.Helper()
	th := thread(t, s, tid)
	return js([]any{th["status"], th["values"], th["interrupts"]})
}

// An external worker's end that carries its last root checkpoint complete
// is committed in one round trip with the thread projected from the commit;
// the projection equals the one the full path reads back, and a replay of
// the end returns the first result and writes nothing.
func TestExternalEndProjectsFromCommit(t *testing.T) {
	s := external(t, nil)
	views := map[bool]string{}
	for _, complete := range []bool{true, false} {
		tid, runID, c := claimRun(t, s)
		commit := map[string]any{
			"claim_token": c.ClaimToken,
			"commit_id":   "end",
			"checkpoints": []any{pausedCheckpoint(uuid.Must(uuid.NewV7()).String(), "a", complete)},
			"writes": []any{map[string]any{"checkpoint_ns": "", "checkpoint_id": "x", "writes": []any{
				map[string]any{"task_id": "t1", "channel": "foo", "idx": 0, "value": "z"}}}},
			"events": []any{map[string]any{"event": "values", "data": map[string]any{"foo": "a"}}},
			"end":    map[string]any{"status": "success", "result": map[string]any{"foo": "a", "bar": []any{"a"}}},
		}
		first := s.Must(http.StatusOK, "POST", "/dispatch/"+c.Dispatch.DispatchID+"/commit", commit).Map(t)
		again := s.Must(http.StatusOK, "POST", "/dispatch/"+c.Dispatch.DispatchID+"/commit", commit).Map(t)
		if first["replayed"] != false || again["replayed"] != true || js(again["checkpoint_ids"]) != js(first["checkpoint_ids"]) || again["last_seq"] != first["last_seq"] {
			t.Fatalf("complete=%v: replay %s, first %s", complete, js(again), js(first))
		}
		runStatus(t, s, tid, runID, "success")
		views[complete] = threadView(t, s, tid)
		if n := dbCount(t, s, `SELECT count(*) FROM run_events WHERE run_id = $1`, runID); n != 1 { // the replay added none
			t.Fatalf("complete=%v: %d events", complete, n)
		}
	}
	if views[true] != views[false] {
		t.Fatalf("projected from the commit %s, read back %s", views[true], views[false])
	}
	if want := `["interrupted",{"bar":["a"],"foo":"a"},{}]`; views[true] != want {
		t.Fatalf("thread %s, want %s", views[true], want)
	}
}

// A thread holding a newer root checkpoint than the one an end carries is
// projected from what it holds (the end takes the full path).
func TestExternalEndBehindNewerCheckpoint(t *testing.T) {
	s := external(t, nil)
	tid, runID, c := claimRun(t, s)
	older, newer := uuid.Must(uuid.NewV7()).String(), uuid.Must(uuid.NewV7()).String()
	d := "/dispatch/" + c.Dispatch.DispatchID + "/commit"
	s.Must(http.StatusOK, "POST", d, map[string]any{"claim_token": c.ClaimToken, "checkpoints": []any{pausedCheckpoint(newer, "new", false)}})
	s.Must(http.StatusOK, "POST", d, map[string]any{"claim_token": c.ClaimToken, "checkpoints": []any{pausedCheckpoint(older, "old", true)},
		"end": map[string]any{"status": "success"}})
	runStatus(t, s, tid, runID, "success")
	if got, want := threadView(t, s, tid), `["interrupted",{"bar":["a"],"foo":"new"},{}]`; got != want {
		t.Fatalf("thread %s, want %s", got, want)
	}
	// The fenced (ended) dispatch stays fenced on the one-round-trip path.
	s.Must(http.StatusConflict, "POST", d, map[string]any{"claim_token": c.ClaimToken, "commit_id": "later", "events": []any{}})
}

// A run's commits keep their answers for replays until the run ends; then
// only the end's key stays (a worker sends the end last, and a fenced one
// gets 409 whatever it replays), without its answer, which a replay makes
// again as it was: a long thread keeps no row per step, and a small one a
// run.
func TestEndedRunKeepsOnlyTheEndsCommitKey(t *testing.T) {
	s := external(t, nil)
	tid, runID, c := claimRun(t, s)
	path := "/dispatch/" + c.Dispatch.DispatchID + "/commit"
	step := map[string]any{"claim_token": c.ClaimToken, "commit_id": "step-1",
		"events": []any{map[string]any{"event": "values", "data": map[string]any{"foo": ""}}}}
	s.Must(http.StatusOK, "POST", path, step)
	if again := s.Must(http.StatusOK, "POST", path, step).Map(t); again["replayed"] != true {
		t.Fatalf("a step's replay before the end: %s", js(again))
	}
	end := map[string]any{"claim_token": c.ClaimToken, "commit_id": "end",
		"checkpoints": []any{pausedCheckpoint(uuid.Must(uuid.NewV7()).String(), "a", true)},
		"end":         map[string]any{"status": "success", "result": map[string]any{"foo": "a", "bar": []any{"a"}}}}
	first := s.Must(http.StatusOK, "POST", path, end).Map(t)
	runStatus(t, s, tid, runID, "success")
	if n := dbCount(t, s, `SELECT count(*) FROM run_commits WHERE run_id = $1 AND commit_key = 'end' AND result IS NULL`, runID); n != 1 ||
		dbCount(t, s, `SELECT count(*) FROM run_commits WHERE run_id = $1`, runID) != 1 {
		t.Fatalf("run_commits after the end: want the end's key alone, without its answer")
	}
	again := s.Must(http.StatusOK, "POST", path, end).Map(t)
	first["replayed"] = true
	if js(again) != js(first) || first["last_seq"] == float64(0) || len(first["checkpoint_ids"].([]any)) != 1 {
		t.Fatalf("the end's replay: %s, first %s", js(again), js(first))
	}
	s.Must(http.StatusConflict, "POST", path, step) // the run ended: fenced
}
