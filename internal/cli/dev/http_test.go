package dev_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/weftdev/weft/internal/cli/dev/projecthttp"
)

// A project's http.app and ui (testdata/httpproject) served by weft dev in
// front of the API, as LangGraph's server mounts them.
func TestDevServesHTTPAppAndUI(t *testing.T) {
	t.Parallel()
	dev := startDev(t, []string{"--config", testProject(t, "httpproject"), "-workers", "0"})
	base := "http://" + dev.addr
	do := caller(t, base)
	waitServed(t, do, "/custom/hello")
	waitGraph(t, do, "caller")

	// A custom route, its middleware around it.
	res, b := do("GET", "/custom/hello?name=ada", nil, "x-in", "hey")
	if string(b) != `{"hello":"ada"}` || res.Header.Get("x-echo") != "hey" || res.Header.Get("x-project-middleware") != "seen" {
		t.Fatalf("custom route: %d %s %v", res.StatusCode, b, res.Header)
	}
	res, b = do("POST", "/custom/echo", map[string]any{"a": 1})
	if string(b) != `{"got":{"a":1}}` {
		t.Fatalf("custom POST: %d %s", res.StatusCode, b)
	}
	if res, _ = do("GET", "/custom/fail", nil); res.StatusCode != 400 {
		t.Fatalf("a route's HTTPException: %d, want 400", res.StatusCode)
	}
	// The API behind the app: the middleware runs around it, and may answer instead.
	res, b = do("GET", "/info", nil)
	if res.StatusCode != 200 || !bytes.Contains(b, []byte(`"version"`)) || res.Header.Get("x-project-middleware") != "seen" {
		t.Fatalf("/info through the app: %d %s %v", res.StatusCode, b, res.Header)
	}
	if res, b = do("GET", "/info?blocked", nil); res.StatusCode != 403 || string(b) != `{"blocked":true}` {
		t.Fatalf("middleware answering for the API: %d %s", res.StatusCode, b)
	}
	if res, _ = do("GET", "/does/not/exist", nil); res.StatusCode != 404 {
		t.Fatalf("a path neither the app nor the API has: %d, want 404", res.StatusCode)
	}
	out, b := do("POST", "/runs/wait?as=ada", map[string]any{"assistant_id": "caller", "input": map[string]any{}})
	if out.StatusCode != 200 || string(bytes.TrimSpace(b)) != `{"caller":"ada"}` || out.Header.Get("x-project-middleware") != "seen" {
		t.Fatalf("a run through the app, its middleware adding x-caller: %d %s", out.StatusCode, b)
	}
	// Probes and the worker API do not go through the app.
	if res, _ = do("GET", "/ok", nil); res.StatusCode != 200 || res.Header.Get("x-project-middleware") != "" {
		t.Fatalf("/ok: %d %v", res.StatusCode, res.Header)
	}
	// A WebSocket (protocol v2) reaches the API: an app cannot pass an upgrade on.
	_, tb := do("POST", "/threads", map[string]any{})
	var th map[string]any
	_ = json.Unmarshal(tb, &th)
	ws, wres, err := websocket.Dial(t.Context(), "ws://"+dev.addr+"/threads/"+th["thread_id"].(string)+"/stream/events", nil)
	if err != nil {
		t.Fatalf("a WebSocket through weft dev with an http.app: %v %v", err, wres)
	}
	ws.CloseNow()
	// Nobody else passes a request on as the app.
	if res, _ = do("GET", "/info?blocked", nil, projecthttp.PassHeader, "guess"); res.StatusCode != 403 ||
		res.Header.Get("x-project-middleware") != "" {
		t.Fatalf("a forged pass: %d", res.StatusCode)
	}

	// A streamed answer of the app arrives line by line.
	req, _ := http.NewRequest("GET", base+"/custom/stream", nil)
	sres, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(sres.Body)
	var lines []string
	for {
		l, err := r.ReadString('\n')
		if err != nil {
			break
		}
		lines = append(lines, strings.TrimSpace(l))
	}
	sres.Body.Close()
	if strings.Join(lines, ",") != "line 0,line 1,line 2" {
		t.Fatalf("streamed route: %q", lines)
	}

	// Generative UI: the HTML that loads a component, and its bundle.
	servesUI(t, do, dev.addr)
}

