package graph

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/jsonv"
)

// msg is a shorthand for a message dict.
type msg = map[string]any

// human returns the normalized human message LangChain would dump.
func human(id string, content any) msg {
	return msg{"type": "human", "content": content, "id": id, "name": nil,
		"additional_kwargs": msg{}, "response_metadata": msg{}}
}

// ai returns the normalized ai message LangChain would dump.
func ai(id string, content any) msg {
	return msg{"type": "ai", "content": content, "id": id, "name": nil,
		"additional_kwargs": msg{}, "response_metadata": msg{},
		"tool_calls": []any{}, "invalid_tool_calls": []any{}, "usage_metadata": nil}
}

func TestAddMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		left    any
		right   any
		want    []any
		wantErr string
	}{
		{"append new id", []any{human("1", "a")}, []any{ai("2", "b")}, []any{human("1", "a"), ai("2", "b")}, ""},
		{"single message", []any{human("1", "a")}, msg{"type": "ai", "content": "b", "id": "2"},
			[]any{human("1", "a"), ai("2", "b")}, ""},
		{"nil left", nil, msg{"type": "human", "content": "a", "id": "1"}, []any{human("1", "a")}, ""},
		{"replace by id in place", []any{human("1", "a"), ai("2", "b"), human("3", "c")},
			[]any{msg{"type": "ai", "content": "B", "id": "2"}},
			[]any{human("1", "a"), ai("2", "B"), human("3", "c")}, ""},
		{"duplicate id in right", nil, []any{msg{"type": "human", "content": "x", "id": "1"}, msg{"type": "human", "content": "y", "id": "1"}},
			[]any{human("1", "y")}, ""},
		{"remove", []any{human("1", "a"), ai("2", "b")}, []any{msg{"type": "remove", "id": "1"}}, []any{ai("2", "b")}, ""},
		{"remove then re-add keeps place", []any{human("1", "a"), ai("2", "b")},
			[]any{msg{"type": "remove", "id": "1"}, msg{"type": "human", "content": "A", "id": "1"}},
			[]any{human("1", "A"), ai("2", "b")}, ""},
		{"remove missing id", []any{human("1", "a")}, []any{msg{"type": "remove", "id": "9"}}, nil,
			`delete a message with an ID that doesn't exist ("9")`},
		{"remove without id", []any{human("1", "a")}, []any{msg{"type": "remove"}}, nil, "remove message needs an id"},
		{"remove all", []any{human("1", "a"), ai("2", "b")},
			[]any{ai("0", "before"), msg{"type": "remove", "id": RemoveAll}, human("3", "c")},
			[]any{human("3", "c")}, ""},
		{"remove all alone", []any{human("1", "a")}, msg{"type": "remove", "id": RemoveAll}, []any{}, ""},
		{"role user", nil, []any{msg{"role": "user", "content": "hi", "id": "1"}}, []any{human("1", "hi")}, ""},
		{"role assistant", nil, []any{msg{"role": "assistant", "content": "yo", "id": "1"}}, []any{ai("1", "yo")}, ""},
		{"role system", nil, []any{msg{"role": "system", "content": "be nice", "id": "1"}},
			[]any{msg{"type": "system", "content": "be nice", "id": "1", "name": nil, "additional_kwargs": msg{}, "response_metadata": msg{}}}, ""},
		{"role developer", nil, []any{msg{"role": "developer", "content": "d", "id": "1"}},
			[]any{msg{"type": "system", "content": "d", "id": "1", "name": nil,
				"additional_kwargs": msg{"__openai_role__": "developer"}, "response_metadata": msg{}}}, ""},
		{"role tool", nil, []any{msg{"role": "tool", "content": "42", "tool_call_id": "c1", "id": "1"}},
			[]any{msg{"type": "tool", "content": "42", "tool_call_id": "c1", "id": "1", "name": nil,
				"additional_kwargs": msg{}, "response_metadata": msg{}, "status": "success", "artifact": nil}}, ""},
		{"tool without tool_call_id", nil, msg{"role": "tool", "content": "42"}, nil, "tool_call_id"},
		{"unknown role", nil, msg{"role": "robot", "content": "x"}, nil, `unknown message role "robot"`},
		{"no type", nil, msg{"content": "x"}, nil, "neither a type nor a role"},
		{"bad content", nil, msg{"type": "human", "content": 3.0}, nil, "content must be a string or a list"},
		{"null update", nil, nil, nil, "got null"},
		{"number", nil, 3.0, nil, "cannot use a number as a message"},
		{"list content", nil, []any{msg{"type": "human", "id": "1", "content": []any{msg{"type": "text", "text": "x"}}}},
			[]any{human("1", []any{msg{"type": "text", "text": "x"}})}, ""},
		{"missing content", nil, []any{msg{"type": "ai", "id": "1"}}, []any{ai("1", "")}, ""},
		{"numeric id", nil, []any{msg{"type": "human", "content": "a", "id": 7.0}}, []any{human("7", "a")}, ""},
		{"chunk", nil, []any{msg{"type": "AIMessageChunk", "content": "a", "id": "1", "tool_call_chunks": []any{}}},
			[]any{ai("1", "a")}, ""},
		{"extra keys kept", nil, []any{msg{"type": "ai", "content": "a", "id": "1", "usage_metadata": msg{"total_tokens": 3.0}, "x": true}},
			[]any{func() msg { m := ai("1", "a"); m["usage_metadata"] = msg{"total_tokens": 3.0}; m["x"] = true; return m }()}, ""},
		{"openai tool calls", nil, []any{msg{"role": "assistant", "content": nil, "id": "1", "tool_calls": []any{
			msg{"id": "c1", "type": "function", "function": msg{"name": "f", "arguments": `{"a":1}`}},
			msg{"id": "c2", "type": "function", "function": msg{"name": "g", "arguments": `{bad`}},
			msg{"id": "c3", "name": "h", "args": msg{}},
		}}}, []any{func() msg {
			m := ai("1", "")
			m["tool_calls"] = []any{
				msg{"name": "f", "args": msg{"a": 1.0}, "id": "c1", "type": "tool_call"},
				msg{"id": "c3", "name": "h", "args": msg{}, "type": "tool_call"},
			}
			m["invalid_tool_calls"] = []any{msg{"name": "g", "args": `{bad`, "id": "c2",
				"error": "invalid character 'b' looking for beginning of object key string", "type": "invalid_tool_call"}}
			return m
		}()}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			before, beforeR := jsonv.Clone(tc.left), jsonv.Clone(tc.right)
			got, err := AddMessages(tc.left, tc.right)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %#v\nwant %#v", got, tc.want)
			}
			if !reflect.DeepEqual(tc.left, before) || !reflect.DeepEqual(tc.right, beforeR) {
				t.Error("AddMessages mutated its inputs")
			}
		})
	}
}

