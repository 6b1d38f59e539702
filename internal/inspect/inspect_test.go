package inspect_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/builtin"
	"github.com/weftdev/weft/internal/inspect"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// graphs are the built-in graphs plus fan: START → ok, boom in parallel;
// ok writes {log: ["ok"]}, boom fails.
func graphs() *graph.Registry {
	r := builtin.Graphs()
	if err := r.Register(&graph.Graph{
		ID:       "fan",
		Channels: []graph.Channel{{Name: "log", Kind: graph.Append, Default: []any{}}},
		Nodes: []graph.Node{
			{Name: "ok", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
				return graph.State{"log": []any{"ok"}}, nil
			}},
			{Name: "boom", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
				return nil, errors.New("boom failed on purpose")
			}},
		},
		Edges: []graph.Edge{{From: graph.START, To: "ok"}, {From: graph.START, To: "boom"},
			{From: "ok", To: graph.END}, {From: "boom", To: graph.END}},
	}); err != nil {
		panic(err)
	}
	return r
}

func setup(t *testing.T) *servertest.Server {
	t.Helper()
	return servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) { c.Graphs = graphs() })
}

func decode[T any](t *testing.T, r *servertest.Response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
	return v
}

func newThread(t *testing.T, s *servertest.Server, body any) string {
	t.Helper()
	return s.Must(http.StatusOK, "POST", "/threads", body).Map(t)["thread_id"].(string)
}

func wait(t *testing.T, s *servertest.Server, tid string, body any) map[string]any {
	t.Helper()
	return s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs/wait", body).Map(t)
}

func js(v any) string { b, _ := json.Marshal(v); return string(b) }

// A thread with a run and a fork made by update_state: the tree has every
// node with its parent, source, step and run; the head is the fork; pages
// chain through next and cover the whole namespace.
func TestCheckpointTreeAcrossAFork(t *testing.T) {
	t.Parallel()
	s := setup(t)
	tid := newThread(t, s, nil)
	wait(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}})
	type snapshot struct {
		CheckpointID string         `json:"checkpoint_id"`
		Metadata     map[string]any `json:"metadata"`
	}
	hist := decode[[]snapshot](t, s.Must(http.StatusOK, "POST", "/threads/"+tid+"/history", map[string]any{"limit": 10}))
	if len(hist) != 4 {
		t.Fatalf("history: %d checkpoints", len(hist))
	}
	runID := hist[0].Metadata["run_id"].(string)
	step1 := hist[1].CheckpointID // next: node_b
	fork := s.Must(http.StatusOK, "POST", "/threads/"+tid+"/state", map[string]any{
		"values": map[string]any{"foo": "f"}, "as_node": "node_a", "checkpoint_id": step1}).Map(t)["checkpoint_id"].(string)

	page := decode[inspect.CheckpointPage](t, s.Must(http.StatusOK, "GET", "/inspect/threads/"+tid+"/checkpoints", nil))
	if page.Total != 5 || page.Head == nil || *page.Head != fork || page.Next != nil || len(page.Checkpoints) != 5 {
		t.Fatalf("page: total %d head %v next %v len %d", page.Total, page.Head, page.Next, len(page.Checkpoints))
	}
	if js(page.Namespaces) != `[""]` {
		t.Fatalf("namespaces %v", page.Namespaces)
	}
	type row struct {
		ID, Parent, Source string
		Step               int
		Run                string
		Updated            []string
	}
	got := map[string]row{}
	for _, n := range page.Checkpoints {
		r := row{ID: n.CheckpointID, Source: n.Source, Updated: n.Updated}
		if n.ParentCheckpointID != nil {
			r.Parent = *n.ParentCheckpointID
		}
		if n.Step != nil {
			r.Step = *n.Step
		}
		if n.RunID != nil {
			r.Run = *n.RunID
		}
		got[n.CheckpointID] = r
	}
	// Newest first: the fork, then the run's checkpoints.
	if page.Checkpoints[0].CheckpointID != fork {
		t.Fatalf("first node %s, want the fork %s", page.Checkpoints[0].CheckpointID, fork)
	}
	f := got[fork]
	if f.Parent != step1 || f.Source != "update" || f.Step != 2 || f.Run != "" || js(f.Updated) != `["branch:to:node_b","foo"]` {
		t.Fatalf("fork node %+v", f)
	}
	for i, want := range []struct {
		source string
		step   int
	}{{"loop", 2}, {"loop", 1}, {"loop", 0}, {"input", -1}} {
		n := got[hist[i].CheckpointID]
		if n.Source != want.source || n.Step != want.step || n.Run != runID {
			t.Fatalf("node %d: %+v, want %s step %d run %s", i, n, want.source, want.step, runID)
		}
		if i < 3 && n.Parent != hist[i+1].CheckpointID {
			t.Fatalf("node %d parent %s, want %s", i, n.Parent, hist[i+1].CheckpointID)
		}
	}
	if in := got[hist[3].CheckpointID]; in.Parent != "" || js(in.Updated) != `["__start__"]` {
		t.Fatalf("input node %+v", in)
	}
	// The step-0 checkpoint's task (node_a) wrote three writes under it.
	for _, n := range page.Checkpoints {
		if n.CheckpointID == hist[2].CheckpointID && (n.Writes != 3 || n.Tasks != 1 || n.Errors+n.Interrupts+n.Resumes != 0) {
			t.Fatalf("step 0 writes: %+v", n)
		}
	}

	// Pages of 2 chain through next and cover every node once, newest first.
	var ids []string
	before := ""
	for i := 0; i < 5; i++ {
		path := "/inspect/threads/" + tid + "/checkpoints?limit=2"
		if before != "" {
			path += "&before=" + before
		}
		p := decode[inspect.CheckpointPage](t, s.Must(http.StatusOK, "GET", path, nil))
		for _, n := range p.Checkpoints {
			ids = append(ids, n.CheckpointID)
		}
		if p.Next == nil {
			break
		}
		before = *p.Next
	}
	want := []string{fork, hist[0].CheckpointID, hist[1].CheckpointID, hist[2].CheckpointID, hist[3].CheckpointID}
	if js(ids) != js(want) {
		t.Fatalf("paged ids %v, want %v", ids, want)
	}
}

