package weft

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

// send makes a request with an API key; it returns the status and body.
func send(t *testing.T, method, url, key string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// RunWorker authenticates with its APIKey (worker scope): without a key
// the server refuses it; with one it serves runs that a tenant key starts.
func TestWorkerAPIKey(t *testing.T) {
	t.Parallel()
	srv := servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) { c.Auth = "keys"; c.Workers = 0 })
	ctx := context.Background()
	workerKey, _, err := auth.APIKeyCreate(ctx, srv.DB, "", []string{auth.ScopeWorker}, "")
	if err != nil {
		t.Fatal(err)
	}
	tenantKey, _, err := auth.APIKeyCreate(ctx, srv.DB, "acme", []string{auth.ScopeTenant}, "")
	if err != nil {
		t.Fatal(err)
	}
	g := &graph.Graph{ID: "go_shout", Channels: []graph.Channel{{Name: "text"}},
		Nodes: []graph.Node{{Name: "shout", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
			s, _ := in.Values["text"].(string)
			return graph.State{"text": strings.ToUpper(s)}, nil
		}}},
		Edges: []graph.Edge{{From: graph.START, To: "shout"}, {From: "shout", To: graph.END}}}
	reg := registry(t, g)

	for _, key := range []string{"", tenantKey, "weft_wrong"} {
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := RunWorker(wctx, srv.URL, reg, WorkerOptions{APIKey: key, Logger: quietLog()})
		cancel()
		if err == nil || !(strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "403")) {
			t.Fatalf("RunWorker with key %q: %v, want a 401/403 refusal", key, err)
		}
	}

	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- RunWorker(wctx, srv.URL, reg, WorkerOptions{APIKey: workerKey, Logger: quietLog()}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("RunWorker: %v", err)
		}
	})
	waitFor(t, 15*time.Second, "go_shout registered", func() bool {
		st, _ := send(t, "GET", srv.URL+"/assistants/go_shout", tenantKey, nil)
		return st == 200
	})
	st, b := send(t, "POST", srv.URL+"/runs/wait", tenantKey, map[string]any{"assistant_id": "go_shout", "input": map[string]any{"text": "hi"}})
	if st != 200 || !strings.Contains(string(b), `"HI"`) {
		t.Fatalf("run on the worker: %d %s", st, b)
	}
}
