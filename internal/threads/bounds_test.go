package threads_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/server/servertest"
	"github.com/weftdev/weft/internal/threads"
)

// A search page over large threads stops near its byte cap; the pagination
// headers point at the next offset, which returns the rest.
func TestSearchPageIsCappedByBytes(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	big := strings.Repeat("x", 900<<10)
	for range 6 {
		create(t, s, map[string]any{"metadata": map[string]any{"kind": "big", "blob": big}})
	}
	create(t, s, map[string]any{"metadata": map[string]any{"kind": "small"}})
	filter := map[string]any{"kind": "big"}
	r := s.Must(http.StatusOK, "POST", "/threads/search", map[string]any{"metadata": filter, "limit": 100})
	var page []thread
	r.JSON(t, &page)
	if len(page) != 5 || len(r.Body) < threads.MaxSearchPageBytes || len(r.Body) > threads.MaxSearchPageBytes+(1<<20) {
		t.Fatalf("capped page: %d threads, %d bytes", len(page), len(r.Body))
	}
	if r.Header.Get("X-Pagination-Next") != "5" || r.Header.Get("X-Pagination-Total") != "6" {
		t.Fatalf("headers: next %q total %q", r.Header.Get("X-Pagination-Next"), r.Header.Get("X-Pagination-Total"))
	}
	r = s.Must(http.StatusOK, "POST", "/threads/search", map[string]any{"metadata": filter, "limit": 100, "offset": 5})
	if r.JSON(t, &page); len(page) != 1 || r.Header.Get("X-Pagination-Next") != "" || r.Header.Get("X-Pagination-Total") != "6" {
		t.Fatalf("rest: %d threads, next %q total %q", len(page), r.Header.Get("X-Pagination-Next"), r.Header.Get("X-Pagination-Total"))
	}
	// select pages are capped the same way, and small pages are whole.
	r = s.Must(http.StatusOK, "POST", "/threads/search", map[string]any{"metadata": filter, "limit": 100, "select": []string{"thread_id"}})
	if r.JSON(t, &page); len(page) != 6 || r.Header.Get("X-Pagination-Next") != "" {
		t.Fatalf("select thread_id: %d threads, next %q", len(page), r.Header.Get("X-Pagination-Next"))
	}
}

// limit 0 is a 422 in a body as in a query; absent or null is the default.
func TestLimitZeroIsRefusedEverywhere(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	a := create(t, s, map[string]any{})
	s.Must(http.StatusUnprocessableEntity, "POST", "/threads/search", map[string]any{"limit": 0})
	s.Must(http.StatusUnprocessableEntity, "GET", "/threads/"+a.ThreadID+"/children?limit=0", nil)
	s.Must(http.StatusOK, "POST", "/threads/search", map[string]any{"limit": nil})
	s.Must(http.StatusOK, "POST", "/threads/search", map[string]any{})
	// count holds the paging fields it shares with search to the same
	// bounds (the schema both declare), then ignores them.
	s.Must(http.StatusUnprocessableEntity, "POST", "/threads/count", map[string]any{"limit": 0})
	s.Must(http.StatusOK, "POST", "/threads/count", map[string]any{"limit": 1000, "offset": 3})
}
