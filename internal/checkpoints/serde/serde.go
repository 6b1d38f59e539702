package serde

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/weftdev/weft/internal/jsonv"
)

// Type names as stored in checkpoint_blobs.type and checkpoint_writes.type.
const (
	// TypeJSON is UTF-8 JSON text, the JS saver's encoding for every JSON value.
	TypeJSON = "json"
	// TypeBytes is raw bytes stored as-is.
	TypeBytes = "bytes"
	// TypeBytearray is raw bytes written by Python for a bytearray value; it
	// is read exactly like TypeBytes.
	TypeBytearray = "bytearray"
	// TypeEmpty marks a channel version that has no value; its blob is NULL.
	TypeEmpty = "empty"
	// TypeMsgpack is msgpack written by Python's JsonPlusSerializer.
	TypeMsgpack = "msgpack"
	// TypeNull is Python's encoding of None, with an empty blob.
	TypeNull = "null"
)

var (
	// ErrEmpty is returned by Decode for a TypeEmpty row: the channel has no
	// value at this version (as opposed to a null value). Callers skip the
	// channel when errors.Is(err, ErrEmpty).
	ErrEmpty = errors.New("serde: channel has no value")

	// ErrUnknownType is wrapped by the error Decode returns for a type name it
	// does not read (for example Python's optional "pickle"); the message
	// names the type.
	ErrUnknownType = errors.New("serde: unknown serialization type")

	// ErrMalformed is wrapped by every error about blob contents: invalid JSON,
	// truncated or trailing msgpack, an unknown msgpack ext code, an ext
	// payload that does not have the shape JsonPlusSerializer writes, or
	// nesting deeper than the decoder's limit.
	ErrMalformed = errors.New("serde: malformed data")
)

// Decode turns a stored (type, blob) pair into a JSON-compatible Go value:
// nil, bool, json.Number (every integer, and every number of a "json" blob),
// float64 (msgpack floats; NaN/±Inf become nil), string, []any or
// map[string]any.
//
//   - "json": the parsed JSON text (numbers as json.Number); trailing data is
//     an error.
//   - "bytes", "bytearray": the blob as a standard base64 string.
//   - "empty": (nil, ErrEmpty) — the channel has no value.
//   - "null": (nil, nil).
//   - "msgpack": decoded per the msgpack spec and Python LangGraph's
//     JsonPlusSerializer ext types (see the package documentation).
//   - anything else: an error wrapping ErrUnknownType naming the type.
//
// Decode does not retain data and never panics.
func Decode(typ string, data []byte) (any, error) {
	switch typ {
	case TypeJSON:
		return decodeJSON(data)
	case TypeBytes, TypeBytearray:
		return base64.StdEncoding.EncodeToString(data), nil
	case TypeEmpty:
		return nil, ErrEmpty
	case TypeNull:
		return nil, nil
	case TypeMsgpack:
		return decodeMsgpack(data)
	default:
		return nil, fmt.Errorf("%w %q", ErrUnknownType, typ)
	}
}

// decodeJSON parses exactly one JSON value, keeping numbers as json.Number.
func decodeJSON(data []byte) (any, error) {
	var v any
	if err := jsonv.Decode(data, &v); err != nil {
		return nil, fmt.Errorf("%w: json: %w", ErrMalformed, err)
	}
	return v, nil
}

// Encode picks a type for a JSON-compatible value the way LangGraph's JS
// saver does: a []byte is stored raw as TypeBytes (the returned data is a
// copy); every other value is stored as TypeJSON with its JSON text, without
// HTML escaping and without a trailing newline. nil gives ("json", "null"), as
// the JS saver writes null (Python would write TypeNull; both decode to nil).
// []byte values nested inside other values are written as base64 strings
// (encoding/json's rendering), not as the JS saver's Uint8Array constructor.
// Values encoding/json cannot marshal (NaN, channels, cycles) are an error.
func Encode(v any) (typ string, data []byte, err error) {
	if b, ok := v.([]byte); ok {
		return TypeBytes, bytes.Clone(b), nil
	}
	if typ, data, ok := encodeTyped(v); ok {
		return typ, data, nil // a Typed value: stored as it was serialized
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", nil, fmt.Errorf("serde: encode json: %w", err)
	}
	return TypeJSON, bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
