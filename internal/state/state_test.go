package state_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server/servertest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

type ref struct {
	ThreadID     string `json:"thread_id"`
	NS           string `json:"checkpoint_ns"`
	CheckpointID string `json:"checkpoint_id"`
}

type task struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Error      *string
	Interrupts []any `json:"interrupts"`
}

type threadState struct {
	Values           map[string]any `json:"values"`
	Next             []string       `json:"next"`
	Checkpoint       *ref           `json:"checkpoint"`
	Metadata         map[string]any `json:"metadata"`
	CreatedAt        *string        `json:"created_at"`
	ParentCheckpoint *ref           `json:"parent_checkpoint"`
	Tasks            []task         `json:"tasks"`
	Interrupts       []any          `json:"interrupts"`
}

type updateResp struct {
	Checkpoint   ref    `json:"checkpoint"`
	Configurable ref    `json:"configurable"`
	CheckpointID string `json:"checkpoint_id"`
}

func newThread(t *testing.T, s *servertest.Server, graphID string) string {
	t.Helper()
	md := map[string]any{}
	if graphID != "" {
		md["graph_id"] = graphID
	}
	return s.Must(http.StatusOK, "POST", "/threads", map[string]any{"metadata": md}).Map(t)["thread_id"].(string)
}

func update(t *testing.T, s *servertest.Server, tid string, body map[string]any) updateResp {
	t.Helper()
	var u updateResp
	s.Must(http.StatusOK, "POST", "/threads/"+tid+"/state", body).JSON(t, &u)
	if u.CheckpointID == "" || u.Checkpoint.CheckpointID != u.CheckpointID || u.Configurable != u.Checkpoint || u.Checkpoint.ThreadID != tid {
		t.Fatalf("update response = %+v", u)
	}
	return u
}

func getState(t *testing.T, s *servertest.Server, path string) threadState {
	t.Helper()
	var st threadState
	s.Must(http.StatusOK, "GET", path, nil).JSON(t, &st)
	return st
}