func TestAddMessagesAssignsIDs(t *testing.T) {
	t.Parallel()
	left := []any{msg{"type": "human", "content": "no id in left"}}
	got, err := AddMessages(left, []any{"bare string", msg{"role": "user", "content": "x", "id": ""}, []any{"assistant", "tuple"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("got %d messages: %v", len(got), got)
	}
	wantTypes := []string{"human", "human", "human", "ai"}
	wantContent := []string{"no id in left", "bare string", "x", "tuple"}
	ids := map[string]bool{}
	for i, m := range got {
		m := m.(msg)
		if m["type"] != wantTypes[i] || m["content"] != wantContent[i] {
			t.Errorf("message %d = %v", i, m)
		}
		id, _ := m["id"].(string)
		if _, err := uuid.Parse(id); err != nil {
			t.Errorf("message %d id %q: %v", i, id, err)
		}
		ids[id] = true
	}
	if len(ids) != 4 {
		t.Errorf("ids not unique: %v", ids)
	}
	if _, has := left[0].(msg)["id"]; has {
		t.Error("left was mutated")
	}
}

func TestApplyMessagesChannel(t *testing.T) {
	t.Parallel()
	g := &Graph{ID: "chat", Channels: []Channel{{Name: "messages", Kind: Messages, Default: []any{}}}}
	v, err := g.Apply(State{}, State{"messages": msg{"role": "user", "content": "hi", "id": "c1"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := (State{"messages": []any{human("c1", "hi")}}); !reflect.DeepEqual(v, want) {
		t.Fatalf("got %#v", v)
	}
	_, err = g.Apply(v, State{"messages": msg{"type": "remove", "id": "nope"}})
	if !errors.Is(err, ErrInvalidUpdate) || !strings.Contains(err.Error(), `channel "messages"`) {
		t.Errorf("remove unknown id: err = %v", err)
	}
}

// TestNormalizedKeptAsIs: a message normalizeMessage would return unchanged
// (every message it returns, among others) is recognised as normalized, and
// AddMessages keeps such current messages as they are (the same maps); any
// message normalizeMessage would change is not recognised.
func TestNormalizedKeptAsIs(t *testing.T) {
	inputs := []any{
		"hi",
		msg{"type": "human", "content": "a"},
		msg{"role": "user", "content": "b"},
		msg{"role": "developer", "content": "c"},
		msg{"type": "ai", "content": "", "tool_calls": []any{msg{"id": "1", "type": "function", "function": msg{"name": "f", "arguments": `{"x":1}`}}}},
		msg{"type": "ai", "content": "", "tool_calls": []any{msg{"id": "2", "name": "g", "args": msg{}}}},
		msg{"type": "AIMessageChunk", "content": "d", "tool_call_chunks": []any{}},
		msg{"type": "tool", "content": "e", "tool_call_id": "1"},
		msg{"type": "system", "content": []any{msg{"type": "text", "text": "f"}}, "id": 7},
		msg{"type": "human", "content": nil, "id": ""},
	}
	for _, in := range inputs {
		if m, ok := in.(msg); ok && normalized(m) {
			t.Errorf("%v: recognised as normalized before normalizing", in)
		}
		out, err := normalizeMessage(in, true)
		if err != nil {
			t.Fatalf("%v: %v", in, err)
		}
		if !normalized(out) {
			t.Errorf("%v: normalized form %v not recognised", in, out)
		}
		again, err := normalizeMessage(out, true)
		if err != nil || !reflect.DeepEqual(again, out) {
			t.Errorf("%v: normalizing %v again gives %v (%v)", in, out, again, err)
		}
	}
	for _, m := range []msg{
		{"type": "ai", "content": "x", "id": "a", "name": nil, "additional_kwargs": msg{}, "response_metadata": msg{}, "tool_calls": []any{}, "invalid_tool_calls": []any{}},
		{"type": "tool", "content": "x", "id": "a", "name": nil, "additional_kwargs": msg{}, "response_metadata": msg{}, "tool_call_id": "1", "artifact": nil},
		{"type": "human", "content": "x", "id": "a", "name": nil, "additional_kwargs": nil, "response_metadata": msg{}},
		{"type": "remove", "content": "", "id": "a", "name": nil, "additional_kwargs": msg{}, "response_metadata": msg{}},
	} {
		if normalized(m) {
			t.Errorf("%v: recognised as normalized, but normalizing changes it", m)
		}
	}
	first, err := AddMessages(nil, []any{"one", msg{"role": "assistant", "content": "two"}})
	if err != nil {
		t.Fatal(err)
	}
	next, err := AddMessages(first, "three")
	if err != nil {
		t.Fatal(err)
	}
	for i := range first {
		if reflect.ValueOf(next[i]).UnsafePointer() != reflect.ValueOf(first[i]).UnsafePointer() {
			t.Errorf("current message %d was copied", i)
		}
	}
}
