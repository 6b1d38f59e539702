package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Field paths select the text of a value that is embedded, with the syntax
// of LangGraph's store (tokenizePath / getTextAtPath in
// @langchain/langgraph-checkpoint):
//
//	$                  the whole value, as JSON indented by two spaces
//	a.b                a field of a field
//	a[*].c, a[0], a[-1] every / one element of an array (negative: from the end)
//	*                  every field of an object (or element of an array)
//	{a,b.c}            several fields at that point
//
// A string is embedded as it is, a number or boolean as its JSON text, an
// object or array as indented JSON; null and missing fields yield nothing.
// A path that selects one text gives the vector the path's name; one that
// selects several gives "path.0", "path.1", … (LangGraph's naming).
//
// One deliberate difference: a leading "$." is the root ("$.a" is "a"),
// where LangGraph.js would embed the whole value.

// MaxIndexPaths bounds the paths of one put's index list.
const MaxIndexPaths = 64

// MaxIndexTexts bounds the texts (vectors) one item may yield: a path like
// "a[*]" over a long array would otherwise cost one embedding per element.
const MaxIndexTexts = 1000

// fieldText is one text to embed and the field name its vector is filed
// under.
type fieldText struct {
	Field string
	Text  string
}

// tokenizePath splits a path into tokens: "a", "[*]", "{b,c}", … ("" and
// "$" are the whole value).
func tokenizePath(path string) ([]string, error) {
	var tokens []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			tokens = append(tokens, cur.String())
			cur.Reset()
		}
	}
	for i := 0; i < len(path); {
		switch c := path[i]; c {
		case '[', '{':
			flush()
			closer := byte(']')
			if c == '{' {
				closer = '}'
			}
			depth, j := 1, i+1
			for ; j < len(path) && depth > 0; j++ {
				switch path[j] {
				case c:
					depth++
				case closer:
					depth--
				}
			}
			if depth > 0 {
				return nil, fmt.Errorf("%q: unclosed %q", path, string(c))
			}
			tokens = append(tokens, path[i:j])
			i = j
		case '.':
			flush()
			i++
		case ']', '}':
			return nil, fmt.Errorf("%q: unmatched %q", path, string(c))
		default:
			cur.WriteByte(c)
			i++
		}
	}
	flush()
	for _, t := range tokens {
		switch {
		case t[0] == '[':
			if in := t[1 : len(t)-1]; in != "*" {
				if _, err := strconv.Atoi(in); err != nil {
					return nil, fmt.Errorf("%q: %s must be [*] or an integer index", path, t)
				}
			}
		case t[0] == '{':
			for _, f := range strings.Split(t[1:len(t)-1], ",") {
				if strings.Trim(f, blank) == "" {
					return nil, fmt.Errorf("%q: empty field in %s", path, t)
				}
			}
		}
	}
	if len(tokens) > 0 && tokens[0] == "$" {
		tokens = tokens[1:]
	}
	return tokens, nil
}

// blank is the whitespace a field path or a field of {a,b} is trimmed of:
// ASCII's alone, as IndexPathPattern says it.
const blank = " \t\n\v\f\r"

// IndexPathPattern is the form of a field path (the pattern of a put's
// index items in api/openapi.yaml, in the syntax Go, ECMAScript and
// Python read alike): names, "." separators, [*] or [integer], and {a,b}
// lists of fields (no braces inside), with something that is not
// whitespace somewhere.
const IndexPathPattern = `^` + pathUnit + `*` + `(?:[^` + blankRE + `\[\]{}]|` + pathBracket + `|` + pathBrace + `)` + pathUnit + `*$`

const (
	blankRE     = ` \t\n\v\f\r` // blank, in a character class
	pathBracket = `\[(?:\*|[+-]?[0-9]{1,18})\]`
	pathField   = `[` + blankRE + `]*[^` + blankRE + `,{}][^,{}]*`
	pathBrace   = `\{` + pathField + `(?:,` + pathField + `)*\}`
	pathUnit    = `(?:[^\[\]{}]|` + pathBracket + `|` + pathBrace + `)`
)

var indexPath = regexp.MustCompile(IndexPathPattern)

// checkPaths validates field paths (non-blank, well formed).
func checkPaths(paths []string) error {
	for _, p := range paths {
		if strings.Trim(p, blank) == "" {
			return fmt.Errorf("a field path must not be empty (the whole value is \"$\")")
		}
		if _, err := tokenizePath(p); err != nil {
			return err
		}
		if !indexPath.MatchString(p) {
			return fmt.Errorf("%q: not a field path (names, \".\", [*] or [integer], {a,b} without braces inside)", p)
		}
	}
	return nil
}

