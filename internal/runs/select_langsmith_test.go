package runs_test

import (
	"net/http"
	"reflect"
	"testing"
)

// select=langsmith_session_name, a field of LangGraph's Run (its document
// lists it among select's values), is taken on a thread's runs and answered
// null: Weft names no LangSmith session.
func TestRunsListSelectLangSmithSession(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	run := s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}}).Map(t)
	var list []map[string]any
	s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs?select=run_id,langsmith_session_name", nil).JSON(t, &list)
	want := []map[string]any{{"run_id": run["run_id"], "langsmith_session_name": nil}}
	if !reflect.DeepEqual(list, want) {
		t.Fatalf("%v, want %v", list, want)
	}
}
