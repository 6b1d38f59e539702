package servertest

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
)

// Thread is GET /threads/{tid}, which must answer 200.
func Thread(t testing.TB, s *Server, tid string) map[string]any {
	t.Helper()
	return s.Must(http.StatusOK, "GET", "/threads/"+tid, nil).Map(t)
}

// State is GET /threads/{tid}/state, which must answer 200.
func State(t testing.TB, s *Server, tid string) map[string]any {
	t.Helper()
	return s.Must(http.StatusOK, "GET", "/threads/"+tid+"/state", nil).Map(t)
}

// History is the thread's last 100 checkpoints' states, newest first.
func History(t testing.TB, s *Server, tid string) []map[string]any {
	t.Helper()
	var h []map[string]any
	s.Must(http.StatusOK, "POST", "/threads/"+tid+"/history", map[string]any{"limit": 100}).JSON(t, &h)
	return h
}

// JS is v as JSON text (for messages and comparisons).
func JS(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// WantJSON fails t unless got encodes as the JSON want does.
func WantJSON(t testing.TB, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want %s: %v", want, err)
	}
	if JS(got) != JS(w) {
		t.Fatalf("%s = %s, want %s", what, JS(got), JS(w))
	}
}

// DBCount runs a count query on the server's database.
func DBCount(t testing.TB, s *Server, q string, args ...any) int {
	t.Helper()
	var n int
	if err := s.DB.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}
