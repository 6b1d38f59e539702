package graph_test

import (
	"fmt"

	"github.com/weftdev/weft/graph"
)

// Applying a node's update through the channel reducers and asking where the
// graph goes next: the two calls an executor makes after every node.
func ExampleGraph_Apply() {
	g, _ := graph.Builtin().Lookup("foo_bar")
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
