package assistants_test

import (
	"net/http"
	"testing"

	"github.com/weftdev/weft/internal/server/servertest"
)

// runOn runs assistant aid on a new thread to its end and returns the
// thread id.
func runOn(t *testing.T, s *servertest.Server, aid string) string {
	t.Helper()
	tid := newThread(t, s, nil)
	run := s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": aid,
		"input": map[string]any{"foo": ""}}).Map(t)
	if end := runEnd(t, s, tid, run["run_id"].(string)); end["status"] != "success" {
		t.Fatalf("run on %s: %v", aid, end)
	}
	return tid
}

func TestDeleteKeepsThreads(t *testing.T) {
	s := start(t)
	aid := create(t, s, map[string]any{"graph_id": "foo_bar"})["assistant_id"].(string)
	tid := runOn(t, s, aid) // also caches the assistant for runs
	s.Must(http.StatusNoContent, "DELETE", "/assistants/"+aid, nil)
	s.Must(http.StatusNotFound, "GET", "/assistants/"+aid, nil)
	s.Must(http.StatusNotFound, "DELETE", "/assistants/"+aid, nil)
	s.Must(http.StatusNotFound, "POST", "/assistants/"+aid+"/versions", nil)
	if n := dbCount(t, s, `SELECT count(*) FROM assistant_versions WHERE assistant_id = $1`, aid); n != 0 {
		t.Fatalf("%d versions left", n)
	}
	s.Must(http.StatusOK, "GET", "/threads/"+tid, nil)
	if n := dbCount(t, s, `SELECT count(*) FROM runs WHERE thread_id = $1`, tid); n != 1 {
		t.Fatalf("%d runs kept, want 1", n)
	}
	// A deleted assistant is a 404 for new runs, though runs resolved it
	// before (and cached its graph).
	for _, path := range []string{"/threads/" + tid + "/runs", "/threads/" + tid + "/runs/wait", "/runs/wait"} {
		r := s.Do("POST", path, map[string]any{"assistant_id": aid, "input": map[string]any{"foo": ""}})
		if r.Status != http.StatusNotFound {
			t.Fatalf("POST %s with a deleted assistant: %d %s", path, r.Status, r.Body)
		}
	}
	if n := dbCount(t, s, `SELECT count(*) FROM runs WHERE assistant_id = $1`, aid); n != 1 {
		t.Fatalf("%d runs of the deleted assistant, want the first one only", n)
	}
}

func TestDeleteWithThreads(t *testing.T) {
	s := start(t)
	aid := create(t, s, map[string]any{"graph_id": "foo_bar"})["assistant_id"].(string)
	other := create(t, s, map[string]any{"graph_id": "foo_bar"})["assistant_id"].(string)
	mine := []string{runOn(t, s, aid), runOn(t, s, aid), newThread(t, s, map[string]any{"assistant_id": aid})}
	kept := []string{runOn(t, s, other), newThread(t, s, map[string]any{"owner": "x"})}

	// A bad flag deletes nothing.
	s.Must(http.StatusUnprocessableEntity, "DELETE", "/assistants/"+aid+"?delete_threads=maybe", nil)
	s.Must(http.StatusOK, "GET", "/assistants/"+aid, nil)
	s.Must(http.StatusOK, "GET", "/threads/"+mine[0], nil)

	s.Must(http.StatusNoContent, "DELETE", "/assistants/"+aid+"?delete_threads=true", nil)
	s.Must(http.StatusNotFound, "GET", "/assistants/"+aid, nil)
	for _, tid := range mine {
		s.Must(http.StatusNotFound, "GET", "/threads/"+tid, nil)
		if n := dbCount(t, s, `SELECT count(*) FROM checkpoints WHERE thread_id = $1`, tid); n != 0 {
			t.Fatalf("thread %s: %d checkpoints left", tid, n)
		}
		if n := dbCount(t, s, `SELECT count(*) FROM runs WHERE thread_id = $1`, tid); n != 0 {
			t.Fatalf("thread %s: %d runs left", tid, n)
		}
	}
	for _, tid := range kept {
		s.Must(http.StatusOK, "GET", "/threads/"+tid, nil)
	}
	if n := dbCount(t, s, `SELECT count(*) FROM checkpoints WHERE thread_id = $1`, kept[0]); n == 0 {
		t.Fatalf("the other assistant's thread lost its checkpoints")
	}
	s.Must(http.StatusOK, "GET", "/assistants/"+other, nil)
}
