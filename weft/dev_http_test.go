package weft_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/weftdev/weft/internal/projecthttp"
)

// A project's http.app and ui (testdata/httpproject) served by weft dev in
// front of the API, as LangGraph's server mounts them.
func TestDevServesHTTPAppAndUI(t *testing.T) {
	t.Parallel()
	dev := startDev(t, []string{"--config", testProject(t, "httpproject"), "-workers", "0"})
	base := "http://" + dev.addr
	do := func(method, path string, body any, header ...string) (*http.Response, []byte) {
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
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if res, _ := do("GET", "/custom/hello", nil); res != nil && res.StatusCode == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the project's http.app was never served")
		}
	}

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
	res, b = do("POST", "/ui/card", map[string]any{"name": "card"})
	want := `<script src="http://` + dev.addr + `/ui/card/entrypoint.js" onload='__LGUI_card.render("card", "{{shadowRootId}}")'></script>`
	if res.StatusCode != 200 || !strings.Contains(string(b), want) {
		t.Fatalf("POST /ui/card: %d %s, want it to hold %s", res.StatusCode, b, want)
	}
	res, b = do("GET", "/ui/card/entrypoint.js", nil)
	if res.StatusCode != 200 || !strings.Contains(res.Header.Get("Content-Type"), "javascript") || !bytes.Contains(b, []byte("LGUI_REQUIRE")) {
		t.Fatalf("the bundle: %d %s %.200s", res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	if res, _ = do("POST", "/ui/nope", map[string]any{"name": "x"}); res.StatusCode != 404 {
		t.Fatalf("POST /ui/nope: %d, want 404", res.StatusCode)
	}
	// The web UI's own files stay the server's.
	if res, b = do("GET", "/ui/config.json", nil); res.StatusCode != 200 || !bytes.Contains(b, []byte("assets")) {
		t.Fatalf("the web UI's config: %d %s", res.StatusCode, b)
	}
}
