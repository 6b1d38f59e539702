package assistants_test

import (
	"net/http"
	"testing"

	"github.com/weftdev/weft/internal/assistants"
	"github.com/weftdev/weft/internal/server/servertest"
)

// Every /assistants/{id} route takes a graph name for its system assistant.
func TestGraphNameAliasOnEveryRoute(t *testing.T) {
	s := start(t)
	sys := assistants.SystemID("echo_chat").String()
	if got := s.Must(http.StatusOK, "GET", "/assistants/echo_chat", nil).Map(t)["assistant_id"]; got != sys {
		t.Fatalf("GET alias → %v, want %s", got, sys)
	}
	p := s.Must(http.StatusOK, "PATCH", "/assistants/echo_chat", map[string]any{"metadata": map[string]any{"x": 1}}).Map(t)
	if p["assistant_id"] != sys || p["version"] != float64(2) {
		t.Fatalf("PATCH alias → %v", p)
	}
	wantJSON(t, "metadata", p["metadata"], `{"created_by":"system","x":1}`)
	vs := list(t, s.Must(http.StatusOK, "POST", "/assistants/echo_chat/versions", nil))
	wantJSON(t, "versions", field(vs, "version"), `[2,1]`)
	l := s.Must(http.StatusOK, "POST", "/assistants/echo_chat/latest", map[string]any{"version": 1}).Map(t)
	if l["assistant_id"] != sys || l["version"] != float64(1) {
		t.Fatalf("latest alias → %v", l)
	}
	s.Must(http.StatusOK, "GET", "/assistants/echo_chat/graph", nil)
	if s.Must(http.StatusOK, "GET", "/assistants/echo_chat/schemas", nil).Map(t)["graph_id"] != "echo_chat" {
		t.Fatal("schemas alias")
	}
	s.Must(http.StatusOK, "GET", "/assistants/echo_chat/subgraphs", nil)
	s.Must(http.StatusOK, "GET", "/assistants/echo_chat/subgraphs/x", nil)
	s.Must(http.StatusNoContent, "DELETE", "/assistants/echo_chat", nil)
	r := s.Must(http.StatusNotFound, "GET", "/assistants/echo_chat", nil)
	t.Logf("after delete: %s", r.Detail(t))
	s.Must(http.StatusNotFound, "DELETE", "/assistants/echo_chat?delete_threads=true", nil)
	s.Must(http.StatusNotFound, "POST", "/runs/wait", map[string]any{"assistant_id": "echo_chat"})
	// Not a graph: the 422 listing the graphs.
	s.Must(http.StatusUnprocessableEntity, "GET", "/assistants/nope", nil)
	s.Must(http.StatusUnprocessableEntity, "DELETE", "/assistants/nope", nil)
}

