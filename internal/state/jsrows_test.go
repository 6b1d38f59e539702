package state_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/server/servertest"
)

// Rows exactly as LangGraph's JS PostgresSaver wrote them for the docs
// example (reference/checkpoint/ROWS.md, Appendix A), thread id replaced.
const jsCheckpoints = `
INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata) VALUES
($1,'','1f1e6647-53d0-6f50-ffff-fc553257d448',NULL,'{"v":4,"id":"1f1e6647-53d0-6f50-ffff-fc553257d448","ts":"2026-11-22T11:04:16.326Z","versions_seen":{"__input__":{}},"channel_versions":{"__start__":1}}','{"step":-1,"source":"input","parents":{}}'),
($1,'','1f1e6647-53e9-65f0-8000-6c8f663c4f6c','1f1e6647-53d0-6f50-ffff-fc553257d448','{"v":4,"id":"1f1e6647-53e9-65f0-8000-6c8f663c4f6c","ts":"2026-11-22T11:04:16.335Z","versions_seen":{"__input__":{},"__start__":{"__start__":1}},"channel_versions":{"foo":2,"__start__":2,"branch:to:node_a":2}}','{"step":0,"source":"loop","parents":{}}'),
($1,'','1f1e6647-53f5-6940-8001-c217b744a452','1f1e6647-53e9-65f0-8000-6c8f663c4f6c','{"v":4,"id":"1f1e6647-53f5-6940-8001-c217b744a452","ts":"2026-11-22T11:04:16.340Z","versions_seen":{"node_a":{"branch:to:node_a":2},"__input__":{},"__start__":{"__start__":1}},"channel_versions":{"bar":3,"foo":3,"__start__":2,"branch:to:node_a":3,"branch:to:node_b":3}}','{"step":1,"source":"loop","parents":{}}'),
($1,'','1f1e6647-53fa-6760-8002-371ea28e3300','1f1e6647-53f5-6940-8001-c217b744a452','{"v":4,"id":"1f1e6647-53fa-6760-8002-371ea28e3300","ts":"2026-11-22T11:04:16.342Z","versions_seen":{"node_a":{"branch:to:node_a":2},"node_b":{"branch:to:node_b":3},"__input__":{},"__start__":{"__start__":1}},"channel_versions":{"bar":4,"foo":4,"__start__":2,"branch:to:node_a":3,"branch:to:node_b":4}}','{"step":2,"source":"loop","parents":{}}');
INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) VALUES
($1,'','__start__','1','json',convert_to('{"foo":""}','UTF8')),
($1,'','__start__','2','empty',NULL),
($1,'','bar','3','json',convert_to('["a"]','UTF8')),
($1,'','bar','4','json',convert_to('["a","b"]','UTF8')),
($1,'','branch:to:node_a','2','json',convert_to('null','UTF8')),
($1,'','branch:to:node_a','3','empty',NULL),
($1,'','branch:to:node_b','3','json',convert_to('null','UTF8')),
($1,'','branch:to:node_b','4','empty',NULL),
($1,'','foo','2','json',convert_to('""','UTF8')),
($1,'','foo','3','json',convert_to('"a"','UTF8')),
($1,'','foo','4','json',convert_to('"b"','UTF8'));
INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob) VALUES
($1,'','1f1e6647-53d0-6f50-ffff-fc553257d448','bc5739de-63b4-544d-83b5-bae96d5b6dbf',0,'foo','json',convert_to('""','UTF8')),
($1,'','1f1e6647-53d0-6f50-ffff-fc553257d448','bc5739de-63b4-544d-83b5-bae96d5b6dbf',1,'branch:to:node_a','json',convert_to('null','UTF8')),
($1,'','1f1e6647-53e9-65f0-8000-6c8f663c4f6c','c81d2f69-f9b8-5090-a4c5-04a4208dd009',0,'foo','json',convert_to('"a"','UTF8')),
($1,'','1f1e6647-53e9-65f0-8000-6c8f663c4f6c','c81d2f69-f9b8-5090-a4c5-04a4208dd009',1,'bar','json',convert_to('["a"]','UTF8')),
($1,'','1f1e6647-53e9-65f0-8000-6c8f663c4f6c','c81d2f69-f9b8-5090-a4c5-04a4208dd009',2,'branch:to:node_b','json',convert_to('null','UTF8')),
($1,'','1f1e6647-53f5-6940-8001-c217b744a452','89254060-84b8-50ad-88d2-f6b3df4dfd7b',0,'foo','json',convert_to('"b"','UTF8')),
($1,'','1f1e6647-53f5-6940-8001-c217b744a452','89254060-84b8-50ad-88d2-f6b3df4dfd7b',1,'bar','json',convert_to('["b"]','UTF8'));`