// indexTexts returns the texts of value (a JSON object) selected by paths,
// in path order, without empty texts, and fails when there are more than
// MaxIndexTexts.
func indexTexts(value json.RawMessage, paths []string) ([]fieldText, error) {
	var out []fieldText
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		tokens, err := tokenizePath(p)
		if err != nil {
			return nil, err
		}
		texts, err := textsAt(value, tokens)
		if err != nil {
			return nil, err
		}
		n := 0
		for _, t := range texts {
			if t != "" {
				n++
			}
		}
		for i, t := range texts {
			if t == "" {
				continue
			}
			field := p
			if n > 1 {
				field = p + "." + strconv.Itoa(i)
			}
			out = append(out, fieldText{Field: field, Text: t})
		}
		if len(out) > MaxIndexTexts {
			return nil, fmt.Errorf("the index fields select more than %d texts", MaxIndexTexts)
		}
	}
	return out, nil
}

// textsAt walks tokens down raw and returns the texts at the end.
func textsAt(raw json.RawMessage, tokens []string) ([]string, error) {
	if len(tokens) == 0 {
		t, err := leafText(raw)
		if err != nil || t == nil {
			return nil, err
		}
		return []string{*t}, nil
	}
	tok, rest := tokens[0], tokens[1:]
	var out []string
	descend := func(children []json.RawMessage) error {
		for _, c := range children {
			texts, err := textsAt(c, rest)
			if err != nil {
				return err
			}
			out = append(out, texts...)
		}
		return nil
	}
	switch {
	case tok[0] == '[':
		elems, ok, err := arrayElems(raw)
		if err != nil || !ok {
			return nil, err
		}
		in := tok[1 : len(tok)-1]
		if in == "*" {
			return out, descend(elems)
		}
		i, _ := strconv.Atoi(in) // checked by tokenizePath
		if i < 0 {
			i += len(elems)
		}
		if i < 0 || i >= len(elems) {
			return nil, nil
		}
		return out, descend(elems[i : i+1])
	case tok[0] == '{':
		// Each field is a dotted path of object keys (no arrays), as in
		// LangGraph.
		for _, f := range strings.Split(tok[1:len(tok)-1], ",") {
			cur := raw
			found := true
			for _, key := range strings.Split(strings.Trim(f, blank), ".") {
				fields, ok, err := objectFields(cur)
				if err != nil {
					return nil, err
				}
				v, has := lookup(fields, key)
				if !ok || !has {
					found = false
					break
				}
				cur = v
			}
			if !found {
				continue
			}
			t, err := leafText(cur)
			if err != nil {
				return nil, err
			}
			if t != nil {
				out = append(out, *t)
			}
		}
		return out, nil
	case tok == "*":
		elems, isArray, err := arrayElems(raw)
		if err != nil {
			return nil, err
		}
		if isArray {
			return out, descend(elems)
		}
		fields, ok, err := objectFields(raw)
		if err != nil || !ok {
			return nil, err
		}
		vals := make([]json.RawMessage, len(fields))
		for i, f := range fields {
			vals[i] = f.val
		}
		return out, descend(vals)
	default:
		fields, ok, err := objectFields(raw)
		if err != nil || !ok {
			return nil, err
		}
		v, has := lookup(fields, tok)
		if !has {
			return nil, nil
		}
		return out, descend([]json.RawMessage{v})
	}
}

// leafText is the text of a selected value: a string itself, a number or
// boolean its JSON text, an object or array indented JSON (LangGraph.js's
// JSON.stringify(v, null, 2)), null nothing.
func leafText(raw json.RawMessage) (*string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, nil
	}
	var s string
	switch raw[0] {
	case 'n':
		return nil, nil
	case '"':
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
	case '{', '[':
		var buf bytes.Buffer
		if err := json.Indent(&buf, raw, "", "  "); err != nil {
			return nil, err
		}
		s = buf.String()
	default:
		s = string(raw)
	}
	return &s, nil
}

type objField struct {
	key string
	val json.RawMessage
}

// objectFields returns the fields of raw in document order; ok is false when
// raw is not an object.
func objectFields(raw json.RawMessage) (fields []objField, ok bool, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, false, err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false, err
		}
		fields = append(fields, objField{key: key, val: v})
	}
	return fields, true, nil
}

// lookup finds key among fields (the last one wins, as in JSON.parse).
func lookup(fields []objField, key string) (json.RawMessage, bool) {
	for i := len(fields) - 1; i >= 0; i-- {
		if fields[i].key == key {
			return fields[i].val, true
		}
	}
	return nil, false
}

// arrayElems returns the elements of raw; ok is false when raw is not an
// array.
func arrayElems(raw json.RawMessage) (elems []json.RawMessage, ok bool, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil, false, nil
	}
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, false, err
	}
	return elems, true, nil
}
