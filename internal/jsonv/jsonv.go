// Package jsonv owns Weft's JSON values: the decoded form every package
// shares (nil, bool, json.Number, string, []any, map[string]any), decoding
// that keeps numbers exact, and the walkers over decoded values (deep copy,
// string rewriting). Numbers are never decoded through float64, so a value
// round-trips exactly, whatever its precision or range.
package jsonv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Decode decodes data into v keeping numbers as json.Number.
func Decode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
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
