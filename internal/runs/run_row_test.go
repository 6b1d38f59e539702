package runs_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/weftdev/weft/internal/runs"
	"github.com/weftdev/weft/internal/server/servertest"
)

// A run's row leaves out the kwargs fields that hold their default and
// the assistant_id of its metadata, and every read shows the whole
// documents: weft_run_kwargs fills in exactly the fields storedKwargs
// leaves out, with their defaults, and weft_run_metadata the assistant.
func TestRunRowStoredWithoutDefaults(t *testing.T) {
	s := start(t)
	var fn map[string]json.RawMessage
	if err := s.DB.QueryRow(t.Context(), `SELECT weft_run_kwargs('{}', NULL)`).Scan(&fn); err != nil {
		t.Fatal(err)
	}
	if len(fn) != len(runs.KwargsDefaults) {
		t.Errorf("weft_run_kwargs fills %d fields, storedKwargs leaves out %d", len(fn), len(runs.KwargsDefaults))
	}
	for k, v := range runs.KwargsDefaults {
		if string(fn[k]) != v {
			t.Errorf("weft_run_kwargs fills %s with %s, storedKwargs leaves it out when it is %s", k, fn[k], v)
		}
	}

	tid := newThread(t, s)
	plain := create(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}})
	set := create(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""},
		"command": map[string]any{"update": map[string]any{"foo": "x"}}, "webhook": "http://127.0.0.1:9/hook",
		"stream_resumable": true, "stream_subgraphs": true, "feedback_keys": []string{"k"}, "on_disconnect": "cancel",
		"interrupt_after": []string{"node_b"}, "interrupt_before": []string{"node_a"}})
	for _, tc := range []struct {
		run    map[string]any
		stored int // fields of kwargsDefaults the row holds
	}{{plain, 0}, {set, len(runs.KwargsDefaults) - 1}} { // set leaves temporary false
		rid := tc.run["run_id"].(string)
		var stored map[string]json.RawMessage
		var whole string
		if err := s.DB.QueryRow(t.Context(), `SELECT kwargs, weft_run_kwargs(kwargs, thread_id)::text FROM runs WHERE run_id = $1`, rid).Scan(&stored, &whole); err != nil {
			t.Fatal(err)
		}
		n := 0
		for k := range runs.KwargsDefaults {
			if _, ok := stored[k]; ok {
				n++
			}
		}
		if n != tc.stored {
			t.Errorf("run %s stores %d default fields, want %d: %v", rid, n, tc.stored, stored)
		}
		// The API shows the whole document, with every field.
		got := s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs/"+rid, nil)
		var run struct {
			Kwargs json.RawMessage `json:"kwargs"`
		}
		if err := json.Unmarshal(got.Body, &run); err != nil {
			t.Fatal(err)
		}
		var a, b any
		_ = json.Unmarshal(run.Kwargs, &a)
		_ = json.Unmarshal([]byte(whole), &b)
		if js(a) != js(b) {
			t.Errorf("GET run kwargs = %s, want %s", run.Kwargs, whole)
		}
		for k := range runs.KwargsDefaults {
			if _, ok := a.(map[string]any)[k]; !ok {
				t.Errorf("GET run kwargs lacks %s: %s", k, run.Kwargs)
			}
		}
	}
	// The metadata: the assistant's, the thread's (with its graph) and the
	// request's merged, as LangGraph's servers merge them; the run's
	// assistant_id left out of the row and shown by every read, whatever
	// the request said (as LangGraph's Python server, against spoofing).
	other := create(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""},
		"metadata": map[string]any{"assistant_id": "mine", "k": 1}})
	aid := plain["assistant_id"].(string)
	for _, tc := range []struct {
		run          map[string]any
		stored, read string
	}{
		{plain, `{"graph_id": "foo_bar", "created_by": "system"}`,
			`{"graph_id": "foo_bar", "created_by": "system", "assistant_id": "` + aid + `"}`},
		{other, `{"k": 1, "graph_id": "foo_bar", "created_by": "system"}`,
			`{"k": 1, "graph_id": "foo_bar", "created_by": "system", "assistant_id": "` + aid + `"}`},
	} {
		rid := tc.run["run_id"].(string)
		var stored, read string
		if err := s.DB.QueryRow(t.Context(), `SELECT metadata::text, weft_run_metadata(metadata, assistant_id)::text FROM runs WHERE run_id = $1`, rid).Scan(&stored, &read); err != nil {
			t.Fatal(err)
		}
		if stored != tc.stored || read != tc.read {
			t.Errorf("run %s metadata stored %s, read %s; want %s, %s", rid, stored, read, tc.stored, tc.read)
		}
		var got struct {
			Metadata json.RawMessage `json:"metadata"`
		}
		if err := json.Unmarshal(s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs/"+rid, nil).Body, &got); err != nil {
			t.Fatal(err)
		}
		var a, b any
		_ = json.Unmarshal(got.Metadata, &a)
		_ = json.Unmarshal([]byte(tc.read), &b)
		if js(a) != js(b) {
			t.Errorf("GET run %s metadata = %s, want %s", rid, got.Metadata, tc.read)
		}
	}
	if v := js(mustKwargs(t, s, tid, plain)["on_disconnect"]); v != `"continue"` {
		t.Errorf("default on_disconnect reads %s", v)
	}
	if v := js(mustKwargs(t, s, tid, set)["on_disconnect"]); v != `"cancel"` {
		t.Errorf("on_disconnect cancel reads %s", v)
	}
}

func mustKwargs(t *testing.T, s *servertest.Server, tid string, run map[string]any) map[string]any {
	t.Helper()
	var out struct {
		Kwargs map[string]any `json:"kwargs"`
	}
	if err := json.Unmarshal(s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs/"+run["run_id"].(string), nil).Body, &out); err != nil {
		t.Fatal(err)
	}
	return out.Kwargs
}
