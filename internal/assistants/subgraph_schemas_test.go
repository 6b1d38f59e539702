package assistants

import (
	"encoding/json"
	"testing"
)

// A worker's subgraph entry is served as it registered it: LangGraph.js's
// shape (state, input, output, config) as well as Python's (input_schema, …).
func TestSubgraphSchemasKeepTheRegisteredShape(t *testing.T) {
	for _, in := range []string{
		`{"gp_two":{"state":{"type":"object"},"input":null,"output":{"type":"object"},"config":{"type":"object"}}}`,
		`{"child":{"input_schema":{"type":"object"},"output_schema":null,"state_schema":{"type":"object"},"config_schema":null,"context_schema":null}}`,
	} {
		var m map[string]SubgraphSchemas
		if err := json.Unmarshal([]byte(in), &m); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		_ = json.Unmarshal([]byte(in), &a)
		_ = json.Unmarshal(out, &b)
		if ja, jb := mustJSON(t, a), mustJSON(t, b); ja != jb {
			t.Fatalf("round trip changed the entry:\n in  %s\n out %s", ja, jb)
		}
	}
	// Python's fields are still read from the registered entry.
	var s SubgraphSchemas
	if err := json.Unmarshal([]byte(`{"state_schema":{"type":"object"}}`), &s); err != nil || s.StateSchema == nil {
		t.Fatalf("state_schema not read: %v %#v", err, s)
	}
	// An entry built in Go (no registered JSON) writes Python's shape.
	out, _ := json.Marshal(SubgraphSchemas{StateSchema: map[string]any{"type": "object"}})
	if string(out) != `{"input_schema":null,"output_schema":null,"state_schema":{"type":"object"},"config_schema":null,"context_schema":null}` {
		t.Fatalf("built entry: %s", out)
	}
	// An entry that is not a JSON object is refused.
	for _, bad := range []string{`"x"`, `[1]`, `3`} {
		if err := json.Unmarshal([]byte(bad), &s); err == nil {
			t.Fatalf("%s: accepted", bad)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
