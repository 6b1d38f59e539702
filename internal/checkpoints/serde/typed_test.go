package serde_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/checkpoints/serde"
)

func envelope(typ, blob string) map[string]any {
	return map[string]any{"lc": json.Number("2"), "type": "serialized", "serde": typ, "blob": blob}
}

// A value a worker serialized itself: recognised only in its exact
// envelope, stored as it came, rendered decoded; pickle and other types
// are refused naming them, a blob that does not decode as malformed.
func TestParseSerialized(t *testing.T) {
	// msgpack of {"a": [1, "x"]}: fixmap 1, "a", fixarray 2, 1, "x".
	mp := []byte{0x81, 0xa1, 'a', 0x92, 0x01, 0xa1, 'x'}
	v, ok, err := serde.ParseSerialized(envelope("msgpack", base64.StdEncoding.EncodeToString(mp)))
	if err != nil || !ok || v.Type != "msgpack" || string(v.Data) != string(mp) {
		t.Fatalf("msgpack envelope: %+v %v %v", v, ok, err)
	}
	if typ, data, err := serde.Encode(v); err != nil || typ != "msgpack" || string(data) != string(mp) {
		t.Fatalf("Encode(Typed) = %q %x %v, want the blob as it came", typ, data, err)
	}
	if b, err := json.Marshal(map[string]any{"v": v}); err != nil || string(b) != `{"v":{"a":[1,"x"]}}` {
		t.Fatalf("Typed as JSON: %s %v", b, err)
	}
	for _, notOne := range []any{
		map[string]any{"lc": json.Number("2"), "type": "serialized", "serde": "msgpack"}, // no blob: a user's dict
		map[string]any{"lc": json.Number("1"), "type": "serialized", "serde": "pickle", "blob": ""},
		map[string]any{"lc": json.Number("2"), "type": "constructor", "serde": "pickle", "blob": ""},
		"serialized", nil, []any{envelope("pickle", "")},
	} {
		if _, ok, err := serde.ParseSerialized(notOne); ok || err != nil {
			t.Errorf("%v read as a serialized value (%v)", notOne, err)
		}
	}
	for _, typ := range []string{"pickle", "marshal", ""} {
		_, ok, err := serde.ParseSerialized(envelope(typ, "gASVCgAAAAAAAAB9lIwBeJRLAXMu"))
		if !ok || !errors.Is(err, serde.ErrUnsupportedType) || !strings.Contains(err.Error(), `"`+typ+`"`) {
			t.Errorf("type %q: %v %v, want a refusal naming it", typ, ok, err)
		}
	}
	for _, blob := range []string{"***", base64.StdEncoding.EncodeToString([]byte{0xc1})} {
		if _, ok, err := serde.ParseSerialized(envelope("msgpack", blob)); !ok || !errors.Is(err, serde.ErrMalformed) {
			t.Errorf("blob %q: %v %v, want ErrMalformed", blob, ok, err)
		}
	}
}
