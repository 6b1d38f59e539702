package jsonv

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDecodeKeepsNumbersExact(t *testing.T) {
	var v map[string]any
	if err := Decode([]byte(`{"big":1e400,"precise":9007199254740993,"f":0.1}`), &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v)
	if string(out) != `{"big":1e400,"f":0.1,"precise":9007199254740993}` {
		t.Fatalf("round trip: %s", out)
	}
	for _, bad := range []string{`{} {}`, `{} }`, `{}]`} {
		if err := Decode([]byte(bad), &v); err == nil {
			t.Fatalf("trailing data accepted: %s", bad)
		}
	}
}

func TestCloneIsDeep(t *testing.T) {
	src := map[string]any{"a": []any{map[string]any{"b": "c"}}}
	cp := Clone(src).(map[string]any)
	cp["a"].([]any)[0].(map[string]any)["b"] = "changed"
	if src["a"].([]any)[0].(map[string]any)["b"] != "c" {
		t.Fatal("Clone shares nested maps")
	}
}

func TestNUL(t *testing.T) {
	v := map[string]any{"ok": "x", "list": []any{"y", map[string]any{"k\x00": "z"}}}
	if at, found := FindNUL(v); !found || at != "list[1].k\x00" {
		t.Fatalf("FindNUL = %q, %v", at, found)
	}
	if _, found := FindNUL(StripNUL(v)); found {
		t.Fatal("StripNUL left a NUL")
	}
	if _, found := FindNUL(map[string]any{"a": []any{"b", json.Number("1")}}); found {
		t.Fatal("a NUL where there is none")
	}
}

func TestCheck(t *testing.T) {
	for doc, want := range map[string]string{
		`{"a":[1,2,{"b":"c"}]}`:        "",
		`{"a":1e308}`:                  "",
		`{"a":1e400}`:                  "number 1e400 is out of range",
		`{"a":"x\u0000y"}`:             `field "a" contains a NUL character`,
		`{"a":[{"b":"\u0000"}]}`:       `field "a[0].b" contains a NUL character`,
		"{\"a\":\"\xff\"}":             "not valid UTF-8",
		`{"a":"[[[[ not depth ]]]]"}`:  "",
		strings.Repeat("[", 600) + "]": "nested 600 levels deep",
	} {
		err := Check([]byte(doc))
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("Check(%.40q) = %v, want %q", doc, err, want)
		}
	}
}
