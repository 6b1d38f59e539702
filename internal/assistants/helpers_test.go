package assistants_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server/servertest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// start runs a server on a fresh database (the built-in graphs, two
// in-process workers).
func start(t *testing.T) *servertest.Server {
	t.Helper()
	t.Parallel()
	return servertest.Start(t)
}

// create creates an assistant and returns it.
func create(t *testing.T, s *servertest.Server, body map[string]any) map[string]any {
	t.Helper()
	return s.Must(http.StatusOK, "POST", "/assistants", body).Map(t)
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// wantJSON compares got with the JSON text want, key order aside.
func wantJSON(t *testing.T, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want %s: %v", want, err)
	}
	var g any
	if err := json.Unmarshal([]byte(js(got)), &g); err != nil {
		t.Fatal(err)
	}
	if js(g) != js(w) {
		t.Fatalf("%s = %s, want %s", what, js(g), js(w))
	}
}

// dbCount runs a count query on the server's database.
func dbCount(t *testing.T, s *servertest.Server, q string, args ...any) int {
	t.Helper()
	var n int
	if err := s.DB.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// list decodes a JSON array of objects.
func list(t *testing.T, r *servertest.Response) []map[string]any {
	t.Helper()
	var l []map[string]any
	r.JSON(t, &l)
	return l
}

// field collects one field of every object of l.
func field(l []map[string]any, name string) []any {
	out := make([]any, len(l))
	for i, m := range l {
		out[i] = m[name]
	}
	return out
}

func newThread(t *testing.T, s *servertest.Server, metadata map[string]any) string {
	t.Helper()
	return s.Must(http.StatusOK, "POST", "/threads", map[string]any{"metadata": metadata}).Map(t)["thread_id"].(string)
}

// runEnd polls until the run has ended and returns it (within 20 s).
func runEnd(t *testing.T, s *servertest.Server, tid, rid string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		run := s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs/"+rid, nil).Map(t)
		if st := run["status"]; st != "pending" && st != "running" {
			return run
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s did not end: %v", rid, run["status"])
		}
		time.Sleep(20 * time.Millisecond)
	}
}
