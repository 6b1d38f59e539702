package workersuite_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"
)

// A worker's pending writes under a checkpoint its own commit writes need
// no run_writes bookkeeping (a rollback finds them through the checkpoint's
// run_id); writes under an older run's checkpoint are recorded, and a
// rollback removes both kinds, keeping the older run's own writes.
func TestWorkerWritesUnderOwnCheckpoints(t *testing.T) {
	s := external(t, nil)
	tid := newThread(t, s)
	write := func(task string) map[string]any {
		return map[string]any{"task_id": task, "channel": "foo", "idx": 0, "task_path": "", "value": "x"}
	}
	step := func(rid string, n int, parent string) map[string]any {
		cp := fooBarCheckpoint(n, parent)
		cp["metadata"].(map[string]any)["run_id"] = rid
		return cp
	}

	// Run 1: a checkpoint and writes under it, in one commit.
	run1 := create(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{}})
	rid1 := run1["run_id"].(string)
	c := claim(t, s, "ext", 1, 2000)
	if len(c) != 1 {
		t.Fatalf("claimed %s", js(c))
	}
	cpA := step(rid1, 0, "")
	idA := cpA["checkpoint"].(map[string]any)["id"].(string)
	s.Must(http.StatusOK, "POST", "/dispatch/"+c[0].Dispatch.DispatchID+"/commit", map[string]any{
		"claim_token": c[0].ClaimToken, "checkpoints": []any{cpA},
		"writes": []any{map[string]any{"checkpoint_ns": "", "checkpoint_id": idA, "writes": []any{write("t1")}}},
		"end":    map[string]any{"status": "success"},
	})
	if n := dbCount(t, s, `SELECT count(*) FROM run_writes WHERE run_id = $1`, rid1); n != 0 {
		t.Fatalf("%d run_writes rows for writes under the run's own checkpoint", n)
	}

	// Run 2: writes under run 1's checkpoint (recorded), then its own
	// checkpoint with writes under it (not recorded); then a rollback.
	run2 := create(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{}})
	rid2 := run2["run_id"].(string)
	c = claim(t, s, "ext", 1, 2000)
	if len(c) != 1 || c[0].Run.RunID != rid2 {
		t.Fatalf("claimed %s", js(c))
	}
	d := "/dispatch/" + c[0].Dispatch.DispatchID
	s.Must(http.StatusOK, "POST", d+"/commit", map[string]any{
		"claim_token": c[0].ClaimToken, "commit_id": "1",
		"writes": []any{map[string]any{"checkpoint_ns": "", "checkpoint_id": idA, "writes": []any{write("t2")}}},
	})
	cpB := step(rid2, 1, idA)
	idB := cpB["checkpoint"].(map[string]any)["id"].(string)
	// A checkpoint of this commit carrying another run's id is not this run's.
	cpC := step(uuid.NewString(), 2, idB)
	idC := cpC["checkpoint"].(map[string]any)["id"].(string)
	s.Must(http.StatusOK, "POST", d+"/commit", map[string]any{
		"claim_token": c[0].ClaimToken, "commit_id": "2", "checkpoints": []any{cpB, cpC},
		"writes": []any{
			map[string]any{"checkpoint_ns": "", "checkpoint_id": idB, "writes": []any{write("t3")}},
			map[string]any{"checkpoint_ns": "", "checkpoint_id": idC, "writes": []any{write("t4")}},
		},
	})
	if n := dbCount(t, s, `SELECT count(*) FROM run_writes WHERE run_id = $1`, rid2); n != 2 {
		t.Fatalf("%d run_writes rows, want 2 (under run 1's checkpoint and under one carrying another run id)", n)
	}
	s.Must(http.StatusAccepted, "POST", "/threads/"+tid+"/runs/"+rid2+"/cancel?action=rollback", nil)
	res := s.Must(http.StatusOK, "POST", d+"/commit", map[string]any{"claim_token": c[0].ClaimToken, "commit_id": "end",
		"end": map[string]any{"status": "success"}}).Map(t)
	if res["cancel"] != "rollback" {
		t.Fatalf("end commit %s", js(res))
	}
	s.Must(http.StatusNotFound, "GET", "/threads/"+tid+"/runs/"+rid2, nil)
	if n := dbCount(t, s, `SELECT count(*) FROM checkpoint_writes WHERE thread_id = $1`, tid); n != 1 {
		t.Fatalf("%d pending writes after the rollback, want run 1's one", n)
	}
	if n := dbCount(t, s, `SELECT count(*) FROM checkpoint_writes WHERE thread_id = $1 AND task_id = 't1'`, tid); n != 1 {
		t.Fatal("run 1's write is gone")
	}
}