func insertJSRows(t *testing.T, s *servertest.Server, tid string) {
	t.Helper()
	for _, stmt := range strings.Split(jsCheckpoints, ";") {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		if _, err := s.DB.Exec(t.Context(), stmt, tid); err != nil {
			t.Fatalf("insert JS rows: %v", err)
		}
	}
}

// A thread written by LangGraph's JS saver reads as LangGraph shows it, and
// the fork that the JS saver corrupts works on its rows.
func TestJSSaverRowsReadAndFork(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	tid := newThread(t, s, "foo_bar")
	insertJSRows(t, s, tid)

	hist := history(t, s, tid, map[string]any{"limit": 10})
	wantNext := [][]string{{}, {"node_b"}, {"node_a"}, {"__start__"}}
	wantVals := []string{`{"bar":["a","b"],"foo":"b"}`, `{"bar":["a"],"foo":"a"}`, `{"bar":[],"foo":""}`, `{"bar":[]}`}
	if len(hist) != 4 {
		t.Fatalf("history = %d states", len(hist))
	}
	for i, st := range hist {
		if !reflect.DeepEqual(st.Next, wantNext[i]) || asJSON(st.Values) != wantVals[i] {
			t.Errorf("history[%d]: values %s next %v; want %s %v", i, asJSON(st.Values), st.Next, wantVals[i], wantNext[i])
		}
	}
	if hist[0].Metadata["source"] != "loop" || hist[3].Metadata["step"] != float64(-1) ||
		hist[0].ParentCheckpoint.CheckpointID != "1f1e6647-53f5-6940-8001-c217b744a452" {
		t.Fatalf("latest = %+v", hist[0])
	}
	// Pending writes of the step-1 checkpoint belong to node_b's task.
	if len(hist[1].Tasks) != 1 || hist[1].Tasks[0].Name != "node_b" || hist[1].Tasks[0].ID != "89254060-84b8-50ad-88d2-f6b3df4dfd7b" {
		t.Fatalf("tasks = %+v", hist[1].Tasks)
	}
	// A task's result is what the node wrote to state channels, not its
	// trigger writes.
	raw := s.Must(http.StatusOK, "POST", "/threads/"+tid+"/history", map[string]any{"limit": 3}).Body
	if !strings.Contains(string(raw), `"result":{"bar":["a"],"foo":"a"}`) || strings.Contains(string(raw), `"result":{"branch`) {
		t.Fatalf("task results: %s", raw)
	}
	if !strings.Contains(string(raw), `"next":[],`) || !strings.Contains(string(raw), `"tasks":[],`) {
		t.Fatalf("a state with nothing next must carry tasks []: %s", raw)
	}

	fork := update(t, s, tid, map[string]any{"values": map[string]any{"foo": "fork", "bar": []string{"f"}},
		"as_node": "node_a", "checkpoint_id": "1f1e6647-53f5-6940-8001-c217b744a452"})
	wantValues(t, getState(t, s, "/threads/"+tid+"/state/"+fork.CheckpointID), `{"bar":["a","f"],"foo":"fork"}`, "node_b")
	wantValues(t, getState(t, s, "/threads/"+tid+"/state/1f1e6647-53fa-6760-8002-371ea28e3300"), `{"bar":["a","b"],"foo":"b"}`)
	if st := getState(t, s, "/threads/"+tid+"/state"); st.Checkpoint.CheckpointID != fork.CheckpointID {
		t.Fatalf("latest = %s, want the fork", st.Checkpoint.CheckpointID)
	}
	// The thread is in the JS saver's integer version scheme: the fork
	// stays in it (so the stock JS saver can continue it) with versions
	// above every version of the thread (so it cannot reuse the other
	// branch's 4).
	var foo, fooType, start string
	if err := s.DB.QueryRow(t.Context(), `SELECT checkpoint->'channel_versions'->>'foo', jsonb_typeof(checkpoint->'channel_versions'->'foo'),
		checkpoint->'channel_versions'->>'__start__' FROM checkpoints WHERE thread_id = $1 AND checkpoint_id = $2`,
		tid, fork.CheckpointID).Scan(&foo, &fooType, &start); err != nil {
		t.Fatal(err)
	}
	if foo != "5" || fooType != "number" || start != "2" {
		t.Fatalf("fork versions: foo %s (%s), __start__ %s; want 5 (number), 2", foo, fooType, start)
	}
	// Default as_node on the JS rows is node_b (it saw the newest version).
	update(t, s, tid, map[string]any{"values": map[string]any{"foo": "y"}, "checkpoint_id": "1f1e6647-53fa-6760-8002-371ea28e3300"})
	wantValues(t, getState(t, s, "/threads/"+tid+"/state"), `{"bar":["a","b"],"foo":"y"}`)
	s.Must(http.StatusOK, "GET", "/threads/"+tid, nil)
}
