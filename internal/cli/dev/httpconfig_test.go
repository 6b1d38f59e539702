package dev_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server/servertest"
)

// langgraph.json's http server knobs applied by weft dev
// (testdata/httpknobs/langgraph.json): http.cors as the whole CORS policy
// (with Private Network Access for its origins), route groups turned off,
// every route under http.mount_prefix, the request headers
// http.logging_headers names in the log, http.middleware_order auth_first
// (a request refused by auth.path never reaches the http.app's
// middleware), and http.disable_webhooks. One server serves every check.
func TestDevHTTPKnobs(t *testing.T) {
	t.Parallel()
	var hooks atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hooks.Add(1) }))
	t.Cleanup(hook.Close)
	dev := startDev(t, []string{"--config", testProject(t, "httpknobs"), "-workers", "0", "-webhook-allow-private", "true"})
	root := "http://" + dev.addr
	do := caller(t, root)
	alice := []string{"Authorization", "Bearer token-alice"}
	waitServed(t, do, "/api/custom/hello", alice...)
	waitServed(t, do, "/api/assistants/caller", alice...) // the worker registered its graph under the prefix

	t.Run("mount_prefix", func(t *testing.T) {
		// The API, the worker API (the worker registered its graph) and the
		// app under /api; nothing but the probes outside it.
		if res, b := do("GET", "/api/assistants/caller", nil, alice...); res.StatusCode != 200 || !bytes.Contains(b, []byte(`"graph_id":"caller"`)) {
			t.Fatalf("GET /api/assistants/caller: %d %s", res.StatusCode, b)
		}
		if res, b := do("POST", "/api/runs/wait", map[string]any{"assistant_id": "caller", "input": map[string]any{}}, alice...); res.StatusCode != 200 ||
			string(bytes.TrimSpace(b)) != `{"caller":"alice"}` {
			t.Fatalf("a run under /api: %d %s", res.StatusCode, b)
		}
		for _, path := range []string{"/assistants/caller", "/threads/search", "/custom/hello", "/ui/config.json", "/apix/assistants/caller", "/dispatch/claim"} {
			if res, _ := do("GET", path, nil, alice...); res.StatusCode != 404 {
				t.Errorf("GET %s outside the prefix: %d, want 404", path, res.StatusCode)
			}
		}
		for _, path := range []string{"/", "/ok", "/livez", "/api/ok"} {
			if res, b := do("GET", path, nil); res.StatusCode != 200 || !bytes.Contains(b, []byte(`"ok":true`)) {
				t.Errorf("GET %s: %d %s, want the health check", path, res.StatusCode, b)
			}
		}
		res, _ := http.DefaultTransport.RoundTrip(mustRequest(t, "GET", root+"/api?x=1"))
		if res.StatusCode != http.StatusTemporaryRedirect || res.Header.Get("Location") != "/api/?x=1" {
			t.Errorf("GET /api: %d Location %q, want 307 to /api/?x=1", res.StatusCode, res.Header.Get("Location"))
		}
		res.Body.Close()
		// The web UI under the prefix: its page refers to everything relative to itself.
		if res, b := do("GET", "/api/", nil); res.StatusCode != 200 || !bytes.Contains(b, []byte(`src="ui/boot.js"`)) {
			t.Errorf("GET /api/: %d %.300s", res.StatusCode, b)
		}
		if res, b := do("GET", "/api/ui/config.json", nil); res.StatusCode != 200 || !bytes.Contains(b, []byte(`"assets"`)) {
			t.Errorf("GET /api/ui/config.json: %d %s", res.StatusCode, b)
		}
	})

	t.Run("disable", func(t *testing.T) {
		// Off: store, meta (GET /ok stays), mcp, a2a; the rest is served.
		for _, c := range []struct{ method, path string }{{"POST", "/api/store/namespaces"}, {"PUT", "/api/store/items"},
			{"GET", "/api/info"}, {"GET", "/api/openapi.yaml"}, {"GET", "/api/metrics"}, {"POST", "/api/mcp"},
			{"GET", "/api/.well-known/agent-card.json"}, {"POST", "/api/a2a/caller"}} {
			if res, b := do(c.method, c.path, map[string]any{}, alice...); res.StatusCode != 404 {
				t.Errorf("%s %s: %d %s, want 404 (its group is off)", c.method, c.path, res.StatusCode, b)
			}
		}
		for _, c := range []struct{ method, path string }{{"POST", "/api/assistants/search"}, {"POST", "/api/threads/search"}, {"POST", "/api/runs/crons/search"}} {
			if res, b := do(c.method, c.path, map[string]any{}, alice...); res.StatusCode != 200 {
				t.Errorf("%s %s: %d %s, want 200", c.method, c.path, res.StatusCode, b)
			}
		}
	})

	t.Run("cors", func(t *testing.T) {
		preflight := func(origin, method, headers string, pna bool) (*http.Response, []byte) {
			h := []string{"Origin", origin, "Access-Control-Request-Method", method}
			if headers != "" {
				h = append(h, "Access-Control-Request-Headers", headers)
			}
			if pna {
				h = append(h, "Access-Control-Request-Private-Network", "true")
			}
			return do("OPTIONS", "/api/threads/search", nil, h...)
		}
		res, b := preflight("https://app.example.com", "POST", "authorization, content-type", false)
		want := map[string]string{"Access-Control-Allow-Origin": "https://app.example.com", "Access-Control-Allow-Credentials": "true",
			"Access-Control-Allow-Methods": "GET, POST", "Access-Control-Max-Age": "123",
			"Access-Control-Allow-Headers": "Accept, Accept-Language, Content-Language, Content-Type, authorization, x-custom"}
		if res.StatusCode != 200 || string(b) != "OK" {
			t.Errorf("allowed preflight: %d %q", res.StatusCode, b)
		}
		for k, v := range want {
			if got := res.Header.Get(k); got != v {
				t.Errorf("allowed preflight: %s %q, want %q", k, got, v)
			}
		}
		for _, c := range []struct{ origin, method, headers, body string }{
			{"https://evil.example", "POST", "", "Disallowed CORS origin"},
			{"http://localhost:3000", "POST", "", "Disallowed CORS origin"}, // the policy replaces the loopback default
			{"https://pr7.preview.example.com.evil.io", "GET", "", "Disallowed CORS origin"},
			{"https://app.example.com", "DELETE", "", "Disallowed CORS method"},
			{"https://app.example.com", "GET", "x-other", "Disallowed CORS headers"},
		} {
			res, b := preflight(c.origin, c.method, c.headers, false)
			if res.StatusCode != 400 || string(b) != c.body || (strings.Contains(c.body, "origin") && res.Header.Get("Access-Control-Allow-Origin") != "") {
				t.Errorf("preflight %s %s %q: %d %q ACAO %q, want 400 %q", c.origin, c.method, c.headers, res.StatusCode, b,
					res.Header.Get("Access-Control-Allow-Origin"), c.body)
			}
		}
		if res, _ := preflight("https://pr7.preview.example.com", "GET", "", false); res.StatusCode != 200 ||
			res.Header.Get("Access-Control-Allow-Origin") != "https://pr7.preview.example.com" {
			t.Errorf("an origin matching allow_origin_regex: %d %v", res.StatusCode, res.Header)
		}
		// Private Network Access: for the policy's origins only.
		if res, _ := preflight("https://app.example.com", "POST", "", true); res.StatusCode != 200 || res.Header.Get("Access-Control-Allow-Private-Network") != "true" {
			t.Errorf("PNA preflight of an allowed origin: %d %v", res.StatusCode, res.Header)
		}
		if res, _ := preflight("https://evil.example", "POST", "", true); res.StatusCode != 400 || res.Header.Get("Access-Control-Allow-Private-Network") != "" {
			t.Errorf("PNA preflight of another origin: %d %v", res.StatusCode, res.Header)
		}
		// Answers: the allowed origin named, with credentials and the exposed headers.
		res, _ = do("POST", "/api/threads", map[string]any{}, append(alice, "Origin", "https://app.example.com")...)
		if res.StatusCode != 200 || res.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
			res.Header.Get("Access-Control-Expose-Headers") != "content-location, x-pagination-total" || res.Header.Get("Access-Control-Allow-Credentials") != "true" {
			t.Errorf("a request of an allowed origin: %d %v", res.StatusCode, res.Header)
		}
		if res, _ = do("POST", "/api/threads/search", map[string]any{}, append(alice, "Origin", "http://localhost:3000")...); res.StatusCode != 200 ||
			res.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("a request of another origin: %d %v, want it served without Access-Control-Allow-Origin", res.StatusCode, res.Header)
		}
	})

	t.Run("middleware_order auth_first", func(t *testing.T) {
		res, b := do("POST", "/api/threads/search", map[string]any{})
		if res.StatusCode != 401 || res.Header.Get("x-project-middleware") != "" {
			t.Fatalf("refused by auth: %d %s x-project-middleware %q, want 401 without the app's middleware", res.StatusCode, b, res.Header.Get("x-project-middleware"))
		}
		if res, _ := do("POST", "/api/threads/search", map[string]any{}, alice...); res.StatusCode != 200 || res.Header.Get("x-project-middleware") != "seen" {
			t.Fatalf("authenticated: %d, x-project-middleware %q, want the app's middleware", res.StatusCode, res.Header.Get("x-project-middleware"))
		}
	})

	t.Run("logging_headers", func(t *testing.T) {
		do("POST", "/api/threads/search", map[string]any{}, append(alice, "X-Trace-Me", "knob-7", "X-Trace-Secret", "s3cret",
			"X-Api-Key", "k", "User-Agent", "knobs-test")...)
		line := waitLog(t, dev, func(m map[string]any) bool {
			h, _ := m["req_header"].(map[string]any)
			return m["msg"] == "request" && h["x-trace-me"] == "knob-7"
		})
		h := line["req_header"].(map[string]any)
		if h["user-agent"] != "knobs-test" || h["x-trace-secret"] != nil || h["authorization"] != nil || h["x-api-key"] != nil || h["content-type"] != nil {
			t.Fatalf("req_header %v: want x-trace-me and user-agent only (excludes, credentials and unlisted headers left out)", h)
		}
	})

	t.Run("disable_webhooks", func(t *testing.T) {
		res, b := do("POST", "/api/runs", map[string]any{"assistant_id": "caller", "input": map[string]any{}, "webhook": hook.URL + "/done"}, alice...)
		var run struct {
			RunID string `json:"run_id"`
		}
		if res.StatusCode != 200 || json.Unmarshal(b, &run) != nil {
			t.Fatalf("a run with a webhook: %d %s", res.StatusCode, b)
		}
		waitLog(t, dev, func(m map[string]any) bool {
			return m["msg"] == "webhooks disabled, skipping webhook call" && m["run_id"] == run.RunID
		})
		time.Sleep(200 * time.Millisecond)
		if n := hooks.Load(); n != 0 {
			t.Fatalf("the webhook was called %d times", n)
		}
	})
}

