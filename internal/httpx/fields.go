package httpx

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/apperr"
)

// encoding/json matches object keys to struct fields case-insensitively and
// lets the last of two equal keys win, so {"thread_id": A, "Thread_ID": F}
// decodes as F while a proxy or an auth hook reading the same body sees A.
// checkFieldNames holds request bodies to exact names: in every object
// decoded into a struct, a key that repeats another, or that differs from
// one of the struct's field names only in case, is a 422 before anything is
// decoded. Keys of maps and of free-form values (any, json.RawMessage:
// input, config, metadata, values) are the client's data and are not
// checked; a type with its own UnmarshalJSON checks its objects itself
// (UnmarshalStrict).

// The same walk checks the strings decoded by a field's UnmarshalText (a
// uuid.UUID: a claim_token, a thread id in a list): encoding/json reports
// their errors without the field, which a 422 then names.

// checkFieldNames walks body beside the Go type t. Malformed JSON is left
// to the decoder to report: the walk stops where the text stops making
// sense, without an error of its own.
func checkFieldNames(body []byte, t reflect.Type) error {
	s := fieldScanner{b: body}
	return s.value(t, "", nil)
}

// checkValues is checkFieldNames with the checks of the values that
// encoding/json would take without a word, so that a request body is held
// to what the OpenAPI document (swag reads the same tags) declares:
//
//   - a string field (or an item of a string list) with an enums tag holds
//     one of its values: "" or another string is a 422 naming the field
//     and the values (null is the field's absence, as for every optional
//     field);
//   - an item of a list, or a value of a map, whose Go type has no null
//     (a string, number, boolean, struct) is not null: encoding/json would
//     make it "" / 0 / false / {} unseen.
func checkValues(body []byte, t reflect.Type) error {
	s := fieldScanner{b: body, values: true}
	return s.value(t, "", nil)
}

// noNull tells whether t (an item or map value type) has no null: a JSON
// null would decode to its zero value.
func noNull(t reflect.Type) bool {
	if t == nil || reflect.PointerTo(t).Implements(unmarshalerType) {
		return false
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64,
		reflect.Struct, reflect.Array:
		return true
	}
	return false
}

// nullItem reports whether the value at the cursor is a null that an item
// of type t must not be.
func (s *fieldScanner) nullItem(t reflect.Type) bool {
	s.space()
	return s.values && noNull(t) && bytes.HasPrefix(s.b[s.i:], []byte("null"))
}

// CheckFieldNames applies DecodeJSON's field-name rules to body as it
// would decode into v, for a handler that hands the body to another
// decoder (a protocol SDK's). A 422 *apperr.Error, or nil.
func CheckFieldNames(body []byte, v any) error {
	return checkFieldNames(body, reflect.TypeOf(v))
}

