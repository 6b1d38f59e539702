package serde

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// hx decodes hex written with optional spaces, failing the test on typos.
func hx(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatalf("bad test hex %q: %v", s, err)
	}
	return b
}

type n = json.Number

// decodeCase is one msgpack vector and the JSON-compatible value it must give.
type decodeCase struct {
	name string
	hex  string
	want any
}

func runDecodeCases(t *testing.T, cases []decodeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Decode(TypeMsgpack, hx(t, tc.hex))
			if err != nil {
				t.Fatalf("Decode(%s): %v", tc.hex, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Decode(%s)\n got  %#v\n want %#v", tc.hex, got, tc.want)
			}
		})
	}
}

// Every vector below is derived from the format table of the msgpack spec
// (github.com/msgpack/msgpack/blob/master/spec.md); the comment gives the rule.
func TestDecodeMsgpackScalars(t *testing.T) {
	t.Parallel()
	runDecodeCases(t, []decodeCase{
		{"nil", "c0", nil},     // nil: 0xc0
		{"false", "c2", false}, // false: 0xc2
		{"true", "c3", true},   // true: 0xc3

		// positive fixint 0xxxxxxx: 0x00..0x7f are 0..127.
		{"fixint 0", "00", n("0")},
		{"fixint max", "7f", n("127")},
		// negative fixint 111xxxxx: 0xe0..0xff are -32..-1.
		{"negative fixint -1", "ff", n("-1")},
		{"negative fixint min", "e0", n("-32")},

		// uint 8/16/32/64: 0xcc..0xcf then 1/2/4/8 big-endian bytes.
		{"uint8 max", "cc ff", n("255")},
		{"uint16 max", "cd ff ff", n("65535")},
		{"uint32 max", "ce ff ff ff ff", n("4294967295")},
		{"uint64 max", "cf ff ff ff ff ff ff ff ff", n("18446744073709551615")},
		{"uint64 2^53+1", "cf 00 20 00 00 00 00 00 01", n("9007199254740993")},

		// int 8/16/32/64: 0xd0..0xd3 then 1/2/4/8 two's-complement bytes.
		{"int8 min", "d0 80", n("-128")},
		{"int8 positive", "d0 7f", n("127")},
		{"int16 min", "d1 80 00", n("-32768")},
		{"int16 -2", "d1 ff fe", n("-2")},
		{"int32 min", "d2 80 00 00 00", n("-2147483648")},
		{"int64 min", "d3 80 00 00 00 00 00 00 00", n("-9223372036854775808")},
		{"int64 max", "d3 7f ff ff ff ff ff ff ff", n("9223372036854775807")},

		// float 32: 0xca + IEEE 754 single; 1.5 = sign 0, exp 127 (0x7f), frac 0x400000.
		{"float32 1.5", "ca 3f c0 00 00", 1.5},
		// float 64: 0xcb + IEEE 754 double; -2.25 = 0xc002000000000000.
		{"float64 -2.25", "cb c0 02 00 00 00 00 00 00", -2.25},
		// NaN (0x7ff8...) and +Inf (float32 0x7f800000) have no JSON form: nil.
		{"float64 NaN", "cb 7f f8 00 00 00 00 00 00", nil},
		{"float32 +Inf", "ca 7f 80 00 00", nil},

		// fixstr 101xxxxx: length in the low 5 bits.
		{"fixstr empty", "a0", ""},
		{"fixstr abc", "a3 61 62 63", "abc"},
		{"fixstr utf8", "a2 c3 a9", "é"},
		// str 8: 0xd9, 1-byte length; 32 is the first length fixstr cannot hold.
		{"str8 len 32", "d9 20" + strings.Repeat("61", 32), strings.Repeat("a", 32)},
		// str 16: 0xda, 2-byte length; str 32: 0xdb, 4-byte length.
		{"str16", "da 00 03 61 62 63", "abc"},
		{"str32", "db 00 00 00 03 61 62 63", "abc"},

		// bin 8/16/32: 0xc4/0xc5/0xc6 then 1/2/4-byte length; rendered as base64.
		{"bin8", "c4 03 01 02 ff", "AQL/"},
		{"bin16 empty", "c5 00 00", ""},
		{"bin32", "c6 00 00 00 01 00", "AA=="},
	})
}