// The other side (testdata/httpknobs/middleware_first.json): the project's
// middleware sees a request auth refuses; assistants, threads, runs and the
// web UI are off; the default CORS policy gives loopback origins Private
// Network Access.
func TestDevHTTPKnobsMiddlewareFirst(t *testing.T) {
	t.Parallel()
	config := filepath.Join(filepath.Dir(testProject(t, "httpknobs")), "middleware_first.json")
	dev := startDev(t, []string{"--config", config, "-workers", "0"})
	do := caller(t, "http://"+dev.addr)
	alice := []string{"Authorization", "Bearer token-alice"}
	waitServed(t, do, "/custom/hello", alice...)

	res, b := do("POST", "/store/namespaces", map[string]any{})
	if res.StatusCode != 401 || res.Header.Get("x-project-middleware") != "seen" {
		t.Errorf("refused by auth: %d %s x-project-middleware %q, want 401 through the app's middleware", res.StatusCode, b, res.Header.Get("x-project-middleware"))
	}
	for _, c := range []struct{ method, path string }{{"POST", "/assistants/search"}, {"GET", "/assistants/caller"},
		{"POST", "/threads"}, {"POST", "/threads/search"}, {"POST", "/runs/wait"}, {"POST", "/runs/crons/search"},
		{"GET", "/threads/00000000-0000-0000-0000-000000000001/runs"}, {"POST", "/threads/00000000-0000-0000-0000-000000000001/stream/events"},
		{"GET", "/inspect/threads/storage"}, {"GET", "/"}, {"GET", "/ui/config.json"}} {
		if res, b := do(c.method, c.path, map[string]any{}, alice...); res.StatusCode != 404 {
			t.Errorf("%s %s: %d %s, want 404 (its group is off)", c.method, c.path, res.StatusCode, b)
		}
	}
	for _, c := range []struct{ method, path string }{{"POST", "/store/namespaces"}, {"GET", "/info"}, {"GET", "/ok"}} {
		if res, b := do(c.method, c.path, map[string]any{}, alice...); res.StatusCode != 200 {
			t.Errorf("%s %s: %d %s, want 200", c.method, c.path, res.StatusCode, b)
		}
	}
	for _, c := range []struct {
		origin string
		pna    string
	}{{"http://localhost:3000", "true"}, {"https://evil.example", ""}} {
		res, _ := do("OPTIONS", "/store/namespaces", nil, "Origin", c.origin, "Access-Control-Request-Method", "POST",
			"Access-Control-Request-Private-Network", "true")
		if got := res.Header.Get("Access-Control-Allow-Private-Network"); got != c.pna {
			t.Errorf("PNA preflight from %s: Access-Control-Allow-Private-Network %q, want %q", c.origin, got, c.pna)
		}
	}
}

