package assistants_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/assistants"
)

func TestCreateAndIfExists(t *testing.T) {
	s := start(t)
	a := create(t, s, map[string]any{"graph_id": "foo_bar", "metadata": map[string]any{"k": 1}})
	if a["name"] != "foo_bar" || a["version"] != float64(1) || a["graph_id"] != "foo_bar" || a["description"] != nil {
		t.Fatalf("created %v", a)
	}
	wantJSON(t, "metadata", a["metadata"], `{"k":1}`)
	wantJSON(t, "config", a["config"], `{}`)
	wantJSON(t, "context", a["context"], `{}`)
	got := s.Must(http.StatusOK, "GET", "/assistants/"+a["assistant_id"].(string), nil).Map(t)
	if js(got) != js(a) {
		t.Fatalf("GET = %v, want %v", got, a)
	}
	if n := dbCount(t, s, `SELECT count(*) FROM assistant_versions WHERE assistant_id = $1`, a["assistant_id"]); n != 1 {
		t.Fatalf("%d version rows, want 1", n)
	}

	id := "5a3b1f9e-0c2d-4e6f-8a9b-0c1d2e3f4a5b"
	b := create(t, s, map[string]any{"graph_id": "echo_chat", "assistant_id": id, "name": "Bot", "description": "d"})
	if b["assistant_id"] != id || b["name"] != "Bot" || b["description"] != "d" {
		t.Fatalf("created %v", b)
	}
	r := s.Must(http.StatusConflict, "POST", "/assistants", map[string]any{"graph_id": "echo_chat", "assistant_id": id})
	if !strings.Contains(r.Detail(t), id) {
		t.Fatalf("409 detail %q", r.Detail(t))
	}
	same := s.Must(http.StatusOK, "POST", "/assistants",
		map[string]any{"graph_id": "foo_bar", "assistant_id": id, "name": "Other", "if_exists": "do_nothing"}).Map(t)
	if js(same) != js(b) {
		t.Fatalf("do_nothing returned %v, want the existing %v", same, b)
	}
}

func TestCreateMirrorsConfigurableAndContext(t *testing.T) {
	s := start(t)
	a := create(t, s, map[string]any{"graph_id": "foo_bar", "context": map[string]any{"model": "m"}})
	wantJSON(t, "config", a["config"], `{"configurable":{"model":"m"}}`)
	b := create(t, s, map[string]any{"graph_id": "foo_bar",
		"config": map[string]any{"tags": []string{"x"}, "recursion_limit": 7, "configurable": map[string]any{"model": "n"}}})
	wantJSON(t, "context", b["context"], `{"model":"n"}`)
	wantJSON(t, "config", b["config"], `{"tags":["x"],"recursion_limit":7,"configurable":{"model":"n"}}`)
	c := create(t, s, map[string]any{"graph_id": "foo_bar", "context": map[string]any{"model": "n"},
		"config": map[string]any{"configurable": map[string]any{"model": "n"}}})
	wantJSON(t, "context", c["context"], `{"model":"n"}`)
}

func TestCreateUnknownGraph(t *testing.T) {
	s := start(t)
	r := s.Must(http.StatusNotFound, "POST", "/assistants", map[string]any{"graph_id": "nope"})
	want := "Graph 'nope' not found. Expected one of: ['echo_chat', 'foo_bar', 'hitl', 'hitl_chat', 'slow']"
	if r.Detail(t) != want {
		t.Fatalf("detail %q, want %q", r.Detail(t), want)
	}
	if n := dbCount(t, s, `SELECT count(*) FROM assistants`); n != 5 {
		t.Fatalf("%d assistants, want the 5 system ones", n)
	}
}

