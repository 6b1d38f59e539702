package dev

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
)

// A graph's description is read from its {"path", "description"} form; a
// path alone or a null description is none, anything but text an error.
func TestGraphDescriptions(t *testing.T) {
	got, err := graphDescriptions(map[string]json.RawMessage{
		"a": json.RawMessage(`"./a.py:graph"`),
		"b": json.RawMessage(`{"path": "./b.mts:graph", "description": "B does b."}`),
		"c": json.RawMessage(`{"path": "./c.py:graph", "description": null}`),
		"d": json.RawMessage(`{"path": "./d.py:graph"}`),
		"e": json.RawMessage(`{"path": "./e.py:graph", "description": ""}`),
	})
	if want := map[string]string{"b": "B does b.", "e": ""}; err != nil || !maps.Equal(got, want) {
		t.Fatalf("graphDescriptions = %v, %v; want %v", got, err, want)
	}
	_, err = graphDescriptions(map[string]json.RawMessage{"x": json.RawMessage(`{"path": "./x.py:graph", "description": 3}`)})
	if err == nil || !strings.Contains(err.Error(), "graph x: description must be a string") {
		t.Fatalf("a number as description: %v", err)
	}
}
