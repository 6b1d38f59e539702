package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/graph"
)

// Graphs returns a new registry holding the built-in example graphs:
// foo_bar, echo_chat, hitl, hitl_chat and slow (see the package documentation). Each
// call builds fresh Graph values. It panics if a built-in graph is invalid,
// which is a bug caught by this package's tests.
func Graphs() *graph.Registry {
	r := graph.NewRegistry()
	for _, g := range []*graph.Graph{fooBar(), echoChat(), hitl(), hitlChat(), slow()} {
		if err := r.Register(g); err != nil {
			panic(fmt.Sprintf("builtin: %v", err))
		}
	}
	return r
}

// fooBar is the smallest graph with a reducer:
//
//	channels: foo (last value), bar (append, default [])
//	START → node_a → node_b → END
//	node_a writes {foo:"a", bar:["a"]}, node_b writes {foo:"b", bar:["b"]}
//
// Input {foo:""} ends at {foo:"b", bar:["a","b"]}.
func fooBar() *graph.Graph {
	return &graph.Graph{
		ID: "foo_bar",
		Channels: []graph.Channel{
			{Name: "foo", Kind: graph.LastValue},
			{Name: "bar", Kind: graph.Append, Default: []any{}},
		},
		Nodes: []graph.Node{
			{Name: "node_a", Func: constNode(func() graph.State { return graph.State{"foo": "a", "bar": []any{"a"}} })},
			{Name: "node_b", Func: constNode(func() graph.State { return graph.State{"foo": "b", "bar": []any{"b"}} })},
		},
		Edges: []graph.Edge{
			{From: graph.START, To: "node_a"},
			{From: "node_a", To: "node_b"},
			{From: "node_b", To: graph.END},
		},
	}
}

// constNode returns a node that writes update() (a fresh value each time,
// so runs never share it).
func constNode(update func() graph.State) graph.NodeFunc {
	return func(ctx context.Context, _ graph.NodeInput) (graph.State, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return update(), nil
	}
}

// echoChat is a chat graph without a model:
//
//	channels: messages (add_messages, default [])
//	START → echo → END
//	echo appends {type:"ai", content:"echo: <text of the last human message>"}
//	with a fresh id (text = the string content, or the concatenated text
//	blocks of a list content; "" when there is no human message).
func echoChat() *graph.Graph {
	return &graph.Graph{
		ID:       "echo_chat",
		Channels: []graph.Channel{{Name: "messages", Kind: graph.Messages, Default: []any{}}},
		Nodes:    []graph.Node{{Name: "echo", Func: echoNode}},
		Edges: []graph.Edge{
			{From: graph.START, To: "echo"},
			{From: "echo", To: graph.END},
		},
	}
}

func echoNode(ctx context.Context, in graph.NodeInput) (graph.State, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	text := ""
	msgs, _ := in.Values["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		m, _ := msgs[i].(map[string]any)
		if m["type"] == "human" || m["role"] == "user" {
			text = graph.MessageText(m["content"])
			break
		}
	}
	id := uuid.NewString()
	// Stream the reply a word at a time, as a chat model streams tokens.
	words := strings.SplitAfter("echo: "+text, " ")
	for _, w := range words {
		if w != "" {
			in.MessageChunk(map[string]any{"type": "AIMessageChunk", "content": w, "id": id,
				"additional_kwargs": map[string]any{}, "response_metadata": map[string]any{},
				"tool_call_chunks": []any{}, "tool_calls": []any{}, "invalid_tool_calls": []any{}})
		}
	}
	reply, err := graph.NormalizeMessage(map[string]any{
		"type": "ai", "content": "echo: " + text, "id": id,
	})
	if err != nil {
		return nil, err
	}
	return graph.State{"messages": []any{reply}}, nil
}

// hitl demonstrates interrupts:
//
//	channels: input, answer, result (last value)
//	START → prepare → ask → finish → END
//	prepare writes {input} (echoing the input value);
//	ask interrupts with {question:"approve?", input} and, resumed with R,
//	writes {answer: text(R)};
//	finish writes {result: text(input) + ":" + text(answer)}.
//
// text(v) is v for a string, "" for null, and v's JSON encoding otherwise
// (so resuming with true gives "true" and with {"ok":1} gives `{"ok":1}`).
func hitl() *graph.Graph {
	return &graph.Graph{
		ID: "hitl",
		Channels: []graph.Channel{
			{Name: "input"},
			{Name: "answer"},
			{Name: "result"},
		},
		Nodes: []graph.Node{
			{Name: "prepare", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				return graph.State{"input": in.Values["input"]}, nil
			}},
			{Name: "ask", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				r, err := in.Interrupt(map[string]any{"question": "approve?", "input": in.Values["input"]})
				if err != nil {
					return nil, err
				}
				return graph.State{"answer": text(r)}, nil
			}},
			{Name: "finish", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				return graph.State{"result": text(in.Values["input"]) + ":" + text(in.Values["answer"])}, nil
			}},
		},
		Edges: []graph.Edge{
			{From: graph.START, To: "prepare"},
			{From: "prepare", To: "ask"},
			{From: "ask", To: "finish"},
			{From: "finish", To: graph.END},
		},
	}
}