// Bad input is a 4xx and writes nothing.
func TestValidationWritesNothing(t *testing.T) {
	s := start(t)
	a := create(t, s, map[string]any{"graph_id": "foo_bar", "metadata": map[string]any{"v": 1}})
	aid := a["assistant_id"].(string)
	cases := []struct {
		status       int
		method, path string
		body         any
	}{
		{http.StatusUnprocessableEntity, "POST", "/assistants", map[string]any{}},
		{http.StatusUnprocessableEntity, "POST", "/assistants", map[string]any{"graph_id": "foo_bar", "assistant_id": "not-a-uuid"}},
		{http.StatusUnprocessableEntity, "POST", "/assistants", map[string]any{"graph_id": "foo_bar", "if_exists": "maybe"}},
		{http.StatusUnprocessableEntity, "POST", "/assistants", map[string]any{"graph_id": "foo_bar", "config": map[string]any{"recursion_limit": -1}}},
		{http.StatusUnprocessableEntity, "POST", "/assistants", map[string]any{"graph_id": "foo_bar", "config": map[string]any{"recursion_limit": 1.5}}},
		{http.StatusUnprocessableEntity, "POST", "/assistants", map[string]any{"graph_id": "foo_bar", "config": map[string]any{"tags": []any{1}}}},
		{http.StatusUnprocessableEntity, "POST", "/assistants", map[string]any{"graph_id": "foo_bar", "config": map[string]any{"configurable": "x"}}},
		{http.StatusUnprocessableEntity, "POST", "/assistants", map[string]any{"graph_id": "foo_bar", "config": []any{}}},
		{http.StatusUnprocessableEntity, "POST", "/assistants", `{"graph_id": "foo_bar",`},
		{http.StatusBadRequest, "POST", "/assistants", map[string]any{"graph_id": "foo_bar",
			"config": map[string]any{"configurable": map[string]any{"a": 1}}, "context": map[string]any{"a": 2}}},
		{http.StatusNotFound, "POST", "/assistants", map[string]any{"graph_id": "nope"}},
		{http.StatusNotFound, "PATCH", "/assistants/" + aid, map[string]any{"graph_id": "nope", "metadata": map[string]any{"x": 1}}},
		{http.StatusUnprocessableEntity, "PATCH", "/assistants/" + aid, map[string]any{"graph_id": "", "metadata": map[string]any{"x": 1}}},
		{http.StatusUnprocessableEntity, "PATCH", "/assistants/" + aid, map[string]any{"name": "", "metadata": map[string]any{"x": 1}}},
		{http.StatusUnprocessableEntity, "PATCH", "/assistants/" + aid, map[string]any{"config": map[string]any{"recursion_limit": 0}}},
		{http.StatusBadRequest, "PATCH", "/assistants/" + aid, map[string]any{
			"config": map[string]any{"configurable": map[string]any{"a": 1}}, "context": map[string]any{"a": 2}}},
		{http.StatusUnprocessableEntity, "PATCH", "/assistants/" + aid, map[string]any{"metadata": []any{}}},
		{http.StatusNotFound, "PATCH", "/assistants/00000000-0000-0000-0000-000000000001", map[string]any{"metadata": map[string]any{"x": 1}}},
		{http.StatusUnprocessableEntity, "PATCH", "/assistants/nope", map[string]any{"metadata": map[string]any{"x": 1}}},
		{http.StatusNotFound, "POST", "/assistants/" + aid + "/latest", map[string]any{"version": 2}},
		{http.StatusUnprocessableEntity, "POST", "/assistants/" + aid + "/latest", map[string]any{}},
		{http.StatusUnprocessableEntity, "POST", "/assistants/" + aid + "/latest", map[string]any{"version": 0}},
		{http.StatusUnprocessableEntity, "POST", "/assistants/" + aid + "/latest", map[string]any{"version": 1 << 40}},
		{http.StatusUnprocessableEntity, "POST", "/assistants/" + aid + "/latest?version=x", nil},
		{http.StatusUnprocessableEntity, "DELETE", "/assistants/" + aid + "?delete_threads=maybe", nil},
		{http.StatusNotFound, "DELETE", "/assistants/00000000-0000-0000-0000-000000000001", nil},
		{http.StatusUnprocessableEntity, "POST", "/assistants/" + aid + "/versions", map[string]any{"limit": 0}},
		{http.StatusUnprocessableEntity, "POST", "/assistants/" + aid + "/versions", map[string]any{"offset": -1}},
		{http.StatusNotFound, "POST", "/assistants/00000000-0000-0000-0000-000000000001/versions", nil},
		{http.StatusMethodNotAllowed, "GET", "/assistants/count", nil},
		// null is not an absent assistant_id: no assistant at a random id.
		{http.StatusUnprocessableEntity, "POST", "/assistants", map[string]any{"graph_id": "foo_bar", "assistant_id": nil}},
		{http.StatusUnprocessableEntity, "POST", "/assistants", map[string]any{"graph_id": "foo_bar", "assistant_id": "nope"}},
		{http.StatusUnprocessableEntity, "POST", "/assistants", map[string]any{"graph_id": "foo_bar", "assistant_id": ""}},
		{http.StatusUnprocessableEntity, "POST", "/assistants", map[string]any{"graph_id": "foo_bar", "assistant_id": 7}},
		// A count holds its paging fields to search's bounds.
		{http.StatusUnprocessableEntity, "POST", "/assistants/count", map[string]any{"offset": -1}},
		{http.StatusUnprocessableEntity, "POST", "/assistants/count", map[string]any{"limit": 0}},
		{http.StatusUnprocessableEntity, "POST", "/assistants/count", map[string]any{"select": []string{"nope"}}},
		{http.StatusUnprocessableEntity, "POST", "/assistants/count", map[string]any{"sort_by": "nope"}},
	}
	for _, c := range cases {
		r := s.Do(c.method, c.path, c.body)
		if r.Status != c.status {
			t.Errorf("%s %s %s: %d %s, want %d", c.method, c.path, js(c.body), r.Status, r.Body, c.status)
			continue
		}
		if r.Detail(t) == "" {
			t.Errorf("%s %s: no detail in %s", c.method, c.path, r.Body)
		}
	}
	for body, want := range map[string]string{
		`{"graph_id": "foo_bar", "assistant_id": null}`: `field "assistant_id" must be a UUID, got null (omit the field for a new id)`,
		`{"offset": -1}`: "Invalid offset -1: must not be negative",
	} {
		path := "/assistants"
		if !strings.Contains(body, "graph_id") {
			path = "/assistants/count"
		}
		if got := s.Do("POST", path, body).Detail(t); !strings.Contains(got, want) {
			t.Errorf("POST %s %s: %q, want %q", path, body, got, want)
		}
	}
	if n := s.Must(http.StatusOK, "POST", "/assistants/count", map[string]any{"offset": 5, "limit": 1000, "select": []string{"name"}}).Body; strings.TrimSpace(string(n)) != "6" {
		t.Errorf("count with valid paging fields = %s, want 6 (they are ignored)", n)
	}
	if n := dbCount(t, s, `SELECT count(*) FROM assistants`); n != 6 {
		t.Fatalf("%d assistants, want 6", n)
	}
	if n := dbCount(t, s, `SELECT count(*) FROM assistant_versions`); n != 6 {
		t.Fatalf("%d versions, want 6", n)
	}
	got := s.Must(http.StatusOK, "GET", "/assistants/"+aid, nil).Map(t)
	if js(got) != js(a) {
		t.Fatalf("assistant changed: %v, was %v", got, a)
	}
}

