package graph

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// RemoveAll is the id of a remove message ({"type":"remove","id":RemoveAll})
// that clears every message before it (LangGraph's REMOVE_ALL_MESSAGES).
const RemoveAll = "__remove_all__"

// AddMessages is LangGraph's add_messages reducer over LangChain message
// dicts, used by Messages channels. left is the current list (nil reads as
// empty) and right the update; either may be one message or a list of them.
// It returns a new list and modifies neither argument.
//
// Every message, in left and right, is first normalized:
//   - a string s becomes {"type":"human","content":s}; inside a list, a
//     two-element list [role, content] becomes that role's message;
//   - the type is taken from "type" when it is a LangChain type (human, ai,
//     system, tool, function, chat, remove) or a chunk type (AIMessageChunk →
//     ai, HumanMessageChunk → human, …, dropping "tool_call_chunks" and
//     "chunk_position" as message_chunk_to_message does); otherwise from the
//     OpenAI-style "role" (user → human, assistant → ai, system → system,
//     developer → system with additional_kwargs.__openai_role__ = "developer",
//     tool → tool, function → function), and "role" is removed;
//   - missing or null content becomes ""; content must be a string or a list
//     of content blocks;
//   - a missing, null or empty id gets a fresh uuid4 string; a numeric id is
//     turned into its string (LangChain coerces numbers to strings);
//   - the keys LangChain's model_dump emits are added when missing:
//     additional_kwargs {} and response_metadata {} (also when null) and
//     name null for every type; for ai also tool_calls [], invalid_tool_calls
//     [] and usage_metadata null (OpenAI-format tool calls
//     {id, type:"function", function:{name, arguments}} are converted to
//     {name, args, id, type:"tool_call"}, or to an invalid_tool_calls entry
//     when arguments is not JSON); for tool also status "success" and
//     artifact null (tool_call_id is required);
//   - every other key is kept as it is. (LangChain's dict coercion would move
//     unknown keys into additional_kwargs; we keep them at the top level
//     because stored messages are dicts re-read on every step, so a
//     round-trip must not alter them.)
//
// Then right is merged into left: a message whose id matches an existing one
// replaces it in place; a new id is appended; {"type":"remove","id":X}
// deletes X and is an error when no message has id X (as in LangGraph); a
// remove message with id RemoveAll drops everything before it, left included,
// and the messages after it are merged onto an empty list. (LangGraph returns
// the messages after it verbatim; merging them as well differs only when they
// repeat an id or contain a remove.)
func AddMessages(left, right any) ([]any, error) {
	if right == nil {
		return nil, fmt.Errorf("messages update must be a message or a list of messages, got null")
	}
	l, err := normalizeMessages(left, true)
	if err != nil {
		return nil, fmt.Errorf("current messages: %w", err)
	}
	r, err := normalizeMessages(right, false)
	if err != nil {
		return nil, err
	}
	for i := len(r) - 1; i >= 0; i-- {
		if r[i]["type"] == "remove" && r[i]["id"] == RemoveAll {
			l, r = nil, r[i+1:]
			break
		}
	}

	merged := slices.Clone(l)
	index := make(map[string]int, len(merged)+len(r))
	for i, m := range merged {
		index[m["id"].(string)] = i
	}
	removed := map[string]bool{}
	for _, m := range r {
		id := m["id"].(string)
		remove := m["type"] == "remove"
		if i, ok := index[id]; ok {
			if remove {
				removed[id] = true
			} else {
				delete(removed, id)
				merged[i] = m
			}
			continue
		}
		if remove {
			return nil, fmt.Errorf("attempting to delete a message with an ID that doesn't exist (%q)", id)
		}
		index[id] = len(merged)
		merged = append(merged, m)
	}
	out := make([]any, 0, len(merged))
	for _, m := range merged {
		if !removed[m["id"].(string)] {
			out = append(out, m)
		}
	}
	return out, nil
}

// NormalizeMessage returns one message as the LangChain message dict the
// API carries, normalized as AddMessages normalizes every message (type
// from "type" or an OpenAI-style "role", content defaulted to "", a uuid4
// id when it has none, LangChain's model_dump keys filled in, OpenAI tool
// calls converted). msg is a message dict or a string (a human message);
// it is not modified. Use it to build the messages a node returns, e.g.
//
//	NormalizeMessage(map[string]any{"role": "assistant", "content": "hi"})
func NormalizeMessage(msg any) (map[string]any, error) { return normalizeMessage(msg, false) }

