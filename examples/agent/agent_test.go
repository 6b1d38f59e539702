package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/weft"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// fakeOpenAI is an OpenAI-compatible /chat/completions endpoint: asked
// without a tool result it calls calculator(6*7); given one, it answers
// "The answer is " + the result. It streams when stream is true and
// stream is on, and records every request body.
type fakeOpenAI struct {
	stream bool
	mu     sync.Mutex
	reqs   []map[string]any
	auth   []string
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	var req map[string]any
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	msgs, _ := req["messages"].([]any)
	last, _ := msgs[len(msgs)-1].(map[string]any)
	var result string
	if last["role"] == "tool" {
		result, _ = last["content"].(string)
	}
	if !f.stream {
		msg := map[string]any{"role": "assistant", "content": "The answer is " + result + "."}
		if result == "" {
			msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"id": "call_1", "type": "function", "function": map[string]any{"name": "calculator", "arguments": `{"expression":"6*7"}`}}}}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": msg, "finish_reason": "stop"}}})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(delta map[string]any, finish any) {
		b, _ := json.Marshal(map[string]any{"object": "chat.completion.chunk",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
		w.(http.Flusher).Flush()
	}
	if result == "" {
		send(map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"index": 0, "id": "call_1", "type": "function",
			"function": map[string]any{"name": "calculator", "arguments": `{"expres`}}}}, nil)
		send(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": `sion":"6*7"}`}}}}, nil)
		send(map[string]any{}, "tool_calls")
	} else {
		send(map[string]any{"role": "assistant", "content": "The answer is "}, nil)
		send(map[string]any{"content": result + "."}, nil)
		send(map[string]any{}, "stop")
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// startAgent serves the agent graph, talking to fake, on a fresh database.
func startAgent(t *testing.T, fake *fakeOpenAI) *weft.Server {
	t.Helper()
	endpoint := httptest.NewServer(fake)
	t.Cleanup(endpoint.Close)
	graphs := graph.NewRegistry()
	model := &ChatModel{BaseURL: endpoint.URL + "/v1", Model: "fake-model", APIKey: "test-key"}
	if err := graphs.Register(NewAgent(model, DefaultTools())); err != nil {
		t.Fatal(err)
	}
	srv, err := weft.Start(t.Context(), graphs, weft.Options{Addr: "127.0.0.1:0", DatabaseURL: pgtest.DSN(t), Workers: 1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return srv
}

func post(t *testing.T, url string, body any) *http.Response {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("POST %s: %d %s", url, resp.StatusCode, msg)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func decode(t *testing.T, r io.Reader, v any) {
	t.Helper()
	if err := json.NewDecoder(r).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// The agent over the HTTP API, streaming: the model asks for the
// calculator, the tools node answers, the model gets the tool result back
// and answers; the thread's state holds the four messages in LangChain's
// shape, and the messages stream carried the answer token by token.
func TestAgentCallsToolAndAnswers(t *testing.T) {
	fake := &fakeOpenAI{stream: true}
	srv := startAgent(t, fake)
	var th map[string]any
	decode(t, post(t, srv.URL()+"/threads", map[string]any{}).Body, &th)
	tid := th["thread_id"].(string)

	resp := post(t, srv.URL()+"/threads/"+tid+"/runs/stream", map[string]any{"assistant_id": "agent",
		"input":       map[string]any{"messages": []any{map[string]any{"role": "user", "content": "What is 6 times 7?"}}},
		"stream_mode": []any{"messages-tuple", "values"}})
	var chunks []string
	sc := bufio.NewScanner(resp.Body)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		if e, ok := strings.CutPrefix(line, "event: "); ok {
			event = e
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok && event == "messages" {
			var tuple []map[string]any
			if err := json.Unmarshal([]byte(d), &tuple); err == nil && tuple[0]["type"] == "AIMessageChunk" {
				chunks = append(chunks, tuple[0]["content"].(string))
			}
		}
	}
	if got := strings.Join(chunks, "|"); got != "The answer is |42." {
		t.Errorf("streamed chunks = %q, want %q", got, "The answer is |42.")
	}

	var st map[string]any
	r, err := http.Get(srv.URL() + "/threads/" + tid + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	decode(t, r.Body, &st)
	msgs := st["values"].(map[string]any)["messages"].([]any)
	if len(msgs) != 4 {
		t.Fatalf("%d messages: %v", len(msgs), msgs)
	}
	m := func(i int) map[string]any { return msgs[i].(map[string]any) }
	if m(0)["type"] != "human" || m(1)["type"] != "ai" || m(2)["type"] != "tool" || m(3)["type"] != "ai" {
		t.Fatalf("types: %v", msgs)
	}
	calls := m(1)["tool_calls"].([]any)
	call := calls[0].(map[string]any)
	if len(calls) != 1 || call["name"] != "calculator" || call["id"] != "call_1" || call["type"] != "tool_call" ||
		call["args"].(map[string]any)["expression"] != "6*7" {
		t.Errorf("tool call = %v", calls)
	}
	if m(2)["tool_call_id"] != "call_1" || m(2)["content"] != "42" || m(2)["name"] != "calculator" || m(2)["status"] != "success" {
		t.Errorf("tool message = %v", m(2))
	}
	if m(3)["content"] != "The answer is 42." || len(m(3)["tool_calls"].([]any)) != 0 {
		t.Errorf("answer = %v", m(3))
	}
	if st["next"].([]any) == nil || len(st["next"].([]any)) != 0 {
		t.Errorf("next = %v", st["next"])
	}

	// What the endpoint received: the model, the key, the tools, and on
	// the second call the assistant's tool call and the tool result.
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.reqs) != 2 {
		t.Fatalf("%d model calls", len(fake.reqs))
	}
	first, second := fake.reqs[0], fake.reqs[1]
	if first["model"] != "fake-model" || first["stream"] != true || fake.auth[0] != "Bearer test-key" {
		t.Errorf("first request: model %v stream %v auth %q", first["model"], first["stream"], fake.auth[0])
	}
	if tools := first["tools"].([]any); len(tools) != 2 {
		t.Errorf("tools = %v", tools)
	}
	sent := second["messages"].([]any)
	asst, tool := sent[1].(map[string]any), sent[2].(map[string]any)
	tc := asst["tool_calls"].([]any)[0].(map[string]any)
	if asst["role"] != "assistant" || tc["id"] != "call_1" || tc["function"].(map[string]any)["arguments"] != `{"expression":"6*7"}` {
		t.Errorf("assistant message sent back = %v", asst)
	}
	if tool["role"] != "tool" || tool["tool_call_id"] != "call_1" || tool["content"] != "42" {
		t.Errorf("tool message sent back = %v", tool)
	}
}

// An endpoint that does not stream works too, and config.configurable
// picks the model and a system prompt.
func TestAgentNonStreamingWithConfig(t *testing.T) {
	fake := &fakeOpenAI{}
	srv := startAgent(t, fake)
	var out map[string]any
	decode(t, post(t, srv.URL()+"/runs/wait", map[string]any{"assistant_id": "agent",
		"input":  map[string]any{"messages": []any{map[string]any{"role": "user", "content": "6*7?"}}},
		"config": map[string]any{"configurable": map[string]any{"model": "other-model", "system_prompt": "Be terse."}}}).Body, &out)
	msgs := out["messages"].([]any)
	if last := msgs[len(msgs)-1].(map[string]any); len(msgs) != 4 || last["content"] != "The answer is 42." {
		t.Fatalf("messages = %v", msgs)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	sys := fake.reqs[0]["messages"].([]any)[0].(map[string]any)
	if fake.reqs[0]["model"] != "other-model" || sys["role"] != "system" || sys["content"] != "Be terse." {
		t.Errorf("request = %v", fake.reqs[0])
	}
}

func TestCalculate(t *testing.T) {
	for expr, want := range map[string]float64{"6*7": 42, "(2 + 3) * 4.5": 22.5, "2^3^2": 512, "-3 - -4": 1, "10/4": 2.5, "1+2*3": 7} {
		if got, err := Calculate(expr); err != nil || got != want {
			t.Errorf("Calculate(%q) = %v, %v; want %v", expr, got, err, want)
		}
	}
	for _, bad := range []string{"", "1+", "(1", "2*x", "1/0", "1 2"} {
		if v, err := Calculate(bad); err == nil {
			t.Errorf("Calculate(%q) = %v, want an error", bad, v)
		}
	}
}