func TestPatchWritesVersionsAndMergesMetadata(t *testing.T) {
	s := start(t)
	a := create(t, s, map[string]any{"graph_id": "foo_bar", "name": "One", "metadata": map[string]any{"a": 1, "b": 1},
		"config": map[string]any{"tags": []string{"t"}}})
	aid := a["assistant_id"].(string)
	p := s.Must(http.StatusOK, "PATCH", "/assistants/"+aid, map[string]any{
		"metadata": map[string]any{"b": 2, "c": 3},
		"config":   map[string]any{"configurable": map[string]any{"model": "x"}},
	}).Map(t)
	if p["version"] != float64(2) || p["name"] != "One" {
		t.Fatalf("patched %v", p)
	}
	wantJSON(t, "metadata", p["metadata"], `{"a":1,"b":2,"c":3}`)
	wantJSON(t, "config", p["config"], `{"configurable":{"model":"x"}}`) // replaced, not merged
	wantJSON(t, "context", p["context"], `{"model":"x"}`)

	p = s.Must(http.StatusOK, "PATCH", "/assistants/"+aid, map[string]any{"name": "Three", "graph_id": "echo_chat",
		"description": "third", "context": map[string]any{"model": "y"}}).Map(t)
	if p["version"] != float64(3) || p["name"] != "Three" || p["graph_id"] != "echo_chat" || p["description"] != "third" {
		t.Fatalf("patched %v", p)
	}
	wantJSON(t, "metadata kept", p["metadata"], `{"a":1,"b":2,"c":3}`)
	wantJSON(t, "config follows context", p["config"], `{"configurable":{"model":"y"}}`)
	if p["created_at"] != a["created_at"] || p["updated_at"] == a["updated_at"] {
		t.Fatalf("timestamps: created %v→%v updated %v→%v", a["created_at"], p["created_at"], a["updated_at"], p["updated_at"])
	}

	vs := list(t, s.Must(http.StatusOK, "POST", "/assistants/"+aid+"/versions", nil))
	wantJSON(t, "versions", field(vs, "version"), `[3,2,1]`)
	wantJSON(t, "version names", field(vs, "name"), `["Three","One","One"]`)
	wantJSON(t, "version 1 metadata", vs[2]["metadata"], `{"a":1,"b":1}`)
	if _, has := vs[0]["updated_at"]; has {
		t.Fatalf("a version has no updated_at: %v", vs[0])
	}
	r := s.Must(http.StatusOK, "POST", "/assistants/"+aid+"/versions", map[string]any{"limit": 2})
	wantJSON(t, "page 1", field(list(t, r), "version"), `[3,2]`)
	if r.Header.Get("X-Pagination-Next") != "2" {
		t.Fatalf("X-Pagination-Next %q", r.Header.Get("X-Pagination-Next"))
	}
	r = s.Must(http.StatusOK, "POST", "/assistants/"+aid+"/versions", map[string]any{"limit": 2, "offset": 2})
	wantJSON(t, "page 2", field(list(t, r), "version"), `[1]`)
	if r.Header.Get("X-Pagination-Next") != "" || r.Header.Get("X-Pagination-Total") != "3" {
		t.Fatalf("last page headers %v", r.Header)
	}
	r = s.Must(http.StatusOK, "POST", "/assistants/"+aid+"/versions", map[string]any{"metadata": map[string]any{"c": 3}})
	wantJSON(t, "metadata filter", field(list(t, r), "version"), `[3,2]`)
}

