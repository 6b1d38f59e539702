package a2a_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// client talks to a server's A2A routes, with headers (a key) of its own.
type client struct {
	t      *testing.T
	url    string
	header map[string]string
}

func newClient(t *testing.T, s *servertest.Server, header ...string) *client {
	c := &client{t: t, url: s.URL, header: map[string]string{}}
	for i := 0; i+1 < len(header); i += 2 {
		c.header[header[i]] = header[i+1]
	}
	return c
}

// raw sends a request and returns the status, content type and body.
func (c *client) raw(method, path, body string, header ...string) (int, string, []byte) {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.url+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

type rpcResp struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  map[string]any  `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// call sends a JSON-RPC request (A2A-Version: 1.0 for v1.0 method names)
// and decodes the answer, which must be HTTP 200.
func (c *client) call(assistant, method string, params any) rpcResp {
	c.t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	var hdr []string
	if !strings.Contains(method, "/") {
		hdr = []string{"A2A-Version", "1.0"}
	}
	status, _, b := c.raw("POST", "/a2a/"+assistant, string(body), hdr...)
	if status != http.StatusOK {
		c.t.Fatalf("%s: status %d body %s", method, status, b)
	}
	var r rpcResp
	if err := json.Unmarshal(b, &r); err != nil {
		c.t.Fatalf("%s: %v: %s", method, err, b)
	}
	if r.JSONRPC != "2.0" || string(r.ID) != "7" {
		c.t.Fatalf("%s: not a JSON-RPC response to id 7: %s", method, b)
	}
	return r
}

// ok is call for a result.
func (c *client) ok(assistant, method string, params any) map[string]any {
	c.t.Helper()
	r := c.call(assistant, method, params)
	if r.Error != nil || r.Result == nil {
		c.t.Fatalf("%s: error %+v", method, r.Error)
	}
	return r.Result
}

// fails is call for an error with code.
func (c *client) fails(assistant, method string, params any, code int) string {
	c.t.Helper()
	r := c.call(assistant, method, params)
	if r.Error == nil || r.Error.Code != code {
		c.t.Fatalf("%s %v: got result %v error %+v, want error %d", method, params, r.Result, r.Error, code)
	}
	return r.Error.Message
}

// stream sends a streaming request and returns its events' results.
func (c *client) stream(assistant, method string, params any) []map[string]any {
	c.t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "s1", "method": method, "params": params})
	req, _ := http.NewRequest("POST", c.url+"/a2a/"+assistant, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if !strings.Contains(method, "/") {
		req.Header.Set("A2A-Version", "1.0")
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		c.t.Fatalf("%s: status %d, content type %q: %s", method, resp.StatusCode, ct, b)
	}
	var out []map[string]any
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var r rpcResp
		if err := json.Unmarshal([]byte(line), &r); err != nil || r.Error != nil || string(r.ID) != `"s1"` {
			c.t.Fatalf("%s: bad event %s (%v)", method, line, err)
		}
		out = append(out, r.Result)
	}
	return out
}

func userMsg(text, contextID string) map[string]any {
	m := map[string]any{"messageId": uuid.NewString(), "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
	if contextID != "" {
		m["contextId"] = contextID
	}
	return m
}

func legacyMsg(text, contextID string) map[string]any {
	m := map[string]any{"kind": "message", "messageId": uuid.NewString(), "role": "user",
		"parts": []any{map[string]any{"kind": "text", "text": text}}}
	if contextID != "" {
		m["contextId"] = contextID
	}
	return m
}

// get reads a path of a JSON object.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func str(v any, path ...any) string { s, _ := get(v, path...).(string); return s }

// answer is the text of a task's first artifact.
func answer(task map[string]any) string { return str(task, "artifacts", 0, "parts", 0, "text") }

func TestAgentCard(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	c := newClient(t, s)
	status, _, b := c.raw("GET", "/.well-known/agent-card.json?assistant_id=echo_chat", "")
	if status != 200 {
		t.Fatalf("card: %d %s", status, b)
	}
	var card map[string]any
	if err := json.Unmarshal(b, &card); err != nil {
		t.Fatal(err)
	}
	endpoint := str(card, "url")
	if str(card, "name") != "echo_chat" || !strings.HasPrefix(endpoint, s.URL+"/a2a/") || get(card, "capabilities", "streaming") != true {
		t.Fatalf("card = %s", b)
	}
	if str(card, "supportedInterfaces", 0, "protocolVersion") != "1.0" || str(card, "supportedInterfaces", 0, "url") != endpoint ||
		str(card, "supportedInterfaces", 0, "protocolBinding") != "JSONRPC" || str(card, "supportedInterfaces", 1, "protocolVersion") != "0.3" {
		t.Fatalf("interfaces = %v", card["supportedInterfaces"])
	}
	if str(card, "skills", 0, "id") == "" || len(get(card, "defaultInputModes").([]any)) == 0 || str(card, "description") == "" {
		t.Fatalf("skills / modes / description missing: %s", b)
	}
	// The endpoint the card names answers.
	id := strings.TrimPrefix(endpoint, s.URL+"/a2a/")
	if task := c.ok(id, "SendMessage", map[string]any{"message": userMsg("card", "")}); answer(get(task, "task").(map[string]any)) != "echo: card" {
		t.Fatalf("send through the card's url: %v", task)
	}
	for _, tc := range []struct {
		query string
		want  int
	}{{"assistant_id=foo_bar", 400}, {"assistant_id=" + uuid.NewString(), 404}, {"", 422}, {"assistant_id=nope", 422}} {
		if status, _, b := c.raw("GET", "/.well-known/agent-card.json?"+tc.query, ""); status != tc.want || !bytes.Contains(b, []byte(`"detail"`)) {
			t.Errorf("card ?%s: %d %s, want %d", tc.query, status, b, tc.want)
		}
	}
	// /info says A2A is served.
	_, _, b = c.raw("GET", "/info", "")
	if !bytes.Contains(b, []byte(`"a2a":true`)) {
		t.Errorf("/info = %s", b)
	}
}

// TestConversation: two turns on one context (v1.0), the tasks are the
// thread's runs, GetTask reads them; then v0.3 on the same thread.
func TestConversation(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	c := newClient(t, s)
	first := get(c.ok("echo_chat", "SendMessage", map[string]any{"message": userMsg("hi", "")}), "task").(map[string]any)
	ctxID, task1 := str(first, "contextId"), str(first, "id")
	if str(first, "status", "state") != "TASK_STATE_COMPLETED" || answer(first) != "echo: hi" || ctxID == "" {
		t.Fatalf("first turn: %v", first)
	}
	if str(first, "history", 0, "role") != "ROLE_USER" || str(first, "history", 1, "role") != "ROLE_AGENT" ||
		str(first, "history", 1, "parts", 0, "text") != "echo: hi" {
		t.Fatalf("first turn history: %v", first["history"])
	}
	second := get(c.ok("echo_chat", "SendMessage", map[string]any{"message": userMsg("again", ctxID)}), "task").(map[string]any)
	if str(second, "contextId") != ctxID || answer(second) != "echo: again" || str(second, "id") == task1 {
		t.Fatalf("second turn: %v", second)
	}
	// The REST API shows the conversation: the thread (context) holds both
	// turns, its runs are the tasks.
	st := s.Must(200, "GET", "/threads/"+ctxID+"/state", nil).Map(t)
	msgs, _ := get(st, "values", "messages").([]any)
	if len(msgs) != 4 || str(msgs[2], "content") != "again" || str(msgs[3], "content") != "echo: again" {
		t.Fatalf("thread messages = %v", msgs)
	}
	var runList []map[string]any
	s.Must(200, "GET", "/threads/"+ctxID+"/runs", nil).JSON(t, &runList)
	if len(runList) != 2 || runList[0]["run_id"] != str(second, "id") || runList[1]["run_id"] != task1 {
		t.Fatalf("runs = %v", runList)
	}
	got := c.ok("echo_chat", "GetTask", map[string]any{"id": task1})
	if str(got, "id") != task1 || str(got, "status", "state") != "TASK_STATE_COMPLETED" || answer(got) != "echo: hi" ||
		str(got, "history", 0, "parts", 0, "text") != "hi" {
		t.Fatalf("GetTask = %v", got)
	}
	if h := c.ok("echo_chat", "GetTask", map[string]any{"id": task1, "historyLength": 1}); len(get(h, "history").([]any)) != 1 {
		t.Fatalf("historyLength 1: %v", h["history"])
	}
	// The task is the echo_chat assistant's: another assistant does not know it.
	c.fails("hitl_chat", "GetTask", map[string]any{"id": task1}, -32001)

	// v0.3 (no version header): same thread, v0.3 shapes.
	third := c.ok("echo_chat", "message/send", map[string]any{"message": legacyMsg("old", ctxID)})
	if third["kind"] != "task" || str(third, "status", "state") != "completed" || str(third, "contextId") != ctxID ||
		str(third, "artifacts", 0, "parts", 0, "kind") != "text" || answer(third) != "echo: old" {
		t.Fatalf("message/send = %v", third)
	}
	old := c.ok("echo_chat", "tasks/get", map[string]any{"id": task1})
	if old["kind"] != "task" || str(old, "status", "state") != "completed" || str(old, "history", 1, "role") != "agent" {
		t.Fatalf("tasks/get = %v", old)
	}
}

func TestStream(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	c := newClient(t, s)
	evs := c.stream("echo_chat", "SendStreamingMessage", map[string]any{"message": userMsg("one two three", "")})
	if len(evs) < 4 {
		t.Fatalf("events = %v", evs)
	}
	taskID := str(evs[0], "task", "id")
	if taskID == "" || str(evs[0], "task", "status", "state") != "TASK_STATE_SUBMITTED" {
		t.Fatalf("first event = %v", evs[0])
	}
	if str(evs[1], "statusUpdate", "status", "state") != "TASK_STATE_WORKING" {
		t.Fatalf("second event = %v", evs[1])
	}
	var chunks strings.Builder
	var final string
	for i, e := range evs[2 : len(evs)-1] {
		u, ok := e["artifactUpdate"].(map[string]any)
		if !ok || str(u, "taskId") != taskID {
			t.Fatalf("event %d = %v", i+2, e)
		}
		if u["lastChunk"] == true {
			final = str(u, "artifact", "parts", 0, "text")
			continue
		}
		if (i > 0) != (u["append"] == true) {
			t.Fatalf("chunk %d append = %v", i, u["append"])
		}
		chunks.WriteString(str(u, "artifact", "parts", 0, "text"))
	}
	if chunks.String() != "echo: one two three" || final != "echo: one two three" || len(evs) < 6 {
		t.Fatalf("chunks %q, final %q, events %v", chunks.String(), final, evs)
	}
	last := evs[len(evs)-1]
	if str(last, "statusUpdate", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Fatalf("last event = %v", last)
	}
	if got := c.ok("echo_chat", "GetTask", map[string]any{"id": taskID}); answer(got) != "echo: one two three" {
		t.Fatalf("GetTask after the stream = %v", got)
	}

	// v0.3: kind fields, final on the last status update.
	evs = c.stream("echo_chat", "message/stream", map[string]any{"message": legacyMsg("x", "")})
	if evs[0]["kind"] != "task" || evs[1]["kind"] != "status-update" || evs[1]["final"] != false {
		t.Fatalf("v0.3 events = %v", evs)
	}
	if last := evs[len(evs)-1]; last["kind"] != "status-update" || last["final"] != true || str(last, "status", "state") != "completed" {
		t.Fatalf("v0.3 last event = %v", last)
	}
	if e := evs[len(evs)-2]; e["kind"] != "artifact-update" || e["lastChunk"] != true || str(e, "artifact", "parts", 0, "text") != "echo: x" {
		t.Fatalf("v0.3 last artifact = %v", e)
	}
}

// TestInterruptResume: an interrupt is input-required, with the question;
// the next message on the context resumes the run.
func TestInterruptResume(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	c := newClient(t, s)
	ask := get(c.ok("hitl_chat", "SendMessage", map[string]any{"message": userMsg("hi", "")}), "task").(map[string]any)
	ctxID := str(ask, "contextId")
	if str(ask, "status", "state") != "TASK_STATE_INPUT_REQUIRED" ||
		str(ask, "status", "message", "parts", 0, "text") != `Send the reply "echo: hi"? (yes/no)` ||
		str(ask, "status", "message", "role") != "ROLE_AGENT" || str(ask, "status", "message", "parts", 1, "data", "draft") != "echo: hi" {
		t.Fatalf("interrupted task = %v", ask)
	}
	if th := s.Must(200, "GET", "/threads/"+ctxID, nil).Map(t); th["status"] != "interrupted" {
		t.Fatalf("thread = %v", th)
	}
	// The answer, on the task (taskId) and the context.
	msg := userMsg("yes", ctxID)
	msg["taskId"] = str(ask, "id")
	done := get(c.ok("hitl_chat", "SendMessage", map[string]any{"message": msg}), "task").(map[string]any)
	if str(done, "status", "state") != "TASK_STATE_COMPLETED" || answer(done) != "echo: hi" || str(done, "contextId") != ctxID ||
		str(done, "history", 0, "parts", 0, "text") != "yes" {
		t.Fatalf("resumed task = %v", done)
	}
	if th := s.Must(200, "GET", "/threads/"+ctxID, nil).Map(t); th["status"] != "idle" {
		t.Fatalf("thread after resume = %v", th)
	}
	// The interrupted task stays as it was.
	if got := c.ok("hitl_chat", "GetTask", map[string]any{"id": str(ask, "id")}); str(got, "status", "state") != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("GetTask of the interrupted task = %v", got)
	}
	// A second round, streamed, answered no (v0.3).
	evs := c.stream("hitl_chat", "message/stream", map[string]any{"message": legacyMsg("again", ctxID)})
	if last := evs[len(evs)-1]; str(last, "status", "state") != "input-required" || last["final"] != true {
		t.Fatalf("streamed interrupt = %v", evs)
	}
	no := c.ok("hitl_chat", "message/send", map[string]any{"message": legacyMsg("no", ctxID)})
	if str(no, "status", "state") != "completed" || answer(no) != "Reply not sent." {
		t.Fatalf("answered no: %v", no)
	}
}

// TestCancel: a task queued behind a busy thread is cancelled; a finished
// one is not cancelable.
func TestCancel(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	c := newClient(t, s)
	tid := s.Must(200, "POST", "/threads", map[string]any{}).Map(t)["thread_id"].(string)
	s.Must(200, "POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{"ms": 3000}})
	queued := get(c.ok("echo_chat", "SendMessage", map[string]any{"message": userMsg("later", tid),
		"configuration": map[string]any{"returnImmediately": true}}), "task").(map[string]any)
	if str(queued, "status", "state") != "TASK_STATE_SUBMITTED" {
		t.Fatalf("queued task = %v", queued)
	}
	canceled := c.ok("echo_chat", "CancelTask", map[string]any{"id": str(queued, "id")})
	if str(canceled, "status", "state") != "TASK_STATE_CANCELED" {
		t.Fatalf("CancelTask = %v", canceled)
	}
	if got := c.ok("echo_chat", "GetTask", map[string]any{"id": str(queued, "id")}); str(got, "status", "state") != "TASK_STATE_CANCELED" {
		t.Fatalf("GetTask after cancel = %v", got)
	}
	run := s.Must(200, "GET", "/threads/"+tid+"/runs/"+str(queued, "id"), nil).Map(t)
	if run["status"] != "interrupted" {
		t.Fatalf("run after cancel = %v", run)
	}
	c.fails("echo_chat", "CancelTask", map[string]any{"id": str(queued, "id")}, -32002)
	c.fails("echo_chat", "tasks/cancel", map[string]any{"id": uuid.NewString()}, -32001)

	// A running task (v0.3, blocking false): cancelled while it runs.
	tid2 := s.Must(200, "POST", "/threads", map[string]any{}).Map(t)["thread_id"].(string)
	s.Must(200, "POST", "/threads/"+tid2+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{"ms": 5000}})
	pending := c.ok("echo_chat", "message/send", map[string]any{"message": legacyMsg("x", tid2),
		"configuration": map[string]any{"blocking": false}})
	if got := c.ok("echo_chat", "tasks/cancel", map[string]any{"id": str(pending, "id")}); str(got, "status", "state") != "canceled" {
		t.Fatalf("tasks/cancel = %v", got)
	}
}

// TestSubscribe: SubscribeToTask follows a task that has not ended (here
// queued behind a busy thread) to its end; a task that ended has nothing
// to follow.
func TestSubscribe(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	c := newClient(t, s)
	tid := s.Must(200, "POST", "/threads", map[string]any{}).Map(t)["thread_id"].(string)
	s.Must(200, "POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{"ms": 300}})
	queued := get(c.ok("echo_chat", "SendMessage", map[string]any{"message": userMsg("wait for it", tid),
		"configuration": map[string]any{"returnImmediately": true}}), "task").(map[string]any)
	id := str(queued, "id")
	evs := c.stream("echo_chat", "SubscribeToTask", map[string]any{"id": id})
	if str(evs[0], "task", "id") != id || str(evs[0], "task", "status", "state") != "TASK_STATE_SUBMITTED" {
		t.Fatalf("first event = %v", evs[0])
	}
	last := evs[len(evs)-1]
	if str(last, "statusUpdate", "status", "state") != "TASK_STATE_COMPLETED" ||
		str(evs[len(evs)-2], "artifactUpdate", "artifact", "parts", 0, "text") != "echo: wait for it" {
		t.Fatalf("events = %v", evs)
	}
	c.fails("echo_chat", "SubscribeToTask", map[string]any{"id": id}, -32004)
	c.fails("echo_chat", "tasks/resubscribe", map[string]any{"id": uuid.NewString()}, -32001)
}

func TestErrors(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	c := newClient(t, s)
	rpc := func(body string, code int, header ...string) {
		t.Helper()
		status, ct, b := c.raw("POST", "/a2a/echo_chat", body, header...)
		var r rpcResp
		if status != 200 || !strings.HasPrefix(ct, "application/json") || json.Unmarshal(b, &r) != nil || r.Error == nil || r.Error.Code != code {
			t.Errorf("%s: %d %s, want JSON-RPC error %d", body, status, b, code)
		}
	}
	rpc(`{not json`, -32700)
	rpc(`[{"jsonrpc":"2.0","id":1,"method":"GetTask"}]`, -32600)
	rpc(`{"jsonrpc":"1.0","id":1,"method":"GetTask","params":{}}`, -32600)
	rpc(`{"jsonrpc":"2.0","id":1,"method":"Nope","params":{}}`, -32601)
	rpc(`{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`, -32004)
	rpc(`{"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/set","params":{}}`, -32004)
	rpc(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`, -32009, "A2A-Version", "9.9")
	rpc(`{"jsonrpc":"2.0","id":1,"method":"SendMessage"}`, -32602)
	rpc(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":[1]}`, -32602)
	rpc(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"parts":[]}}}`, -32602)
	c.fails("echo_chat", "SendMessage", map[string]any{}, -32602)
	c.fails("echo_chat", "SendMessage", map[string]any{"message": map[string]any{"role": "ROLE_AGENT", "parts": []any{map[string]any{"text": "x"}}}}, -32602)
	c.fails("echo_chat", "SendMessage", map[string]any{"message": userMsg("x", "not-a-uuid")}, -32602)
	c.fails("echo_chat", "SendMessage", map[string]any{"message": map[string]any{"role": "ROLE_USER",
		"parts": []any{map[string]any{"url": "https://example.com/a.png"}}}}, -32005)
	c.fails("echo_chat", "message/send", map[string]any{"message": map[string]any{"role": "user",
		"parts": []any{map[string]any{"kind": "file", "file": map[string]any{"uri": "https://example.com/a"}}}}}, -32005)
	msg := userMsg("x", "")
	msg["taskId"] = uuid.NewString()
	c.fails("echo_chat", "SendMessage", map[string]any{"message": msg}, -32001)
	c.fails("echo_chat", "GetTask", map[string]any{"id": "not-a-uuid"}, -32001)
	c.fails("echo_chat", "GetTask", map[string]any{"id": uuid.NewString()}, -32001)
	c.fails("echo_chat", "GetTask", map[string]any{"id": 5}, -32602)
	// Not JSON-RPC matters: plain HTTP errors.
	for _, tc := range []struct {
		path string
		want int
	}{{"/a2a/foo_bar", 400}, {"/a2a/" + uuid.NewString(), 404}, {"/a2a/nope", 422}} {
		if status, _, b := c.raw("POST", tc.path, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`); status != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.path, status, b, tc.want)
		}
	}
	if status, _, _ := c.raw("DELETE", "/a2a/echo_chat", ""); status != 405 { // GET is the card (card_paths_test.go)
		t.Errorf("DELETE /a2a/echo_chat: %d, want 405", status)
	}
	// A data part alone is taken as its JSON text.
	task := get(c.ok("echo_chat", "SendMessage", map[string]any{"message": map[string]any{"role": "ROLE_USER",
		"parts": []any{map[string]any{"data": map[string]any{"a": 1}}}}}), "task")
	if answer(task.(map[string]any)) != `echo: {"a":1}` {
		t.Errorf("data part: %v", task)
	}
}

