package serde

import (
	"encoding/json"
	"slices"
	"strings"
)

// NormalizeLC rewrites, recursively, the LangChain serialization envelopes
// the JS saver writes into "json" blobs, so that a value reads the same
// whatever wrote it:
//
//   - {"lc":1,"type":"constructor","id":["langchain_core","messages","HumanMessage"],"kwargs":{…}}
//     becomes LangChain.js's plain message dict (BaseMessage.toDict, what
//     LangGraph.js's server sends): the kwargs (already snake_case) with
//     "type" from the class ("human", "ai", "tool", "system", …; a chunk's
//     that of its message); fields the message lacks stay absent (no name:
//     null, unlike Python's model_dump).
//   - {"lc":1,…,"id":["langchain","schema","messages","HumanMessage"],…}, Python
//     LangChain's envelope (the Python worker's), becomes Python's message
//     dict with the common fields defaulted (LangChainMessage), as LangGraph's
//     Python server sends it.
//   - any other lc:1 constructor becomes its kwargs.
//   - lc:2 constructors of the JS serde (Set, Map, RegExp, Error, Uint8Array)
//     become their kwargs when non-empty, else their single argument (a Set's
//     items, a Map's [key, value] pairs, …), else their argument list.
//   - {"lc":2,"type":"undefined"} becomes null in a list, and an object's
//     member holding it is left out (JSON.stringify's undefined).
//
// Other lc envelopes ("secret", "not_implemented") are left as they are.
// Maps and slices are rewritten in place; the result replaces v. State
// reads apply it to stored "json" values, and the run commit path to the
// events and results external workers send, so a streamed value has the
// shape a state read gives the same value.
func NormalizeLC(v any) any {
	switch t := v.(type) {
	case []any:
		for i, e := range t {
			t[i] = NormalizeLC(e)
		}
		return t
	case map[string]any:
		if out, ok := lcEnvelope(t); ok {
			return out
		}
		for k, e := range t {
			if isUndefined(e) {
				delete(t, k) // JSON.stringify leaves an undefined member out
				continue
			}
			t[k] = NormalizeLC(e)
		}
		return t
	}
	return v
}

// IsUndefined reports whether v, decoded JSON, is the JS serde's
// {"lc":2,"type":"undefined"}: a channel holding it has no value (its key
// is left out of values, as JSON.stringify leaves undefined out).
func IsUndefined(v any) bool { return isUndefined(v) }

func isUndefined(v any) bool {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 2 || m["type"] != "undefined" {
		return false
	}
	switch lc := m["lc"].(type) {
	case json.Number:
		return lc == "2"
	case float64:
		return lc == 2
	}
	return false
}

func lcEnvelope(m map[string]any) (any, bool) {
	lc, ok := m["lc"].(json.Number)
	if !ok || (lc != "1" && lc != "2") {
		return nil, false
	}
	typ, _ := m["type"].(string)
	if lc == "2" && typ == "undefined" {
		return nil, true
	}
	if typ != "constructor" {
		return nil, false
	}
	path, ok := m["id"].([]any)
	if !ok || len(path) == 0 {
		return nil, false
	}
	parts := make([]string, len(path))
	for i, p := range path {
		s, ok := p.(string)
		if !ok {
			return nil, false
		}
		parts[i] = s
	}
	kwargs, _ := m["kwargs"].(map[string]any)
	if kwargs == nil {
		kwargs = map[string]any{}
	}
	for k, e := range kwargs {
		if isUndefined(e) {
			delete(kwargs, k)
			continue
		}
		kwargs[k] = NormalizeLC(e)
	}
	if lc == "1" {
		module, class := strings.Join(parts[:len(parts)-1], "."), parts[len(parts)-1]
		if strings.HasPrefix(module, "langchain.schema") {
			// Python LangChain's namespace (the Python worker's envelopes):
			// its message dict, as LangGraph's Python server sends it.
			if msg, ok := LangChainMessage(module, class, kwargs); ok {
				return msg, true
			}
		} else if isMessageClass(module, class) {
			// LangChain.js's own dict form of a message (toDict: its
			// serialized fields plus "type"), as LangGraph.js's server sends
			// it: fields the message does not have stay absent, and a chunk
			// has its message's type ("ai" for an AIMessageChunk).
			if t, _ := kwargs["type"].(string); t == "" {
				kwargs["type"] = messageType(strings.TrimSuffix(class, "Chunk"))
			}
		}
		return kwargs, true
	}
	if len(kwargs) > 0 {
		return kwargs, true
	}
	args, _ := m["args"].([]any)
	for i, e := range args {
		args[i] = NormalizeLC(e)
	}
	if len(args) == 1 {
		return args[0], true
	}
	if args == nil {
		args = []any{}
	}
	return args, true
}

// NormalizedBySQL reports whether SQL renders v, a decoded JSON value
// (before NormalizeLC, which rewrites it in place), as NormalizeLC
// rewrites it: weft_thread_values (migration 027) rewrites the
// LangChain message envelopes among a list's elements (NormalizeLC's first
// two cases) and leaves every other element as it is. So v qualifies
// when it is a list and each element either holds no envelope (no "lc"
// key at any depth) or is such a message envelope (lc 1, the id LangChain
// writes for a message, class name in ASCII) whose kwargs hold none and
// whose kwargs "type", if any, is a string. A thread's projection may then reference the list's blob.
func NormalizedBySQL(v any) bool {
	list, ok := v.([]any)
	if !ok {
		return false
	}
	for _, e := range list {
		if m, ok := e.(map[string]any); ok && m["lc"] != nil {
			if !sqlMessageEnvelope(m) {
				return false
			}
		} else if hasLCKey(e) {
			return false
		}
	}
	return true
}

// sqlMessageEnvelope: m is a message envelope weft_lc_message rewrites as
// NormalizeLC does: its id is ["langchain", "schema", "messages", class]
// (Python LangChain's) or ["langchain_core", "messages", class]
// (LangChain.js's).
func sqlMessageEnvelope(m map[string]any) bool {
	if m["lc"] != json.Number("1") || m["type"] != "constructor" {
		return false
	}
	kwargs, ok := m["kwargs"].(map[string]any)
	if !ok || hasLCKey(kwargs) {
		return false
	}
	if t, ok := kwargs["type"]; ok {
		if _, s := t.(string); !s {
			return false
		}
	}
	path, _ := m["id"].([]any)
	var module []string
	for _, p := range path {
		s, ok := p.(string)
		if !ok {
			return false
		}
		module = append(module, s)
	}
	if len(module) < 2 {
		return false
	}
	module, class := module[:len(module)-1], module[len(module)-1]
	if !slices.Equal(module, []string{"langchain", "schema", "messages"}) && !slices.Equal(module, []string{"langchain_core", "messages"}) {
		return false
	}
	for _, r := range class {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return isMessageClass(strings.Join(module, "."), class)
}

// hasLCKey: v holds an object with an "lc" key at any depth.
func hasLCKey(v any) bool {
	switch t := v.(type) {
	case []any:
		return slices.ContainsFunc(t, hasLCKey)
	case map[string]any:
		if _, ok := t["lc"]; ok {
			return true
		}
		for _, e := range t {
			if hasLCKey(e) {
				return true
			}
		}
	}
	return false
}

// LCMarker appears in every LangChain serialization envelope's JSON: a
// value without it has none to normalise.
var LCMarker = []byte(`"lc"`)