func TestDecodeMsgpackContainers(t *testing.T) {
	t.Parallel()
	runDecodeCases(t, []decodeCase{
		// fixarray 1001xxxx: count in the low 4 bits.
		{"fixarray empty", "90", []any{}},
		{"fixarray", "92 01 a1 61", []any{n("1"), "a"}},
		// array 16: 0xdc + 2-byte count; array 32: 0xdd + 4-byte count.
		{"array16", "dc 00 02 c3 c2", []any{true, false}},
		{"array32", "dd 00 00 00 01 c0", []any{nil}},
		// fixarray(15) is the largest fixarray.
		{"fixarray 15", "9f" + strings.Repeat("00", 15), func() any {
			a := make([]any, 15)
			for i := range a {
				a[i] = n("0")
			}
			return a
		}()},

		// fixmap 1000xxxx: entry count in the low 4 bits.
		{"fixmap empty", "80", map[string]any{}},
		{"fixmap", "81 a1 61 01", map[string]any{"a": n("1")}},
		// map 16: 0xde + 2-byte count; map 32: 0xdf + 4-byte count.
		{"map16", "de 00 01 a1 62 02", map[string]any{"b": n("2")}},
		{"map32", "df 00 00 00 01 a1 63 c0", map[string]any{"c": nil}},

		// {"a": [1, {"b": [true, nil]}], "c": {}}
		// 82 fixmap(2); a1 61 "a"; 92 fixarray(2); 01; 81 fixmap(1); a1 62 "b";
		// 92 c3 c0 [true, nil]; a1 63 "c"; 80 {}.
		{"nested", "82 a1 61 92 01 81 a1 62 92 c3 c0 a1 63 80", map[string]any{
			"a": []any{n("1"), map[string]any{"b": []any{true, nil}}},
			"c": map[string]any{},
		}},
	})
}

// Python dicts may have non-string keys (ormsgpack OPT_NON_STR_KEYS); JSON
// objects may not, so keys are rendered as strings.
func TestDecodeMsgpackNonStringKeys(t *testing.T) {
	t.Parallel()
	runDecodeCases(t, []decodeCase{
		// 84 fixmap(4): 01→"a", c3 true→"b", ff -1→"c", c0 nil→"d".
		{"scalars", "84 01 a1 61 c3 a1 62 ff a1 63 c0 a1 64", map[string]any{
			"1": "a", "true": "b", "-1": "c", "null": "d",
		}},
		// float64 1.0 key (cb 3ff0000000000000) → Python's repr "1.0".
		{"float", "81 cb 3f f0 00 00 00 00 00 00 a1 78", map[string]any{"1.0": "x"}},
		// tuple key (1, 2) → fixarray 92 01 02 → its JSON text.
		{"tuple", "81 92 01 02 c3", map[string]any{"[1,2]": true}},
		// Duplicate keys: the later entry wins, as in a Python dict.
		{"duplicate", "82 a1 6b 01 a1 6b 02", map[string]any{"k": n("2")}},
	})
}

// Ext formats: fixext 1/2/4/8/16 (0xd4..0xd8) and ext 8/16/32 (0xc7..0xc9),
// each followed by a signed type byte and the data. Type 7 (DeltaSnapshot)
// wraps a msgpack value, so it exercises every ext layout.
func TestDecodeMsgpackExtFormats(t *testing.T) {
	t.Parallel()
	runDecodeCases(t, []decodeCase{
		{"fixext1", "d4 07 c3", true},                                                // data: c3 true
		{"fixext2", "d5 07 a1 61", "a"},                                              // data: fixstr(1) "a"
		{"fixext4", "d6 07 a3 61 62 63", "abc"},                                      // data: fixstr(3)
		{"fixext8", "d7 07 a7 61 62 63 64 65 66 67", "abcdefg"},                      // data: fixstr(7)
		{"fixext16", "d8 07 af" + strings.Repeat("7a", 15), strings.Repeat("z", 15)}, // fixstr(15)
		{"ext8", "c7 01 07 2a", n("42")},                                             // 1-byte length 1
		{"ext16", "c8 00 02 07 91 01", []any{n("1")}},                                // 2-byte length 2
		{"ext32", "c9 00 00 00 01 07 c0", nil},                                       // 4-byte length 1

		// Timestamp (type -1 = 0xff).
		// timestamp 32: fixext4, uint32 seconds.
		{"timestamp32 epoch", "d6 ff 00 00 00 00", "1970-01-01T00:00:00Z"},
		{"timestamp32 max", "d6 ff ff ff ff ff", "2106-02-07T06:28:15Z"},
		// timestamp 64: fixext8, nsec in the upper 30 bits, sec in the lower 34:
		// nsec=1, sec=1 → 1<<34 | 1 = 0x0000000400000001.
		{"timestamp64", "d7 ff 00 00 00 04 00 00 00 01", "1970-01-01T00:00:01.000000001Z"},
		// timestamp 96: ext8 length 12, uint32 nsec then int64 sec; sec=-1.
		{"timestamp96 negative", "c7 0c ff 00 00 00 00 ff ff ff ff ff ff ff ff", "1969-12-31T23:59:59Z"},
	})
}

