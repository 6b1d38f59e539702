package dev_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/server/servertest"
)

// projectConfigJSON is testdata/projectconfig's langgraph.json: the JS
// auth.path with auth.cache, a webhooks policy for a receiver on
// 127.0.0.1:port, and checkpointer.serde (ignored without Python graphs).
func projectConfigJSON(port int, cacheTTL int) map[string]any {
	return map[string]any{
		"graphs": map[string]any{"foo_bar_js": "./foo_bar.mjs:graph"},
		"auth": map[string]any{"path": "./auth.mjs:auth", "disable_studio_auth": true,
			"cache": map[string]any{"cache_keys": []string{"Authorization"}, "ttl_seconds": cacheTTL, "max_size": 2}},
		"webhooks": map[string]any{
			"env_prefix": "WEFT_TEST_HOOK_",
			"headers":    map[string]any{"X-Hook-Token": "Bearer ${{ env.WEFT_TEST_HOOK_SECRET }}", "X-Static": "plain"},
			"url": map[string]any{"require_https": false, "allowed_domains": []string{"127.0.0.1", "*.hooks.test"},
				"allowed_ports": []int{port}, "max_url_length": 120, "disable_loopback": false},
			"allowed_fields": []string{"run_id", "status", "values"},
		},
		"checkpointer": map[string]any{"serde": map[string]any{"pickle_fallback": true}},
	}
}

// writeConfig writes cfg as the langgraph.json at path.
func writeConfig(t *testing.T, path string, cfg map[string]any) {
	t.Helper()
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// `weft dev` applies langgraph.json's auth.cache (the authenticate
// handler's results kept per cache-key header, for the ttl, least recently
// used dropped beyond max_size) and webhooks (the URL policy at run and cron
// creation, static headers from the environment and allowed fields on each
// delivery), and ignores checkpointer.serde for a JS project, with a line in
// its log, as LangGraph.js's dev server ignores it. One server serves the
// subtests.
func TestDevProjectConfig(t *testing.T) {
	t.Parallel()
	type hook struct {
		header http.Header
		body   map[string]any
	}
	hooks := make(chan hook, 8)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &body)
		hooks <- hook{r.Header.Clone(), body}
	}))
	t.Cleanup(receiver.Close)
	var port int
	if _, err := fmt.Sscanf(receiver.URL, "http://127.0.0.1:%d", &port); err != nil {
		t.Fatal(err)
	}
	const ttl = 3 // auth.cache.ttl_seconds
	config := testProject(t, "projectconfig")
	writeConfig(t, config, projectConfigJSON(port, ttl))
	dev := startDev(t, []string{"--config", config}, "WEFT_TEST_HOOK_SECRET=s3cret")
	do := caller(t, "http://"+dev.addr)
	call := func(method, path, token string, body any) (int, map[string]any, []byte) {
		t.Helper()
		res, raw := do(method, path, body, "Content-Type", "application/json", "Authorization", "Bearer "+token)
		if res == nil {
			return 0, nil, nil
		}
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		return res.StatusCode, m, raw
	}
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if st, _, _ := call("POST", "/threads", "token-ready", map[string]any{}); st == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("weft dev never served auth.path")
		}
	}

	t.Run("checkpointer.serde ignored for JS", func(t *testing.T) {
		if !strings.Contains(dev.logs.String(), "checkpointer.serde ignored") {
			t.Fatal("no log line saying checkpointer.serde is ignored for a JS project")
		}
	})

	t.Run("auth.cache", func(t *testing.T) {
		// who: the thread a token creates says whose it is and how many
		// times the authenticate handler had been called then.
		who := func(token string) (string, float64) {
			t.Helper()
			st, m, raw := call("POST", "/threads", token, map[string]any{})
			if st != 200 {
				t.Fatalf("create a thread as %s: %d %s", token, st, raw)
			}
			md := m["metadata"].(map[string]any)
			return md["owner"].(string), md["auth_calls"].(float64)
		}
		began := time.Now()
		owner, alice := who("token-alice")
		if owner != "alice" {
			t.Fatalf("owner %q, want alice", owner)
		}
		for range 3 {
			if _, n := who("token-alice"); n != alice {
				t.Fatalf("alice's request %v calls in, want the identity kept from call %v", n, alice)
			}
		}
		owner, bob := who("token-bob")
		if owner != "bob" || bob == alice {
			t.Fatalf("bob's request: owner %s from call %v: another Authorization header must be authenticated anew", owner, bob)
		}
		// max_size 2, least recently used first: alice (used again) stays,
		// bob goes when carol comes.
		if _, n := who("token-alice"); n != alice {
			t.Fatalf("alice again: call %v, want %v", n, alice)
		}
		if owner, _ := who("token-carol"); owner != "carol" {
			t.Fatalf("owner %q, want carol", owner)
		}
		if _, n := who("token-alice"); n != alice {
			t.Fatalf("alice after carol: call %v, want %v (she was used more recently than bob)", n, alice)
		}
		if _, n := who("token-bob"); n == bob {
			t.Fatalf("bob after carol: call %v again, want a new call (max_size 2 dropped him)", n)
		}
		if time.Since(began) >= ttl*time.Second {
			t.Fatalf("the requests took %v, more than the cache's ttl: the test cannot tell", time.Since(began))
		}
		time.Sleep(time.Until(began.Add(ttl*time.Second + 300*time.Millisecond)))
		if _, n := who("token-alice"); n == alice {
			t.Fatalf("alice after the ttl: call %v again, want a new call", n)
		}
	})

	t.Run("webhooks", func(t *testing.T) {
		st, thread, raw := call("POST", "/threads", "token-hooks", map[string]any{})
		if st != 200 {
			t.Fatalf("thread: %d %s", st, raw)
		}
		runs := "/threads/" + thread["thread_id"].(string) + "/runs"
		refused := map[string]string{
			"domain":        fmt.Sprintf("http://example.com:%d/hook", port),
			"wildcard apex": fmt.Sprintf("http://hooks.test:%d/hook", port),
			"port":          "http://127.0.0.1:1/hook",
			"length":        fmt.Sprintf("http://127.0.0.1:%d/%s", port, strings.Repeat("x", 120)),
		}
		for what, url := range refused {
			st, _, raw := call("POST", runs, "token-hooks", map[string]any{"assistant_id": "foo_bar_js", "webhook": url})
			if st != 422 {
				t.Errorf("%s: run with webhook %s: %d %s, want 422", what, url, st, raw)
			}
			st, _, raw = call("POST", "/runs/crons", "token-hooks", map[string]any{"assistant_id": "foo_bar_js",
				"schedule": "0 0 1 1 *", "webhook": url})
			if st != 422 {
				t.Errorf("%s: cron with webhook %s: %d %s, want 422", what, url, st, raw)
			}
		}
		// A subdomain of a wildcard is allowed (a cron, so that nothing is sent).
		if st, _, raw := call("POST", "/runs/crons", "token-hooks", map[string]any{"assistant_id": "foo_bar_js",
			"schedule": "0 0 1 1 *", "webhook": fmt.Sprintf("http://a.hooks.test:%d/hook", port)}); st != 200 {
			t.Fatalf("cron with a webhook on a *.hooks.test host: %d %s", st, raw)
		}
		// A delivery to the allowed loopback receiver (disable_loopback:
		// false) carries the headers and only the allowed fields.
		st, run, raw := call("POST", runs, "token-hooks", map[string]any{"assistant_id": "foo_bar_js", "webhook": receiver.URL + "/hook"})
		if st != 200 {
			t.Fatalf("run: %d %s", st, raw)
		}
		select {
		case h := <-hooks:
			if got := h.header.Get("X-Hook-Token"); got != "Bearer s3cret" {
				t.Errorf("X-Hook-Token %q, want the variable's value", got)
			}
			if got := h.header.Get("X-Static"); got != "plain" {
				t.Errorf("X-Static %q", got)
			}
			var keys []string
			for k := range h.body {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			if fmt.Sprint(keys) != "[run_id status values]" || h.body["run_id"] != run["run_id"] {
				t.Errorf("webhook body %v: want run_id, status and values alone, of run %v", h.body, run["run_id"])
			}
		case <-time.After(60 * time.Second):
			t.Fatal("no webhook delivered")
		}
	})
}

