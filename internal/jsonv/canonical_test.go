package jsonv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestCanonicalMatchesEncodingJSON checks Canonical against its
// definition: valid JSON text is canonical exactly when json.Marshal of it
// as a json.RawMessage gives it back unchanged.
func TestCanonicalMatchesEncodingJSON(t *testing.T) {
	cases := []string{
		`[]`, `{}`, `"x"`, `1`, `null`, `[1,2]`, `[1, 2]`, ` [1]`, `[1] `, "[1,\n2]", "[1,\t2]", "{\"a\":\r1}",
		`{"a":"b c"}`, `{"a b":"c"}`, `{"a" :"c"}`, `{"a": "c"}`,
		`"a<b"`, `"a>b"`, `"a&b"`, `"\u003c"`, "\"\u2028\"", "\"\u2029\"", "\"\u202a\"", "\"\u2026 \u2014 \u2019\"",
		`"\\"`, `"\\\" "`, `["\\", " "]`, `["\\",1]`, `["a\"b", "c"]`, `["a\\\"b",1]`, `"\\\\"`, `["\\\\", 2]`,
		`[{"type":"human","content":"hello world","id":"1"},{"type":"ai","content":"echo: hello world"}]`,
	}
	rng := rand.New(rand.NewPCG(7, 7))
	pieces := []string{" ", "\n", "a", "<", "&", "\\\\", "\\\"", "\u2028", "\u2026", "é", "\\n", "\t"}
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(8) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s, err := json.Marshal(b.String())
		if err != nil {
			t.Fatal(err)
		}
		// Unescape what json.Marshal escaped so both forms occur.
		plain := bytes.NewBuffer(nil)
		enc := json.NewEncoder(plain)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(map[string]any{b.String(): []any{b.String(), 1}})
		cases = append(cases, string(s), strings.TrimSpace(plain.String()), "[ "+string(s)+"]", `{"k":`+string(s)+`, "n":1}`)
	}
	for _, c := range cases {
		if !json.Valid([]byte(c)) {
			t.Fatalf("test case %q is not valid JSON", c)
		}
		out, err := json.Marshal(json.RawMessage(c))
		if err != nil {
			t.Fatal(err)
		}
		if want := string(out) == c; Canonical([]byte(c)) != want {
			t.Fatalf("Canonical(%q) = %v, want %v (json.Marshal gives %q)", c, !want, want, out)
		}
	}
}

// TestAppendMarshalMatchesMarshal compares AppendMarshal with json.Marshal
// on values mixing decoded JSON, canonical and non-canonical raw text,
// nil maps and lists, and other Go types.
func TestAppendMarshalMatchesMarshal(t *testing.T) {
	values := []any{
		nil, "a<b", json.Number("1.50"), 3, []string{"x"}, map[string]string{"b": "<", "a": "1"},
		json.RawMessage(nil), json.RawMessage(`[1, 2]`), json.RawMessage(`["<"]`), json.RawMessage(`{"a":"b"}`),
		map[string]any(nil), []any(nil), map[string]any{}, []any{},
		map[string]any{
			"messages": json.RawMessage(`[{"content":"hi","type":"human"}]`),
			"z":        []any{json.RawMessage(`"\u2028"`), json.RawMessage("\"\u2028\""), map[string]any{"<k>": 1.5}},
			"a":        map[string]any{"é": true, "b": nil, "&": json.RawMessage(` 1`)},
			"k\u2028":  "v",
		},
	}
	for _, v := range values {
		want, wantErr := json.Marshal(v)
		got, err := AppendMarshal([]byte("prefix"), v)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%#v: error %v, json.Marshal's %v", v, err, wantErr)
		}
		if err == nil && string(got) != "prefix"+string(want) {
			t.Fatalf("%#v:\n got %s\nwant prefix%s", v, got, want)
		}
	}
	// Invalid raw text that is not canonical fails as it does in
	// json.Marshal (canonical text is trusted to be valid).
	if _, err := AppendMarshal(nil, map[string]any{"a": json.RawMessage(`[1, `)}); err == nil {
		t.Fatal("invalid raw text accepted")
	}
}

// BenchmarkCanonical checks a 700 KB message list (2000 messages of ~350
// bytes, as a 1000-turn echo_chat thread holds), the scan a state read
// does instead of json.Marshal's validate-and-compact; json.Marshal of the
// same json.RawMessage is the contrast.
func BenchmarkCanonical(b *testing.B) {
	var msgs []any
	for i := range 2000 {
		msgs = append(msgs, map[string]any{"type": "human", "id": fmt.Sprint("id-", i), "content": strings.Repeat("lorem ipsum dolor ", 11),
			"additional_kwargs": map[string]any{}, "response_metadata": map[string]any{}})
	}
	raw, _ := json.Marshal(msgs)
	b.Run("Canonical", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if !Canonical(raw) {
				b.Fatal("not canonical")
			}
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if _, err := json.Marshal(json.RawMessage(raw)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
