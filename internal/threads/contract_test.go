package threads_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/server/servertest"
)

// The HTTP error contract: every client mistake is a 4xx with a JSON
// {"detail"} body and changes nothing; bodies are parsed leniently.
func TestErrorContract(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	a := create(t, s, nil)
	cases := []struct {
		method, path string
		body         any
		status       int
		detail       string
	}{
		{"POST", "/threads", `{"metadata": `, 422, "Invalid JSON"},
		{"POST", "/threads", `[1,2]`, 422, "JSON object"},
		{"POST", "/threads", `"hello"`, 422, "JSON object"},
		{"POST", "/threads", `{"metadata": []}`, 422, `"metadata" must be an object`},
		{"POST", "/threads", `{"thread_id": 42}`, 422, `"thread_id" must be a string`},
		{"POST", "/threads", `{"thread_id": "abc"}`, 422, "must be a UUID"},
		{"POST", "/threads", `{"metadata": {}} trailing`, 422, "Invalid JSON"},
		{"POST", "/threads", `{"supersteps": [{"updates": [{"values": {"foo": "a"}}]}]}`, 400, "graph_id"},
		{"POST", "/threads", `{"supersteps": {"updates": []}}`, 422, "supersteps"},
		{"GET", "/threads/not-a-uuid", nil, 422, "Invalid thread ID"},
		{"GET", "/threads/" + uuid.NewString(), nil, 404, "not found"},
		{"PATCH", "/threads/" + a.ThreadID, `{"metadata": 3}`, 422, "metadata"},
		{"PATCH", "/threads/" + a.ThreadID, `{"resource_id": {}}`, 422, "resource_id"},
		{"POST", "/threads/search", `{"limit": "ten"}`, 422, "limit"},
		{"POST", "/threads/count", `{"status": 1}`, 422, "status"},
		// A count holds the paging fields to search's bounds.
		{"POST", "/threads/count", `{"offset": -1}`, 422, "Invalid offset -1: must not be negative"},
		{"POST", "/threads/count", `{"limit": 0}`, 422, "Invalid limit 0"},
		{"POST", "/threads/count", `{"select": ["nope"]}`, 422, `field "select" must be one of thread_id`},
		{"POST", "/threads/count", `{"sort_order": "up"}`, 422, "sort_order"},
		{"POST", "/threads/search", `{"select": ["nope"]}`, 422, `field "select" must be one of thread_id`},
		{"GET", "/nowhere", nil, 404, "Not Found"},
		{"PUT", "/threads", nil, 405, "Method Not Allowed"},
		{"POST", "/threads", "{\"metadata\": {\"k\": \"a\xffb\"}}", 422, "UTF-8"},
		{"POST", "/threads", `{"metadata": {"k": ` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}}`, 422, "nested 602 levels"},
		{"POST", "/threads", `{"metadata": {"n": 1e400}}`, 422, "number 1e400 is out of range"},
		{"PATCH", "/threads/" + a.ThreadID, `{"metadata": {"n": -1e200000}}`, 422, "out of range"},
		{"GET", "/ok?check_db=maybe", nil, 422, "check_db"},
		// A null where the document declares a list's items or a value of
		// another type is refused, not read as "" or {}.
		{"POST", "/threads", `{"supersteps": [null]}`, 422, "supersteps"},
		{"POST", "/runs/wait", `{"assistant_id": "foo_bar", "stream_mode": ["values", null]}`, 422, "stream_mode"},
		{"PATCH", "/threads/" + a.ThreadID + "/state", `{"checkpoint_id": {}}`, 422, "checkpoint_id"},
		{"PATCH", "/threads/" + a.ThreadID + "/state", `{"checkpoint_id": {"checkpoint_id": null}}`, 422, "checkpoint_id"},
	}
	for _, c := range cases {
		r := s.Do(c.method, c.path, c.body)
		if r.Status != c.status || !strings.Contains(r.Detail(t), c.detail) {
			t.Errorf("%s %s %v: %d %s; want %d mentioning %q", c.method, c.path, c.body, r.Status, r.Body, c.status, c.detail)
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s %s: content-type %q", c.method, c.path, ct)
		}
	}
	// An empty list parameter is an empty list.
	s.Must(http.StatusOK, "GET", "/threads/"+a.ThreadID+"/runs?select=", nil)
	if allow := s.Do("DELETE", "/threads/"+a.ThreadID+"/children", nil).Header.Get("Allow"); allow != "GET, HEAD" {
		t.Errorf("405 Allow = %q, want GET, HEAD", allow)
	}
	if allow := s.Do("PUT", "/threads/"+a.ThreadID, nil).Header.Get("Allow"); allow != "GET, HEAD, PATCH, DELETE" {
		t.Errorf("405 Allow = %q, want GET, HEAD, PATCH, DELETE", allow)
	}
	// HEAD works wherever GET does: the GET's status and headers, no body.
	if r := s.Do("HEAD", "/threads/"+a.ThreadID, nil); r.Status != http.StatusOK || len(r.Body) != 0 || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("HEAD: %d %q %v", r.Status, r.Body, r.Header)
	}
	var n int
	if err := s.DB.QueryRow(t.Context(), `SELECT count(*) FROM threads`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("bad requests changed the table: %d threads (%v)", n, err)
	}
}

func TestLenientBodies(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	// An empty body means {}; unknown fields are ignored. A literal null is
	// no object: a 422, as on LangGraph's server (the SDKs send no body).
	for _, body := range []any{nil, "", "  ", `{"ttl": {"ttl": 5}, "checkpoint_during": true, "whatever": [1]}`} {
		th := create(t, s, body)
		if th.Status != "idle" {
			t.Fatalf("body %v: %+v", body, th)
		}
	}
	for _, path := range []string{"/threads", "/threads/search", "/threads/count"} {
		if r := s.Do("POST", path, "null"); r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Detail(t), "JSON object") {
			t.Fatalf("POST %s null: %d %s; want 422", path, r.Status, r.Body)
		}
	}
	var n int
	s.Must(http.StatusOK, "POST", "/threads/count", nil).JSON(t, &n)
	if n != 4 {
		t.Fatalf("count = %d", n)
	}
}

func TestBodyOverLimitIs413(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t) // servertest limits bodies to 1 MiB
	big := fmt.Sprintf(`{"metadata": {"blob": %q}}`, strings.Repeat("x", 2<<20))
	r := s.Do("POST", "/threads", big)
	if r.Status != http.StatusRequestEntityTooLarge || !strings.Contains(r.Detail(t), "limit") {
		t.Fatalf("status %d %s; want 413", r.Status, r.Body)
	}
}

func TestCORSAndHostDefaults(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	req, _ := http.NewRequest("OPTIONS", s.URL+"/threads", nil)
	req.Header.Set("Origin", "http://localhost:3000")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type,x-api-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "http://localhost:3000" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "x-api-key") {
		t.Fatalf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	req, _ = http.NewRequest("GET", s.URL+"/ok", nil)
	req.Header.Set("Origin", "http://127.0.0.1:5173")
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("Access-Control-Allow-Origin") != "http://127.0.0.1:5173" ||
		!strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "Content-Location") {
		t.Fatalf("loopback origin: %v", resp.Header)
	}
	// A page elsewhere gets no CORS headers (its browser withholds the
	// answer), and a request naming a non-loopback Host is refused.
	req, _ = http.NewRequest("POST", s.URL+"/threads/search", nil)
	req.Header.Set("Origin", "https://evil.example")
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("foreign origin: %d %v", resp.StatusCode, resp.Header)
	}
	req, _ = http.NewRequest("POST", s.URL+"/threads", nil)
	req.Host = "rebound.evil.example:8123"
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("rebound Host: %d; want 403", resp.StatusCode)
	}
}

func TestSystemEndpoints(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	for _, path := range []string{"/ok", "/ok?check_db=1", "/ok?check_db=true"} {
		if m := s.Must(http.StatusOK, "GET", path, nil).Map(t); m["ok"] != true {
			t.Fatalf("%s = %v", path, m)
		}
	}
	info := s.Must(http.StatusOK, "GET", "/info", nil).Map(t)
	if _, ok := info["version"].(string); !ok {
		t.Fatalf("info = %v", info)
	}
	if _, ok := info["flags"].(map[string]any); !ok {
		t.Fatalf("info flags = %v", info)
	}
}

// assertAcyclic walks every thread's ancestors straight from the table.
func assertAcyclic(t *testing.T, s *servertest.Server) {
	t.Helper()
	rows, err := s.DB.Query(t.Context(), `SELECT thread_id, parent_thread_id FROM threads`)
	if err != nil {
		t.Fatal(err)
	}
	parent := map[uuid.UUID]*uuid.UUID{}
	for rows.Next() {
		var id uuid.UUID
		var p *uuid.UUID
		if err := rows.Scan(&id, &p); err != nil {
			t.Fatal(err)
		}
		parent[id] = p
	}
	for id := range parent {
		seen := map[uuid.UUID]bool{}
		for cur := &id; cur != nil; cur = parent[*cur] {
			if seen[*cur] {
				t.Fatalf("cycle through %s", *cur)
			}
			seen[*cur] = true
		}
	}
}

// Concurrent re-parentings that would together close a cycle: at most all
// but one of them may succeed, the rest get a 422, and the table never
// holds a cycle.
func TestConcurrentReparentingNeverCreatesACycle(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	const ring, rounds = 4, 15
	for round := range rounds {
		ts := make([]thread, ring)
		for i := range ts {
			ts[i] = create(t, s, nil)
		}
		// Each thread i tries to become a child of thread i+1 (mod ring):
		// all of them together would be a ring.
		var wg sync.WaitGroup
		statuses := make([]int, ring)
		errs := make([]error, ring)
		for i := range ring {
			wg.Go(func() {
				r, err := s.Try("PATCH", "/threads/"+ts[i].ThreadID, map[string]any{"parent_thread_id": ts[(i+1)%ring].ThreadID})
				if err != nil {
					errs[i] = err
					return
				}
				statuses[i] = r.Status
			})
		}
		wg.Wait()
		ok := 0
		for i, st := range statuses {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			switch st {
			case http.StatusOK:
				ok++
			case http.StatusUnprocessableEntity:
			default:
				t.Fatalf("round %d: patch %d got status %d", round, i, st)
			}
		}
		if ok != ring-1 {
			t.Fatalf("round %d: %d of %d re-parentings succeeded; want exactly %d", round, ok, ring, ring-1)
		}
		assertAcyclic(t, s)
	}
}

// A cascade delete racing child creations anywhere in the subtree never
// leaves a thread behind whose parent is gone, and a creation that loses
// the race is a clean 422, never a 5xx.
func TestCascadeDeleteRacingChildCreation(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	for round := range 10 {
		root := create(t, s, nil)
		nodes := []string{root.ThreadID}
		for i := range 6 {
			nodes = append(nodes, child(t, s, nodes[i/2]).ThreadID)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var created []string
		fail := make(chan string, 64)
		for i := range 24 {
			wg.Go(func() {
				r, err := s.Try("POST", "/threads", map[string]any{"parent_thread_id": nodes[i%len(nodes)]})
				switch {
				case err != nil:
					fail <- err.Error()
				case r.Status == http.StatusOK:
					var th thread
					r.JSON(t, &th)
					mu.Lock()
					created = append(created, th.ThreadID)
					mu.Unlock()
				case r.Status != http.StatusUnprocessableEntity:
					fail <- fmt.Sprintf("create: %d %s", r.Status, r.Body)
				}
			})
			if i == 8 {
				wg.Go(func() {
					r, err := s.Try("DELETE", "/threads/"+root.ThreadID+"?strategy=cascade", nil)
					if err != nil || r.Status != http.StatusNoContent {
						fail <- fmt.Sprintf("delete: %v %v", err, r)
					}
				})
			}
		}
		wg.Wait()
		close(fail)
		for f := range fail {
			t.Fatalf("round %d: %s", round, f)
		}
		// Every thread created under the subtree went with it.
		for _, id := range append(nodes, created...) {
			if r := s.Do("GET", "/threads/"+id, nil); r.Status != http.StatusNotFound {
				t.Fatalf("round %d: %s survived the cascade (status %d)", round, id, r.Status)
			}
		}
		var orphans int
		if err := s.DB.QueryRow(t.Context(), `SELECT count(*) FROM threads c WHERE parent_thread_id IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM threads p WHERE p.thread_id = c.parent_thread_id)`).Scan(&orphans); err != nil || orphans != 0 {
			t.Fatalf("round %d: %d orphans (%v)", round, orphans, err)
		}
	}
}

// A path served by a literal route (an action such as /threads/search or
// /threads/{thread_id}/runs/wait) answers a method only a parameter route
// of the same shape has (GET /threads/{thread_id}, GET
// /threads/{thread_id}/runs/{run_id}) with 405 and the literal route's
// Allow, as any other method a route lacks, not as that route with a bad
// id; OPTIONS gets the same Allow. The routes themselves still serve.
func TestShadowedRoutesAnswer405(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	tid := create(t, s, nil).ThreadID
	missing := uuid.NewString()
	for _, c := range []struct{ method, path, allow string }{
		{"GET", "/threads/search", "POST"}, {"GET", "/threads/count", "POST"}, {"DELETE", "/threads/prune", "POST"},
		{"PATCH", "/threads/search", "POST"}, {"GET", "/runs/wait", "POST"}, {"GET", "/assistants/search", "POST"},
		{"GET", "/runs/crons", "POST"}, {"GET", "/runs/crons/search", "POST"}, {"HEAD", "/runs/stream", "POST"},
		{"GET", "/threads/" + tid + "/runs/wait", "POST"}, {"HEAD", "/threads/" + tid + "/runs/wait", "POST"},
		{"DELETE", "/threads/" + tid + "/runs/wait", "POST"}, {"OPTIONS", "/threads/" + tid + "/runs/wait", "POST"},
		{"GET", "/threads/" + tid + "/runs/stream", "POST"}, {"GET", "/threads/" + tid + "/runs/crons", "POST"},
		{"GET", "/threads/" + tid + "/state/checkpoint", "POST"},
		{"OPTIONS", "/threads/" + tid, "GET, HEAD, PATCH, DELETE"}, {"PUT", "/threads/" + tid + "/runs", "GET, HEAD, POST"},
		{"OPTIONS", "/threads/" + tid + "/runs/" + missing, "GET, HEAD, DELETE"},
		{"OPTIONS", "/threads/search", "POST"}, {"PUT", "/threads/" + tid + "/state", "GET, HEAD, POST, PATCH"},
	} {
		r := s.Do(c.method, c.path, nil)
		if r.Status != http.StatusMethodNotAllowed || r.Header.Get("Allow") != c.allow {
			t.Errorf("%s %s: %d Allow=%q %s; want 405 Allow=%q", c.method, c.path, r.Status, r.Header.Get("Allow"), r.Body, c.allow)
		}
		if c.method != "HEAD" && !strings.Contains(r.Detail(t), "accepts "+c.allow) {
			t.Errorf("%s %s: detail %q", c.method, c.path, r.Detail(t))
		}
	}
	// The routes on both sides still serve their own methods.
	for _, c := range []struct {
		method, path string
		status       int
		detail       string
	}{
		{"GET", "/threads/" + tid + "/runs/" + missing, 404, "not found"},
		{"GET", "/threads/" + tid + "/runs/nope", 422, "Invalid run ID"},
		{"POST", "/threads/" + missing + "/runs/wait", 404, "not found"},
		{"GET", "/threads/" + tid + "/state/" + missing, 404, ""},
		{"GET", "/runs/crons/" + missing, 404, "not found"},
	} {
		if r := s.Do(c.method, c.path, map[string]any{"assistant_id": "foo_bar"}); r.Status != c.status || !strings.Contains(r.Detail(t), c.detail) {
			t.Errorf("%s %s: %d %s; want %d %q", c.method, c.path, r.Status, r.Body, c.status, c.detail)
		}
	}
}
