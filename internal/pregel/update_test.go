package pregel

import (
	"encoding/json"
	"fmt"
	"testing"
)

func TestParseUpdates(t *testing.T) {
	for raw, want := range map[string]string{
		``:                     "[]",
		`null`:                 "[]",
		`{"a": 1}`:             "[map[a:1]]",
		`[{"a": 1}, {"b": 2}]`: "[map[a:1] map[b:2]]",
		`[]`:                   "[]",
	} {
		got, err := ParseUpdates(json.RawMessage(raw))
		if err != nil || fmt.Sprint(got) != want {
			t.Errorf("ParseUpdates(%s) = %v, %v; want %s", raw, got, err, want)
		}
	}
	for _, raw := range []string{`[null]`, `[{"a": 1}, null]`, `"x"`, `[1]`, `3`} {
		if got, err := ParseUpdates(json.RawMessage(raw)); err == nil {
			t.Errorf("ParseUpdates(%s) = %v; want an error", raw, got)
		}
	}
}
