package httpx

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

type fieldsInner struct {
	Resume any `json:"resume"`
}

type fieldsBody struct {
	ThreadID string                 `json:"thread_id"`
	Command  *fieldsInner           `json:"command"`
	Items    []fieldsInner          `json:"items"`
	ByName   map[string]fieldsInner `json:"by_name"`
	Metadata map[string]any         `json:"metadata"`
	Input    json.RawMessage        `json:"input"`
	Plain    int
}

func TestCheckFieldNames(t *testing.T) {
	typ := reflect.TypeFor[*fieldsBody]()
	for body, want := range map[string]string{
		`{"thread_id":"a","Thread_ID":"b"}`:                `unknown field "Thread_ID"`,
		`{"thread_id":"a","thread_id":"b"}`:                `field "thread_id" appears twice`,
		`{"thread_id":"a","thread\u005Fid":"b"}`:           `field "thread_id" appears twice`,
		`{"command":{"resume":1,"RESUME":2}}`:              `unknown field "command.RESUME"`,
		`{"items":[{"resume":1},{"resume":1,"resume":2}]}`: `field "items.resume" appears twice`,
		`{"by_name":{"x":{"Resume":1}}}`:                   `unknown field "by_name.x.Resume"`,
		`{"plain":1}`:                                      `did you mean "Plain"`,
		`{"thread_id":"a","metadata":{"A":1,"a":2},"input":{"X":1,"x":{"y":1,"Y":2}},"by_name":{"k":{},"K":{}},"Plain":2}`: "",
	} {
		err := checkFieldNames([]byte(body), typ)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}

// Malformed text never panics or loops: every prefix of bodies, and a few
// broken forms, are walked to an end (the decoder reports them).
func TestCheckFieldNamesMalformed(t *testing.T) {
	typ := reflect.TypeFor[*fieldsBody]()
	bodies := []string{
		`{"thread_id":"a\"b","command":{"resume":[1,{"a":"\u00e9"}]},"items":[{"resume":null}],"metadata":{"k":[true,false]}}`,
		`{,}`, `{"a"}`, `{"a":}`, `{"a" "b"}`, `[,]`, `{"items":[,,]}`, `{1:2}`, `{"a":tru"e"}`, `{"items":[{"resume":1}}`, `"`, `{"\`,
	}
	for _, b := range bodies {
		for i := 0; i <= len(b); i++ {
			_ = checkFieldNames([]byte(b[:i]), typ)
		}
	}
}

func TestDuplicateKey(t *testing.T) {
	for body, want := range map[string]bool{
		`{"a":1,"b":{"c":[{"d":1,"d":2}]}}`: true,
		`{"a":1,"a":2}`:                     true,
		`{"a":{"x":1},"b":{"x":1}}`:         false,
		`{"A":1,"a":1}`:                     false,
		`[{"k":1},{"k":2}]`:                 false,
	} {
		if got := DuplicateKey([]byte(body)); got != want {
			t.Errorf("DuplicateKey(%s) = %v, want %v", body, got, want)
		}
	}
}

func TestEnums(t *testing.T) {
	type body struct {
		Select []string `json:"select" enums:"a,b,c"`
		Plain  string   `json:"plain"`
	}
	if got := strings.Join(Enums[body]("Select"), " "); got != "a b c" {
		t.Fatalf("Enums = %q", got)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Enums of a field without an enums tag did not panic")
		}
	}()
	Enums[body]("Plain")
}