// The per-node audit view: a checkpoint's versions, blobs and writes
// decoded — a task's outputs, a failed task's __error__ next to the writes
// of the task that succeeded in the same step, an interrupt and its resume.
func TestCheckpointDetailWrites(t *testing.T) {
	t.Parallel()
	s := setup(t)

	// fan: ok and boom run in the same step; boom fails, ok's write stays.
	tid := newThread(t, s, nil)
	out := wait(t, s, tid, map[string]any{"assistant_id": "fan", "input": map[string]any{}})
	if out["__error__"] == nil {
		t.Fatalf("fan did not fail: %v", out)
	}
	page := decode[inspect.CheckpointPage](t, s.Must(http.StatusOK, "GET", "/inspect/threads/"+tid+"/checkpoints", nil))
	var failed *inspect.CheckpointNode
	for i, n := range page.Checkpoints {
		if n.Errors > 0 {
			failed = &page.Checkpoints[i]
		}
	}
	if failed == nil || failed.Tasks != 2 {
		t.Fatalf("no checkpoint with an error write and two tasks: %s", js(page.Checkpoints))
	}
	d := decode[inspect.CheckpointDetail](t, s.Must(http.StatusOK, "GET", "/inspect/threads/"+tid+"/checkpoints/"+failed.CheckpointID, nil))
	var errWrite, okWrite *inspect.WriteInfo
	for i, w := range d.Writes {
		switch w.Channel {
		case "__error__":
			errWrite = &d.Writes[i]
		case "log":
			okWrite = &d.Writes[i]
		}
	}
	if errWrite == nil || errWrite.Idx != -1 || !strings.Contains(js(errWrite.Value), "boom failed on purpose") || errWrite.Bytes <= 0 {
		t.Fatalf("error write: %s", js(d.Writes))
	}
	if okWrite == nil || js(okWrite.Value) != `["ok"]` || okWrite.TaskID == errWrite.TaskID || okWrite.Type != "json" {
		t.Fatalf("the successful task's write: %s", js(d.Writes))
	}

	// hitl: the interrupt write, then the resume write, under the same checkpoint.
	h := newThread(t, s, nil)
	wait(t, s, h, map[string]any{"assistant_id": "hitl", "input": map[string]any{"input": "x"}})
	state := s.Must(http.StatusOK, "GET", "/threads/"+h+"/state", nil).Map(t)
	cid := state["checkpoint"].(map[string]any)["checkpoint_id"].(string)
	wait(t, s, h, map[string]any{"assistant_id": "hitl", "command": map[string]any{"resume": "ok"}})
	d = decode[inspect.CheckpointDetail](t, s.Must(http.StatusOK, "GET", "/inspect/threads/"+h+"/checkpoints/"+cid, nil))
	channels := map[string]inspect.WriteInfo{}
	for _, w := range d.Writes {
		channels[w.Channel] = w
	}
	if iw, ok := channels["__interrupt__"]; !ok || iw.Idx != -3 || !strings.Contains(js(iw.Value), `"question":"approve?"`) {
		t.Fatalf("interrupt write: %s", js(d.Writes))
	}
	if rw, ok := channels["__resume__"]; !ok || rw.Idx != -4 || !strings.Contains(js(rw.Value), `"ok"`) {
		t.Fatalf("resume write: %s", js(d.Writes))
	}
	if ans, ok := channels["answer"]; !ok || js(ans.Value) != `"ok"` {
		t.Fatalf("ask's answer write: %s", js(d.Writes))
	}
	// Versions: the step's changes against the parent, versions_seen per node,
	// a blob for every channel version.
	if d.ParentCheckpointID == nil || d.ParentChannelVersions == nil || len(d.Changes) == 0 {
		t.Fatalf("parent versions: %s", js(d))
	}
	for _, c := range d.Changes {
		if c.To == nil || d.ChannelVersions[c.Channel] != *c.To || (c.From != nil && d.ParentChannelVersions[c.Channel] != *c.From) {
			t.Fatalf("change %s does not match the versions: %s", js(c), js(d))
		}
	}
	if _, ok := d.VersionsSeen["prepare"]; !ok {
		t.Fatalf("versions_seen: %s", js(d.VersionsSeen))
	}
	if len(d.Blobs) != len(d.ChannelVersions) {
		t.Fatalf("blobs %s for versions %s", js(d.Blobs), js(d.ChannelVersions))
	}
	for _, b := range d.Blobs {
		if d.ChannelVersions[b.Channel] != b.Version || !slices.Contains([]string{"json", "weft_list", "inline", "empty"}, b.Type) {
			t.Fatalf("blob %s", js(b))
		}
	}
	if !slices.IsSortedFunc(d.Blobs, func(a, b inspect.BlobInfo) int { return strings.Compare(a.Channel, b.Channel) }) {
		t.Fatalf("blobs not sorted: %s", js(d.Blobs))
	}
	if len(d.Children) != 1 {
		t.Fatalf("children %v", d.Children)
	}

	// Errors: unknown checkpoint, unknown thread, bad ids.
	for path, want := range map[string]int{
		"/inspect/threads/" + h + "/checkpoints/nope":                               http.StatusNotFound,
		"/inspect/threads/01a2123d-c7b2-7ac0-a652-490a5d52a1a9/checkpoints/x":       http.StatusNotFound,
		"/inspect/threads/01a2123d-c7b2-7ac0-a652-490a5d52a1a9/checkpoints":         http.StatusNotFound,
		"/inspect/threads/not-a-uuid/checkpoints":                                   http.StatusUnprocessableEntity,
		"/inspect/threads/" + h + "/checkpoints/" + cid + "?checkpoint_ns=%00":      http.StatusUnprocessableEntity,
		"/inspect/threads/" + h + "/checkpoints?limit=0":                            http.StatusUnprocessableEntity,
		"/inspect/threads/" + h + "/checkpoints?before=" + strings.Repeat("x", 600): http.StatusUnprocessableEntity,
	} {
		if r := s.Do("GET", path, nil); r.Status != want || r.Detail(t) == "" {
			t.Errorf("GET %s: %d %s, want %d with a detail", path, r.Status, r.Body, want)
		}
	}
}

