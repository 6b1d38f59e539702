// Package deltareducer is LangGraph's messages delta reducer in Go: how a
// DeltaChannel of messages (LangGraph.js MessagesDeltaValue) rebuilds its
// value from a base and the writes along its parent chain. It knows
// nothing of storage; internal/checkpoints replays stored writes through
// it.
package deltareducer

import (
	"encoding/json"
	"strings"

	"github.com/weftdev/weft/internal/checkpoints/serde"
)

// removeAllMessages is LangGraph's REMOVE_ALL_MESSAGES, the id of a
// RemoveMessage that clears every message before it.
const removeAllMessages = "__remove_all__"

// MessagesDeltaReduce is LangGraph's messagesDeltaReducer
// (@langchain/langgraph 1.7.3, graph/messages_reducer.js) on Weft's plain
// message dicts: state is the current list, writes a batch of writes, each
// a message or a list of messages. It is batching-invariant, like the
// original: reduce(reduce(s, xs), ys) == reduce(s, xs ++ ys).
//
// Its semantics differ from add_messages' (messagesStateReducer) on
// purpose, as the original's do: a RemoveMessage of an id that is not
// there is ignored (no error); a message without an id is appended and
// gets none (LangGraph's loop assigns ids before it writes); a
// RemoveMessage with id "__remove_all__" drops everything accumulated so
// far, this batch's earlier writes included; a message whose id is
// already there replaces it in place; one whose id was removed earlier in
// the batch is appended at the end. Message-likes are coerced as
// LangChain's coerceMessageLikeToMessage does for the common cases (a
// string is a human message, {role, content} a message of that role) and
// chunks become their non-chunk type. Inputs are not modified; the result
// shares the message maps of its inputs.
func MessagesDeltaReduce(state []any, writes []any) []any {
	var flat []any
	for _, w := range writes {
		if l, ok := w.([]any); ok {
			flat = append(flat, l...)
		} else {
			flat = append(flat, w)
		}
	}
	result := make([]any, 0, len(state)+len(flat))
	index := map[string]int{}
	for _, m := range state {
		m = coerceMessage(m)
		if id, ok := messageID(m); ok {
			index[id] = len(result)
		}
		result = append(result, m)
	}
	removed := make([]bool, len(result), cap(result))
	for _, m := range flat {
		m = coerceMessage(m)
		id, hasID := messageID(m)
		switch {
		case isRemoveMessage(m) && hasID && id == removeAllMessages:
			result, removed = result[:0], removed[:0]
			clear(index)
		case !hasID:
			result, removed = append(result, m), append(removed, false)
		case isRemoveMessage(m):
			if i, ok := index[id]; ok {
				removed[i] = true
				delete(index, id)
			}
		default:
			if i, ok := index[id]; ok {
				result[i] = m
			} else {
				index[id] = len(result)
				result, removed = append(result, m), append(removed, false)
			}
		}
	}
	out := make([]any, 0, len(result))
	for i, m := range result {
		if !removed[i] {
			out = append(out, m)
		}
	}
	return out
}

// messageID is a message's id, when it has a non-null one.
func messageID(m any) (string, bool) {
	d, ok := m.(map[string]any)
	if !ok {
		return "", false
	}
	switch id := d["id"].(type) {
	case string:
		return id, true
	case json.Number:
		return id.String(), true
	}
	return "", false
}

func isRemoveMessage(m any) bool {
	d, ok := m.(map[string]any)
	return ok && d["type"] == "remove"
}

// roleTypes maps OpenAI-style roles to LangChain message types, as
// coerceMessageLikeToMessage does.
var roleTypes = map[string]string{"user": "human", "human": "human", "assistant": "ai", "ai": "ai",
	"system": "system", "developer": "system", "tool": "tool", "function": "function", "remove": "remove"}

// chunkTypes maps a chunk's type (its class name, as reads show it) to its
// message type; the reducer stores chunks as full messages.
var chunkTypes = map[string]string{"AIMessageChunk": "ai", "HumanMessageChunk": "human", "SystemMessageChunk": "system",
	"ToolMessageChunk": "tool", "FunctionMessageChunk": "function", "ChatMessageChunk": "generic"}

// coerceMessage turns a message-like into a message dict: a string is a
// human message, {role, content} a message of that role, a chunk its
// non-chunk type (without tool_call_chunks). Other values are returned as
// they are.
func coerceMessage(m any) any {
	switch t := m.(type) {
	case string:
		return withDefaults(map[string]any{"type": "human", "content": t})
	case map[string]any:
		typ, _ := t["type"].(string)
		if typ == "" {
			role, _ := t["role"].(string)
			if mt, ok := roleTypes[role]; ok {
				out := make(map[string]any, len(t))
				for k, v := range t {
					if k != "role" {
						out[k] = v
					}
				}
				out["type"] = mt
				return withDefaults(out)
			}
			return t
		}
		if mt, ok := chunkTypes[typ]; ok || strings.HasSuffix(typ, "_chunk") {
			if !ok {
				mt = strings.TrimSuffix(typ, "_chunk")
			}
			out := make(map[string]any, len(t))
			for k, v := range t {
				if k != "tool_call_chunks" {
					out[k] = v
				}
			}
			out["type"] = mt
			return withDefaults(out)
		}
	}
	return m
}

// typeClasses maps message types to their LangChain classes.
var typeClasses = map[string]string{"human": "HumanMessage", "ai": "AIMessage", "system": "SystemMessage",
	"tool": "ToolMessage", "function": "FunctionMessage", "generic": "ChatMessage", "remove": "RemoveMessage"}

// withDefaults fills in the fields every message dict a read shows has
// (serde.LangChainMessage), for a message the reducer coerced.
func withDefaults(m map[string]any) map[string]any {
	if class, ok := typeClasses[m["type"].(string)]; ok {
		m, _ = serde.LangChainMessage("langchain_core.messages", class, m)
	}
	return m
}

// overwriteValue reports whether a write is LangGraph's Overwrite (its
// wire form {"__overwrite__": v}, or {"type": "__overwrite__", "value": v})
// and its value.
func overwriteValue(v any) (any, bool) {
	d, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	if w, ok := d["__overwrite__"]; ok {
		return w, true
	}
	if d["type"] == "__overwrite__" {
		if w, ok := d["value"]; ok {
			return w, true
		}
	}
	return nil, false
}

// DeltaReplay is DeltaChannel.replayWrites with the messages reducer:
// base (nil: the channel is unset) with writes applied in order; the last
// Overwrite among them resets the base (null: to []). With no writes the
// base is returned as it is.
func DeltaReplay(base any, writes []any) any {
	start := 0
	for i, w := range writes {
		if ov, ok := overwriteValue(w); ok {
			base, start = ov, i+1
			if base == nil {
				base = []any{}
			}
		}
	}
	rest := writes[start:]
	if len(rest) == 0 {
		return base
	}
	var state []any
	switch b := base.(type) {
	case []any:
		state = b
	case nil:
	default:
		state = []any{b}
	}
	return MessagesDeltaReduce(state, rest)
}
