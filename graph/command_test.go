package graph

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

// commanded is START → pick; pick is a Command node with Ends b, c, END
// that goes where the "to" channel says and also has a static edge to b.
func commanded() *Graph {
	return &Graph{
		ID:       "commanded",
		Channels: []Channel{{Name: "to"}, {Name: "log", Kind: Append, Default: []any{}}},
		Nodes: []Node{
			{Name: "pick", Ends: []string{"c", END}, Command: func(_ context.Context, in NodeInput) (Command, error) {
				to, _ := in.Values["to"].(string)
				return Command{Update: State{"log": []any{"pick"}}, Goto: []string{to}}, nil
			}},
			{Name: "b", Func: func(context.Context, NodeInput) (State, error) { return State{"log": []any{"b"}}, nil }},
			{Name: "c", Func: func(context.Context, NodeInput) (State, error) { return State{"log": []any{"c"}}, nil }},
		},
		Edges: []Edge{{From: START, To: "pick"}, {From: "pick", To: "b"}, {From: "b", To: END}, {From: "c", To: END}},
	}
}

func TestCommandGoto(t *testing.T) {
	t.Parallel()
	g := commanded()
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	// Goto adds to the static edge; END schedules nothing.
	for to, want := range map[string][]any{"c": {"pick", "b", "c"}, END: {"pick", "b"}} {
		s, err := g.Invoke(t.Context(), State{"to": to}, InvokeOptions{})
		if err != nil {
			t.Fatalf("to %s: %v", to, err)
		}
		if !reflect.DeepEqual(s.Values["log"], want) {
			t.Errorf("to %s: log = %v, want %v", to, s.Values["log"], want)
		}
	}
	// A target outside Ends fails the run.
	_, err := g.Invoke(t.Context(), State{"to": "b"}, InvokeOptions{})
	if !errors.Is(err, ErrInvalidGraph) || !strings.Contains(err.Error(), `went to "b", which is not in its Ends`) {
		t.Errorf("undeclared goto: err = %v", err)
	}
	next, err := g.NextAfter("pick", State{}, []string{"c", "c", END})
	if err != nil || !reflect.DeepEqual(next, []string{"b", "c"}) {
		t.Errorf("NextAfter = %v, %v; want [b c]", next, err)
	}
}

func TestCommandDrawable(t *testing.T) {
	t.Parallel()
	var cond []string
	for _, e := range commanded().Drawable()["edges"].([]any) {
		e := e.(map[string]any)
		if e["conditional"] == true {
			cond = append(cond, e["source"].(string)+"->"+e["target"].(string))
		}
	}
	if want := []string{"pick->c", "pick->__end__"}; !reflect.DeepEqual(cond, want) {
		t.Errorf("conditional edges = %v, want %v", cond, want)
	}
}

func TestNodeCall(t *testing.T) {
	t.Parallel()
	cmd, err := Node{Name: "n", Func: func(context.Context, NodeInput) (State, error) { return State{"x": 1}, nil }}.
		Call(t.Context(), NodeInput{})
	if err != nil || !reflect.DeepEqual(cmd, Command{Update: State{"x": 1}}) {
		t.Errorf("Func node: %+v, %v", cmd, err)
	}
	if _, err := (Node{Name: "n"}).Call(t.Context(), NodeInput{}); !errors.Is(err, ErrInvalidGraph) {
		t.Errorf("bodiless node: err = %v", err)
	}
}

func TestCustomReducer(t *testing.T) {
	t.Parallel()
	calls := 0
	g := &Graph{ID: "r", Channels: []Channel{{Name: "set", Default: []any{}, Reduce: func(cur, upd any) (any, error) {
		calls++
		out := slices.Clone(cur.([]any))
		if !slices.Contains(out, upd) {
			out = append(out, upd)
		}
		return out, nil
	}}}, Nodes: []Node{{Name: "a", Func: noop}}, Edges: []Edge{{From: START, To: "a"}}}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	v, err := g.Apply(State{}, State{"set": "x"})
	if err == nil {
		v, err = g.Apply(v, State{"set": "x"})
	}
	if err != nil || !reflect.DeepEqual(v["set"], []any{"x"}) || calls != 2 {
		t.Fatalf("set = %v, err %v, calls %d", v["set"], err, calls)
	}
	c, _ := g.Channel("set")
	if !c.Reduces() {
		t.Error("a channel with Reduce must accept several writes per step")
	}
	bad := &Graph{ID: "r", Channels: []Channel{{Name: "n", Reduce: func(any, any) (any, error) { return nil, errors.New("no") }}}}
	if _, err := bad.Apply(State{}, State{"n": 1}); !errors.Is(err, ErrInvalidUpdate) || !strings.Contains(err.Error(), "no") {
		t.Errorf("reducer error: %v", err)
	}
}

