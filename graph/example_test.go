package graph_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/weftdev/weft/graph"
)

// A graph is a literal: channels with reducers, nodes as functions, edges.
// Invoke runs it in memory, which is how a graph is unit-tested; a server
// (package weft) runs the same value for the HTTP API.
func ExampleGraph_Invoke() {
	g := &graph.Graph{
		ID: "counter",
		Channels: []graph.Channel{
			{Name: "n", Default: float64(0)},                    // last value
			{Name: "log", Kind: graph.Append, Default: []any{}}, // list concatenation
		},
		Nodes: []graph.Node{{Name: "inc", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
			n := in.Values["n"].(float64) + 1
			return graph.State{"n": n, "log": []any{fmt.Sprintf("n=%v", n)}}, nil
		}}},
		Edges: []graph.Edge{
			{From: graph.START, To: "inc"},
			{From: "inc", Targets: []string{"inc", graph.END}, Route: func(v graph.State) ([]string, error) {
				if v["n"].(float64) < 3 {
					return []string{"inc"}, nil
				}
				return []string{graph.END}, nil
			}},
		},
	}
	if err := g.Validate(); err != nil {
		panic(err)
	}
	s, err := g.Invoke(context.Background(), graph.State{"n": float64(0)}, graph.InvokeOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Values["n"], s.Values["log"], s.Steps)
	// Output:
	// 3 [n=1 n=2 n=3] 3
}

// A node with a Command body chooses where the graph goes next; Ends
// declares where it may go (validated and drawn as conditional edges).
func ExampleCommand() {
	g := &graph.Graph{
		ID:       "triage",
		Channels: []graph.Channel{{Name: "text"}, {Name: "route"}},
		Nodes: []graph.Node{
			{Name: "classify", Ends: []string{"urgent", "normal"},
				Command: func(ctx context.Context, in graph.NodeInput) (graph.Command, error) {
					to := "normal"
					if in.Values["text"] == "help!" {
						to = "urgent"
					}
					return graph.Command{Update: graph.State{"route": to}, Goto: []string{to}}, nil
				}},
			{Name: "urgent", Func: func(context.Context, graph.NodeInput) (graph.State, error) {
				return graph.State{"text": "paging on-call"}, nil
			}},
			{Name: "normal", Func: func(context.Context, graph.NodeInput) (graph.State, error) {
				return graph.State{"text": "ticket filed"}, nil
			}},
		},
		Edges: []graph.Edge{{From: graph.START, To: "classify"}},
	}
	s, err := g.Invoke(context.Background(), graph.State{"text": "help!"}, graph.InvokeOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Values["route"], "->", s.Values["text"])
	// Output:
	// urgent -> paging on-call
}

// A node reads the run's configurable (on a server: the assistant's
// config with the run's merged over it).
func ExampleNodeInput_Configurable() {
	g := &graph.Graph{
		ID:       "greeter",
		Channels: []graph.Channel{{Name: "greeting"}},
		Nodes: []graph.Node{{Name: "greet", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
			name, _ := in.Configurable()["user_name"].(string)
			return graph.State{"greeting": "hello, " + name}, nil
		}}},
		Edges: []graph.Edge{{From: graph.START, To: "greet"}},
	}
	s, _ := g.Invoke(context.Background(), nil, graph.InvokeOptions{
		Config: map[string]any{"configurable": map[string]any{"user_name": "Ada"}},
	})
	fmt.Println(s.Values["greeting"])
	// Output:
	// hello, Ada
}

// Interrupt pauses the run for human input; Resume answers it and the node
// runs again from the start, now receiving the answer.
func ExampleNodeInput_Interrupt() {
	g := &graph.Graph{
		ID:       "approval",
		Channels: []graph.Channel{{Name: "result"}},
		Nodes: []graph.Node{{Name: "ask", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
			answer, err := in.Interrupt("ship it?")
			if err != nil {
				return nil, err // the *Interrupt, returned unchanged
			}
			return graph.State{"result": answer}, nil
		}}},
		Edges: []graph.Edge{{From: graph.START, To: "ask"}},
	}
	ctx := context.Background()
	s, _ := g.Invoke(ctx, nil, graph.InvokeOptions{})
	fmt.Println(s.Next, s.Interrupts[0].Value, errors.Is(s.Interrupts[0], graph.ErrInterrupted))
	s, _ = g.Resume(ctx, s, "yes", graph.InvokeOptions{})
	fmt.Println(s.Next, s.Values["result"])
	// Output:
	// [ask] ship it? true
	// [] yes
}

// A channel with a custom Reduce combines writes its own way; several
// nodes of one superstep may write it.
func ExampleChannel_reduce() {
	maxOf := func(cur, upd any) (any, error) {
		c, _ := cur.(float64)
		u, ok := upd.(float64)
		if !ok {
			return nil, fmt.Errorf("want a number, got %T", upd)
		}
		return max(c, u), nil
	}
	write := func(v float64) graph.NodeFunc {
		return func(context.Context, graph.NodeInput) (graph.State, error) { return graph.State{"best": v}, nil }
	}
	g := &graph.Graph{
		ID:       "best",
		Channels: []graph.Channel{{Name: "best", Reduce: maxOf}},
		Nodes:    []graph.Node{{Name: "a", Func: write(7)}, {Name: "b", Func: write(3)}},
		Edges:    []graph.Edge{{From: graph.START, To: "a"}, {From: graph.START, To: "b"}},
	}
	s, err := g.Invoke(context.Background(), nil, graph.InvokeOptions{})
	fmt.Println(s.Values["best"], err)
	// Output:
	// 7 <nil>
}

// Applying a node's update through the channel reducers and asking where the
// graph goes next: the two calls an executor makes after every node.
func ExampleGraph_Apply() {
	g := &graph.Graph{
		ID:       "foo_bar",
		Channels: []graph.Channel{{Name: "foo"}, {Name: "bar", Kind: graph.Append, Default: []any{}}},
		Nodes: []graph.Node{
			{Name: "node_a", Func: func(context.Context, graph.NodeInput) (graph.State, error) { return nil, nil }},
			{Name: "node_b", Func: func(context.Context, graph.NodeInput) (graph.State, error) { return nil, nil }},
		},
		Edges: []graph.Edge{{From: graph.START, To: "node_a"}, {From: "node_a", To: "node_b"}, {From: "node_b", To: graph.END}},
	}
	values, err := g.Apply(graph.State{"foo": ""}, graph.State{"foo": "a", "bar": []any{"a"}})
	if err != nil {
		panic(err)
	}
	next, _ := g.Next("node_a", values)
	fmt.Println(values["foo"], values["bar"], next)

	_, err = g.Apply(values, graph.State{"baz": 1})
	fmt.Println(err)
	// Output:
	// a [a] [node_b]
	// invalid update: graph "foo_bar" has no channel "baz" (channels: foo, bar)
}

// A message without an id gets one; a message with a known id replaces it.
func ExampleAddMessages() {
	msgs, _ := graph.AddMessages(nil, []any{
		map[string]any{"role": "user", "content": "hi", "id": "m1"},
		map[string]any{"role": "assistant", "content": "hello", "id": "m2"},
	})
	msgs, _ = graph.AddMessages(msgs, map[string]any{"type": "ai", "content": "hello!", "id": "m2"})
	for _, m := range msgs {
		m := m.(map[string]any)
		fmt.Println(m["type"], m["id"], m["content"])
	}
	// Output:
	// human m1 hi
	// ai m2 hello!
}