func TestLatestSwitchesVersion(t *testing.T) {
	s := start(t)
	a := create(t, s, map[string]any{"graph_id": "foo_bar", "name": "v1", "metadata": map[string]any{"n": 1},
		"context": map[string]any{"m": 1}})
	aid := a["assistant_id"].(string)
	s.Must(http.StatusOK, "PATCH", "/assistants/"+aid, map[string]any{"name": "v2", "metadata": map[string]any{"n": 2},
		"context": map[string]any{"m": 2}, "graph_id": "echo_chat"})
	l := s.Must(http.StatusOK, "POST", "/assistants/"+aid+"/latest", map[string]any{"version": 1}).Map(t)
	if l["version"] != float64(1) || l["name"] != "v1" || l["graph_id"] != "foo_bar" {
		t.Fatalf("latest = %v", l)
	}
	wantJSON(t, "metadata", l["metadata"], `{"n":1}`)
	wantJSON(t, "context", l["context"], `{"m":1}`)
	wantJSON(t, "config", l["config"], `{"configurable":{"m":1}}`)
	got := s.Must(http.StatusOK, "GET", "/assistants/"+aid, nil).Map(t)
	if got["version"] != float64(1) || got["name"] != "v1" {
		t.Fatalf("GET after latest = %v", got)
	}
	// A PATCH now adds the highest version + 1, not current + 1.
	p := s.Must(http.StatusOK, "PATCH", "/assistants/"+aid, map[string]any{"metadata": map[string]any{"x": true}}).Map(t)
	if p["version"] != float64(3) || p["name"] != "v1" {
		t.Fatalf("patch after latest = %v", p)
	}
	wantJSON(t, "metadata", p["metadata"], `{"n":1,"x":true}`)
	// The version is the body's, as the SDKs send it (or the query's:
	// latest_query_test.go).
	q := s.Must(http.StatusOK, "POST", "/assistants/"+aid+"/latest", map[string]any{"version": 2}).Map(t)
	if q["version"] != float64(2) || q["name"] != "v2" || q["graph_id"] != "echo_chat" {
		t.Fatalf("latest version 2 = %v", q)
	}
	s.Must(http.StatusNotFound, "POST", "/assistants/"+aid+"/latest", map[string]any{"version": 9})
	if n := dbCount(t, s, `SELECT count(*) FROM assistant_versions WHERE assistant_id = $1`, aid); n != 3 {
		t.Fatalf("%d versions, want 3", n)
	}
}

