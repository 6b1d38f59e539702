package httpapi

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/httpx"
)

// get sends GET path with accept (none when empty) and returns status,
// content type and body.
func get(t *testing.T, url, accept string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

func TestTextErrors(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		httpx.WriteJSON(w, http.StatusNotFound, httpx.ErrorBody{Detail: "Assistant not found: x"})
	})
	mux.HandleFunc("/dispatch/claim", func(w http.ResponseWriter, r *http.Request) {
		httpx.WriteJSON(w, http.StatusConflict, httpx.ErrorBody{Detail: "stale claim"})
	})
	mux.HandleFunc("/other-shape", func(w http.ResponseWriter, r *http.Request) {
		httpx.WriteJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": -32600}})
	})
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		httpx.WriteJSON(w, http.StatusOK, map[string]any{"detail": "not an error"})
	})
	srv := httptest.NewServer(textErrors(mux))
	defer srv.Close()

	for _, c := range []struct {
		path, accept string
		status       int
		ctype, body  string
	}{
		{"/missing", "", 404, "text/plain; charset=utf-8", "Assistant not found: x"},
		{"/missing", "*/*", 404, "text/plain; charset=utf-8", "Assistant not found: x"},
		{"/missing", "text/html, application/json;q=0.9", 404, "application/json", `{"detail":"Assistant not found: x"}` + "\n"},
		{"/dispatch/claim", "", 409, "application/json", `{"detail":"stale claim"}` + "\n"},
		{"/other-shape", "", 400, "application/json", `{"error":{"code":-32600}}` + "\n"},
		{"/ok", "", 200, "application/json", `{"detail":"not an error"}` + "\n"},
	} {
		status, ctype, body := get(t, srv.URL+c.path, c.accept)
		if status != c.status || ctype != c.ctype || body != c.body {
			t.Errorf("GET %s (Accept %q): %d %s %q, want %d %s %q", c.path, c.accept, status, ctype, body, c.status, c.ctype, c.body)
		}
	}
}

// A stream passes through the error rewriting as it is written: its first
// event arrives while the handler is still running.
func TestRewritingKeepsStreamsFlowing(t *testing.T) {
	release := make(chan struct{})
	stream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "event: metadata\ndata: {}\n\n")
		http.NewResponseController(w).Flush()
		<-release
	})
	srv := httptest.NewServer(textErrors(missingAs(streamErrorIfMissing)(stream)))
	defer srv.Close()
	defer close(release)
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(resp.Body).ReadString('\n')
		line <- l
	}()
	select {
	case l := <-line:
		if l != "event: metadata\n" {
			t.Fatalf("first line %q", l)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the first event was held back")
	}
}

func TestMissingAs(t *testing.T) {
	notFound := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpx.WriteJSON(w, http.StatusNotFound, httpx.ErrorBody{Detail: "Thread with ID t not found"})
	})
	found := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpx.WriteJSON(w, http.StatusOK, map[string]string{"thread_id": "t"})
	})
	for _, c := range []struct {
		name        string
		h           http.Handler
		status      int
		ctype, body string
	}{
		{"copy", missingAs(conflictIfMissing)(notFound), 409, "application/json", `{"detail":"Thread with ID t not found"}` + "\n"},
		{"copy, text errors", textErrors(missingAs(conflictIfMissing)(notFound)), 409, "text/plain; charset=utf-8", "Thread with ID t not found"},
		{"join", missingAs(streamErrorIfMissing)(notFound), 200, "text/event-stream",
			"event: error\ndata: {\"error\":\"NotFoundError\",\"message\":\"404: Thread with ID t not found\"}\n\n"},
		{"found", missingAs(conflictIfMissing)(found), 200, "application/json", `{"thread_id":"t"}` + "\n"},
	} {
		srv := httptest.NewServer(c.h)
		status, ctype, body := get(t, srv.URL, "")
		srv.Close()
		if status != c.status || ctype != c.ctype || body != c.body {
			t.Errorf("%s: %d %s %q, want %d %s %q", c.name, status, ctype, body, c.status, c.ctype, c.body)
		}
	}
}