func history(t *testing.T, s *servertest.Server, tid string, body any) []threadState {
	t.Helper()
	var list []threadState
	s.Must(http.StatusOK, "POST", "/threads/"+tid+"/history", body).JSON(t, &list)
	return list
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func wantValues(t *testing.T, st threadState, want string, next ...string) {
	t.Helper()
	if got := asJSON(st.Values); got != want {
		t.Fatalf("values = %s, want %s", got, want)
	}
	if next == nil {
		next = []string{}
	}
	if !reflect.DeepEqual(st.Next, next) {
		t.Fatalf("next = %v, want %v", st.Next, next)
	}
}

// fooBarRun plays the foo_bar graph's run through update_state, one
// checkpoint per node, and returns the checkpoint ids (input, after node_a,
// after node_b).
func fooBarRun(t *testing.T, s *servertest.Server, tid string) []string {
	t.Helper()
	c0 := update(t, s, tid, map[string]any{"values": map[string]any{"foo": ""}, "as_node": "__start__"})
	c1 := update(t, s, tid, map[string]any{"values": map[string]any{"foo": "a", "bar": []string{"a"}}, "as_node": "node_a"})
	c2 := update(t, s, tid, map[string]any{"values": map[string]any{"foo": "b", "bar": []string{"b"}}, "as_node": "node_b"})
	return []string{c0.CheckpointID, c1.CheckpointID, c2.CheckpointID}
}

func TestEmptyThreadState(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	tid := newThread(t, s, "")
	raw := s.Must(http.StatusOK, "GET", "/threads/"+tid+"/state", nil).Map(t)
	want := map[string]any{"values": map[string]any{}, "next": []any{}, "checkpoint": nil, "metadata": nil,
		"created_at": nil, "parent_checkpoint": nil, "tasks": []any{}, "interrupts": []any{}}
	if !reflect.DeepEqual(raw, want) {
		t.Fatalf("empty state = %v", raw)
	}
	if got := string(s.Must(http.StatusOK, "POST", "/threads/"+tid+"/history", nil).Body); strings.TrimSpace(got) != "[]" {
		t.Fatalf("empty history = %s", got)
	}
	s.Must(http.StatusNotFound, "GET", "/threads/"+uuid.NewString()+"/state", nil)
	s.Must(http.StatusNotFound, "POST", "/threads/"+uuid.NewString()+"/history", nil)
	s.Must(http.StatusUnprocessableEntity, "GET", "/threads/nope/state", nil)
	s.Must(http.StatusNotFound, "GET", "/threads/"+tid+"/state/1f1e6647-53d0-6f50-ffff-fc553257d448", nil)
	s.Must(http.StatusUnprocessableEntity, "GET", "/threads/"+tid+"/state/not-a-checkpoint", nil)
}

func TestUpdateStateWalksTheGraph(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	tid := newThread(t, s, "foo_bar")
	ids := fooBarRun(t, s, tid)

	wantValues(t, getState(t, s, "/threads/"+tid+"/state/"+ids[0]), `{"bar":[],"foo":""}`, "node_a")
	wantValues(t, getState(t, s, "/threads/"+tid+"/state/"+ids[1]), `{"bar":["a"],"foo":"a"}`, "node_b")
	latest := getState(t, s, "/threads/"+tid+"/state")
	wantValues(t, latest, `{"bar":["a","b"],"foo":"b"}`)
	if latest.Checkpoint.CheckpointID != ids[2] || latest.ParentCheckpoint.CheckpointID != ids[1] ||
		latest.Metadata["source"] != "update" || latest.Metadata["step"] != float64(2) || latest.CreatedAt == nil {
		t.Fatalf("latest = %+v", latest)
	}
	// The thread row projects the latest state.
	th := s.Must(http.StatusOK, "GET", "/threads/"+tid, nil).Map(t)
	if asJSON(th["values"]) != `{"bar":["a","b"],"foo":"b"}` || th["status"] != "idle" || th["state_updated_at"] == nil {
		t.Fatalf("thread projection = %v", th)
	}
	// Without as_node the update is attributed to the node that ran last
	// (node_b), so nothing is scheduled after it.
	update(t, s, tid, map[string]any{"values": map[string]any{"foo": "x", "bar": []string{"c"}}})
	wantValues(t, getState(t, s, "/threads/"+tid+"/state"), `{"bar":["a","b","c"],"foo":"x"}`)
	// A state with next non-empty makes the thread "interrupted".
	update(t, s, tid, map[string]any{"values": nil, "as_node": "node_a"})
	st := getState(t, s, "/threads/"+tid+"/state")
	wantValues(t, st, `{"bar":["a","b","c"],"foo":"x"}`, "node_b")
	if len(st.Tasks) != 1 || st.Tasks[0].Name != "node_b" || st.Tasks[0].ID == "" {
		t.Fatalf("tasks = %+v", st.Tasks)
	}
	if th := s.Must(http.StatusOK, "GET", "/threads/"+tid, nil).Map(t); th["status"] != "interrupted" {
		t.Fatalf("status = %v", th["status"])
	}
	var found []map[string]any
	s.Must(http.StatusOK, "POST", "/threads/search", map[string]any{"values": map[string]any{"foo": "x"}}).JSON(t, &found)
	if len(found) != 1 || found[0]["thread_id"] != tid {
		t.Fatalf("values search = %v", found)
	}
}

// The fork scenario of reference/checkpoint/ROWS.md §3, which the stock JS
// saver gets wrong: update_state on the step-1 checkpoint as node_a.
func TestForkFromAnOlderCheckpointKeepsItsValues(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	tid := newThread(t, s, "foo_bar")
	ids := fooBarRun(t, s, tid)
	fork := update(t, s, tid, map[string]any{"values": map[string]any{"foo": "fork", "bar": []string{"f"}},
		"as_node": "node_a", "checkpoint_id": ids[1]})

	st := getState(t, s, "/threads/"+tid+"/state")
	wantValues(t, st, `{"bar":["a","f"],"foo":"fork"}`, "node_b")
	if st.Checkpoint.CheckpointID != fork.CheckpointID || st.ParentCheckpoint.CheckpointID != ids[1] {
		t.Fatalf("latest is not the fork: %+v", st)
	}
	wantValues(t, getState(t, s, "/threads/"+tid+"/state/"+ids[2]), `{"bar":["a","b"],"foo":"b"}`)
	// Forking again from the same checkpoint (the base given as a
	// Checkpoint object) makes a sibling that keeps its own values too.
	sib := update(t, s, tid, map[string]any{"values": map[string]any{"foo": "sib", "bar": []string{"s"}},
		"as_node": "node_a", "checkpoint": map[string]any{"checkpoint_id": ids[1]}})
	wantValues(t, getState(t, s, "/threads/"+tid+"/state/"+sib.CheckpointID), `{"bar":["a","s"],"foo":"sib"}`, "node_b")
	wantValues(t, getState(t, s, "/threads/"+tid+"/state/"+fork.CheckpointID), `{"bar":["a","f"],"foo":"fork"}`, "node_b")
	// __copy__ forks without changes.
	cp := update(t, s, tid, map[string]any{"as_node": "__copy__", "checkpoint_id": ids[0]})
	c := getState(t, s, "/threads/"+tid+"/state/"+cp.CheckpointID)
	wantValues(t, c, `{"bar":[],"foo":""}`, "node_a")
	if c.Metadata["source"] != "fork" {
		t.Fatalf("copy metadata = %v", c.Metadata)
	}
}

func TestHistoryPagesNewestFirst(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	tid := newThread(t, s, "foo_bar")
	ids := fooBarRun(t, s, tid)
	ids = append(ids, update(t, s, tid, map[string]any{"values": map[string]any{"foo": "z"}}).CheckpointID)
	slices.Reverse(ids) // newest first

	all := history(t, s, tid, map[string]any{"limit": 10})
	if len(all) != 4 {
		t.Fatalf("history has %d states", len(all))
	}
	for i, st := range all {
		if st.Checkpoint.CheckpointID != ids[i] {
			t.Fatalf("history[%d] = %s, want %s", i, st.Checkpoint.CheckpointID, ids[i])
		}
		if i+1 < len(all) && st.ParentCheckpoint.CheckpointID != ids[i+1] {
			t.Fatalf("history[%d] parent = %v", i, st.ParentCheckpoint)
		}
	}
	if all[3].ParentCheckpoint != nil || !reflect.DeepEqual(all[2].Next, []string{"node_b"}) {
		t.Fatalf("oldest = %+v, third = %+v", all[3], all[2])
	}
	// Pages: limit + before, in each form the SDKs send.
	for _, before := range []any{ids[1], map[string]any{"checkpoint_id": ids[1]},
		map[string]any{"configurable": map[string]any{"checkpoint_id": ids[1]}}} {
		page := history(t, s, tid, map[string]any{"limit": 1, "before": before})
		if len(page) != 1 || page[0].Checkpoint.CheckpointID != ids[2] {
			t.Fatalf("before %v: %v", before, page)
		}
	}
	var got []threadState
	s.Must(http.StatusOK, "GET", "/threads/"+tid+"/history?limit=2&before="+ids[0], nil).JSON(t, &got)
	if len(got) != 2 || got[0].Checkpoint.CheckpointID != ids[1] || got[1].Checkpoint.CheckpointID != ids[2] {
		t.Fatalf("GET history page = %v", got)
	}
	// Metadata filter: only step 1.
	page := history(t, s, tid, map[string]any{"metadata": map[string]any{"step": 1}})
	if len(page) != 1 || page[0].Checkpoint.CheckpointID != ids[2] {
		t.Fatalf("metadata filter = %v", page)
	}
	for _, bad := range []any{map[string]any{"limit": 0.5}, map[string]any{"limit": 5000}, map[string]any{"before": 7},
		map[string]any{"before": "garbage"}} {
		if r := s.Do("POST", "/threads/"+tid+"/history", bad); r.Status != http.StatusUnprocessableEntity {
			t.Errorf("history %v: %d %s", bad, r.Status, r.Body)
		}
	}
	// POST /state/checkpoint reads any checkpoint.
	var st threadState
	s.Must(http.StatusOK, "POST", "/threads/"+tid+"/state/checkpoint",
		map[string]any{"checkpoint": map[string]any{"checkpoint_id": ids[3], "checkpoint_ns": ""}}).JSON(t, &st)
	wantValues(t, st, `{"bar":[],"foo":""}`, "node_a")
	s.Must(http.StatusUnprocessableEntity, "POST", "/threads/"+tid+"/state/checkpoint", map[string]any{})
}

func TestUpdateStateErrors(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	none := newThread(t, s, "")
	r := s.Do("POST", "/threads/"+none+"/state", map[string]any{"values": map[string]any{"foo": "a"}})
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Detail(t), "graph_id") {
		t.Fatalf("no graph: %d %s", r.Status, r.Body)
	}
	unknown := newThread(t, s, "does_not_exist")
	if r := s.Do("POST", "/threads/"+unknown+"/state", map[string]any{}); r.Status != http.StatusBadRequest ||
		!strings.Contains(r.Detail(t), "does_not_exist") {
		t.Fatalf("unknown graph: %d %s", r.Status, r.Body)
	}
	tid := newThread(t, s, "foo_bar")
	cases := []struct {
		body   any
		status int
		detail string
	}{
		{map[string]any{"values": map[string]any{"baz": 1}}, 422, `no channel "baz"`},
		{map[string]any{"values": map[string]any{"bar": "not a list"}}, 422, "bar"},
		{map[string]any{"values": "text"}, 422, "values"},
		{map[string]any{"values": map[string]any{"foo": "a"}, "as_node": "node_z"}, 400, "node_z"},
		{map[string]any{"values": map[string]any{"foo": "a"}, "checkpoint_id": "1f1e6647-53d0-6f50-ffff-fc553257d448"}, 404, "not found"},
		{map[string]any{"values": map[string]any{"foo": "a"}, "checkpoint_id": "xyz"}, 422, "checkpoint ID"},
		// A subgraph's namespace: this server's graphs have none.
		{map[string]any{"values": map[string]any{"foo": "a"}, "checkpoint": map[string]any{"checkpoint_ns": "sub:1"}}, 404, "sub:1"},
		{`{"values": {`, 422, "Invalid JSON"},
	}
	for _, c := range cases {
		r := s.Do("POST", "/threads/"+tid+"/state", c.body)
		if r.Status != c.status || !strings.Contains(r.Detail(t), c.detail) {
			t.Errorf("%v: %d %s; want %d mentioning %q", c.body, r.Status, r.Body, c.status, c.detail)
		}
	}
	if got := history(t, s, tid, nil); len(got) != 0 {
		t.Fatalf("rejected updates wrote %d checkpoints", len(got))
	}
	// Busy (a run is active): 409, nothing written.
	if _, err := s.DB.Exec(t.Context(), `UPDATE threads SET status = 'busy' WHERE thread_id = $1`, tid); err != nil {
		t.Fatal(err)
	}
	if r := s.Do("POST", "/threads/"+tid+"/state", map[string]any{"values": map[string]any{"foo": "a"}}); r.Status != http.StatusConflict {
		t.Fatalf("busy: %d %s", r.Status, r.Body)
	}
	s.Must(http.StatusNotFound, "POST", "/threads/"+uuid.NewString()+"/state", map[string]any{})
}

