package runs_test

import (
	"net/http"
	"testing"
)

// A node sees the run's config (the assistant's configurable merged under
// the run's), its context (the run's over the assistant's) and the run's
// ids; a Command node's goto schedules the node it names.
func TestNodeSeesConfigContextAndGoto(t *testing.T) {
	s := start(t)
	a := s.Must(http.StatusOK, "POST", "/assistants", map[string]any{"graph_id": "cfg",
		"config": map[string]any{"tags": []any{"from-assistant"}, "configurable": map[string]any{"model": "a", "goto": "after"}}}).Map(t)
	tid := newThread(t, s)
	res := wait(t, s, tid, map[string]any{"assistant_id": a["assistant_id"], "input": map[string]any{},
		"config": map[string]any{"configurable": map[string]any{"temp": 0.5}}})
	seen, _ := res["seen"].(map[string]any)
	if seen == nil {
		t.Fatalf("no seen in %v", res)
	}
	wantJSON(t, "configurable", seen["configurable"], `{"model":"a","goto":"after","temp":0.5}`)
	wantJSON(t, "tags", seen["tags"], `["from-assistant"]`)
	if seen["thread_id"] != tid || seen["assistant_id"] != a["assistant_id"] || seen["graph_id"] != "cfg" ||
		seen["node"] != "see" || seen["run_id"] == "" || seen["step"] != float64(1) {
		t.Errorf("run info = %v", seen)
	}
	var runs []map[string]any
	s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs", nil).JSON(t, &runs)
	if len(runs) != 1 || runs[0]["run_id"] != seen["run_id"] {
		t.Errorf("run_id %v, runs %v", seen["run_id"], runs)
	}
	wantJSON(t, "log", res["log"], `["after"]`)

	// Context: the run's over the assistant's.
	c := s.Must(http.StatusOK, "POST", "/assistants", map[string]any{"graph_id": "cfg",
		"context": map[string]any{"user": "assistant-user", "lang": "en"}}).Map(t)
	res = wait(t, s, newThread(t, s), map[string]any{"assistant_id": c["assistant_id"], "input": map[string]any{},
		"context": map[string]any{"user": "run-user"}})
	wantJSON(t, "context", res["seen"].(map[string]any)["context"], `{"user":"run-user","lang":"en"}`)

	// The run's configurable overrides the assistant's goto: to END.
	res = wait(t, s, newThread(t, s), map[string]any{"assistant_id": a["assistant_id"], "input": map[string]any{},
		"config": map[string]any{"configurable": map[string]any{"goto": "__end__"}}})
	wantJSON(t, "log", res["log"], `[]`)
	wantJSON(t, "configurable", res["seen"].(map[string]any)["configurable"], `{"model":"a","goto":"__end__"}`)

	// A goto outside the node's Ends fails the run with an error the client sees.
	res = s.Must(http.StatusOK, "POST", "/threads/"+newThread(t, s)+"/runs/wait", map[string]any{"assistant_id": "cfg",
		"input": map[string]any{}, "config": map[string]any{"configurable": map[string]any{"goto": "see"}}}).Map(t)
	if e, _ := res["__error__"].(map[string]any); e == nil {
		t.Errorf("undeclared goto: %v", res)
	}
}