// servesUI fails unless the project's ui "card" is served (the HTML that
// loads the component, asked with header, its bundle, a 404 for another
// name) and the web UI's own files stay the server's.
func servesUI(t *testing.T, do func(method, path string, body any, header ...string) (*http.Response, []byte), addr string, header ...string) {
	t.Helper()
	res, b := do("POST", "/ui/card", map[string]any{"name": "card"}, header...)
	want := `<script src="http://` + addr + `/ui/card/entrypoint.js" onload='__LGUI_card.render("card", "{{shadowRootId}}")'></script>`
	if res.StatusCode != 200 || !strings.Contains(string(b), want) {
		t.Fatalf("POST /ui/card: %d %s, want it to hold %s", res.StatusCode, b, want)
	}
	res, b = do("GET", "/ui/card/entrypoint.js", nil)
	if res.StatusCode != 200 || !strings.Contains(res.Header.Get("Content-Type"), "javascript") || !bytes.Contains(b, []byte("LGUI_REQUIRE")) {
		t.Fatalf("the bundle: %d %s %.200s", res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	if res, _ = do("POST", "/ui/nope", map[string]any{"name": "x"}, header...); res.StatusCode != 404 {
		t.Fatalf("POST /ui/nope: %d, want 404", res.StatusCode)
	}
	if res, b = do("GET", "/ui/config.json", nil); res.StatusCode != 200 || !bytes.Contains(b, []byte("assets")) {
		t.Fatalf("the web UI's config: %d %s", res.StatusCode, b)
	}
}

// caller is a function doing one request to base (a JSON body, headers as
// name, value pairs): its response and body (nil, nil when it failed).
func caller(t *testing.T, base string) func(method, path string, body any, header ...string) (*http.Response, []byte) {
	return func(method, path string, body any, header ...string) (*http.Response, []byte) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, base+path, rd)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, nil
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, b
	}
}

// waitServed waits until GET path answers 200 (headers as for do).
func waitServed(t *testing.T, do func(string, string, any, ...string) (*http.Response, []byte), path string, header ...string) {
	t.Helper()
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if res, _ := do("GET", path, nil, header...); res != nil && res.StatusCode == 200 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s never answered 200: the project's http.app was never served", path)
		}
	}
}

// waitGraph waits until the worker registered graph id (its system
// assistant answers): the app's routes can be served first.
func waitGraph(t *testing.T, do func(string, string, any, ...string) (*http.Response, []byte), id string, header ...string) {
	t.Helper()
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if res, _ := do("GET", "/assistants/"+id, nil, header...); res != nil && res.StatusCode == 200 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("graph %s was never registered", id)
		}
	}
}

// sameRefusal fails unless got is the answer want is: the API's own answer
// to a request that failed authentication.
func sameRefusal(t *testing.T, what string, got *http.Response, gotBody []byte, want *http.Response, wantBody []byte) {
	t.Helper()
	if got == nil || want == nil {
		t.Fatalf("%s: no answer", what)
	}
	if got.StatusCode != want.StatusCode || !bytes.Equal(gotBody, wantBody) ||
		got.Header.Get("Content-Type") != want.Header.Get("Content-Type") ||
		got.Header.Get("WWW-Authenticate") != want.Header.Get("WWW-Authenticate") {
		t.Fatalf("%s: %d %q (%s, %q), want the API's %d %q (%s, %q)", what,
			got.StatusCode, gotBody, got.Header.Get("Content-Type"), got.Header.Get("WWW-Authenticate"),
			want.StatusCode, wantBody, want.Header.Get("Content-Type"), want.Header.Get("WWW-Authenticate"))
	}
}