// A bad webhooks, auth.cache or auth.disable_studio_auth value stops weft
// dev at start with a message naming the key.
func TestDevProjectConfigRefused(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		edit func(cfg map[string]any)
		want string
	}{
		{"variable outside env_prefix", func(cfg map[string]any) {
			cfg["webhooks"].(map[string]any)["headers"] = map[string]any{"X-Leak": "${{ env.HOME }}"}
		}, `webhooks.headers.X-Leak: ${{ env.HOME }}: the variable HOME does not start with webhooks.env_prefix "WEFT_TEST_HOOK_"`},
		{"unset variable", func(cfg map[string]any) {
			cfg["webhooks"].(map[string]any)["headers"] = map[string]any{"X-Token": "${{ env.WEFT_TEST_HOOK_UNSET }}"}
		}, "webhooks.headers.X-Token: ${{ env.WEFT_TEST_HOOK_UNSET }}: the variable WEFT_TEST_HOOK_UNSET is not set"},
		{"not an env reference", func(cfg map[string]any) {
			cfg["webhooks"].(map[string]any)["headers"] = map[string]any{"X-Token": "${{ secrets.TOKEN }}"}
		}, "webhooks.headers.X-Token: ${{ secrets.TOKEN }}: only ${{ env.VAR }} may be used"},
		{"wildcard inside a name", func(cfg map[string]any) {
			cfg["webhooks"].(map[string]any)["url"].(map[string]any)["allowed_domains"] = []string{"hooks.*.test"}
		}, "webhooks.url.allowed_domains: \"hooks.*.test\": a wildcard may only begin a name"},
		{"unknown field", func(cfg map[string]any) {
			cfg["webhooks"].(map[string]any)["allowed_fields"] = []string{"run_id", "secret"}
		}, `webhooks.allowed_fields: "secret" is not a field`},
		{"cache ttl", func(cfg map[string]any) {
			cfg["auth"].(map[string]any)["cache"].(map[string]any)["ttl_seconds"] = "60"
		}, "auth.cache:"},
		{"studio auth", func(cfg map[string]any) {
			cfg["auth"].(map[string]any)["disable_studio_auth"] = "yes"
		}, `auth.disable_studio_auth "yes": want true or false`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			config := testProject(t, "projectconfig")
			cfg := projectConfigJSON(8080, 60)
			c.edit(cfg)
			writeConfig(t, config, cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, servertest.Binary(t), "dev", "--config", config)
			// Refused before the database is used: none is given.
			cmd.Env = append(os.Environ(), "WEFT_ADDR="+servertest.FreeAddr(t), "DATABASE_URL=postgres://127.0.0.1:1/none", "WEFT_TEST_HOOK_SECRET=s3cret")
			out, err := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(out), c.want) {
				t.Fatalf("exit %d (%v), output:\n%s\nwant exit 2 and %q", code, err, out, c.want)
			}
		})
	}
}