func TestUpdateStateThroughMessageReducer(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	tid := newThread(t, s, "echo_chat")
	update(t, s, tid, map[string]any{"values": map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi", "id": "m1"}}}})
	update(t, s, tid, map[string]any{"values": map[string]any{"messages": []any{"second"}}, "as_node": "echo"})
	// Same id replaces in place.
	update(t, s, tid, map[string]any{"values": map[string]any{"messages": []any{map[string]any{"type": "human", "content": "hi!", "id": "m1"}}}, "as_node": "echo"})
	st := getState(t, s, "/threads/"+tid+"/state")
	msgs, _ := st.Values["messages"].([]any)
	if len(msgs) != 2 {
		t.Fatalf("messages = %v", st.Values)
	}
	first, second := msgs[0].(map[string]any), msgs[1].(map[string]any)
	if first["id"] != "m1" || first["type"] != "human" || first["content"] != "hi!" {
		t.Fatalf("first = %v", first)
	}
	if second["type"] != "human" || second["content"] != "second" || second["id"] == "" || second["id"] == nil {
		t.Fatalf("second = %v", second)
	}
	// hitl: updating as prepare schedules ask.
	h := newThread(t, s, "hitl")
	update(t, s, h, map[string]any{"values": map[string]any{"input": "x"}, "as_node": "prepare"})
	wantValues(t, getState(t, s, "/threads/"+h+"/state"), `{"input":"x"}`, "ask")
}

// Concurrent update_state calls on one thread serialise: each gets its own
// checkpoint, the checkpoints form one chain, and no update is lost.
func TestConcurrentUpdatesSerialize(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	tid := newThread(t, s, "foo_bar")
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := range n {
		wg.Go(func() {
			r, err := s.Try("POST", "/threads/"+tid+"/state", map[string]any{
				"values": map[string]any{"bar": []string{fmt.Sprintf("u%02d", i)}}, "as_node": "node_b"})
			if err != nil || r.Status != http.StatusOK {
				errs <- fmt.Sprintf("update %d: %v %v", i, err, r)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	st := getState(t, s, "/threads/"+tid+"/state")
	var got []string
	for _, v := range st.Values["bar"].([]any) {
		got = append(got, v.(string))
	}
	sort.Strings(got)
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("u%02d", i))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("bar = %v; lost updates", got)
	}
	all := history(t, s, tid, map[string]any{"limit": 100})
	if len(all) != n {
		t.Fatalf("%d checkpoints for %d updates", len(all), n)
	}
	for i := 0; i+1 < len(all); i++ {
		if all[i].ParentCheckpoint == nil || all[i].ParentCheckpoint.CheckpointID != all[i+1].Checkpoint.CheckpointID {
			t.Fatalf("history is not a chain at %d", i)
		}
		if len(all[i].Values["bar"].([]any)) != n-i {
			t.Fatalf("checkpoint %d has %d items", i, len(all[i].Values["bar"].([]any)))
		}
	}
}

func TestCopyAndDeleteCarryCheckpoints(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	tid := newThread(t, s, "foo_bar")
	fooBarRun(t, s, tid)
	cp := s.Must(http.StatusOK, "POST", "/threads/"+tid+"/copy", nil).Map(t)
	cid := cp["thread_id"].(string)
	if cid == tid || asJSON(cp["metadata"]) != `{"graph_id":"foo_bar"}` || asJSON(cp["values"]) != `{"bar":["a","b"],"foo":"b"}` {
		t.Fatalf("copy = %v", cp)
	}
	orig, copied := history(t, s, tid, nil), history(t, s, cid, nil)
	if len(copied) != 3 || len(orig) != 3 {
		t.Fatalf("history lengths %d / %d", len(orig), len(copied))
	}
	for i := range orig {
		if asJSON(orig[i].Values) != asJSON(copied[i].Values) || copied[i].Checkpoint.ThreadID != cid {
			t.Fatalf("copy differs at %d: %v vs %v", i, orig[i], copied[i])
		}
	}
	// The copy lives on its own.
	update(t, s, cid, map[string]any{"values": map[string]any{"foo": "copy"}})
	wantValues(t, getState(t, s, "/threads/"+tid+"/state"), `{"bar":["a","b"],"foo":"b"}`)
	s.Must(http.StatusConflict, "POST", "/threads/"+uuid.NewString()+"/copy", nil) // as the official servers answer

	s.Must(http.StatusNoContent, "DELETE", "/threads/"+tid, nil)
	for _, table := range []string{"checkpoints", "checkpoint_blobs"} {
		var n int
		if err := s.DB.QueryRow(t.Context(), `SELECT count(*) FROM `+table+` WHERE thread_id = $1`, tid).Scan(&n); err != nil || n != 0 {
			t.Fatalf("%s rows left after delete: %d (%v)", table, n, err)
		}
		if err := s.DB.QueryRow(t.Context(), `SELECT count(*) FROM `+table+` WHERE thread_id = $1`, cid).Scan(&n); err != nil || n == 0 {
			t.Fatalf("%s rows of the copy: %d (%v)", table, n, err)
		}
	}
}

func TestPatchStateMergesCheckpointMetadata(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	tid := newThread(t, s, "foo_bar")
	ids := fooBarRun(t, s, tid)
	s.Must(http.StatusNoContent, "PATCH", "/threads/"+tid+"/state", map[string]any{"metadata": map[string]any{"label": "good"}})
	s.Must(http.StatusNoContent, "PATCH", "/threads/"+tid+"/state", map[string]any{"metadata": map[string]any{"label": "first"}, "checkpoint_id": ids[0]})
	if st := getState(t, s, "/threads/"+tid+"/state"); st.Metadata["label"] != "good" || st.Metadata["source"] != "update" {
		t.Fatalf("latest metadata = %v", st.Metadata)
	}
	if st := getState(t, s, "/threads/"+tid+"/state/"+ids[0]); st.Metadata["label"] != "first" {
		t.Fatalf("first metadata = %v", st.Metadata)
	}
	s.Must(http.StatusNotFound, "PATCH", "/threads/"+newThread(t, s, "")+"/state", map[string]any{"metadata": map[string]any{}})
}

func TestPrune(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	keep := newThread(t, s, "foo_bar")
	fooBarRun(t, s, keep)
	child := s.Must(http.StatusOK, "POST", "/threads", map[string]any{"parent_thread_id": keep}).Map(t)["thread_id"].(string)
	gone := newThread(t, s, "foo_bar")
	fooBarRun(t, s, gone)
	before := getState(t, s, "/threads/"+keep+"/state")

	var res struct {
		PrunedCount int `json:"pruned_count"`
	}
	s.Must(http.StatusOK, "POST", "/threads/prune", map[string]any{"thread_ids": []string{keep, uuid.NewString()}, "strategy": "keep_latest"}).JSON(t, &res)
	if res.PrunedCount != 1 {
		t.Fatalf("keep_latest pruned %d", res.PrunedCount)
	}
	after := getState(t, s, "/threads/"+keep+"/state")
	if asJSON(after.Values) != asJSON(before.Values) || after.Checkpoint.CheckpointID != before.Checkpoint.CheckpointID {
		t.Fatalf("latest state changed: %+v", after)
	}
	if h := history(t, s, keep, nil); len(h) != 1 {
		t.Fatalf("history after keep_latest = %d states", len(h))
	}
	var blobs int
	if err := s.DB.QueryRow(t.Context(), `SELECT count(*) FROM checkpoint_blobs WHERE thread_id = $1`, keep).Scan(&blobs); err != nil || blobs > 4 {
		t.Fatalf("%d blobs left for one checkpoint (%v)", blobs, err)
	}
	// The kept checkpoint still works as a base.
	update(t, s, keep, map[string]any{"values": map[string]any{"bar": []string{"c"}}})
	wantValues(t, getState(t, s, "/threads/"+keep+"/state"), `{"bar":["a","b","c"],"foo":"b"}`)

	s.Must(http.StatusOK, "POST", "/threads/prune", map[string]any{"thread_ids": []string{gone, keep}}).JSON(t, &res)
	if res.PrunedCount != 2 {
		t.Fatalf("delete pruned %d", res.PrunedCount)
	}
	s.Must(http.StatusNotFound, "GET", "/threads/"+gone, nil)
	s.Must(http.StatusNotFound, "GET", "/threads/"+keep, nil)
	if c := s.Must(http.StatusOK, "GET", "/threads/"+child, nil).Map(t); c["parent_thread_id"] != nil {
		t.Fatalf("child of a pruned thread kept its parent: %v", c)
	}
	for _, bad := range []any{map[string]any{}, map[string]any{"thread_ids": []string{"x"}},
		map[string]any{"thread_ids": []string{}, "strategy": "shred"}} {
		if r := s.Do("POST", "/threads/prune", bad); r.Status != http.StatusUnprocessableEntity {
			t.Errorf("prune %v: %d %s", bad, r.Status, r.Body)
		}
	}
}

// POST /threads with supersteps applies them in the creating transaction.
func TestCreateWithSupersteps(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	th := s.Must(http.StatusOK, "POST", "/threads", map[string]any{
		"metadata": map[string]any{"graph_id": "foo_bar"},
		"supersteps": []any{
			map[string]any{"updates": []any{map[string]any{"values": map[string]any{"foo": ""}, "as_node": "__start__"}}},
			map[string]any{"updates": []any{map[string]any{"values": map[string]any{"foo": "a", "bar": []string{"a"}}, "as_node": "node_a"}}},
		},
	}).Map(t)
	tid := th["thread_id"].(string)
	if asJSON(th["values"]) != `{"bar":["a"],"foo":"a"}` || th["status"] != "interrupted" {
		t.Fatalf("created thread = %v", th)
	}
	if h := history(t, s, tid, nil); len(h) != 2 || !reflect.DeepEqual(h[0].Next, []string{"node_b"}) {
		t.Fatalf("history = %+v", h)
	}
	// A bad superstep undoes the whole creation.
	id := uuid.NewString()
	r := s.Do("POST", "/threads", map[string]any{"thread_id": id, "metadata": map[string]any{"graph_id": "foo_bar"},
		"supersteps": []any{map[string]any{"updates": []any{
			map[string]any{"values": map[string]any{"foo": "x"}, "as_node": "node_a"},
			map[string]any{"values": map[string]any{"nope": 1}, "as_node": "node_b"},
		}}}})
	if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Detail(t), "supersteps[0].updates[1]") {
		t.Fatalf("bad superstep: %d %s", r.Status, r.Body)
	}
	s.Must(http.StatusNotFound, "GET", "/threads/"+id, nil)
	var n int
	if err := s.DB.QueryRow(t.Context(), `SELECT count(*) FROM checkpoints WHERE thread_id = $1`, id).Scan(&n); err != nil || n != 0 {
		t.Fatalf("rolled-back creation left %d checkpoints (%v)", n, err)
	}
}

// A number beyond float64 stored in thread metadata by another writer (the
// API refuses one) does not make the thread's state unreadable.
func TestHugeNumberInStoredMetadataStaysReadable(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	tid := newThread(t, s, "foo_bar")
	if _, err := s.DB.Exec(t.Context(), `UPDATE threads SET metadata = metadata || '{"n": 1e400}' WHERE thread_id = $1`, tid); err != nil {
		t.Fatal(err)
	}
	s.Must(http.StatusOK, "GET", "/threads/"+tid+"/state", nil)
	s.Must(http.StatusOK, "POST", "/threads/"+tid+"/history", map[string]any{})
	s.Must(http.StatusOK, "POST", "/threads/"+tid+"/state", map[string]any{"values": map[string]any{"foo": "x"}, "as_node": "node_a"})
	// PostgreSQL keeps the number exactly (as its 401 digits).
	if th := s.Must(http.StatusOK, "GET", "/threads/"+tid, nil); !strings.Contains(string(th.Body), `"n":1`+strings.Repeat("0", 400)+`,`) {
		t.Fatalf("metadata: %s", th.Body)
	}
}
