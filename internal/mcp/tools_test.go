package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"
)

func TestNormalizeName(t *testing.T) {
	for in, want := range map[string]string{
		"echo_chat":              "echo_chat",
		"  My   agent\tv1.0 ":    "My_agent_v1.0",
		"Foo bar agent!":         "Foo_bar_agent",
		"héllo wörld/x":          "hllo_wrldx",
		"!!!":                    "",
		strings.Repeat("a", 200): strings.Repeat("a", 128),
	} {
		if got := normalizeName(in); got != want {
			t.Errorf("normalizeName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUniqueName(t *testing.T) {
	id := uuid.MustParse("1a2b3c4d-0000-4000-8000-000000000000")
	taken := map[string]bool{}
	if n := uniqueName("x", id, taken); n != "x" {
		t.Fatal(n)
	}
	taken["x"] = true
	if n := uniqueName("x", id, taken); n != "x-1a2b3c4d" {
		t.Fatal(n)
	}
	taken["x-1a2b3c4d"] = true
	if n := uniqueName("x", id, taken); n != "x-"+id.String() {
		t.Fatal(n)
	}
	if n := uniqueName("", id, map[string]bool{}); n != "assistant-1a2b3c4d" {
		t.Fatal(n)
	}
	long := strings.Repeat("b", 128)
	if n := uniqueName(long, id, map[string]bool{long: true}); len(n) != 128 || !strings.HasSuffix(n, "-1a2b3c4d") {
		t.Fatal(n, len(n))
	}
}

func TestInputSchema(t *testing.T) {
	for _, raw := range []string{``, `null`, `not json`, `[]`, `{"type":"array"}`, `{"type":"string"}`} {
		s := inputSchema(json.RawMessage(raw))
		if len(s) != 1 || s["type"] != "object" {
			t.Errorf("inputSchema(%q) = %v, want {type: object}", raw, s)
		}
	}
	if s := inputSchema(json.RawMessage(`{"properties":{"a":{"type":"integer"}}}`)); s["type"] != "object" || s["properties"] == nil {
		t.Errorf("untyped schema: %v", s)
	}
	// A Python graph's messages: a list of LangChain message $refs becomes
	// a string; their $defs go, others stay.
	py := `{"type":"object","title":"State","properties":{
		"messages":{"type":"array","title":"Messages","items":{"oneOf":[{"$ref":"#/$defs/AIMessage"},{"$ref":"#/$defs/HumanMessage"}]}},
		"topic":{"$ref":"#/$defs/Topic"}},
		"$defs":{"AIMessage":{},"HumanMessage":{},"ToolCall":{},"Topic":{"type":"string"}}}`
	s := inputSchema(json.RawMessage(py))
	props := s["properties"].(map[string]any)
	if m := props["messages"].(map[string]any); m["type"] != "string" || m["title"] != "Messages" {
		t.Errorf("messages: %v", m)
	}
	defs := s["$defs"].(map[string]any)
	if _, ok := defs["AIMessage"]; ok || defs["Topic"] == nil || len(defs) != 1 {
		t.Errorf("$defs: %v", defs)
	}
	// A list of something else stays a list.
	s = inputSchema(json.RawMessage(`{"type":"object","properties":{"bar":{"type":"array","items":{"type":"string"}}}}`))
	if b := s["properties"].(map[string]any)["bar"].(map[string]any); b["type"] != "array" {
		t.Errorf("bar: %v", b)
	}
}

func TestResultOf(t *testing.T) {
	r := resultOf(json.RawMessage(`{"__error__": {"error": "NodeError", "message": "boom"}}`))
	if !r.IsError || r.StructuredContent != nil {
		t.Fatalf("error result: %+v", r)
	}
	r = resultOf(json.RawMessage(`{ "a" : 1 }`))
	if b, _ := json.Marshal(r.StructuredContent); r.IsError || string(b) != `{"a":1}` {
		t.Fatalf("object result: %s", b)
	}
	r = resultOf(json.RawMessage(`[1, 2]`))
	if b, _ := json.Marshal(r.StructuredContent); string(b) != `{"result":[1,2]}` {
		t.Fatalf("list result: %s", b)
	}
	if got := errorText(json.RawMessage(`"just text"`)); got != `"just text"` {
		t.Fatal(got)
	}
}