func TestInvokeStepSemantics(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	write := func(name string) NodeFunc {
		return func(_ context.Context, in NodeInput) (State, error) {
			mu.Lock()
			seen = append(seen, name+":"+in.Run.Node)
			mu.Unlock()
			return State{"last": name}, nil
		}
	}
	g := &Graph{ID: "par", Channels: []Channel{{Name: "last"}},
		Nodes: []Node{{Name: "a", Func: write("a")}, {Name: "b", Func: write("b")}},
		Edges: []Edge{{From: START, To: "a"}, {From: START, To: "b"}}}
	_, err := g.Invoke(t.Context(), nil, InvokeOptions{})
	if !errors.Is(err, ErrInvalidUpdate) || !strings.Contains(err.Error(), "only one value per step") {
		t.Errorf("two writes to a last value: err = %v", err)
	}
	slices.Sort(seen)
	if !reflect.DeepEqual(seen, []string{"a:a", "b:b"}) {
		t.Errorf("RunInfo.Node: %v", seen)
	}

	loop := &Graph{ID: "loop", Channels: []Channel{{Name: "x"}}, Nodes: []Node{{Name: "a", Func: noop}},
		Edges: []Edge{{From: START, To: "a"}, {From: "a", To: "a"}}}
	if _, err := loop.Invoke(t.Context(), nil, InvokeOptions{RecursionLimit: 5}); !errors.Is(err, ErrRecursionLimit) {
		t.Errorf("loop: err = %v", err)
	}
}

// An interrupt keeps the updates of the step's other nodes: on resume only
// the interrupted node runs again.
func TestInvokeInterruptKeepsSiblings(t *testing.T) {
	t.Parallel()
	runs := map[string]int{}
	var mu sync.Mutex
	count := func(n string) { mu.Lock(); runs[n]++; mu.Unlock() }
	g := &Graph{ID: "hitl2", Channels: []Channel{{Name: "log", Kind: Append, Default: []any{}}},
		Nodes: []Node{
			{Name: "ask", Func: func(_ context.Context, in NodeInput) (State, error) {
				count("ask")
				a, err := in.Interrupt("q1")
				if err != nil {
					return nil, err
				}
				b, err := in.Interrupt("q2")
				if err != nil {
					return nil, err
				}
				return State{"log": []any{a, b}}, nil
			}},
			{Name: "work", Func: func(context.Context, NodeInput) (State, error) {
				count("work")
				return State{"log": []any{"work"}}, nil
			}},
		},
		Edges: []Edge{{From: START, To: "ask"}, {From: START, To: "work"}}}
	s, err := g.Invoke(t.Context(), nil, InvokeOptions{})
	if err != nil || len(s.Interrupts) != 1 || s.Interrupts[0].Value != "q1" {
		t.Fatalf("first: %+v, %v", s, err)
	}
	if s, err = g.Resume(t.Context(), s, "A", InvokeOptions{}); err != nil || len(s.Interrupts) != 1 || s.Interrupts[0].Value != "q2" {
		t.Fatalf("second: %+v, %v", s, err)
	}
	if s, err = g.Resume(t.Context(), s, "B", InvokeOptions{}); err != nil || len(s.Interrupts) != 0 {
		t.Fatalf("third: %+v, %v", s, err)
	}
	if want := []any{"A", "B", "work"}; !reflect.DeepEqual(s.Values["log"], want) {
		t.Errorf("log = %v, want %v", s.Values["log"], want)
	}
	if runs["ask"] != 3 || runs["work"] != 1 {
		t.Errorf("runs = %v, want ask 3, work 1", runs)
	}
	if _, err := g.Resume(t.Context(), s, "C", InvokeOptions{}); err == nil {
		t.Error("resuming a finished run succeeded")
	}
}

func TestInvokeConfigAndContext(t *testing.T) {
	t.Parallel()
	var got NodeInput
	g := &Graph{ID: "cfg", Channels: []Channel{{Name: "x"}}, Nodes: []Node{{Name: "a", Func: func(_ context.Context, in NodeInput) (State, error) {
		got = in
		return nil, nil
	}}}, Edges: []Edge{{From: START, To: "a"}}}
	cfg := map[string]any{"configurable": map[string]any{"model": "m"}, "tags": []any{"t"}}
	if _, err := g.Invoke(t.Context(), nil, InvokeOptions{Config: cfg, Context: map[string]any{"user": "u"}}); err != nil {
		t.Fatal(err)
	}
	if got.Configurable()["model"] != "m" || got.Context["user"] != "u" || got.Run.GraphID != "cfg" || got.Run.Node != "a" {
		t.Errorf("node input: config %v context %v run %+v", got.Config, got.Context, got.Run)
	}
	if c := (NodeInput{Config: map[string]any{"configurable": "nope"}}).Configurable(); c == nil || len(c) != 0 {
		t.Errorf("non-object configurable: %v", c)
	}
}
