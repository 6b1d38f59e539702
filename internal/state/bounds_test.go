package state_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/server/servertest"
	"github.com/weftdev/weft/internal/state"
)

// A history page over large checkpoints stops near its byte cap, says
// where to continue, and the continuation returns the rest.
func TestHistoryPageIsCappedByBytes(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	tid := newThread(t, s, "foo_bar")
	big := strings.Repeat("x", 900<<10)
	var ids []string
	for i := range 6 {
		var u updateResp
		s.Must(http.StatusOK, "POST", "/threads/"+tid+"/state",
			map[string]any{"values": map[string]any{"foo": fmt.Sprintf("%d%s", i, big)}, "as_node": "node_b"}).JSON(t, &u)
		ids = append(ids, u.CheckpointID)
	}
	r := s.Must(http.StatusOK, "POST", "/threads/"+tid+"/history", map[string]any{"limit": 1000})
	var page []threadState
	r.JSON(t, &page)
	if len(page) != 5 || len(r.Body) < state.MaxHistoryPageBytes || len(r.Body) > state.MaxHistoryPageBytes+(1<<20) {
		t.Fatalf("capped page: %d states, %d bytes; want 5 states just past %d bytes", len(page), len(r.Body), state.MaxHistoryPageBytes)
	}
	next := r.Header.Get("X-Pagination-Next")
	if next != ids[1] || page[4].Checkpoint.CheckpointID != next {
		t.Fatalf("X-Pagination-Next = %q, last = %q; want %q", next, page[4].Checkpoint.CheckpointID, ids[1])
	}
	r = s.Must(http.StatusOK, "GET", "/threads/"+tid+"/history?limit=1000&before="+next, nil)
	r.JSON(t, &page)
	if len(page) != 1 || page[0].Checkpoint.CheckpointID != ids[0] || r.Header.Get("X-Pagination-Next") != "" {
		t.Fatalf("rest = %d states, next %q", len(page), r.Header.Get("X-Pagination-Next"))
	}
	// Small pages are not marked.
	r = s.Must(http.StatusOK, "POST", "/threads/"+tid+"/history", map[string]any{"limit": 2})
	if r.JSON(t, &page); len(page) != 2 || r.Header.Get("X-Pagination-Next") != "" {
		t.Fatalf("limit 2: %d states, next %q", len(page), r.Header.Get("X-Pagination-Next"))
	}
}

// limit 0 is a 422 in the query and in the body alike; absent or null is
// the default.
func TestHistoryLimitZero(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	tid := newThread(t, s, "foo_bar")
	s.Must(http.StatusUnprocessableEntity, "GET", "/threads/"+tid+"/history?limit=0", nil)
	s.Must(http.StatusUnprocessableEntity, "POST", "/threads/"+tid+"/history", map[string]any{"limit": 0})
	s.Must(http.StatusOK, "POST", "/threads/"+tid+"/history", map[string]any{"limit": nil})
	s.Must(http.StatusOK, "POST", "/threads/"+tid+"/history", map[string]any{})
}

func TestPruneBoundsItsWork(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ids := make([]string, state.MaxPruneIDs+1)
	for i := range ids {
		ids[i] = uuid.NewString()
	}
	r := s.Must(http.StatusUnprocessableEntity, "POST", "/threads/prune", map[string]any{"thread_ids": ids})
	if !strings.Contains(r.Detail(t), "at most 1000") {
		t.Fatalf("detail = %q", r.Detail(t))
	}
	// Repeated ids count once.
	tid := newThread(t, s, "")
	var res struct {
		PrunedCount int `json:"pruned_count"`
	}
	s.Must(http.StatusOK, "POST", "/threads/prune", map[string]any{"thread_ids": []string{tid, tid, tid}}).JSON(t, &res)
	if res.PrunedCount != 1 {
		t.Fatalf("pruned_count = %d; want 1", res.PrunedCount)
	}
	s.Must(http.StatusOK, "POST", "/threads/prune", map[string]any{"thread_ids": ids[:state.MaxPruneIDs]})
}