func TestSearchAndCount(t *testing.T) {
	s := start(t)
	md := map[string]any{"suite": "search"}
	var ids []string
	for _, c := range []struct{ name, graph string }{{"Alpha", "foo_bar"}, {"beta", "echo_chat"}, {"Gamma 100%", "foo_bar"}} {
		a := create(t, s, map[string]any{"graph_id": c.graph, "name": c.name, "metadata": md})
		ids = append(ids, a["assistant_id"].(string))
	}
	search := func(body map[string]any) ([]map[string]any, http.Header) {
		t.Helper()
		r := s.Must(http.StatusOK, "POST", "/assistants/search", body)
		return list(t, r), r.Header
	}
	l, _ := search(map[string]any{"metadata": md})
	wantJSON(t, "default order (created_at desc)", field(l, "assistant_id"), js([]string{ids[2], ids[1], ids[0]}))
	l, _ = search(map[string]any{"metadata": md, "sort_by": "name", "sort_order": "asc"})
	wantJSON(t, "by name (case-insensitive)", field(l, "name"), `["Alpha","beta","Gamma 100%"]`)
	l, _ = search(map[string]any{"metadata": md, "sort_by": "name", "sort_order": "desc"})
	wantJSON(t, "by name desc", field(l, "name"), `["Gamma 100%","beta","Alpha"]`)
	// The enum is case-sensitive, as LangGraph's server validates it.
	s.Must(http.StatusUnprocessableEntity, "POST", "/assistants/search", map[string]any{"sort_order": "DESC"})
	l, _ = search(map[string]any{"metadata": md, "sort_by": "created_at", "sort_order": "asc"})
	wantJSON(t, "created asc", field(l, "assistant_id"), js(ids))
	l, _ = search(map[string]any{"name": "ALP"})
	wantJSON(t, "name substring", field(l, "name"), `["Alpha"]`)
	l, _ = search(map[string]any{"name": "0%"})
	wantJSON(t, "% is not a wildcard", field(l, "name"), `["Gamma 100%"]`)
	l, _ = search(map[string]any{"name": "a_"})
	wantJSON(t, "_ is not a wildcard", field(l, "name"), `[]`)
	l, _ = search(map[string]any{"metadata": md, "graph_id": "foo_bar", "sort_order": "asc", "sort_by": "name"})
	wantJSON(t, "graph filter", field(l, "name"), `["Alpha","Gamma 100%"]`)
	l, _ = search(map[string]any{"graph_id": "hitl"})
	wantJSON(t, "system assistant", field(l, "assistant_id"), js([]string{assistants.SystemID("hitl").String()}))
	l, _ = search(map[string]any{"metadata": md, "select": []string{"assistant_id", "name"}, "limit": 1})
	wantJSON(t, "select", l, fmt.Sprintf(`[{"assistant_id":%q,"name":"Gamma 100%%"}]`, ids[2]))

	l, h := search(map[string]any{"metadata": md, "limit": 2})
	if len(l) != 2 || h.Get("X-Pagination-Next") != "2" || h.Get("X-Pagination-Total") != "3" {
		t.Fatalf("page 1: %d rows, headers %v", len(l), h)
	}
	l, h = search(map[string]any{"metadata": md, "limit": 2, "offset": 2})
	if len(l) != 1 || h.Get("X-Pagination-Next") != "" || h.Get("X-Pagination-Total") != "3" {
		t.Fatalf("page 2: %d rows, headers %v", len(l), h)
	}
	l, _ = search(map[string]any{})
	if len(l) != 8 {
		t.Fatalf("everything: %d, want 8", len(l))
	}
	for _, bad := range []map[string]any{{"sort_by": "version"}, {"sort_order": "up"}, {"select": []string{"nope"}},
		{"limit": 0}, {"limit": 1001}, {"offset": -1}, {"metadata": "x"}} {
		r := s.Do("POST", "/assistants/search", bad)
		if r.Status != http.StatusUnprocessableEntity {
			t.Errorf("search %v: %d %s, want 422", bad, r.Status, r.Body)
		}
	}

	count := func(body map[string]any) string {
		t.Helper()
		return strings.TrimSpace(string(s.Must(http.StatusOK, "POST", "/assistants/count", body).Body))
	}
	if n := count(map[string]any{"metadata": md}); n != "3" {
		t.Fatalf("count metadata = %s", n)
	}
	if n := count(map[string]any{"metadata": md, "graph_id": "foo_bar", "name": "gam"}); n != "1" {
		t.Fatalf("count filtered = %s", n)
	}
	if n := count(map[string]any{}); n != "8" {
		t.Fatalf("count all = %s", n)
	}
}