// Storage sums each thread's rows of the four tables, as the database
// measures them, with its children and runs; unknown ids are left out.
func TestThreadStorage(t *testing.T) {
	t.Parallel()
	s := setup(t)
	parent := newThread(t, s, nil)
	child := newThread(t, s, map[string]any{"parent_thread_id": parent})
	empty := newThread(t, s, nil)
	wait(t, s, parent, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}})
	wait(t, s, parent, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}})
	wait(t, s, child, map[string]any{"assistant_id": "echo_chat", "input": map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}})

	unknown := "01a2123d-c7b2-7ac0-a652-490a5d52a1a9"
	list := decode[[]inspect.ThreadStorage](t, s.Must(http.StatusOK, "GET",
		"/inspect/threads/storage?thread_id="+child+","+unknown+"&thread_id="+parent+"&thread_id="+empty, nil))
	if len(list) != 3 || list[0].ThreadID.String() != child || list[1].ThreadID.String() != parent || list[2].ThreadID.String() != empty {
		t.Fatalf("order or unknown id: %s", js(list))
	}
	for _, got := range list {
		id := got.ThreadID.String()
		var want inspect.ThreadStorage
		ctx := context.Background()
		q := func(sql string, dst ...any) {
			if err := s.DB.QueryRow(ctx, sql, id).Scan(dst...); err != nil {
				t.Fatal(err)
			}
		}
		q(`SELECT count(*), coalesce(sum(pg_column_size(checkpoint) + pg_column_size(metadata)), 0) FROM checkpoints WHERE thread_id = $1`, &want.Checkpoints.Rows, &want.Checkpoints.Bytes)
		q(`SELECT count(*), coalesce(sum(pg_column_size(blob)), 0) FROM checkpoint_blobs WHERE thread_id = $1`, &want.Blobs.Rows, &want.Blobs.Bytes)
		q(`SELECT count(*), coalesce(sum(pg_column_size(blob)), 0) FROM checkpoint_writes WHERE thread_id = $1`, &want.Writes.Rows, &want.Writes.Bytes)
		q(`SELECT count(*), coalesce(sum(pg_column_size(data) + coalesce(pg_column_size(ref), 0)), 0) FROM run_events WHERE thread_id = $1::uuid`, &want.RunEvents.Rows, &want.RunEvents.Bytes)
		want.ThreadID, want.Children, want.Runs = got.ThreadID, got.Children, got.Runs
		want.TotalBytes = want.Checkpoints.Bytes + want.Blobs.Bytes + want.Writes.Bytes + want.RunEvents.Bytes
		if js(got) != js(want) {
			t.Errorf("thread %s: %s, want %s", id, js(got), js(want))
		}
	}
	if p := list[1]; p.Children != 1 || p.Runs != 2 || p.Checkpoints.Rows != 8 || p.RunEvents.Rows == 0 || p.TotalBytes == 0 {
		t.Errorf("parent: %s", js(p))
	}
	if e := list[2]; e.Children != 0 || e.Runs != 0 || e.TotalBytes != 0 {
		t.Errorf("empty thread: %s", js(e))
	}
	for _, q := range []string{"", "?thread_id=x", "?thread_id=" + strings.Repeat(parent+",", 101)} {
		if r := s.Do("GET", "/inspect/threads/storage"+q, nil); r.Status != http.StatusUnprocessableEntity {
			t.Errorf("storage%s: %d %s", q, r.Status, r.Body)
		}
	}
}

