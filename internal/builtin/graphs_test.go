package builtin

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/graph"
)

func builtin(t *testing.T, id string) *graph.Graph {
	t.Helper()
	g, ok := Graphs().Lookup(id)
	if !ok {
		t.Fatalf("no built-in graph %q", id)
	}
	return g
}

func TestBuiltinRegistry(t *testing.T) {
	t.Parallel()
	r := Graphs()
	want := []string{"echo_chat", "foo_bar", "hitl", "hitl_chat", "slow"}
	if got := r.IDs(); !reflect.DeepEqual(got, want) {
		t.Fatalf("IDs() = %v, want %v", got, want)
	}
	for _, id := range want {
		g, ok := r.Lookup(id)
		if !ok || g.ID != id {
			t.Fatalf("Lookup(%q) = %v, %v", id, g, ok)
		}
		if err := g.Validate(); err != nil {
			t.Errorf("%s: Validate: %v", id, err)
		}
	}
	if _, ok := r.Lookup("nope"); ok {
		t.Error("Lookup(nope) found something")
	}
	if err := r.Register(fooBar()); !errors.Is(err, graph.ErrInvalidGraph) {
		t.Errorf("duplicate Register: err = %v, want ErrInvalidGraph", err)
	}
	if err := graph.NewRegistry().Register(&graph.Graph{ID: "bad"}); !errors.Is(err, graph.ErrInvalidGraph) {
		t.Errorf("Register(invalid): err = %v, want ErrInvalidGraph", err)
	}
}