// http.enable_custom_route_auth on a JS http.app (testdata/httpauth): a
// request to one of the app's routes is authenticated by auth.path first,
// as LangGraph.js's server authenticates it; its user is c.get("auth").
// Without the flag the routes are not authenticated (the API routes are).
func TestDevCustomRouteAuthJS(t *testing.T) {
	t.Parallel()
	t.Run("enabled", func(t *testing.T) {
		t.Parallel()
		dev := startDev(t, []string{"--config", testProject(t, "httpauth"), "-workers", "0"})
		do := caller(t, "http://"+dev.addr)
		alice := []string{"Authorization", "Bearer token-alice"}
		waitServed(t, do, "/custom/whoami", alice...)

		res, b := do("GET", "/custom/whoami", nil, alice...)
		var who struct {
			User   map[string]any `json:"user"`
			Scopes []string       `json:"scopes"`
		}
		if err := json.Unmarshal(b, &who); err != nil || res.StatusCode != 200 {
			t.Fatalf("whoami as alice: %d %s", res.StatusCode, b)
		}
		u := who.User
		if u["identity"] != "alice" || u["display_name"] != "alice" || u["is_authenticated"] != true || u["team"] != "red" ||
			fmt.Sprint(u["permissions"]) != "[read write]" || fmt.Sprint(who.Scopes) != "[read write]" {
			t.Fatalf(`whoami as alice: %s, want c.get("auth") as LangGraph.js's server sets it`, b)
		}
		if got := res.Header.Get("x-middleware-user"); got != "alice" {
			t.Fatalf("the app's middleware saw %q, want alice (authentication comes first)", got)
		}
		// The body of an authenticated request reaches its route.
		if res, b = do("POST", "/custom/echo", map[string]any{"a": 1}, "Authorization", "Bearer token-bob"); string(b) != `{"got":{"a":1},"by":"bob"}` {
			t.Fatalf("POST /custom/echo as bob: %d %s", res.StatusCode, b)
		}

		// Refused as the API refuses: the same status, body and headers.
		api, apiBody := do("POST", "/threads/search", map[string]any{})
		if api.StatusCode != 401 || string(apiBody) != "Invalid token" {
			t.Fatalf("the API without a token: %d %q", api.StatusCode, apiBody)
		}
		res, b = do("GET", "/custom/whoami", nil)
		sameRefusal(t, "a custom route without a token", res, b, api, apiBody)
		if res.Header.Get("x-middleware-user") != "" {
			t.Fatal("a refused request reached the app's middleware")
		}
		res, b = do("POST", "/custom/echo", map[string]any{"a": 1}, "Authorization", "Bearer nobody")
		api, apiBody = do("POST", "/threads/search", map[string]any{}, "Authorization", "Bearer nobody")
		sameRefusal(t, "a custom route with a bad token", res, b, api, apiBody)
		res, b = do("GET", "/custom/whoami", nil, "Accept", "application/json")
		api, apiBody = do("POST", "/threads/search", map[string]any{}, "Accept", "application/json")
		sameRefusal(t, "a custom route asked for JSON", res, b, api, apiBody)
		if string(bytes.TrimSpace(b)) != `{"detail":"Invalid token"}` {
			t.Fatalf("JSON refusal %s", b)
		}

		// The API behind the app: authenticated by the API, once.
		waitGraph(t, do, "caller", alice...)
		if res, b = do("POST", "/runs/wait", map[string]any{"assistant_id": "caller", "input": map[string]any{}}, alice...); string(bytes.TrimSpace(b)) != `{"caller":"alice"}` {
			t.Fatalf("a run as alice through the app: %d %s", res.StatusCode, b)
		}
		if res, _ = do("GET", "/info", nil); res.StatusCode != 200 {
			t.Fatalf("/info without a token: %d", res.StatusCode)
		}
		// A client cannot make the app's pass-on an authentication request.
		res, b = do("POST", "/threads/search", map[string]any{}, append(alice, projecthttp.AuthenticateHeader, "1")...)
		if res.StatusCode != 200 || !bytes.HasPrefix(b, []byte("[")) {
			t.Fatalf("a client's %s: %d %s, want the API's search", projecthttp.AuthenticateHeader, res.StatusCode, b)
		}
	})
	t.Run("disabled", func(t *testing.T) {
		t.Parallel()
		config := testProject(t, "httpauth")
		raw, err := os.ReadFile(config)
		if err != nil {
			t.Fatal(err)
		}
		raw = bytes.Replace(raw, []byte(`"enable_custom_route_auth": true`), []byte(`"enable_custom_route_auth": false`), 1)
		if err := os.WriteFile(config, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		dev := startDev(t, []string{"--config", config, "-workers", "0"})
		do := caller(t, "http://"+dev.addr)
		waitServed(t, do, "/custom/whoami")
		if res, b := do("GET", "/custom/whoami", nil); res.StatusCode != 200 || string(b) != "null" {
			t.Fatalf("a custom route without the flag: %d %s, want it served unauthenticated", res.StatusCode, b)
		}
		if res, _ := do("POST", "/threads/search", map[string]any{}); res.StatusCode != 401 {
			t.Fatalf("the API without a token: %d, want 401", res.StatusCode)
		}
	})
}

// A Python http.app beside a JS ui (testdata/pyhttpui): the JS worker
// bundles and serves the ui, the Python worker the app, the API the rest;
// with http.enable_custom_route_auth the app's routes are authenticated by
// the project's (JS) auth.path first, inside the app's own middleware, as
// LangGraph's Python server does, and read the user as request.user.
func TestDevPythonHTTPAppWithUI(t *testing.T) {
	t.Parallel()
	python := testPython(t)
	dev := startDev(t, []string{"--config", testProject(t, "pyhttpui"), "-workers", "0"}, "WEFT_PYTHON="+python)
	do := caller(t, "http://"+dev.addr)
	alice := []string{"Authorization", "Bearer token-alice"}
	waitServed(t, do, "/custom/whoami", alice...)
	waitGraph(t, do, "echo_py", alice...)

	res, b := do("GET", "/custom/whoami", nil, alice...)
	if res.StatusCode != 200 || string(b) != `{"identity":"alice","display_name":"alice","is_authenticated":true,"team":"red","scopes":["read","write"]}` {
		t.Fatalf("whoami as alice: %d %s, want request.user and request.auth", res.StatusCode, b)
	}
	if res, b = do("POST", "/custom/echo", map[string]any{"a": 1}, alice...); string(b) != `{"got":{"a":1},"by":"alice"}` {
		t.Fatalf("POST /custom/echo as alice: %d %s", res.StatusCode, b)
	}
	api, apiBody := do("POST", "/threads/search", map[string]any{})
	if api.StatusCode != 401 || string(bytes.TrimSpace(apiBody)) != `{"detail":"Invalid token"}` {
		t.Fatalf("the API without a token: %d %s", api.StatusCode, apiBody)
	}
	res, b = do("GET", "/custom/whoami", nil)
	sameRefusal(t, "a custom route without a token", res, b, api, apiBody)
	if res.Header.Get("x-app-middleware") != "seen" {
		t.Fatal("a custom route's refusal did not go through the app's middleware")
	}

	// The ui, bundled and served by the JS worker; a component is
	// authenticated as the API's routes are, its files are not.
	res, b = do("POST", "/ui/card", map[string]any{"name": "card"})
	sameRefusal(t, "a ui component without a token", res, b, api, apiBody)
	servesUI(t, do, dev.addr, alice...)
	// The rest: the API, behind the Python app.
	if res, b = do("POST", "/runs/wait", map[string]any{"assistant_id": "echo_py", "input": map[string]any{"text": "hi"}}, alice...); string(bytes.TrimSpace(b)) != `{"text":"hi (alice)"}` {
		t.Fatalf("a Python run as alice: %d %s", res.StatusCode, b)
	}
	if res, _ = do("GET", "/does/not/exist", nil, alice...); res.StatusCode != 404 {
		t.Fatalf("a path nobody has: %d, want 404", res.StatusCode)
	}
}

// testPython is the interpreter for tests running the Python worker:
// WEFT_TEST_PYTHON, else the Python suites' virtualenv (make test-go
// makes it); it must import langgraph, uvicorn and starlette.
func testPython(t *testing.T) string {
	t.Helper()
	python := os.Getenv("WEFT_TEST_PYTHON")
	if python == "" {
		p, err := filepath.Abs("../../../sdk-tests/py/.venv/bin/python")
		if err != nil {
			t.Fatal(err)
		}
		python = p
	}
	if out, err := exec.Command(python, "-c", "import langgraph.graph, uvicorn, starlette").CombinedOutput(); err != nil {
		t.Fatalf("no Python with langgraph, uvicorn and starlette at %s (set WEFT_TEST_PYTHON, or make sdk-tests/py/.venv/.installed): %v %s", python, err, out)
	}
	return python
}
