package runs_test

import (
	"net/http"
	"testing"
	"time"
)

// slowBody is a run of the slow graph: each node sleeps ms and logs tag.
func slowBody(tag string, ms int, strategy string) map[string]any {
	b := map[string]any{"assistant_id": "slow", "input": map[string]any{"tag": tag, "ms": ms}}
	if strategy != "" {
		b["multitask_strategy"] = strategy
	}
	return b
}

func TestMultitaskReject(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	first := create(t, s, tid, slowBody("1", 300, ""))
	r := s.Do("POST", "/threads/"+tid+"/runs", slowBody("2", 0, "reject"))
	if r.Status != http.StatusConflict || r.Detail(t) != "Thread is already running a task. Wait for it to finish or choose a different multitask strategy." {
		t.Fatalf("reject: %d %s", r.Status, r.Body)
	}
	if n := dbCount(t, s, `SELECT count(*) FROM runs WHERE thread_id = $1`, tid); n != 1 {
		t.Fatalf("%d runs after a rejected one", n)
	}
	runStatus(t, s, tid, first["run_id"].(string), "success")
}

// Enqueued runs execute one at a time, strictly in creation order.
func TestMultitaskEnqueueIsFIFO(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	var ids []string
	for _, tag := range []string{"1", "2", "3", "4"} {
		ids = append(ids, create(t, s, tid, slowBody(tag, 30, ""))["run_id"].(string))
	}
	if th := thread(t, s, tid); th["latest_run_id"] != ids[3] || th["active_run_id"] == nil || th["status"] != "busy" {
		t.Fatalf("run pointers while busy: %s", js(th))
	}
	for _, id := range ids {
		runStatus(t, s, tid, id, "success")
	}
	wantJSON(t, "log", thread(t, s, tid)["values"].(map[string]any)["log"],
		`["first:1","second:1","first:2","second:2","first:3","second:3","first:4","second:4"]`)
	if th := thread(t, s, tid); th["latest_run_id"] != ids[3] || th["active_run_id"] != nil {
		t.Fatalf("run pointers when idle: %s", js(th))
	}
	if n := dbCount(t, s, `SELECT count(*) FROM runs r1 JOIN runs r2 ON r1.thread_id = r2.thread_id
		AND r1.created_at < r2.created_at AND r1.finished_at > r2.started_at`); n != 0 {
		t.Fatalf("%d runs overlapped", n)
	}
}

// interrupt: the running run stops at its step boundary keeping its
// checkpoints (interrupted), a queued one is interrupted at once, and the
// new run starts from the state left behind.
func TestMultitaskInterrupt(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	first := create(t, s, tid, slowBody("1", 400, ""))
	queued := create(t, s, tid, slowBody("q", 0, ""))
	runStatus(t, s, tid, first["run_id"].(string), "running")
	stateUntil(t, s, tid, func(v map[string]any) bool { return js(v["log"]) == `["first:1"]` }) // "first" has finished, "second" sleeps
	last := create(t, s, tid, slowBody("3", 0, "interrupt"))
	runStatus(t, s, tid, first["run_id"].(string), "interrupted")
	runStatus(t, s, tid, queued["run_id"].(string), "interrupted")
	runStatus(t, s, tid, last["run_id"].(string), "success")
	wantJSON(t, "log", thread(t, s, tid)["values"].(map[string]any)["log"], `["first:1","first:3","second:3"]`)
	if n := dbCount(t, s, `SELECT count(*) FROM checkpoints WHERE thread_id = $1 AND metadata->>'run_id' = $2`, tid, first["run_id"]); n != 3 {
		t.Fatalf("interrupted run kept %d checkpoints, want 3 (input, start, first)", n)
	}
	if th := thread(t, s, tid); th["status"] != "idle" {
		t.Fatalf("thread: %s", js(th))
	}
}

// rollback: the running run and a queued one are deleted with every
// checkpoint and write they made; the new run starts from the state before.
func TestMultitaskRollback(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	wait(t, s, tid, slowBody("0", 0, ""))
	before := len(history(t, s, tid))
	first := create(t, s, tid, slowBody("1", 400, ""))
	queued := create(t, s, tid, slowBody("q", 0, ""))
	runStatus(t, s, tid, first["run_id"].(string), "running")
	stateUntil(t, s, tid, func(v map[string]any) bool { return js(v["log"]) == `["first:0","second:0","first:1"]` })
	last := create(t, s, tid, slowBody("3", 0, "rollback"))
	runStatus(t, s, tid, last["run_id"].(string), "success")
	s.Must(http.StatusNotFound, "GET", "/threads/"+tid+"/runs/"+first["run_id"].(string), nil)
	s.Must(http.StatusNotFound, "GET", "/threads/"+tid+"/runs/"+queued["run_id"].(string), nil)
	wantJSON(t, "log", thread(t, s, tid)["values"].(map[string]any)["log"], `["first:0","second:0","first:3","second:3"]`)
	if n := dbCount(t, s, `SELECT count(*) FROM checkpoints WHERE thread_id = $1 AND metadata->>'run_id' = $2`, tid, first["run_id"]); n != 0 {
		t.Fatalf("rolled back run left %d checkpoints", n)
	}
	if got := len(history(t, s, tid)); got != before+4 {
		t.Fatalf("history %d, want %d (the rolled back run's checkpoints gone)", got, before+4)
	}
	if n := dbCount(t, s, `SELECT count(*) FROM checkpoint_blobs b WHERE thread_id = $1 AND NOT EXISTS (
		SELECT 1 FROM checkpoints c WHERE c.thread_id = b.thread_id AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version)`, tid); n != 0 {
		t.Fatalf("%d orphan blobs after rollback", n)
	}
}

