package runs_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestRunsListSelect(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}})
	// Every encoding the SDKs use: a JSON array (JS), repeated keys (Python), a comma list.
	for _, q := range []string{`select=["run_id","status"]`, "select=run_id&select=status", "select=run_id,status"} {
		var list []map[string]any
		s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs?"+strings.ReplaceAll(q, `"`, "%22"), nil).JSON(t, &list)
		if len(list) != 1 || len(list[0]) != 2 || list[0]["status"] != "success" || list[0]["run_id"] == nil {
			t.Fatalf("%s: %v", q, list)
		}
	}
	r := s.Must(http.StatusUnprocessableEntity, "GET", "/threads/"+tid+"/runs?select="+url.QueryEscape(`["no_such_field"]`), nil)
	if !strings.Contains(r.Detail(t), "no_such_field") {
		t.Fatalf("detail %q", r.Detail(t))
	}
}
