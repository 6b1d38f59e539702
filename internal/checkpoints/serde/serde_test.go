package serde

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeTypes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		typ  string
		data []byte
		want any
	}{
		{TypeJSON, []byte(`{"foo":"","n":18446744073709551615,"f":1.5}`),
			map[string]any{"foo": "", "n": n("18446744073709551615"), "f": n("1.5")}},
		{TypeJSON, []byte(` null `), nil},
		{TypeJSON, []byte(`{"lc":2,"type":"undefined"}`), map[string]any{"lc": n("2"), "type": "undefined"}},
		{TypeBytes, []byte{1, 2, 255}, "AQL/"},
		{TypeBytes, nil, ""},
		{TypeBytearray, []byte{0}, "AA=="},
		{TypeNull, nil, nil},
		{TypeMsgpack, []byte{0x91, 0xa1, 'a'}, []any{"a"}},
	}
	for _, tc := range cases {
		got, err := Decode(tc.typ, tc.data)
		if err != nil {
			t.Errorf("Decode(%q, %q): %v", tc.typ, tc.data, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Decode(%q, %q) = %#v, want %#v", tc.typ, tc.data, got, tc.want)
		}
	}
}

func TestDecodeEmpty(t *testing.T) {
	t.Parallel()
	for _, data := range [][]byte{nil, {}} {
		v, err := Decode(TypeEmpty, data)
		if !errors.Is(err, ErrEmpty) || v != nil {
			t.Fatalf("Decode(empty) = %#v, %v; want nil, ErrEmpty", v, err)
		}
	}
}

func TestDecodeRejectsUnknownTypes(t *testing.T) {
	t.Parallel()
	for _, typ := range []string{"pickle", "", "JSON", "msgpack2"} {
		v, err := Decode(typ, []byte("x"))
		if !errors.Is(err, ErrUnknownType) || v != nil {
			t.Fatalf("Decode(%q) = %#v, %v; want ErrUnknownType", typ, v, err)
		}
		if !strings.Contains(err.Error(), `"`+typ+`"`) {
			t.Fatalf("error %q does not name the type %q", err, typ)
		}
	}
}

func TestDecodeMalformedJSON(t *testing.T) {
	t.Parallel()
	for _, data := range []string{"", "{", `"a" "b"`, "[1,]", "nul", `{"a":1} x`} {
		if v, err := Decode(TypeJSON, []byte(data)); !errors.Is(err, ErrMalformed) {
			t.Errorf("Decode(json, %q) = %#v, %v; want ErrMalformed", data, v, err)
		}
	}
}

func TestEncode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		v        any
		typ, txt string
	}{
		{nil, TypeJSON, "null"},
		{"a", TypeJSON, `"a"`},
		{1.5, TypeJSON, "1.5"},
		{[]any{"a", "b"}, TypeJSON, `["a","b"]`},
		{map[string]any{"b": 1, "a": "<&>"}, TypeJSON, `{"a":"<&>","b":1}`}, // no HTML escaping, like JSON.stringify
		{json.Number("18446744073709551615"), TypeJSON, "18446744073709551615"},
		{[]byte{1, 2, 255}, TypeBytes, "\x01\x02\xff"},
	}
	for _, tc := range cases {
		typ, data, err := Encode(tc.v)
		if err != nil || typ != tc.typ || string(data) != tc.txt {
			t.Errorf("Encode(%#v) = %q, %q, %v; want %q, %q", tc.v, typ, data, err, tc.typ, tc.txt)
		}
	}
	if _, _, err := Encode(map[string]any{"c": make(chan int)}); err == nil {
		t.Error("Encode(chan) succeeded")
	}
	b := []byte{1}
	_, data, _ := Encode(b)
	b[0] = 9
	if data[0] != 1 {
		t.Error("Encode([]byte) aliases its argument")
	}
}

// Encode then Decode gives back the same JSON value (numbers as json.Number,
// []byte as base64).
func TestEncodeDecodeRoundTrip(t *testing.T) {
	t.Parallel()
	values := []any{
		nil,
		true,
		"",
		"é\u0000\u2028<tag>",
		n("0"),
		n("-9223372036854775808"),
		n("18446744073709551615"),
		n("1.5e300"),
		[]any{},
		map[string]any{},
		map[string]any{
			"messages": []any{map[string]any{
				"lc": n("1"), "type": "constructor",
				"id":     []any{"langchain_core", "messages", "HumanMessage"},
				"kwargs": map[string]any{"content": "hi", "additional_kwargs": map[string]any{}},
			}},
			"nested": []any{n("1"), []any{n("2"), n("3")}, nil, false},
		},
	}
	for _, v := range values {
		typ, data, err := Encode(v)
		if err != nil {
			t.Fatalf("Encode(%#v): %v", v, err)
		}
		got, err := Decode(typ, data)
		if err != nil {
			t.Fatalf("Decode(Encode(%#v)): %v", v, err)
		}
		if !reflect.DeepEqual(got, v) {
			t.Fatalf("round trip of %#v gave %#v", v, got)
		}
	}

	typ, data, err := Encode([]byte("raw\xff"))
	if err != nil || typ != TypeBytes || !bytes.Equal(data, []byte("raw\xff")) {
		t.Fatalf("Encode(bytes) = %q, %q, %v", typ, data, err)
	}
	if got, err := Decode(typ, data); err != nil || got != "cmF3/w==" {
		t.Fatalf("Decode(bytes) = %#v, %v", got, err)
	}
}

// Every prefix of a valid vector is an error, never a panic or a value.
func TestDecodeTruncatedPrefixes(t *testing.T) {
	t.Parallel()
	full := hx(t, humanMessageHex)
	for i := range len(full) {
		if v, err := Decode(TypeMsgpack, full[:i]); !errors.Is(err, ErrMalformed) {
			t.Fatalf("prefix of %d bytes: %#v, %v", i, v, err)
		}
	}
}