func TestCancel(t *testing.T) {
	s := start(t)
	t.Run("interrupt a running run", func(t *testing.T) {
		tid := newThread(t, s)
		run := create(t, s, tid, slowBody("c", 5000, ""))
		rid := run["run_id"].(string)
		runStatus(t, s, tid, rid, "running")
		stateUntil(t, s, tid, func(v map[string]any) bool { return v["tag"] == "c" }) // the input is committed; "first" sleeps
		start := time.Now()
		res := s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs/"+rid+"/cancel?wait=1", nil).Map(t)
		if time.Since(start) > 3*time.Second {
			t.Fatalf("cancel took %v: the sleeping node was not interrupted", time.Since(start))
		}
		wantJSON(t, "values at cancel", res, `{"ms":5000,"tag":"c","log":[]}`)
		runStatus(t, s, tid, rid, "interrupted")
		if th := thread(t, s, tid); th["status"] != "interrupted" {
			t.Fatalf("thread: %s (first is still pending)", js(th))
		}
		s.Must(http.StatusAccepted, "POST", "/threads/"+tid+"/runs/"+rid+"/cancel", nil) // finished: no-op
	})
	t.Run("rollback a running run", func(t *testing.T) {
		tid := newThread(t, s)
		run := create(t, s, tid, slowBody("c", 5000, ""))
		rid := run["run_id"].(string)
		runStatus(t, s, tid, rid, "running")
		s.Must(http.StatusNoContent, "POST", "/threads/"+tid+"/runs/"+rid+"/cancel?wait=true&action=rollback", nil)
		s.Must(http.StatusNotFound, "GET", "/threads/"+tid+"/runs/"+rid, nil)
		if n := len(history(t, s, tid)); n != 0 {
			t.Fatalf("%d checkpoints after rollback", n)
		}
		if th := thread(t, s, tid); th["status"] != "idle" {
			t.Fatalf("thread: %s", js(th))
		}
	})
	t.Run("cancel a queued run", func(t *testing.T) {
		tid := newThread(t, s)
		first := create(t, s, tid, slowBody("1", 300, ""))
		second := create(t, s, tid, slowBody("2", 0, ""))
		s.Must(http.StatusAccepted, "POST", "/threads/"+tid+"/runs/"+second["run_id"].(string)+"/cancel", nil)
		runStatus(t, s, tid, second["run_id"].(string), "interrupted")
		runStatus(t, s, tid, first["run_id"].(string), "success")
		wantJSON(t, "log", thread(t, s, tid)["values"].(map[string]any)["log"], `["first:1","second:1"]`)
		if n := dbCount(t, s, `SELECT count(*) FROM run_dispatches WHERE run_id = $1 AND state = 'cancelled'`, second["run_id"]); n != 1 {
			t.Fatal("queued dispatch not cancelled")
		}
	})
	t.Run("cancel many", func(t *testing.T) {
		tid := newThread(t, s)
		a := create(t, s, tid, slowBody("a", 5000, ""))
		b := create(t, s, tid, slowBody("b", 0, ""))
		s.Must(http.StatusNoContent, "POST", "/runs/cancel", map[string]any{"thread_id": tid, "run_ids": []any{a["run_id"], b["run_id"]}})
		runStatus(t, s, tid, a["run_id"].(string), "interrupted")
		runStatus(t, s, tid, b["run_id"].(string), "interrupted")
		s.Must(http.StatusNotFound, "POST", "/runs/cancel", map[string]any{"thread_id": tid, "run_ids": []any{a["run_id"]}})
		s.Must(http.StatusUnprocessableEntity, "POST", "/runs/cancel", map[string]any{})
	})
	t.Run("a running run cannot be deleted", func(t *testing.T) {
		tid := newThread(t, s)
		run := create(t, s, tid, slowBody("d", 5000, ""))
		rid := run["run_id"].(string)
		s.Must(http.StatusConflict, "DELETE", "/threads/"+tid+"/runs/"+rid, nil)
		s.Must(http.StatusConflict, "POST", "/threads/"+tid+"/state", map[string]any{"values": map[string]any{"tag": "x"}})
		// Deleting the thread stops the run.
		s.Must(http.StatusNoContent, "DELETE", "/threads/"+tid, nil)
		if n := dbCount(t, s, `SELECT count(*) FROM runs WHERE thread_id = $1`, tid); n != 0 {
			t.Fatalf("%d runs left", n)
		}
	})
}