// A bad value of an http knob is refused at start, naming the key and why.
func TestDevHTTPKnobsRefused(t *testing.T) {
	t.Parallel()
	config := testProject(t, "httpknobs")
	for _, c := range []struct{ http, want string }{
		{`{"cors": {"allow_origin_regex": "(?<=a)b"}}`, "http.cors.allow_origin_regex"},
		{`{"cors": {"max_age": -1}}`, "http.cors.max_age: -1 must be a number of seconds >= 0"},
		{`{"cors": {"allow_origins": ["https://app.example.com/"]}}`, "http.cors.allow_origins"},
		{`{"cors": {"allow_origins": "https://app.example.com"}}`, "http.cors: allow_origins must be a list"},
		{`{"cors": {"allow_methods": ["GET POST"]}}`, "http.cors.allow_methods"},
		{`{"disable_meta": "yes"}`, "http.disable_meta: must be true or false"},
		{`{"mount_prefix": "api"}`, `http.mount_prefix: "api" must start with "/"`},
		{`{"mount_prefix": "/noauth"}`, "http.mount_prefix"},
		{`{"middleware_order": "auth_last"}`, "http.middleware_order: must be \"auth_first\" or \"middleware_first\""},
		{`{"logging_headers": {"includes": ["x-[a]"]}}`, "http.logging_headers: \"x-[a]\""},
	} {
		raw := []byte(`{"graphs": {"caller": "./caller.mjs:graph"}, "http": ` + c.http + `}`)
		path := filepath.Join(filepath.Dir(config), "bad.json")
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a server that starts is killed
		defer cancel()
		cmd := exec.CommandContext(ctx, servertest.Binary(t), "dev", "--config", path)
		cmd.Env = append(os.Environ(), "WEFT_ADDR="+servertest.FreeAddr(t), "DATABASE_URL="+pgtest.DSN(t))
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), c.want) {
			t.Errorf("http %s: %v %s, want exit 2 saying %q", c.http, err, out, c.want)
		}
	}
}

// waitLog waits for a log line of d that ok accepts and returns it.
func waitLog(t *testing.T, d *devProcess, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		d.logs.mu.Lock()
		for _, m := range d.logs.lines {
			if ok(m) {
				d.logs.mu.Unlock()
				return m
			}
		}
		d.logs.mu.Unlock()
	}
	t.Fatal("no such log line")
	return nil
}

func mustRequest(t *testing.T, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