// Run summaries carry timings, the error, the checkpoint a run forked from,
// whether it resumed, and its event count; pages chain by offset.
func TestRunSummaries(t *testing.T) {
	t.Parallel()
	s := setup(t)
	tid := newThread(t, s, nil)
	t0 := time.Now().Add(-time.Minute)
	wait(t, s, tid, map[string]any{"assistant_id": "hitl", "input": map[string]any{"input": "x"}})
	wait(t, s, tid, map[string]any{"assistant_id": "hitl", "command": map[string]any{"resume": "yes"}})
	hist := decode[[]map[string]any](t, s.Must(http.StatusOK, "POST", "/threads/"+tid+"/history", map[string]any{"limit": 100}))
	first := hist[len(hist)-1]["checkpoint_id"].(string)
	wait(t, s, tid, map[string]any{"assistant_id": "hitl", "checkpoint_id": first, "input": nil})

	list := decode[[]inspect.RunSummary](t, s.Must(http.StatusOK, "GET", "/inspect/threads/"+tid+"/runs", nil))
	if len(list) != 3 {
		t.Fatalf("runs: %s", js(list))
	}
	replay, resume, start := list[0], list[1], list[2]
	if replay.CheckpointID == nil || *replay.CheckpointID != first || replay.Resume {
		t.Errorf("replay: %s", js(replay))
	}
	if !resume.Resume || resume.CheckpointID != nil || start.Resume {
		t.Errorf("resume flags: %s / %s", js(resume), js(start))
	}
	for _, r := range list {
		if r.Status != "success" || r.GraphID != "hitl" || r.MultitaskStrategy != "enqueue" || r.Attempt != 1 ||
			r.StartedAt.Before(t0) || r.FinishedAt.Before(r.StartedAt.Time) || r.CreatedAt.After(r.StartedAt.Time) || r.Events < 2 || string(r.Error) != "null" {
			t.Errorf("run %s", js(r))
		}
		var last int64
		if err := s.DB.QueryRow(context.Background(), `SELECT max(seq) FROM run_events WHERE run_id = $1`, r.RunID).Scan(&last); err != nil || last != r.Events {
			t.Errorf("run %s events %d, log has %d (%v)", r.RunID, r.Events, last, err)
		}
	}
	one := decode[inspect.RunSummary](t, s.Must(http.StatusOK, "GET", "/inspect/threads/"+tid+"/runs/"+resume.RunID.String(), nil))
	if js(one) != js(resume) {
		t.Errorf("one run %s, in the list %s", js(one), js(resume))
	}
	// A failed run has its error.
	fan := newThread(t, s, nil)
	wait(t, s, fan, map[string]any{"assistant_id": "fan", "input": map[string]any{}})
	failed := decode[[]inspect.RunSummary](t, s.Must(http.StatusOK, "GET", "/inspect/threads/"+fan+"/runs", nil))
	if len(failed) != 1 || failed[0].Status != "error" || !strings.Contains(string(failed[0].Error), "boom failed on purpose") {
		t.Errorf("failed run: %s", js(failed))
	}

	r := s.Must(http.StatusOK, "GET", "/inspect/threads/"+tid+"/runs?limit=2", nil)
	if r.Header.Get("X-Pagination-Next") != "2" || len(decode[[]inspect.RunSummary](t, r)) != 2 {
		t.Errorf("page 1: next %q %s", r.Header.Get("X-Pagination-Next"), r.Body)
	}
	r = s.Must(http.StatusOK, "GET", "/inspect/threads/"+tid+"/runs?limit=2&offset=2", nil)
	if r.Header.Get("X-Pagination-Next") != "" || len(decode[[]inspect.RunSummary](t, r)) != 1 {
		t.Errorf("page 2: next %q %s", r.Header.Get("X-Pagination-Next"), r.Body)
	}
	for path, want := range map[string]int{
		"/inspect/threads/" + tid + "/runs/" + fan:                   http.StatusNotFound,
		"/inspect/threads/" + fan + "/runs/" + resume.RunID.String(): http.StatusNotFound,
		"/inspect/threads/01a2123d-c7b2-7ac0-a652-490a5d52a1a9/runs": http.StatusNotFound,
		"/inspect/threads/" + tid + "/runs/nope":                     http.StatusUnprocessableEntity,
		"/inspect/threads/" + tid + "/runs?offset=-1":                http.StatusUnprocessableEntity,
	} {
		if r := s.Do("GET", path, nil); r.Status != want {
			t.Errorf("GET %s: %d %s, want %d", path, r.Status, r.Body, want)
		}
	}
}
