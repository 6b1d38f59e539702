package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/jsonv"
)

// fooBar is the smallest graph with a reducer:
//
//	channels: foo (last value), bar (append, default [])
//	START → node_a → node_b → END
//	node_a writes {foo:"a", bar:["a"]}, node_b writes {foo:"b", bar:["b"]}
//
// Input {foo:""} ends at {foo:"b", bar:["a","b"]}.
func fooBar() *Graph {
	return &Graph{
		ID: "foo_bar",
		Channels: []Channel{
			{Name: "foo", Kind: LastValue},
			{Name: "bar", Kind: Append, Default: []any{}},
		},
		Nodes: []Node{
			{Name: "node_a", Func: constNode(State{"foo": "a", "bar": []any{"a"}})},
			{Name: "node_b", Func: constNode(State{"foo": "b", "bar": []any{"b"}})},
		},
		Edges: []Edge{
			{From: START, To: "node_a"},
			{From: "node_a", To: "node_b"},
			{From: "node_b", To: END},
		},
	}
}

// constNode returns a node that writes a fresh copy of update.
func constNode(update State) NodeFunc {
	return func(ctx context.Context, _ NodeInput) (State, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return jsonv.Clone(update).(State), nil
	}
}

// echoChat is a chat graph without a model:
//
//	channels: messages (add_messages, default [])
//	START → echo → END
//	echo appends {type:"ai", content:"echo: <text of the last human message>"}
//	with a fresh id (text = the string content, or the concatenated text
//	blocks of a list content; "" when there is no human message).
func echoChat() *Graph {
	return &Graph{
		ID:       "echo_chat",
		Channels: []Channel{{Name: "messages", Kind: Messages, Default: []any{}}},
		Nodes:    []Node{{Name: "echo", Func: echoNode}},
		Edges: []Edge{
			{From: START, To: "echo"},
			{From: "echo", To: END},
		},
	}
}

func echoNode(ctx context.Context, in NodeInput) (State, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	text := ""
	msgs, _ := asList(in.Values["messages"])
	for i := len(msgs) - 1; i >= 0; i-- {
		m, _ := msgs[i].(map[string]any)
		if m["type"] == "human" || m["role"] == "user" {
			text = contentText(m["content"])
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
	reply, err := normalizeMessage(map[string]any{
		"type": "ai", "content": "echo: " + text, "id": id,
	}, false)
	if err != nil {
		return nil, err
	}
	return State{"messages": []any{reply}}, nil
}

// contentText returns a message content's text: the string itself, or the
// concatenation of the text blocks ({"type":"text","text":…} and bare
// strings) of a content list, like LangChain's message.text.
func contentText(content any) string {
	if s, ok := content.(string); ok {
		return s
	}
	blocks, _ := asList(content)
	var b strings.Builder
	for _, blk := range blocks {
		switch x := blk.(type) {
		case string:
			b.WriteString(x)
		case map[string]any:
			if t, ok := x["text"].(string); ok && x["type"] == "text" {
				b.WriteString(t)
			}
		}
	}
	return b.String()
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
func hitl() *Graph {
	return &Graph{
		ID: "hitl",
		Channels: []Channel{
			{Name: "input"},
			{Name: "answer"},
			{Name: "result"},
		},
		Nodes: []Node{
			{Name: "prepare", Func: func(ctx context.Context, in NodeInput) (State, error) {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				return State{"input": in.Values["input"]}, nil
			}},
			{Name: "ask", Func: func(ctx context.Context, in NodeInput) (State, error) {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				r, err := in.Interrupt(map[string]any{"question": "approve?", "input": in.Values["input"]})
				if err != nil {
					return nil, err
				}
				return State{"answer": text(r)}, nil
			}},
			{Name: "finish", Func: func(ctx context.Context, in NodeInput) (State, error) {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				return State{"result": text(in.Values["input"]) + ":" + text(in.Values["answer"])}, nil
			}},
		},
		Edges: []Edge{
			{From: START, To: "prepare"},
			{From: "prepare", To: "ask"},
			{From: "ask", To: "finish"},
			{From: "finish", To: END},
		},
	}
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
func slow() *Graph {
	return &Graph{
		ID: "slow",
		Channels: []Channel{
			{Name: "ms", Kind: LastValue, Default: float64(1000)},
			{Name: "tag", Kind: LastValue},
			{Name: "log", Kind: Append, Default: []any{}},
		},
		Nodes: []Node{
			{Name: "first", Func: sleepNode("first")},
			{Name: "second", Func: sleepNode("second")},
		},
		Edges: []Edge{
			{From: START, To: "first"},
			{From: "first", To: "second"},
			{From: "second", To: END},
		},
	}
}

// sleepNode returns slow's node body, logging "<name>:<tag>".
func sleepNode(name string) NodeFunc {
	return func(ctx context.Context, in NodeInput) (State, error) {
		ms := 1000.0
		if v := in.Values["ms"]; v != nil {
			s, isNum := numberString(v)
			if !isNum {
				return nil, fmt.Errorf("slow: ms must be a number, got %s", jsonType(v))
			}
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, fmt.Errorf("slow: ms: %w", err)
			}
			ms = f
		}
		t := time.NewTimer(time.Duration(max(ms, 0) * float64(time.Millisecond)))
		defer t.Stop()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
		return State{"log": []any{name + ":" + text(in.Values["tag"])}}, nil
	}
}