// hitlChat is a chat graph that asks before it answers (human in the loop
// over messages, what an A2A client sees as input-required):
//
//	channels: messages (add_messages, default [])
//	START → review → END
//	review drafts "echo: <text of the last human message>" and interrupts
//	with {question: "Send the reply \"<draft>\"? (yes/no)", draft}; resumed
//	with R, it appends an ai message: the draft when text(R) is yes or y
//	(any case, spaces trimmed), else "Reply not sent."
func hitlChat() *graph.Graph {
	return &graph.Graph{
		ID:       "hitl_chat",
		Channels: []graph.Channel{{Name: "messages", Kind: graph.Messages, Default: []any{}}},
		Nodes:    []graph.Node{{Name: "review", Func: reviewNode}},
		Edges: []graph.Edge{
			{From: graph.START, To: "review"},
			{From: "review", To: graph.END},
		},
	}
}

func reviewNode(ctx context.Context, in graph.NodeInput) (graph.State, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	draft := "echo: " + lastHumanText(in.Values["messages"])
	r, err := in.Interrupt(map[string]any{"question": "Send the reply " + strconv.Quote(draft) + "? (yes/no)", "draft": draft})
	if err != nil {
		return nil, err
	}
	reply := "Reply not sent."
	if a := strings.ToLower(strings.TrimSpace(text(r))); a == "yes" || a == "y" {
		reply = draft
	}
	msg, err := graph.NormalizeMessage(map[string]any{"type": "ai", "content": reply, "id": uuid.NewString()})
	if err != nil {
		return nil, err
	}
	return graph.State{"messages": []any{msg}}, nil
}

// lastHumanText is the text of the last human message of a messages value
// ("" when there is none).
func lastHumanText(v any) string {
	msgs, _ := v.([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		m, _ := msgs[i].(map[string]any)
		if m["type"] == "human" || m["role"] == "user" {
			return graph.MessageText(m["content"])
		}
	}
	return ""
}

// text renders a JSON value as a string: strings as they are, null as "",
// anything else JSON-encoded.
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// slow is for cancellation, interrupt-the-run and multitask tests:
//
//	channels: ms (last value, default 1000), tag (last value), log (append, default [])
//	START → first → second → END
//	each node sleeps ms milliseconds (1000 when unset or null; negative
//	means 0), returning ctx.Err() as soon as the context is cancelled, then
//	appends "first:<tag>" / "second:<tag>" (tag rendered like hitl's text,
//	"" when unset).
func slow() *graph.Graph {
	return &graph.Graph{
		ID: "slow",
		Channels: []graph.Channel{
			{Name: "ms", Kind: graph.LastValue, Default: float64(1000)},
			{Name: "tag", Kind: graph.LastValue},
			{Name: "log", Kind: graph.Append, Default: []any{}},
		},
		Nodes: []graph.Node{
			{Name: "first", Func: sleepNode("first")},
			{Name: "second", Func: sleepNode("second")},
		},
		Edges: []graph.Edge{
			{From: graph.START, To: "first"},
			{From: "first", To: "second"},
			{From: "second", To: graph.END},
		},
	}
}

// sleepNode returns slow's node body, logging "<name>:<tag>".
func sleepNode(name string) graph.NodeFunc {
	return func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
		ms := 1000.0
		if v := in.Values["ms"]; v != nil {
			var err error
			if ms, err = number(v); err != nil {
				return nil, fmt.Errorf("slow: ms %w", err)
			}
		}
		t := time.NewTimer(time.Duration(max(ms, 0) * float64(time.Millisecond)))
		defer t.Stop()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
		return graph.State{"log": []any{name + ":" + text(in.Values["tag"])}}, nil
	}
}

// number reads a JSON number (float64 from encoding/json, or json.Number).
func number(v any) (float64, error) {
	switch n := v.(type) {
	case float64:
		return n, nil
	case json.Number:
		return n.Float64()
	case string:
		return 0, fmt.Errorf("must be a number, got a string")
	case bool:
		return 0, fmt.Errorf("must be a number, got a boolean")
	case map[string]any:
		return 0, fmt.Errorf("must be a number, got an object")
	case []any:
		return 0, fmt.Errorf("must be a number, got a list")
	}
	return 0, fmt.Errorf("must be a number, got %T", v)
}
