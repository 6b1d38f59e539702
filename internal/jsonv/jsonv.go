// Package jsonv owns Weft's JSON values: the decoded form every package
// shares (nil, bool, json.Number, string, []any, map[string]any), decoding
// that keeps numbers exact, and the walkers over decoded values (deep copy,
// string rewriting). Numbers are never decoded through float64, so a value
// round-trips exactly, whatever its precision or range.
package jsonv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Decode decodes data into v keeping numbers as json.Number.
func Decode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("trailing data after the JSON value")
	}
	return nil
}

// Clone returns a deep copy of a decoded JSON value: maps and lists are
// copied, scalars shared (they are immutable).
func Clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Clone(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Clone(e)
		}
		return out
	}
	return v
}

// MapStrings returns a copy of v with fn applied to every string and every
// object key.
func MapStrings(v any, fn func(string) string) any {
	switch x := v.(type) {
	case string:
		return fn(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fn(k)] = MapStrings(e, fn)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = MapStrings(e, fn)
		}
		return out
	}
	return v
}

// StripNUL removes NUL characters from the strings and keys of v
// (PostgreSQL's jsonb cannot hold \u0000).
func StripNUL(v any) any {
	return MapStrings(v, func(s string) string { return strings.ReplaceAll(s, "\x00", "") })
}

// FindNUL returns the path (a.b[2].c) of the first string or key of v that
// holds a NUL character, and whether there is one.
func FindNUL(v any) (string, bool) { return findNUL(v, "") }

func findNUL(v any, path string) (string, bool) {
	switch x := v.(type) {
	case string:
		return path, strings.ContainsRune(x, 0)
	case map[string]any:
		for k, e := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if strings.ContainsRune(k, 0) {
				return p, true
			}
			if at, found := findNUL(e, p); found {
				return at, true
			}
		}
	case []any:
		for i, e := range x {
			if at, found := findNUL(e, fmt.Sprintf("%s[%d]", path, i)); found {
				return at, true
			}
		}
	}
	return "", false
}

// MaxDepth is how deeply arrays and objects may nest in a document Check
// accepts: real agent state is never deeper, and every recursive walk of a
// stored value (the JSON decoder's own limit of 10,000 on read-back,
// PostgreSQL's jsonb stack depth, reducers, serde) stays far from its limits.
const MaxDepth = 512

// Check refuses, before decoding, JSON text that would decode into
// something other than what the client sent or that could not be stored
// and read back: invalid UTF-8 (the decoder would quietly turn it into
// U+FFFD), nesting deeper than MaxDepth, a number beyond float64's range
// (JavaScript clients and readers of stored values cannot hold it), and a
// NUL character in a string or key (PostgreSQL's jsonb cannot hold it). The
// error says what and where. Malformed JSON is left to the decoder.
func Check(b []byte) error {
	if !utf8.Valid(b) {
		return fmt.Errorf("not valid UTF-8")
	}
	depth, huge := scan(b)
	if depth > MaxDepth {
		return fmt.Errorf("JSON nested %d levels deep, the limit is %d", depth, MaxDepth)
	}
	if huge != "" {
		if len(huge) > 40 {
			huge = huge[:40] + "…"
		}
		return fmt.Errorf("number %s is out of range", huge)
	}
	if bytes.Contains(b, []byte(`\u0000`)) {
		var v any
		if Decode(b, &v) == nil {
			if at, found := FindNUL(v); found {
				if at == "" {
					at = "the body"
				}
				return fmt.Errorf("field %q contains a NUL character (\\u0000), which cannot be stored", strings.ReplaceAll(at, "\x00", `\u0000`))
			}
		}
	}
	return nil
}

// scan returns the deepest nesting of arrays and objects in the JSON text
// b, and the first number whose magnitude overflows a float64 ("" if none).
// b need not be valid JSON: this only skips strings so that brackets and
// digits inside them do not count.
func scan(b []byte) (maxDepth int, huge string) {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case c == '[' || c == '{':
			depth++
			maxDepth = max(maxDepth, depth)
		case c == ']' || c == '}':
			depth--
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(b) && strings.IndexByte("0123456789.eE+-", b[j]) >= 0 {
				j++
			}
			// Only an exponent or more than 308 digits can overflow.
			if huge == "" && (j-i > 308 || bytes.ContainsAny(b[i:j], "eE")) {
				if _, err := strconv.ParseFloat(string(b[i:j]), 64); errors.Is(err, strconv.ErrRange) {
					huge = string(b[i:j])
				}
			}
			i = j - 1
		}
	}
	return maxDepth, huge
}

// Compact is b without whitespace between its tokens (jsonb's text has
// some), or b itself when it is not valid JSON.
func Compact(b []byte) []byte {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return b
	}
	return out.Bytes()
}

// Present reports whether a raw JSON field was given and is not null.
func Present(r json.RawMessage) bool {
	t := bytes.TrimSpace(r)
	return len(t) > 0 && string(t) != "null"
}

// Must marshals v, which the caller built from JSON-safe values; a failure
// is a programming error and panics.
func Must(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("jsonv: marshal %T: %v", v, err))
	}
	return b
}