// TestTenants: with API keys, no key is a 401, and a tenant sees only its
// own assistants and tasks (the system assistants are shared).
func TestTenants(t *testing.T) {
	t.Parallel()
	s := servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) { c.Auth = "keys"; c.KeyCacheTTL = time.Minute })
	key := func(tenant string) string {
		k, _, err := auth.APIKeyCreate(context.Background(), s.DB, tenant, []string{auth.ScopeTenant}, "test")
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	anon := newClient(t, s)
	a := newClient(t, s, "x-api-key", key("a"))
	b := newClient(t, s, "Authorization", "Bearer "+key("b"))
	for _, req := range [][2]string{{"GET", "/.well-known/agent-card.json?assistant_id=echo_chat"}, {"POST", "/a2a/echo_chat"}} {
		if status, _, body := anon.raw(req[0], req[1], `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`); status != 401 {
			t.Errorf("%s without a key: %d %s", req[1], status, body)
		}
	}
	// A's own chat assistant, and a conversation with it.
	status, _, body := a.raw("POST", "/assistants", `{"graph_id":"echo_chat","name":"a-private"}`)
	if status != 200 {
		t.Fatalf("create assistant: %d %s", status, body)
	}
	var asst map[string]any
	_ = json.Unmarshal(body, &asst)
	aid := asst["assistant_id"].(string)
	if status, _, body := a.raw("GET", "/.well-known/agent-card.json?assistant_id="+aid, ""); status != 200 || !bytes.Contains(body, []byte("a-private")) {
		t.Fatalf("A's card: %d %s", status, body)
	}
	task := get(a.ok(aid, "SendMessage", map[string]any{"message": userMsg("secret", "")}), "task").(map[string]any)
	shared := get(a.ok("echo_chat", "SendMessage", map[string]any{"message": userMsg("secret2", "")}), "task").(map[string]any)

	// B sees neither A's assistant nor A's tasks nor A's contexts.
	for _, p := range []string{"/.well-known/agent-card.json?assistant_id=" + aid, "/a2a/" + aid} {
		method := "GET"
		if strings.HasPrefix(p, "/a2a/") {
			method = "POST"
		}
		if status, _, body := b.raw(method, p, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+str(task, "id")+`"}}`); status != 404 || bytes.Contains(body, []byte("secret")) {
			t.Errorf("B %s %s: %d %s, want 404", method, p, status, body)
		}
	}
	b.fails("echo_chat", "GetTask", map[string]any{"id": str(shared, "id")}, -32001)
	b.fails("echo_chat", "CancelTask", map[string]any{"id": str(shared, "id")}, -32001)
	msg := b.fails("echo_chat", "SendMessage", map[string]any{"message": userMsg("intrude", str(shared, "contextId"))}, -32602)
	if strings.Contains(msg, "secret") {
		t.Errorf("B's error tells A's data: %s", msg)
	}
	// A's thread is unchanged, and A still reads its task.
	if got := a.ok("echo_chat", "GetTask", map[string]any{"id": str(shared, "id")}); answer(got) != "echo: secret2" {
		t.Fatalf("A's task = %v", got)
	}
	status, _, body = a.raw("GET", "/threads/"+str(shared, "contextId")+"/runs", "")
	var list []any
	if status != 200 || json.Unmarshal(body, &list) != nil || len(list) != 1 {
		t.Fatalf("A's runs after B's attempts: %d %s", status, body)
	}
	// B's own conversation works on the shared system assistant.
	if got := get(b.ok("echo_chat", "SendMessage", map[string]any{"message": userMsg("mine", "")}), "task").(map[string]any); answer(got) != "echo: mine" {
		t.Fatalf("B's task = %v", got)
	}
}
