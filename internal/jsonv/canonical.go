package jsonv

import (
	"encoding/json"
	"slices"
)

// Canonical reports whether b, which must be valid JSON text, is exactly
// what encoding/json writes for it: compact (no whitespace outside
// strings) and HTML-escaped (no '<', '>', '&', U+2028 or U+2029 left
// unescaped). Such text goes into a response as it is: json.Marshal of
// json.RawMessage(b) returns b unchanged, after scanning every byte of it,
// which is the cost this check avoids. Values stored by serde.Encode
// (compact, HTML not escaped) are canonical unless a string holds one of
// those five characters.
//
// One pass, one table lookup per byte.
func Canonical(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if special[c] == 0 {
			continue
		}
		switch c {
		case '"':
			inString = !inString
		case '\\':
			i++ // the escaped character (escapes are ASCII; none is special)
		case ' ', '\t', '\n', '\r':
			if !inString {
				return false
			}
		case 0xE2:
			if i+2 < len(b) && b[i+1] == 0x80 && b[i+2]&^1 == 0xA8 {
				return false // U+2028 or U+2029, which encoding/json escapes
			}
		default: // '<', '>', '&'
			return false
		}
	}
	return true
}

// special marks the bytes Canonical looks at.
var special = func() (t [256]byte) {
	for _, c := range []byte{'"', '\\', ' ', '\t', '\n', '\r', 0xE2, '<', '>', '&'} {
		t[c] = 1
	}
	return t
}()

// AppendMarshal appends to dst what json.Marshal(v) returns, byte for
// byte, without re-scanning what is already in that form: a
// json.RawMessage that is Canonical is copied as it is (json.Marshal would
// validate and compact it: a scan of every byte), and maps of string keys
// and lists are walked here so the raw values inside them are copied too.
// Everything else is encoded by json.Marshal. A json.RawMessage must hold
// valid JSON text (Canonical does not validate; a non-canonical one goes
// through json.Marshal, which does).
func AppendMarshal(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case json.RawMessage:
		if x != nil && Canonical(x) {
			return append(dst, x...), nil
		}
	case map[string]any:
		if x == nil {
			return append(dst, "null"...), nil
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys) // encoding/json's order for string keys
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			kb, err := json.Marshal(k)
			if err != nil {
				return dst, err
			}
			dst = append(append(dst, kb...), ':')
			if dst, err = AppendMarshal(dst, x[k]); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	case []any:
		if x == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = AppendMarshal(dst, e); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}