func TestFooBar(t *testing.T) {
	t.Parallel()
	g := builtin(t, "foo_bar")
	cp, err := g.Invoke(t.Context(), graph.State{"foo": ""}, graph.InvokeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := graph.State{"foo": "b", "bar": []any{"a", "b"}}
	if !reflect.DeepEqual(cp.Values, want) {
		t.Fatalf("values = %#v, want %#v", cp.Values, want)
	}
	if cp.Steps != 2 {
		t.Errorf("steps = %d, want 2", cp.Steps)
	}
	if got := g.Values(graph.State{}); !reflect.DeepEqual(got, graph.State{"bar": []any{}}) {
		t.Errorf("Values({}) = %#v", got)
	}
	// Running twice must not share the const update between runs.
	cp2, err := g.Invoke(t.Context(), graph.State{"foo": "", "bar": []any{"x"}}, graph.InvokeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []any{"x", "a", "b"}; !reflect.DeepEqual(cp2.Values["bar"], want) {
		t.Errorf("bar = %v, want %v", cp2.Values["bar"], want)
	}
}

func TestEchoChat(t *testing.T) {
	t.Parallel()
	g := builtin(t, "echo_chat")
	cp, err := g.Invoke(t.Context(), graph.State{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}, graph.InvokeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	msgs := cp.Values["messages"].([]any)
	if len(msgs) != 2 {
		t.Fatalf("got %d messages: %v", len(msgs), msgs)
	}
	human, ai := msgs[0].(map[string]any), msgs[1].(map[string]any)
	if human["type"] != "human" || human["content"] != "hi" {
		t.Errorf("human = %v", human)
	}
	if ai["type"] != "ai" || ai["content"] != "echo: hi" {
		t.Errorf("ai = %v", ai)
	}
	for _, m := range []map[string]any{human, ai} {
		if _, err := uuid.Parse(m["id"].(string)); err != nil {
			t.Errorf("id %v: %v", m["id"], err)
		}
	}
	if human["id"] == ai["id"] {
		t.Error("human and ai share an id")
	}
	if !reflect.DeepEqual(ai["tool_calls"], []any{}) {
		t.Errorf("ai tool_calls = %#v", ai["tool_calls"])
	}

	// Second turn, list content with text blocks and an image; the client id
	// is kept.
	turn2 := map[string]any{"type": "human", "id": "c2", "content": []any{
		map[string]any{"type": "text", "text": "hello"},
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": "http://x/y.png"}},
		map[string]any{"type": "text", "text": " world"},
	}}
	values := graph.State{"messages": append(cp.Values["messages"].([]any), turn2)}
	if err != nil {
		t.Fatal(err)
	}
	cp2, err := g.Invoke(t.Context(), values, graph.InvokeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	msgs = cp2.Values["messages"].([]any)
	if len(msgs) != 4 {
		t.Fatalf("got %d messages", len(msgs))
	}
	if m := msgs[2].(map[string]any); m["id"] != "c2" {
		t.Errorf("client id lost: %v", m["id"])
	}
	if got := msgs[3].(map[string]any)["content"]; got != "echo: hello world" {
		t.Errorf("echo = %q", got)
	}
	if msgs[3].(map[string]any)["id"] == ai["id"] {
		t.Error("second reply reused the first reply's id")
	}
}

func TestHITL(t *testing.T) {
	t.Parallel()
	g := builtin(t, "hitl")
	cp, err := g.Invoke(t.Context(), graph.State{"input": "x"}, graph.InvokeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cp.Interrupts) == 0 {
		t.Fatalf("no interrupt; values = %v", cp.Values)
	}
	if want := map[string]any{"question": "approve?", "input": "x"}; !reflect.DeepEqual(cp.Interrupts[0].Value, want) {
		t.Errorf("interrupt value = %#v, want %#v", cp.Interrupts[0].Value, want)
	}
	if !reflect.DeepEqual(cp.Next, []string{"ask"}) {
		t.Errorf("next = %v, want [ask]", cp.Next)
	}
	if !reflect.DeepEqual(cp.Values, graph.State{"input": "x"}) {
		t.Errorf("values at interrupt = %v", cp.Values)
	}

	for _, tc := range []struct {
		name   string
		resume any
		answer string
	}{
		{"string", "yes", "yes"},
		{"bool", true, "true"},
		{"object", map[string]any{"ok": float64(1)}, `{"ok":1}`},
		{"null", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done, err := g.Resume(t.Context(), cp, tc.resume, graph.InvokeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := graph.State{"input": "x", "answer": tc.answer, "result": "x:" + tc.answer}
			if len(done.Interrupts) > 0 || len(done.Next) != 0 || !reflect.DeepEqual(done.Values, want) {
				t.Errorf("after resume: values = %#v next = %v interrupt = %v", done.Values, done.Next, done.Interrupts)
			}
		})
	}
}

func TestHITLChat(t *testing.T) {
	t.Parallel()
	g := builtin(t, "hitl_chat")
	in := graph.State{"messages": []any{map[string]any{"type": "human", "content": "hi"}}}
	cp, err := g.Invoke(t.Context(), in, graph.InvokeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cp.Interrupts) == 0 {
		t.Fatalf("no interrupt; values = %v", cp.Values)
	}
	if want := map[string]any{"question": `Send the reply "echo: hi"? (yes/no)`, "draft": "echo: hi"}; !reflect.DeepEqual(cp.Interrupts[0].Value, want) {
		t.Errorf("interrupt value = %#v, want %#v", cp.Interrupts[0].Value, want)
	}
	for _, tc := range []struct {
		resume any
		reply  string
	}{{"yes", "echo: hi"}, {" Y ", "echo: hi"}, {"no", "Reply not sent."}, {nil, "Reply not sent."}} {
		done, err := g.Resume(t.Context(), cp, tc.resume, graph.InvokeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		msgs, _ := done.Values["messages"].([]any)
		if len(msgs) != 2 || len(done.Interrupts) > 0 {
			t.Fatalf("resume %v: messages = %v, interrupts = %v", tc.resume, msgs, done.Interrupts)
		}
		if last := msgs[1].(map[string]any); last["type"] != "ai" || last["content"] != tc.reply {
			t.Errorf("resume %v: reply = %v, want ai %q", tc.resume, last, tc.reply)
		}
	}
}

func TestSlow(t *testing.T) {
	t.Parallel()
	g := builtin(t, "slow")
	if got := g.Values(graph.State{})["ms"]; got != float64(1000) {
		t.Errorf("default ms = %v", got)
	}
	cp, err := g.Invoke(t.Context(), graph.State{"ms": float64(5), "tag": "t"}, graph.InvokeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []any{"first:t", "second:t"}; !reflect.DeepEqual(cp.Values["log"], want) {
		t.Errorf("log = %v, want %v", cp.Values["log"], want)
	}
}

func TestSlowCancel(t *testing.T) {
	t.Parallel()
	g := builtin(t, "slow")
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	cp, err := g.Invoke(ctx, graph.State{"ms": float64(10_000), "tag": "t"}, graph.InvokeOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("cancellation took %v", d)
	}
	if _, ok := cp.Values["log"]; ok {
		t.Errorf("a cancelled node wrote: %v", cp.Values)
	}
}
