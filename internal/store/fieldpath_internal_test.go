package store

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// jsDoc and jsTexts are a value and what LangGraph.js's getTextAtPath
// (@langchain/langgraph-checkpoint 1.x, dist/store/utils.js) returns for
// each path on it, recorded with node: the texts Weft embeds must be the
// same.
const jsDoc = `{"title":"T","n":4.5,"ok":true,"nil":null,"empty":"","meta":{"tag":"geo","deep":{"x":[1,2]}},"items":[{"text":"one","k":1},{"text":"two"},{"other":3},"s"],"arr":[[1,2],[3]],"obj":{},"list":[]}`

var jsTexts = map[string][]string{
	"$":                        {"{\n  \"title\": \"T\",\n  \"n\": 4.5,\n  \"ok\": true,\n  \"nil\": null,\n  \"empty\": \"\",\n  \"meta\": {\n    \"tag\": \"geo\",\n    \"deep\": {\n      \"x\": [\n        1,\n        2\n      ]\n    }\n  },\n  \"items\": [\n    {\n      \"text\": \"one\",\n      \"k\": 1\n    },\n    {\n      \"text\": \"two\"\n    },\n    {\n      \"other\": 3\n    },\n    \"s\"\n  ],\n  \"arr\": [\n    [\n      1,\n      2\n    ],\n    [\n      3\n    ]\n  ],\n  \"obj\": {},\n  \"list\": []\n}"},
	"title":                    {"T"},
	"n":                        {"4.5"},
	"ok":                       {"true"},
	"nil":                      nil,
	"empty":                    {""},
	"missing":                  nil,
	"meta":                     {"{\n  \"tag\": \"geo\",\n  \"deep\": {\n    \"x\": [\n      1,\n      2\n    ]\n  }\n}"},
	"meta.tag":                 {"geo"},
	"meta.deep.x":              {"[\n  1,\n  2\n]"},
	"meta.deep.x[0]":           {"1"},
	"items[*].text":            {"one", "two"},
	"items[0].text":            {"one"},
	"items[-1]":                {"s"},
	"items[-2].other":          {"3"},
	"items[9]":                 nil,
	"items[*]":                 {"{\n  \"text\": \"one\",\n  \"k\": 1\n}", "{\n  \"text\": \"two\"\n}", "{\n  \"other\": 3\n}", "s"},
	"*":                        {"T", "4.5", "true", "", "{\n  \"tag\": \"geo\",\n  \"deep\": {\n    \"x\": [\n      1,\n      2\n    ]\n  }\n}", "[\n  {\n    \"text\": \"one\",\n    \"k\": 1\n  },\n  {\n    \"text\": \"two\"\n  },\n  {\n    \"other\": 3\n  },\n  \"s\"\n]", "[\n  [\n    1,\n    2\n  ],\n  [\n    3\n  ]\n]", "{}", "[]"},
	"meta.*":                   {"geo", "{\n  \"x\": [\n    1,\n    2\n  ]\n}"},
	"{title,meta.tag,missing}": {"T", "geo"},
	"arr[*][0]":                {"1", "3"},
	"obj":                      {"{}"},
	"list":                     {"[]"},
	"title.x":                  nil,
	"items.text":               nil,
}

func TestTextsAtPathMatchLangGraphJS(t *testing.T) {
	t.Parallel()
	for path, want := range jsTexts {
		tokens, err := tokenizePath(path)
		if err != nil {
			t.Fatalf("%q: %v", path, err)
		}
		got, err := textsAt(json.RawMessage(jsDoc), tokens)
		if err != nil {
			t.Fatalf("%q: %v", path, err)
		}
		if len(got) == 0 {
			got = nil
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %q, want %q", path, got, want)
		}
	}
}

func TestIndexTextsNamesAndLimits(t *testing.T) {
	t.Parallel()
	got, err := indexTexts(json.RawMessage(jsDoc), []string{"items[*].text", "title", "empty", "$.meta.tag", "title", "missing"})
	if err != nil {
		t.Fatal(err)
	}
	want := []fieldText{{"items[*].text.0", "one"}, {"items[*].text.1", "two"}, {"title", "T"}, {"$.meta.tag", "geo"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("indexTexts = %q, want %q (one text keeps the path's name, several get .i; empty texts and repeated paths are skipped; $. is the root)", got, want)
	}
	big := `{"a": [` + strings.Repeat(`"w",`, MaxIndexTexts) + `"w"]}`
	if _, err := indexTexts(json.RawMessage(big), []string{"a[*]"}); err == nil {
		t.Fatalf("%d texts accepted", MaxIndexTexts+1)
	}
	for _, bad := range []string{"a[", "a]", "{a", "a[x]", "a[]", "{a,,b}", "a}"} {
		if _, err := tokenizePath(bad); err == nil {
			t.Errorf("tokenizePath(%q) accepted", bad)
		}
	}
	for path, want := range map[string][]string{
		"$": {}, "": nil, "a.b": {"a", "b"}, "a[*].c": {"a", "[*]", "c"}, "$.a[-1]": {"a", "[-1]"}, "{a,b.c}.d": {"{a,b.c}", "d"},
	} {
		got, err := tokenizePath(path)
		if err != nil || len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
			t.Errorf("tokenizePath(%q) = %q, %v; want %q", path, got, err, want)
		}
	}
}
