package stream

import "testing"

// Which stored events a stream sends, and under which name: a LangGraph.js
// checkpoint envelope goes out as a checkpoints event whatever modes were
// asked for (the JS worker records one only when LangGraph.js's server
// would send it), a subgraph's under its namespace.
func TestWireNames(t *testing.T) {
	m := parseModes([]string{"values", "messages-tuple"})
	for stored, want := range map[string]string{
		"values":                       "values",
		"values|sub:1":                 "values|sub:1",
		"updates":                      "",
		"checkpoints":                  "",
		"checkpoint_envelope":          "checkpoints",
		"checkpoint_envelope|tools:t1": "checkpoints|tools:t1",
		"messages":                     "messages",
		"messages|tools:t1":            "messages|tools:t1",
		"metadata":                     "metadata",
		"end":                          "",
	} {
		if got := m.wire(StoredEvent{Event: stored}); got != want {
			t.Errorf("wire(%q) = %q, want %q", stored, got, want)
		}
	}
	if got := parseModes([]string{"checkpoints"}).wire(StoredEvent{Event: "checkpoints|sub:1"}); got != "checkpoints|sub:1" {
		t.Errorf("a subgraph's asked-for checkpoints event goes out as %q", got)
	}
}
