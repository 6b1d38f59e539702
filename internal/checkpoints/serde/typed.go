package serde

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// TypeSerialized is the "type" of the envelope in which a worker sends a
// value it serialized itself (ParseSerialized).
const TypeSerialized = "serialized"

// Typed is a value as a saver serialized it: its type column and blob.
// Encode stores it as it is (a Python worker's msgpack lands in
// checkpoint_blobs / checkpoint_writes exactly as PostgresSaver would
// write it); MarshalJSON renders its decoded JSON form.
type Typed struct {
	Type string
	Data []byte
}

// MarshalJSON renders the value decoded (Decode), so a Typed inside a
// projection or a response reads like any other value.
func (t Typed) MarshalJSON() ([]byte, error) {
	v, err := Decode(t.Type, t.Data)
	if errors.Is(err, ErrEmpty) {
		return []byte("null"), nil
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// ErrUnsupportedType is the refusal of a serialized value whose type Weft
// does not store (Python's "pickle", or any other); it names the type.
var ErrUnsupportedType = errors.New("unsupported serialized value type")

// ParseSerialized recognises the envelope a worker sends a value in when it
// serialized the value itself:
//
//	{"lc": 2, "type": "serialized", "serde": "msgpack", "blob": "<base64>"}
//
// (serde one of msgpack, json, bytes, bytearray, null). ok is false for any
// other value. A known envelope with another serde ("pickle") is an error
// wrapping ErrUnsupportedType that names it; a blob that is not base64, or
// does not decode as its type, an error wrapping ErrMalformed.
func ParseSerialized(v any) (t Typed, ok bool, err error) {
	m, isMap := v.(map[string]any)
	if !isMap || len(m) != 4 || m["type"] != TypeSerialized || !isTwo(m["lc"]) {
		return Typed{}, false, nil
	}
	typ, _ := m["serde"].(string)
	blob, isText := m["blob"].(string)
	switch typ {
	case TypeMsgpack, TypeJSON, TypeBytes, TypeBytearray, TypeNull:
	default:
		return Typed{}, true, fmt.Errorf("%w %q: Weft stores msgpack, json, bytes, bytearray or null values "+
			"(LangGraph's JsonPlusSerializer without pickle_fallback)", ErrUnsupportedType, typ)
	}
	if !isText {
		return Typed{}, true, fmt.Errorf("%w: a %s value's blob must be base64 text", ErrMalformed, typ)
	}
	data, err := base64.StdEncoding.DecodeString(blob)
	if err != nil {
		return Typed{}, true, fmt.Errorf("%w: a %s value's blob is not base64: %v", ErrMalformed, typ, err)
	}
	if _, err := Decode(typ, data); err != nil {
		return Typed{}, true, fmt.Errorf("%w: a %s value's blob does not decode: %v", ErrMalformed, typ, err)
	}
	return Typed{Type: typ, Data: data}, true, nil
}

func isTwo(v any) bool {
	switch n := v.(type) {
	case json.Number:
		return n == "2"
	case float64:
		return n == 2
	case int:
		return n == 2
	}
	return false
}

// encodeTyped is Encode's case for a Typed value.
func encodeTyped(v any) (string, []byte, bool) {
	switch t := v.(type) {
	case Typed:
		return t.Type, bytes.Clone(t.Data), true
	case *Typed:
		return t.Type, bytes.Clone(t.Data), true
	}
	return "", nil, false
}