// MessageText returns the text of a message content, like LangChain's
// message.text: the string itself, or the concatenated text blocks
// ({"type":"text","text":…} and bare strings) of a content list; "" for
// anything else.
func MessageText(content any) string {
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

// normalizeMessages coerces v (nil, one message or a list of messages) to a
// list of normalized message dicts. With keep, a message that is normalized
// already is kept as it is, not copied (the current messages of a channel,
// which this reducer wrote: copying each at every update made a turn's cost
// grow with the conversation).
func normalizeMessages(v any, keep bool) ([]map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	list, isList := asList(v)
	if !isList {
		m, err := normalizeMessage(v, false)
		if err != nil {
			return nil, err
		}
		return []map[string]any{m}, nil
	}
	out := make([]map[string]any, len(list))
	for i, e := range list {
		if m, ok := e.(map[string]any); ok && keep && normalized(m) {
			out[i] = m
			continue
		}
		m, err := normalizeMessage(e, true)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		out[i] = m
	}
	return out, nil
}

// messageTypes maps accepted "type" values to the LangChain message type.
var messageTypes = map[string]string{
	"human": "human", "ai": "ai", "system": "system", "tool": "tool",
	"function": "function", "chat": "chat", "remove": "remove",
	"HumanMessageChunk": "human", "AIMessageChunk": "ai", "SystemMessageChunk": "system",
	"ToolMessageChunk": "tool", "FunctionMessageChunk": "function", "ChatMessageChunk": "chat",
}

// messageRoles maps OpenAI-style "role" values to the LangChain message type.
var messageRoles = map[string]string{
	"user": "human", "human": "human", "assistant": "ai", "ai": "ai",
	"system": "system", "developer": "system", "tool": "tool", "function": "function",
	"remove": "remove",
}

// normalizeMessage coerces one message to a fresh, normalized LangChain
// message dict (see AddMessages). inList allows the [role, content] form.
func normalizeMessage(v any, inList bool) (map[string]any, error) {
	var msg map[string]any
	switch x := v.(type) {
	case string:
		msg = map[string]any{"type": "human", "content": x}
	case map[string]any:
		msg = maps.Clone(x)
	default:
		pair, ok := asList(v)
		role, isStr := any(nil), false
		if ok && len(pair) == 2 {
			role = pair[0]
			_, isStr = role.(string)
		}
		if !inList || !isStr {
			return nil, fmt.Errorf("cannot use %s as a message: want an object with type or role, or a string", jsonType(v))
		}
		msg = map[string]any{"role": role, "content": pair[1]}
	}

	typ, _ := msg["type"].(string)
	if t, ok := messageTypes[typ]; ok {
		if t != typ { // a chunk
			delete(msg, "tool_call_chunks")
			delete(msg, "chunk_position")
		}
		typ = t
	} else if role, ok := msg["role"].(string); ok {
		t, known := messageRoles[role]
		if !known {
			return nil, fmt.Errorf("unknown message role %q", role)
		}
		delete(msg, "role")
		typ = t
		if role == "developer" {
			ak, _ := msg["additional_kwargs"].(map[string]any)
			ak = maps.Clone(ak)
			if ak == nil {
				ak = map[string]any{}
			}
			ak["__openai_role__"] = "developer"
			msg["additional_kwargs"] = ak
		}
	} else if typ != "" {
		return nil, fmt.Errorf("unknown message type %q", typ)
	} else {
		return nil, fmt.Errorf("message has neither a type nor a role")
	}
	msg["type"] = typ

	switch c := msg["content"].(type) {
	case nil:
		msg["content"] = ""
	case string, []any:
	default:
		l, ok := asList(c)
		if !ok {
			return nil, fmt.Errorf("message content must be a string or a list of content blocks, got %s", jsonType(c))
		}
		msg["content"] = l
	}

	switch id := msg["id"].(type) {
	case nil:
		if typ == "remove" {
			return nil, fmt.Errorf("remove message needs an id")
		}
		msg["id"] = uuid.NewString()
	case string:
		if id == "" {
			if typ == "remove" {
				return nil, fmt.Errorf("remove message needs an id")
			}
			msg["id"] = uuid.NewString()
		}
	default:
		s, ok := numberString(id)
		if !ok {
			return nil, fmt.Errorf("message id must be a string, got %s", jsonType(id))
		}
		msg["id"] = s
	}

	setDefault := func(key string, def func() any) {
		if v, ok := msg[key]; !ok || v == nil {
			msg[key] = def()
		}
	}
	setDefault("additional_kwargs", func() any { return map[string]any{} })
	setDefault("response_metadata", func() any { return map[string]any{} })
	if _, ok := msg["name"]; !ok {
		msg["name"] = nil
	}
	switch typ {
	case "ai":
		if err := normalizeToolCalls(msg); err != nil {
			return nil, err
		}
		setDefault("invalid_tool_calls", func() any { return []any{} })
		if _, ok := msg["usage_metadata"]; !ok {
			msg["usage_metadata"] = nil
		}
	case "tool":
		if msg["tool_call_id"] == nil {
			return nil, fmt.Errorf("tool message needs a tool_call_id")
		}
		setDefault("status", func() any { return "success" })
		if _, ok := msg["artifact"]; !ok {
			msg["artifact"] = nil
		}
	}
	return msg, nil
}

// normalized reports whether normalizeMessage would return a copy of m
// unchanged: a LangChain message type (not a chunk's, not remove), no
// role, string or list content, an id, the keys model_dump emits, and for
// ai tool calls in LangChain's form.
func normalized(m map[string]any) bool {
	typ, _ := m["type"].(string)
	switch typ {
	case "human", "system", "function", "chat", "ai", "tool":
	default:
		return false
	}
	if _, hasRole := m["role"]; hasRole {
		return false
	}
	switch m["content"].(type) {
	case string, []any:
	default:
		return false
	}
	if id, _ := m["id"].(string); id == "" {
		return false
	}
	if _, ok := m["name"]; !ok || m["additional_kwargs"] == nil || m["response_metadata"] == nil {
		return false
	}
	switch typ {
	case "ai":
		calls, ok := m["tool_calls"].([]any)
		if !ok || m["invalid_tool_calls"] == nil {
			return false
		}
		if _, ok := m["usage_metadata"]; !ok {
			return false
		}
		for _, c := range calls {
			tc, ok := c.(map[string]any)
			if !ok {
				return false
			}
			_, hasType := tc["type"]
			if _, openAI := tc["function"].(map[string]any); openAI || !hasType {
				return false
			}
		}
	case "tool":
		if m["tool_call_id"] == nil || m["status"] == nil {
			return false
		}
		if _, ok := m["artifact"]; !ok {
			return false
		}
	}
	return true
}

// normalizeToolCalls defaults an ai message's tool_calls to [] and converts
// OpenAI-format calls to LangChain's form (a fresh list; the input's is not
// modified).
func normalizeToolCalls(msg map[string]any) error {
	raw := msg["tool_calls"]
	if raw == nil {
		msg["tool_calls"] = []any{}
		return nil
	}
	calls, ok := asList(raw)
	if !ok {
		return fmt.Errorf("tool_calls must be a list, got %s", jsonType(raw))
	}
	out := make([]any, 0, len(calls))
	var invalid []any
	for _, c := range calls {
		tc, ok := c.(map[string]any)
		if !ok {
			return fmt.Errorf("tool call must be an object, got %s", jsonType(c))
		}
		fn, isOpenAI := tc["function"].(map[string]any)
		if !isOpenAI {
			if _, has := tc["type"]; !has {
				tc = maps.Clone(tc)
				tc["type"] = "tool_call"
			}
			out = append(out, tc)
			continue
		}
		var args any = fn["arguments"]
		if s, isStr := args.(string); isStr {
			if err := json.Unmarshal([]byte(s), &args); err != nil {
				invalid = append(invalid, map[string]any{
					"name": fn["name"], "args": s, "id": tc["id"],
					"error": err.Error(), "type": "invalid_tool_call",
				})
				continue
			}
		}
		out = append(out, map[string]any{"name": fn["name"], "args": args, "id": tc["id"], "type": "tool_call"})
	}
	msg["tool_calls"] = out
	if len(invalid) > 0 {
		prev, _ := asList(msg["invalid_tool_calls"])
		msg["invalid_tool_calls"] = append(slices.Clone(prev), invalid...)
	}
	return nil
}

// isNumber reports whether v is a Go or encoding/json number.
func isNumber(v any) bool {
	_, ok := numberString(v)
	return ok
}

// numberString formats a number (float64, json.Number or a Go integer or
// float kind) the way JSON would; ok is false for non-numbers.
func numberString(v any) (s string, ok bool) {
	switch n := v.(type) {
	case json.Number:
		return n.String(), true
	case float64:
		return strconv.FormatFloat(n, 'f', -1, 64), true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(rv.Uint(), 10), true
	case reflect.Float32:
		return strconv.FormatFloat(rv.Float(), 'f', -1, 32), true
	}
	return "", false
}