// UnmarshalStrict is json.Unmarshal (numbers as json.Number) with the rules
// of DecodeJSON's field names, for the UnmarshalJSON methods of request
// types that decode an object of their own.
func UnmarshalStrict(b []byte, v any) error {
	if err := checkValues(b, reflect.TypeOf(v)); err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

type fieldScanner struct {
	b []byte
	i int
	// anyObject checks every object for repeated keys, maps and free-form
	// values included (DuplicateKey).
	anyObject bool
	// values also checks the values DecodeJSON would take silently
	// (checkValues): a string outside its field's enums, a null item.
	values bool
}

// DuplicateKey reports whether any object in body, at any depth, has a key
// twice. A handler that rewrites a body through a map (which keeps one of
// the two) leaves such a body as it came, for DecodeJSON to refuse.
func DuplicateKey(body []byte) bool {
	s := fieldScanner{b: body, anyObject: true}
	return s.value(nil, "", nil) != nil
}

// peek is the byte at the cursor, 0 at the end.
func (s *fieldScanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	uuidType            = reflect.TypeFor[uuid.UUID]()
)

// shape is the type a JSON value decodes into, pointers removed, or nil
// when its keys are not ours to check.
func shape(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	return t
}

// value checks the value at the cursor, decoded into t; enums are the
// values its field's enums tag allows (nil: any), for a string or the
// strings of a list.
func (s *fieldScanner) value(t reflect.Type, path string, enums []string) error {
	s.space()
	t = shape(t)
	switch s.peek() {
	case 0:
		return nil
	case '{':
		return s.object(t, path)
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		s.i++
		for n := 0; s.item(n, ']'); n++ {
			if s.nullItem(elem) {
				return apperr.Errorf(apperr.Invalid, "Invalid request body: field %q: an item is null", fieldName(path))
			}
			at := s.i
			if err := s.value(elem, path, enums); err != nil || s.i == at {
				return err
			}
		}
	case '"':
		text, ok := s.str()
		if ok && s.values && enums != nil && !slices.Contains(enums, text) {
			return apperr.Errorf(apperr.Invalid, "Invalid request body: field %q must be one of %s, got %q",
				fieldName(path), strings.Join(enums, ", "), text)
		}
		if ok && t != nil && reflect.PointerTo(t).Implements(textUnmarshalerType) {
			return checkText(t, strings.TrimSuffix(path, "."), text)
		}
	case ',', ']', '}', ':':
		return nil // malformed: no value here
	default:
		for s.i < len(s.b) && !strings.ContainsRune(",]} \t\r\n", rune(s.b[s.i])) {
			s.i++
		}
	}
	return nil
}

func (s *fieldScanner) object(t reflect.Type, path string) error {
	var fields []structField
	var elem reflect.Type
	if t != nil {
		switch t.Kind() {
		case reflect.Struct:
			fields = fieldsOf(t)
		case reflect.Map:
			elem = t.Elem()
		}
	}
	var seen []string
	s.i++
	for n := 0; s.item(n, '}'); n++ {
		if s.peek() != '"' {
			return nil
		}
		key, ok := s.str()
		s.space()
		if !ok || s.peek() != ':' {
			return nil
		}
		s.i++
		vt, name := elem, path+key
		if fields != nil || s.anyObject {
			if slices.Contains(seen, key) {
				return apperr.Errorf(apperr.Invalid, "Invalid request body: field %q appears twice", name)
			}
			seen = append(seen, key)
		}
		var enums []string
		if fields != nil {
			vt = nil
			for _, f := range fields {
				if f.name == key {
					vt, enums = f.typ, f.enums
					break
				}
				if strings.EqualFold(f.name, key) {
					return apperr.Errorf(apperr.Invalid, "Invalid request body: unknown field %q (field names are case-sensitive: did you mean %q?)", name, path+f.name)
				}
			}
		} else if s.nullItem(vt) {
			return apperr.Errorf(apperr.Invalid, "Invalid request body: field %q is null", name)
		}
		if err := s.value(vt, name+".", enums); err != nil {
			return err
		}
	}
	return nil
}

// checkText decodes text as encoding/json would into a t (an
// encoding.TextUnmarshaler), and turns a refusal into a 422 naming field.
func checkText(t reflect.Type, field, text string) error {
	err := reflect.New(t).Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(text))
	if err == nil {
		return nil
	}
	if field == "" {
		field = "body"
	}
	if t == uuidType {
		return apperr.Errorf(apperr.Invalid, "Invalid request body: field %q must be a UUID, got %q", field, text)
	}
	return apperr.Errorf(apperr.Invalid, "Invalid request body: field %q: %v", field, err)
}

// item moves to the n-th item (0-based) of the array or object that end
// closes: false at its end (passed) or where the text is malformed.
func (s *fieldScanner) item(n int, end byte) bool {
	s.space()
	switch c := s.peek(); {
	case c == end:
		s.i++
		return false
	case c == 0, n > 0 && c != ',':
		return false
	case n > 0:
		s.i++
		s.space()
	}
	return true
}

// str reads a string at s.i and returns its text (unescaped when it holds
// an escape); false when the text ends first.
func (s *fieldScanner) str() (string, bool) {
	start := s.i
	s.i++
	escaped := false
	for s.peek() != '"' {
		if s.i >= len(s.b) {
			return "", false
		}
		if s.b[s.i] == '\\' {
			escaped = true
			s.i++
		}
		s.i++
	}
	s.i++
	raw := s.b[start+1 : s.i-1]
	if !escaped {
		return string(raw), true
	}
	var out string
	err := json.Unmarshal(s.b[start:s.i], &out)
	return out, err == nil
}

func (s *fieldScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

type structField struct {
	name  string
	typ   reflect.Type
	enums []string // its enums tag's values (nil: none)
}

// fieldName is the field a scanner path names ("body" at the top).
func fieldName(path string) string {
	if path = strings.TrimSuffix(path, "."); path == "" {
		return "body"
	}
	return path
}

var fieldCache sync.Map // reflect.Type → []structField

// fieldsOf lists the JSON names of t's fields as encoding/json sees them
// (tags, exported fields, embedded structs flattened).
func fieldsOf(t reflect.Type) []structField {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]structField)
	}
	var out []structField
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			if et := shape(f.Type); et != nil && et.Kind() == reflect.Struct {
				out = append(out, fieldsOf(et)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		sf := structField{name: name, typ: f.Type}
		if e := f.Tag.Get("enums"); e != "" {
			sf.enums = strings.Split(e, ",")
		}
		out = append(out, sf)
	}
	fieldCache.Store(t, out)
	return out
}

// Enums returns the values of the enums tag (the values swag declares in
// the OpenAPI document) of field of struct type T, so that a handler
// checks a field against the very list the document gives. It panics when
// the field has none (a programming error, found at init).
func Enums[T any](field string) []string {
	f, ok := reflect.TypeFor[T]().FieldByName(field)
	if !ok || f.Tag.Get("enums") == "" {
		panic("httpx.Enums: " + reflect.TypeFor[T]().String() + "." + field + " has no enums tag")
	}
	return strings.Split(f.Tag.Get("enums"), ",")
}