// A run copies its assistant's config (under the run's own), context and
// version when it is created; the executor runs with the copy.
func TestRunUsesAssistantConfigAtCreation(t *testing.T) {
	s := start(t)
	a := create(t, s, map[string]any{"graph_id": "foo_bar", "config": map[string]any{
		"tags": []string{"a"}, "recursion_limit": 25, "configurable": map[string]any{"model": "a", "temp": 1}}})
	aid := a["assistant_id"].(string)

	tid := newThread(t, s, nil)
	run := s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": aid,
		"input":   map[string]any{"foo": ""},
		"config":  map[string]any{"configurable": map[string]any{"temp": 2}},
		"context": map[string]any{"extra": true}}).Map(t)
	wantJSON(t, "config", run["kwargs"].(map[string]any)["config"],
		`{"tags":["a"],"recursion_limit":25,"configurable":{"model":"a","temp":2,"user-agent":"Go-http-client/1.1"}}`)
	wantJSON(t, "context", run["kwargs"].(map[string]any)["context"], `{"model":"a","temp":1,"extra":true}`)
	if v := run["kwargs"].(map[string]any)["assistant_version"]; v != float64(1) {
		t.Fatalf("assistant_version %v", v)
	}
	if end := runEnd(t, s, tid, run["run_id"].(string)); end["status"] != "success" {
		t.Fatalf("run: %v", end)
	}

	// A queued run keeps what it copied: the assistant's recursion limit
	// of 1 (which fails foo_bar's two steps) arrives after it was created.
	tid = newThread(t, s, nil)
	queued := s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": aid,
		"input": map[string]any{"foo": ""}, "after_seconds": 1}).Map(t)
	s.Must(http.StatusOK, "PATCH", "/assistants/"+aid, map[string]any{"config": map[string]any{
		"recursion_limit": 1, "configurable": map[string]any{"model": "b"}}})
	end := runEnd(t, s, tid, queued["run_id"].(string))
	if end["status"] != "success" {
		t.Fatalf("queued run: %v", end)
	}
	k := end["kwargs"].(map[string]any)
	wantJSON(t, "queued run's configurable", k["config"].(map[string]any)["configurable"], `{"model":"a","temp":1,"user-agent":"Go-http-client/1.1"}`)
	if k["assistant_version"] != float64(1) {
		t.Fatalf("queued run's assistant_version %v", k["assistant_version"])
	}

	// A run created now gets version 2, and the executor honours its
	// recursion limit: the run fails.
	tid = newThread(t, s, nil)
	next := s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": aid,
		"input": map[string]any{"foo": ""}}).Map(t)
	k = next["kwargs"].(map[string]any)
	if k["assistant_version"] != float64(2) {
		t.Fatalf("new run's assistant_version %v", k["assistant_version"])
	}
	wantJSON(t, "new run's config", k["config"], `{"recursion_limit":1,"configurable":{"model":"b","user-agent":"Go-http-client/1.1"}}`)
	if end := runEnd(t, s, tid, next["run_id"].(string)); end["status"] != "error" {
		t.Fatalf("run with recursion_limit 1: %v", end)
	}
	// The run's own config wins over the assistant's.
	tid = newThread(t, s, nil)
	own := s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": aid,
		"input": map[string]any{"foo": ""}, "config": map[string]any{"recursion_limit": 10}}).Map(t)
	if end := runEnd(t, s, tid, own["run_id"].(string)); end["status"] != "success" {
		t.Fatalf("run with its own recursion_limit: %v", end)
	}
	s.Must(http.StatusUnprocessableEntity, "POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": aid,
		"config": map[string]any{"configurable": "x"}})
}

// Runs follow an assistant moved to another graph or deleted by another
// server on the same database, though this server's runs cached its graph.
func TestRunsFollowChangesMadeElsewhere(t *testing.T) {
	s := start(t)
	other := servertest.StartWith(t, s.DSN, nil)
	aid := create(t, s, map[string]any{"graph_id": "foo_bar"})["assistant_id"].(string)
	runOn(t, s, aid)
	other.Must(http.StatusOK, "PATCH", "/assistants/"+aid, map[string]any{"graph_id": "echo_chat"})
	tid := newThread(t, s, nil)
	res := s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": aid,
		"input": map[string]any{}}).Map(t)
	if msgs, _ := res["messages"].([]any); len(msgs) != 1 || msgs[0].(map[string]any)["content"] != "echo: " {
		t.Fatalf("values %v: want echo_chat's reply", res)
	}
	if g := s.Must(http.StatusOK, "GET", "/threads/"+tid, nil).Map(t)["metadata"].(map[string]any)["graph_id"]; g != "echo_chat" {
		t.Fatalf("the run ran graph %v", g)
	}
	res = s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": aid,
		"input": map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}}).Map(t)
	msgs, _ := res["messages"].([]any)
	if len(msgs) != 3 || msgs[2].(map[string]any)["content"] != "echo: hi" {
		t.Fatalf("run after the graph change: %v", res)
	}
	other.Must(http.StatusNoContent, "DELETE", "/assistants/"+aid, nil)
	s.Must(http.StatusNotFound, "POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": aid, "input": map[string]any{}})
	s.Must(http.StatusNotFound, "POST", "/runs/wait", map[string]any{"assistant_id": aid, "input": map[string]any{}})
}
