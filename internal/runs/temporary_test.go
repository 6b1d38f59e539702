package runs_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/server/servertest"
)

// threadGone waits until GET /threads/{tid} is a 404: a stateless run's
// temporary thread is deleted right after its result was delivered.
func threadGone(t *testing.T, s *servertest.Server, tid string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.Do("GET", "/threads/"+tid, nil).Status != http.StatusNotFound {
		if time.Now().After(deadline) {
			t.Fatalf("temporary thread %s still there 10 s after its run's result", tid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A stateless run's answer (runs/wait, runs/stream) does not wait for the
// deletion of its temporary thread: with every thread deletion held in
// PostgreSQL (a trigger that waits for an advisory lock this test holds),
// both answer in full, their threads are still there, and they are gone
// once the lock is released.
func TestStatelessAnswerDoesNotWaitForDeletion(t *testing.T) {
	s := start(t)
	ctx := context.Background()
	if _, err := s.DB.Exec(ctx, `
		CREATE FUNCTION test_hold_delete() RETURNS trigger LANGUAGE plpgsql AS
			$$ BEGIN PERFORM pg_advisory_xact_lock(7101); RETURN OLD; END $$;
		CREATE TRIGGER test_hold_delete BEFORE DELETE ON threads FOR EACH ROW EXECUTE FUNCTION test_hold_delete()`); err != nil {
		t.Fatal(err)
	}
	holder, err := s.DB.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Release()
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_lock(7101)`); err != nil {
		t.Fatal(err)
	}
	held := true
	release := func() {
		if held {
			held = false
			if _, err := holder.Exec(ctx, `SELECT pg_advisory_unlock(7101)`); err != nil {
				t.Error(err)
			}
		}
	}
	defer release()

	// answer sends a request that must be answered in full within 10 s.
	answer := func(path string) *servertest.Response {
		t.Helper()
		got := make(chan *servertest.Response, 1)
		go func() {
			r, err := s.Try("POST", path, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}})
			if err != nil {
				t.Error(err)
			}
			got <- r
		}()
		select {
		case r := <-got:
			if r == nil || r.Status != http.StatusOK {
				t.Fatalf("POST %s: %+v", path, r)
			}
			return r
		case <-time.After(10 * time.Second):
			t.Fatalf("POST %s: no answer within 10 s while the temporary thread's deletion is held", path)
			return nil
		}
	}

	r := answer("/runs/wait")
	wantJSON(t, "stateless wait", r.Map(t), `{"foo":"b","bar":["a","b"]}`)
	waited := strings.Split(r.Header.Get("Content-Location"), "/")[2]

	sr := answer("/runs/stream")
	if body := string(sr.Body); !strings.Contains(body, "event: values") || !strings.Contains(body, `"bar":["a","b"]`) {
		t.Fatalf("stateless stream: %s", body)
	}
	runID := strings.TrimPrefix(sr.Header.Get("Content-Location"), "/runs/")
	var streamed string
	if err := s.DB.QueryRow(ctx, `SELECT thread_id::text FROM runs WHERE run_id = $1`, runID).Scan(&streamed); err != nil {
		t.Fatalf("run %s of the stream: %v", runID, err)
	}

	for _, tid := range []string{waited, streamed} {
		s.Must(http.StatusOK, "GET", "/threads/"+tid, nil) // its deletion is still held
	}
	release()
	for _, tid := range []string{waited, streamed} {
		threadGone(t, s, tid)
	}
}