func TestDecodeMsgpackMalformed(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, hex string }{
		{"empty input", ""},
		{"never used 0xc1", "c1"},
		{"truncated fixstr", "a3 61 62"},
		{"truncated uint16", "cd ff"},
		{"truncated uint64", "cf 00 00 00"},
		{"truncated float64", "cb 00 00"},
		{"truncated str8 header", "d9"},
		{"truncated array16 header", "dc 00"},
		{"array32 claims 4G elements", "dd ff ff ff ff"},
		{"map32 claims 4G entries", "df ff ff ff ff 01"},
		{"array short of elements", "92 01"},
		{"map missing value", "81 a1 61"},
		{"truncated bin8", "c4 05 01 02"},
		{"bin32 claims 4 GiB", "c6 ff ff ff ff 00"},
		{"fixext without type", "d4"},
		{"ext8 short data", "c7 05 07 01"},
		{"trailing bytes", "01 02"},
		{"invalid utf-8 str", "a2 ff fe"},
		{"unknown ext type 42", "d4 2a 00"},
		{"reserved ext type -2", "d4 fe 00"},
		{"timestamp bad length", "d5 ff 00 00"},
		// nsec = 0xffffffff00000000 >> 34 = 1073741823 > 999999999.
		{"timestamp nsec overflow", "d7 ff ff ff ff ff 00 00 00 00"},
		{"ext payload with trailing bytes", "d5 07 01 02"},
		{"ext payload truncated", "d5 07 a3 61"},
		{"jsonplus payload not an array", "d4 05 01"},
		{"jsonplus payload too short", "d6 00 92 a1 61 01"},
		{"jsonplus module not a string", "d6 00 93 01 02 03"},
		{"deep nesting", strings.Repeat("91", maxDepth+1) + "c0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Decode(TypeMsgpack, hx(t, tc.hex))
			if err == nil {
				t.Fatalf("Decode(%s) = %#v, want error", tc.hex, got)
			}
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("Decode(%s) error %v does not wrap ErrMalformed", tc.hex, err)
			}
		})
	}
}

// Nesting up to the limit is fine; one level more is refused.
func TestDecodeMsgpackDepthLimit(t *testing.T) {
	t.Parallel()
	if _, err := Decode(TypeMsgpack, hx(t, strings.Repeat("91", maxDepth)+"c0")); err != nil {
		t.Fatalf("depth %d: %v", maxDepth, err)
	}
	// Ext payloads count too: 1024 nested arrays inside a DeltaSnapshot ext.
	inner := hx(t, strings.Repeat("91", maxDepth)+"c0")
	data := append(hx(t, "c9 00 00 04 01 07"), inner...) // ext32, length 1025, type 7
	if _, err := Decode(TypeMsgpack, data); !errors.Is(err, ErrMalformed) {
		t.Fatalf("nesting beyond the limit through an ext: err = %v", err)
	}
}

// Map keys that are containers holding containers are refused: Python cannot
// write them, and their JSON text would grow exponentially with nesting
// ({"{\"{\\\"a\\\"...": escaping doubles at every level).
func TestDecodeMsgpackNestedKeysRefused(t *testing.T) {
	t.Parallel()
	// 81 fixmap(1) whose key is the previous map, 60 times, around {"a": 1}.
	data := hx(t, strings.Repeat("81", 60)+"a1 61 01"+strings.Repeat("01", 60))
	if v, err := Decode(TypeMsgpack, data); !errors.Is(err, ErrMalformed) {
		t.Fatalf("nested map keys: %#v, %v", v, err)
	}
	// 81 fixmap(1) with key [[1]] (fixarray holding a fixarray).
	if v, err := Decode(TypeMsgpack, hx(t, "81 91 91 01 c0")); !errors.Is(err, ErrMalformed) {
		t.Fatalf("array-of-array key: %#v, %v", v, err)
	}
}
