package dev_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// `weft dev` on a project with auth.path (testdata/devauth): its
// authenticate handler decides who calls (401 without a token), its
// threads handler stamps the owner and filters by it (another user's
// thread is invisible: 404, left out of searches), returns false for
// deletes (403), and its store handler guards namespaces.
func TestDevAuthPath(t *testing.T) {
	t.Parallel()
	modules, err := filepath.Abs("../../../worker-js/node_modules")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(modules, "@langchain", "langgraph-sdk")); err != nil {
		t.Fatalf("worker-js's packages are missing (cd worker-js && npm ci): %v", err)
	}
	dir := t.TempDir()
	for _, f := range []string{"langgraph.json", "auth.mjs", "foo_bar.mjs", "embed.mjs"} {
		b, err := os.ReadFile(filepath.Join("testdata", "devauth", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	dev := startDev(t, []string{"--config", filepath.Join(dir, "langgraph.json")})
	addr := dev.addr
	base := "http://" + addr
	do := caller(t, base)
	call := func(method, path, token string, body any) (int, map[string]any, []byte) {
		t.Helper()
		header := []string{"Content-Type", "application/json"}
		if token != "" {
			header = append(header, "Authorization", "Bearer "+token)
		}
		res, raw := do(method, path, body, header...)
		if res == nil {
			return 0, nil, nil
		}
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		return res.StatusCode, m, raw
	}
	// Ready when alice can create a thread (the worker serves auth.path).
	var thread map[string]any
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		st, m, _ := call("POST", "/threads", "token-alice", map[string]any{"metadata": map[string]any{"topic": "x"}})
		if st == 200 {
			thread = m
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("weft dev never served auth.path (last status %d)", st)
		}
	}
	id := thread["thread_id"].(string)
	if md := thread["metadata"].(map[string]any); md["owner"] != "alice" || md["topic"] != "x" {
		t.Fatalf("created thread's metadata %v: want the owner stamped next to the client's", md)
	}
	want := func(what string, got, status int) {
		t.Helper()
		if got != status {
			t.Fatalf("%s: status %d, want %d", what, got, status)
		}
	}
	st, _, raw := call("GET", "/threads/"+id, "", nil)
	want("no token", st, 401)
	if string(raw) != "Invalid token" { // plain text, as LangGraph.js's server answers a JS project's errors
		t.Fatalf("401 body %q: want the handler's message", raw)
	}
	st, _, _ = call("GET", "/threads/"+id, "token-alice", nil)
	want("owner reads", st, 200)
	st, _, _ = call("GET", "/threads/"+id, "token-bob", nil)
	want("another user reads", st, 404)
	_, _, raw = call("POST", "/threads/search", "token-bob", map[string]any{})
	if string(bytes.TrimSpace(raw)) != "[]" {
		t.Fatalf("bob's search: %s, want none of alice's threads", raw)
	}
	st, _, _ = call("DELETE", "/threads/"+id, "token-alice", nil)
	want("delete (handler returns false)", st, 403)
	// The store: one's own namespace, not another's.
	st, _, _ = call("PUT", "/store/items", "token-alice", map[string]any{"namespace": []string{"alice"}, "key": "k", "value": map[string]any{"v": 1}})
	want("put in one's namespace", st, 204)
	st, _, _ = call("PUT", "/store/items", "token-alice", map[string]any{"namespace": []string{"bob"}, "key": "k", "value": map[string]any{"v": 1}})
	want("put in another's namespace", st, 403)
	st, _, _ = call("GET", "/store/items?namespace=bob&key=k", "token-alice", nil)
	want("get in another's namespace", st, 403)
	_, m, _ := call("POST", "/store/namespaces", "token-bob", map[string]any{})
	if ns, _ := m["namespaces"].([]any); len(ns) != 0 {
		t.Fatalf("bob lists namespaces %v: want none of alice's", ns)
	}
	// store.index.embed names the project's JS function: the JS worker
	// embeds, and a semantic search ranks as it says.
	for key, text := range map[string]string{"dogs": "dog dog dog, a cat", "cats": "cat cat cat", "trees": "a tree by the car"} {
		st, _, _ = call("PUT", "/store/items", "token-alice", map[string]any{"namespace": []string{"alice", "pets"}, "key": key, "value": map[string]any{"text": text}})
		want("put "+key, st, 204)
	}
	var keys []string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		_, m, raw = call("POST", "/store/items/search", "token-alice", map[string]any{"namespace_prefix": []string{"alice", "pets"}, "query": "cat"})
		items, _ := m["items"].([]any)
		keys = keys[:0]
		for _, it := range items {
			keys = append(keys, it.(map[string]any)["key"].(string))
		}
		if len(keys) == 3 || time.Now().After(deadline) {
			break
		}
	}
	if fmt.Sprint(keys) != "[cats dogs trees]" {
		t.Fatalf("semantic search for cat: %s, want cats, dogs, trees", raw)
	}
	// A run's config carries the user, as on LangGraph's server.
	st, run, _ := call("POST", "/threads/"+id+"/runs", "token-alice", map[string]any{"assistant_id": "foo_bar_js"})
	want("run", st, 200)
	st, _, raw = call("GET", "/threads/"+id+"/runs/"+run["run_id"].(string), "token-alice", nil)
	want("run read", st, 200)
	if !bytes.Contains(raw, []byte(`"langgraph_auth_user_id":"alice"`)) {
		t.Fatalf("run %s: no langgraph_auth_user_id in its config", raw)
	}
}
