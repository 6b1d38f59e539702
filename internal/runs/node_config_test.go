package runs_test

import (
	"bytes"
	"encoding/json"
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
	// The request's user-agent joins the configurable, as on LangGraph's servers (TestRequestHeadersInConfig).
	wantJSON(t, "configurable", seen["configurable"], `{"model":"a","goto":"after","temp":0.5,"user-agent":"Go-http-client/1.1"}`)
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
	wantJSON(t, "configurable", res["seen"].(map[string]any)["configurable"], `{"model":"a","goto":"__end__","user-agent":"Go-http-client/1.1"}`)

	// A goto outside the node's Ends fails the run with an error the client sees.
	res = s.Must(http.StatusOK, "POST", "/threads/"+newThread(t, s)+"/runs/wait", map[string]any{"assistant_id": "cfg",
		"input": map[string]any{}, "config": map[string]any{"configurable": map[string]any{"goto": "see"}}}).Map(t)
	if e, _ := res["__error__"].(map[string]any); e == nil {
		t.Errorf("undeclared goto: %v", res)
	}
}

// A run's config gets the request's x-* headers and user-agent, as both
// official servers put them there (headers win over the body's keys), but
// not credentials nor Weft's own x-weft-* headers.
func TestRequestHeadersInConfig(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	body, _ := json.Marshal(map[string]any{"assistant_id": "cfg", "input": map[string]any{},
		"config": map[string]any{"configurable": map[string]any{"x-choice": "body", "kept": 1}}})
	req, _ := http.NewRequest("POST", s.URL+"/threads/"+tid+"/runs/wait", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "my-client/1.0")
	req.Header.Set("X-Choice", "header")
	req.Header.Set("x-api-key", "secret")
	req.Header.Set("X-Tenant-Id", "t")
	req.Header.Set("X-Weft-Thing", "internal")
	req.Header.Set("Accept-Language", "fr")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != 200 {
		t.Fatalf("run: %d %v", res.StatusCode, err)
	}
	seen, _ := out["seen"].(map[string]any)
	wantJSON(t, "configurable", seen["configurable"], `{"kept":1,"x-choice":"header","user-agent":"my-client/1.0"}`)
	// A configurable that is not an object is still the body's mistake.
	body, _ = json.Marshal(map[string]any{"assistant_id": "cfg", "config": map[string]any{"configurable": "nope"}})
	req, _ = http.NewRequest("POST", s.URL+"/threads/"+tid+"/runs", bytes.NewReader(body))
	req.Header.Set("X-Choice", "header")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("configurable \"nope\": %d, want 422", res.StatusCode)
	}
}
