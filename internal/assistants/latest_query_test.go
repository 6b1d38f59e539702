package assistants_test

import (
	"net/http"
	"testing"
)

// POST /assistants/{id}/latest takes the version from the version query
// parameter too (LangGraph's document declares it there, its SDKs send the
// body): the query alone, or a query and a body that agree, switch the
// version; a query and a body that differ, a query that is no positive
// 32-bit integer, or neither, are a 422 that changes nothing.
func TestLatestVersionQuery(t *testing.T) {
	s := start(t)
	aid := create(t, s, map[string]any{"graph_id": "foo_bar", "name": "v1"})["assistant_id"].(string)
	s.Must(http.StatusOK, "PATCH", "/assistants/"+aid, map[string]any{"name": "v2"})
	current := func() any { return s.Must(http.StatusOK, "GET", "/assistants/"+aid, nil).Map(t)["version"] }

	if l := s.Must(http.StatusOK, "POST", "/assistants/"+aid+"/latest?version=1", nil).Map(t); l["version"] != float64(1) || l["name"] != "v1" {
		t.Fatalf("?version=1 alone: %v", l)
	}
	if l := s.Must(http.StatusOK, "POST", "/assistants/"+aid+"/latest?version=2", map[string]any{"version": 2}).Map(t); l["version"] != float64(2) {
		t.Fatalf("query and body agreeing: %v", l)
	}
	if l := s.Must(http.StatusOK, "POST", "/assistants/"+aid+"/latest?version=1", map[string]any{}).Map(t); l["version"] != float64(1) {
		t.Fatalf("query with an empty body: %v", l)
	}
	for _, bad := range []struct {
		query string
		body  any
	}{
		{"?version=2", map[string]any{"version": 1}}, // differ
		{"?version=x", map[string]any{"version": 2}},
		{"?version=", nil},
		{"?version=0", nil},
		{"?version=-2", nil},
		{"?version=4294967296", nil},
		{"", nil},
		{"", map[string]any{}},
	} {
		r := s.Do("POST", "/assistants/"+aid+"/latest"+bad.query, bad.body)
		if r.Status != http.StatusUnprocessableEntity {
			t.Errorf("%s %v: %d %s, want 422", bad.query, bad.body, r.Status, r.Body)
		}
	}
	if v := current(); v != float64(1) {
		t.Fatalf("a refused request changed the version to %v", v)
	}
	s.Must(http.StatusNotFound, "POST", "/assistants/"+aid+"/latest?version=9", nil)
}
