package threads_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/server/servertest"
)

// POST /threads/search with extract answers, for each thread of the page,
// the value at each path under "extracted" (null where the path leads
// nowhere), beside the selected fields or the whole thread, as LangGraph's
// server does; an extract LangGraph's server refuses is a 422, here and on
// POST /threads/count (which checks it and then counts).
func TestSearchExtract(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	a := create(t, s, map[string]any{"metadata": map[string]any{"owner": "ada", "tags": []any{"x", "y"}, "_secret": 1, "n": json.Number("12345678901234567890")}})
	b := create(t, s, map[string]any{"metadata": map[string]any{"owner": "bob"}})
	s.Must(http.StatusOK, "POST", "/threads/"+a.ThreadID+"/runs/wait", map[string]any{"assistant_id": "echo_chat",
		"input": map[string]any{"messages": []any{map[string]any{"role": "human", "content": "hi"}}}})
	var state struct {
		Values struct {
			Messages []map[string]any `json:"messages"`
		} `json:"values"`
	}
	s.Must(http.StatusOK, "GET", "/threads/"+a.ThreadID+"/state", nil).JSON(t, &state)
	msgs := state.Values.Messages
	if len(msgs) < 2 {
		t.Fatalf("messages %v", msgs)
	}

	extract := map[string]any{
		"last": "values.messages[-1].content", "first": "values.messages[0].content", "first_id": "values.messages[0].id",
		"owner": "metadata.owner", "tag2": "metadata.tags[1]", "out_of_range": "metadata.tags[5]", "into_text": "metadata.owner.x",
		"private": "metadata._secret", "whole": "metadata.tags", "big": "metadata.n",
	}
	search := func(body map[string]any) map[string]map[string]any {
		t.Helper()
		var page []map[string]any
		s.Must(http.StatusOK, "POST", "/threads/search", body).JSON(t, &page)
		out := map[string]map[string]any{}
		for _, th := range page {
			out[th["thread_id"].(string)] = th
		}
		return out
	}
	page := search(map[string]any{"ids": []string{a.ThreadID, b.ThreadID}, "extract": extract})
	wantA := map[string]any{"last": msgs[len(msgs)-1]["content"], "first": "hi", "first_id": msgs[0]["id"], "owner": "ada", "tag2": "y",
		"out_of_range": nil, "into_text": nil, "private": nil, "whole": []any{"x", "y"}, "big": 12345678901234567890.0}
	if got := page[a.ThreadID]["extracted"]; !reflect.DeepEqual(got, wantA) {
		t.Errorf("extracted of a: %v\nwant %v", got, wantA)
	}
	if page[a.ThreadID]["metadata"] == nil || page[a.ThreadID]["status"] != "idle" {
		t.Errorf("the whole thread beside extracted: %v", page[a.ThreadID])
	}
	wantB := map[string]any{"last": nil, "first": nil, "first_id": nil, "owner": "bob", "tag2": nil, "out_of_range": nil,
		"into_text": nil, "private": nil, "whole": nil, "big": nil}
	if got := page[b.ThreadID]["extracted"]; !reflect.DeepEqual(got, wantB) {
		t.Errorf("extracted of b (no values): %v\nwant %v", got, wantB)
	}
	// A number beyond float64 comes back as stored.
	raw := s.Must(http.StatusOK, "POST", "/threads/search", map[string]any{"ids": []string{a.ThreadID}, "extract": map[string]any{"big": "metadata.n"}})
	if !strings.Contains(string(raw.Body), `"extracted":{"big":12345678901234567890}`) {
		t.Errorf("a big number: %s", raw.Body)
	}

	// Beside select: the selected fields and extracted.
	page = search(map[string]any{"ids": []string{a.ThreadID}, "select": []string{"thread_id"}, "extract": map[string]any{"owner": "metadata.owner"}})
	if got := page[a.ThreadID]; !reflect.DeepEqual(got, map[string]any{"thread_id": a.ThreadID, "extracted": map[string]any{"owner": "ada"}}) {
		t.Errorf("select and extract: %v", got)
	}
	// Without extract, no extracted.
	if _, ok := search(map[string]any{"ids": []string{a.ThreadID}})[a.ThreadID]["extracted"]; ok {
		t.Error("extracted without extract")
	}

	eleven := map[string]any{}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"} {
		eleven[k] = "values"
	}
	for _, bad := range []any{
		eleven,
		map[string]any{"values": "values.x"},    // a thread field's name
		map[string]any{"thread_id": "metadata"}, // a thread field's name
		map[string]any{"1a": "values"},          // no identifier
		map[string]any{"a-b": "values"},         // no identifier
		map[string]any{"a": ""},                 // empty path
		map[string]any{"a": "status"},           // not a JSON column
		map[string]any{"a": "foo.bar"},          // not a column
		map[string]any{"a": ".values"},          // no column first
		map[string]any{"a": 1},                  // not a string
		[]any{"values"},                         // not an object
	} {
		for _, route := range []string{"/threads/search", "/threads/count"} {
			if r := s.Do("POST", route, map[string]any{"extract": bad}); r.Status != http.StatusUnprocessableEntity {
				t.Errorf("%s extract %v: %d %s, want 422", route, bad, r.Status, r.Body)
			}
		}
	}
	var n int
	s.Must(http.StatusOK, "POST", "/threads/count", map[string]any{"ids": []string{a.ThreadID, b.ThreadID}, "extract": extract}).JSON(t, &n)
	if n != 2 {
		t.Errorf("count with extract: %d", n)
	}
}
