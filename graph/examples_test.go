package graph

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"
)

func builtin(t *testing.T, id string) *Graph {
	t.Helper()
	g, ok := Builtin().Lookup(id)
	if !ok {
		t.Fatalf("no built-in graph %q", id)
	}
	return g
}

func TestBuiltinRegistry(t *testing.T) {
	t.Parallel()
	r := Builtin()
	want := []string{"echo_chat", "foo_bar", "hitl", "slow"}
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
	if err := r.Register(fooBar()); !errors.Is(err, ErrInvalidGraph) {
		t.Errorf("duplicate Register: err = %v, want ErrInvalidGraph", err)
	}
	if err := NewRegistry().Register(&Graph{ID: "bad"}); !errors.Is(err, ErrInvalidGraph) {
		t.Errorf("Register(invalid): err = %v, want ErrInvalidGraph", err)
	}
}

func TestFooBar(t *testing.T) {
	t.Parallel()
	g := builtin(t, "foo_bar")
	cp, err := invoke(t.Context(), g, State{"foo": ""})
	if err != nil {
		t.Fatal(err)
	}
	want := State{"foo": "b", "bar": []any{"a", "b"}}
	if !reflect.DeepEqual(cp.values, want) {
		t.Fatalf("values = %#v, want %#v", cp.values, want)
	}
	if cp.steps != 2 {
		t.Errorf("steps = %d, want 2", cp.steps)
	}
	if got := g.Values(State{}); !reflect.DeepEqual(got, State{"bar": []any{}}) {
		t.Errorf("Values({}) = %#v", got)
	}
	// Running twice must not share the const update between runs.
	cp2, err := invoke(t.Context(), g, State{"foo": "", "bar": []any{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []any{"x", "a", "b"}; !reflect.DeepEqual(cp2.values["bar"], want) {
		t.Errorf("bar = %v, want %v", cp2.values["bar"], want)
	}
}

func TestEchoChat(t *testing.T) {
	t.Parallel()
	g := builtin(t, "echo_chat")
	cp, err := invoke(t.Context(), g, State{"messages": []any{map[string]any{"role": "user", "content": "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	msgs := cp.values["messages"].([]any)
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
	values, err := g.Apply(cp.values, State{"messages": []any{turn2}})
	if err != nil {
		t.Fatal(err)
	}
	cp2, err := runLoop(t.Context(), g, testCheckpoint{values: values, next: []string{"echo"}})
	if err != nil {
		t.Fatal(err)
	}
	msgs = cp2.values["messages"].([]any)
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
	cp, err := invoke(t.Context(), g, State{"input": "x"})
	if err != nil {
		t.Fatal(err)
	}
	if cp.interrupt == nil {
		t.Fatalf("no interrupt; values = %v", cp.values)
	}
	if want := map[string]any{"question": "approve?", "input": "x"}; !reflect.DeepEqual(cp.interrupt.Value, want) {
		t.Errorf("interrupt value = %#v, want %#v", cp.interrupt.Value, want)
	}
	if !reflect.DeepEqual(cp.next, []string{"ask"}) {
		t.Errorf("next = %v, want [ask]", cp.next)
	}
	if !reflect.DeepEqual(cp.values, State{"input": "x"}) {
		t.Errorf("values at interrupt = %v", cp.values)
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
			done, err := resumeRun(t.Context(), g, cp, tc.resume)
			if err != nil {
				t.Fatal(err)
			}
			want := State{"input": "x", "answer": tc.answer, "result": "x:" + tc.answer}
			if done.interrupt != nil || len(done.next) != 0 || !reflect.DeepEqual(done.values, want) {
				t.Errorf("after resume: values = %#v next = %v interrupt = %v", done.values, done.next, done.interrupt)
			}
		})
	}
}

func TestSlow(t *testing.T) {
	t.Parallel()
	g := builtin(t, "slow")
	if got := g.Values(State{})["ms"]; got != float64(1000) {
		t.Errorf("default ms = %v", got)
	}
	cp, err := invoke(t.Context(), g, State{"ms": float64(5), "tag": "t"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []any{"first:t", "second:t"}; !reflect.DeepEqual(cp.values["log"], want) {
		t.Errorf("log = %v, want %v", cp.values["log"], want)
	}
}

func TestSlowCancel(t *testing.T) {
	t.Parallel()
	g := builtin(t, "slow")
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	cp, err := invoke(ctx, g, State{"ms": float64(10_000), "tag": "t"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("cancellation took %v", d)
	}
	if _, ok := cp.values["log"]; ok {
		t.Errorf("a cancelled node wrote: %v", cp.values)
	}
}
