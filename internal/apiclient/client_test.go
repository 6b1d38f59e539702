package apiclient_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/weftdev/weft/internal/apiclient"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server/servertest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// setup starts the real server on a fresh database and returns the
// generated client pointed at it.
func setup(t *testing.T) (*apiclient.ClientWithResponses, context.Context) {
	t.Helper()
	s := servertest.Start(t)
	c, err := apiclient.NewClientWithResponses(s.URL, apiclient.WithHTTPClient(&http.Client{Timeout: 60 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return c, ctx
}

// ptr returns a pointer to v (request fields are optional, so pointers).
func ptr[T any](v T) *T { return &v }

// orNull reads a value its schema declares as a oneOf of a schema and
// null (a nullable reference): nil for null.
func orNull[T any](t *testing.T, u json.Marshaler) *T {
	t.Helper()
	b, err := u.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(b) == "null" {
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return &v
}

// ref reads a nullable checkpoint of a state.
func ref(t *testing.T, u json.Marshaler) *apiclient.StateCheckpointRef {
	t.Helper()
	return orNull[apiclient.StateCheckpointRef](t, u)
}

// want fails the test unless the request succeeded with status code.
func want(t *testing.T, what string, err error, status, code int, body []byte) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if status != code {
		t.Fatalf("%s: status %d, want %d; body %s", what, status, code, body)
	}
}

// asJSON renders v as compact JSON, for comparing decoded values.
func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mustUUID parses s, a server-made id.
func mustUUID(t *testing.T, s string) openapi_types.UUID {
	t.Helper()
	var u openapi_types.UUID
	if err := u.UnmarshalText([]byte(s)); err != nil {
		t.Fatalf("id %q: %v", s, err)
	}
	return u
}

// intHeader reads an integer response header ("" → -1).
func intHeader(t *testing.T, h http.Header, name string) int {
	t.Helper()
	v := h.Get(name)
	if v == "" {
		return -1
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s: %q is not an integer", name, v)
	}
	return n
}

func TestThreadsThroughGeneratedClient(t *testing.T) {
	t.Parallel()
	c, ctx := setup(t)

	// Create with a chosen id and metadata.
	id := mustUUID(t, "5b0e1c5e-7d4a-4f0e-9a7b-1c2d3e4f5a6b")
	cr, err := c.CreateThreadWithResponse(ctx, apiclient.ThreadsCreateRequest{
		ThreadId: &id, Metadata: &map[string]interface{}{"owner": "alice", "n": 1},
	})
	want(t, "create thread", err, cr.StatusCode(), http.StatusOK, cr.Body)
	th := cr.JSON200
	if th.ThreadId != id || th.Status != apiclient.ThreadsStatusIdle || th.Values != nil ||
		th.ParentThreadId != nil || th.StateUpdatedAt != nil || th.ActiveRunId != nil {
		t.Fatalf("created thread: %s", cr.Body)
	}
	if got := asJSON(t, th.Metadata); got != `{"n":1,"owner":"alice"}` {
		t.Fatalf("metadata %s", got)
	}
	if th.CreatedAt.IsZero() || th.UpdatedAt.Before(th.CreatedAt) {
		t.Fatalf("timestamps %v %v", th.CreatedAt, th.UpdatedAt)
	}

	// Creating it again is a 409 with a detail; if_exists=do_nothing returns it.
	dup, err := c.CreateThreadWithResponse(ctx, apiclient.ThreadsCreateRequest{ThreadId: &id})
	want(t, "create again", err, dup.StatusCode(), http.StatusConflict, dup.Body)
	if dup.JSON409 == nil || dup.JSON409.Detail == "" {
		t.Fatalf("409 without detail: %s", dup.Body)
	}
	same, err := c.CreateThreadWithResponse(ctx, apiclient.ThreadsCreateRequest{ThreadId: &id,
		IfExists: ptr(apiclient.ThreadsCreateRequestIfExistsDoNothing)})
	want(t, "create do_nothing", err, same.StatusCode(), http.StatusOK, same.Body)
	if !same.JSON200.CreatedAt.Equal(th.CreatedAt) {
		t.Fatalf("do_nothing made a new thread: %s", same.Body)
	}

	// Get.
	gr, err := c.GetThreadWithResponse(ctx, id, nil)
	want(t, "get thread", err, gr.StatusCode(), http.StatusOK, gr.Body)
	if gr.JSON200.ThreadId != id || asJSON(t, gr.JSON200.Metadata) != `{"n":1,"owner":"alice"}` {
		t.Fatalf("got %s", gr.Body)
	}
	missing, err := c.GetThreadWithResponse(ctx, mustUUID(t, "00000000-0000-4000-8000-000000000001"), nil)
	want(t, "get missing", err, missing.StatusCode(), http.StatusNotFound, missing.Body)
	if missing.JSON404 == nil || missing.JSON404.Detail == "" {
		t.Fatalf("404 without detail: %s", missing.Body)
	}

	// A child thread, then patch: metadata merges, resource_id set.
	child, err := c.CreateThreadWithResponse(ctx, apiclient.ThreadsCreateRequest{ParentThreadId: &id,
		Metadata: &map[string]interface{}{"owner": "bob"}})
	want(t, "create child", err, child.StatusCode(), http.StatusOK, child.Body)
	if child.JSON200.ParentThreadId == nil || *child.JSON200.ParentThreadId != id {
		t.Fatalf("child: %s", child.Body)
	}
	pr, err := c.PatchThreadWithResponse(ctx, id, apiclient.ThreadsPatchRequest{
		Metadata: &map[string]interface{}{"n": 2, "tag": "x"}, ResourceId: ptr("res-1")})
	want(t, "patch thread", err, pr.StatusCode(), http.StatusOK, pr.Body)
	if got := asJSON(t, pr.JSON200.Metadata); got != `{"n":2,"owner":"alice","tag":"x"}` {
		t.Fatalf("patched metadata %s", got)
	}
	if pr.JSON200.ResourceId == nil || *pr.JSON200.ResourceId != "res-1" || !pr.JSON200.UpdatedAt.After(th.UpdatedAt) {
		t.Fatalf("patched: %s", pr.Body)
	}
	bad, err := c.PatchThreadWithResponse(ctx, id, apiclient.ThreadsPatchRequest{ParentThreadId: &id})
	want(t, "self-parent", err, bad.StatusCode(), http.StatusUnprocessableEntity, bad.Body)
	if bad.JSON422 == nil || bad.JSON422.Detail == "" {
		t.Fatalf("422 without detail: %s", bad.Body)
	}

	// Children of the parent.
	kids, err := c.ListThreadChildrenWithResponse(ctx, id, &apiclient.ListThreadChildrenParams{Limit: ptr(10)})
	want(t, "children", err, kids.StatusCode(), http.StatusOK, kids.Body)
	if len(*kids.JSON200) != 1 || (*kids.JSON200)[0].ThreadId != child.JSON200.ThreadId {
		t.Fatalf("children: %s", kids.Body)
	}

	// Five more threads tagged "page", then search two at a time.
	for i := 0; i < 5; i++ {
		r, err := c.CreateThreadWithResponse(ctx, apiclient.ThreadsCreateRequest{
			Metadata: &map[string]interface{}{"page": true, "i": i}})
		want(t, "create page thread", err, r.StatusCode(), http.StatusOK, r.Body)
	}
	filter := map[string]interface{}{"page": true}
	seen := map[openapi_types.UUID]bool{}
	offset, pages := 0, 0
	for {
		sr, err := c.SearchThreadsWithResponse(ctx, apiclient.ThreadsSearchRequest{Metadata: &filter,
			Limit: ptr(2), Offset: ptr(offset), SortBy: ptr(apiclient.ThreadsSearchRequestSortByCreatedAt),
			SortOrder: ptr(apiclient.ThreadsSearchRequestSortOrderAsc)})
		want(t, "search", err, sr.StatusCode(), http.StatusOK, sr.Body)
		pages++
		page := *sr.JSON200
		for _, th := range page {
			if th.Metadata == nil || th.ThreadId == nil || (*th.Metadata)["page"] != true || seen[*th.ThreadId] {
				t.Fatalf("search page %d: %s", pages, sr.Body)
			}
			seen[*th.ThreadId] = true
		}
		next := intHeader(t, sr.HTTPResponse.Header, "X-Pagination-Next")
		total := intHeader(t, sr.HTTPResponse.Header, "X-Pagination-Total")
		if next == -1 {
			if len(page) != 1 || total != 5 {
				t.Fatalf("last page: %d threads, total %d", len(page), total)
			}
			break
		}
		if len(page) != 2 || next != offset+2 || total != offset+3 {
			t.Fatalf("page at %d: %d threads, next %d, total %d", offset, len(page), next, total)
		}
		offset = next
	}
	if len(seen) != 5 || pages != 3 {
		t.Fatalf("search saw %d threads in %d pages", len(seen), pages)
	}

	// Count: all threads, and those with the filter.
	cnt, err := c.CountThreadsWithResponse(ctx, apiclient.ThreadsSearchRequest{})
	want(t, "count", err, cnt.StatusCode(), http.StatusOK, cnt.Body)
	if *cnt.JSON200 != 7 {
		t.Fatalf("count %d, want 7", *cnt.JSON200)
	}
	cnt, err = c.CountThreadsWithResponse(ctx, apiclient.ThreadsSearchRequest{Metadata: &filter})
	want(t, "count filtered", err, cnt.StatusCode(), http.StatusOK, cnt.Body)
	if *cnt.JSON200 != 5 {
		t.Fatalf("filtered count %d, want 5", *cnt.JSON200)
	}
	badLimit, err := c.SearchThreadsWithResponse(ctx, apiclient.ThreadsSearchRequest{Limit: ptr(0)})
	want(t, "search limit 0", err, badLimit.StatusCode(), http.StatusUnprocessableEntity, badLimit.Body)

	// A ttl given as {ttl, strategy}, read back with include=ttl.
	var ttl apiclient.ThreadsCreateRequest_Ttl
	if err := ttl.FromThreadsCreateRequestTtl1(apiclient.ThreadsCreateRequestTtl1{Ttl: 90,
		Strategy: ptr(apiclient.ThreadsCreateRequestTtl1StrategyKeepLatest)}); err != nil {
		t.Fatal(err)
	}
	tr, err := c.CreateThreadWithResponse(ctx, apiclient.ThreadsCreateRequest{Ttl: &ttl})
	want(t, "create with ttl", err, tr.StatusCode(), http.StatusOK, tr.Body)
	tg, err := c.GetThreadWithResponse(ctx, tr.JSON200.ThreadId,
		&apiclient.GetThreadParams{Include: ptr("ttl")})
	want(t, "get with ttl", err, tg.StatusCode(), http.StatusOK, tg.Body)
	if x := tg.JSON200.Ttl; x == nil || x.TtlMinutes != 90 || x.Strategy != apiclient.ThreadsTTLStrategyKeepLatest ||
		x.ExpiresAt == nil || time.Until(*x.ExpiresAt) < 89*time.Minute || time.Until(*x.ExpiresAt) > 90*time.Minute {
		t.Fatalf("ttl: %s", tg.Body)
	}
	if err := ttl.FromThreadsCreateRequestTtl0(0); err != nil {
		t.Fatal(err)
	}
	tz, err := c.CreateThreadWithResponse(ctx, apiclient.ThreadsCreateRequest{Ttl: &ttl})
	want(t, "create with ttl 0", err, tz.StatusCode(), http.StatusUnprocessableEntity, tz.Body)

	// Delete the parent: its child becomes a root.
	dr, err := c.DeleteThreadWithResponse(ctx, id, nil)
	want(t, "delete", err, dr.StatusCode(), http.StatusNoContent, dr.Body)
	gone, err := c.GetThreadWithResponse(ctx, id, nil)
	want(t, "get deleted", err, gone.StatusCode(), http.StatusNotFound, gone.Body)
	orphan, err := c.GetThreadWithResponse(ctx, child.JSON200.ThreadId, nil)
	want(t, "get child", err, orphan.StatusCode(), http.StatusOK, orphan.Body)
	if orphan.JSON200.ParentThreadId != nil {
		t.Fatalf("child still has a parent: %s", orphan.Body)
	}
}

// fooBarThread creates a thread for the foo_bar graph.
func fooBarThread(t *testing.T, ctx context.Context, c *apiclient.ClientWithResponses) openapi_types.UUID {
	t.Helper()
	r, err := c.CreateThreadWithResponse(ctx, apiclient.ThreadsCreateRequest{
		Metadata: &map[string]interface{}{"graph_id": "foo_bar"}})
	want(t, "create thread", err, r.StatusCode(), http.StatusOK, r.Body)
	return r.JSON200.ThreadId
}

func TestStateThroughGeneratedClient(t *testing.T) {
	t.Parallel()
	c, ctx := setup(t)
	tid := fooBarThread(t, ctx, c)

	// A thread without checkpoints has the empty state.
	st, err := c.GetLatestThreadStateWithResponse(ctx, tid, nil)
	want(t, "empty state", err, st.StatusCode(), http.StatusOK, st.Body)
	if ref(t, st.JSON200.Checkpoint) != nil || len(st.JSON200.Next) != 0 || asJSON(t, st.JSON200.Values) != `{}` {
		t.Fatalf("empty state: %s", st.Body)
	}

	// Play the graph's run with update_state, one node at a time.
	steps := []struct {
		node   string
		values map[string]interface{}
		next   []string
	}{
		{"__start__", map[string]interface{}{"foo": ""}, []string{"node_a"}},
		{"node_a", map[string]interface{}{"foo": "a", "bar": []string{"a"}}, []string{"node_b"}},
		{"node_b", map[string]interface{}{"foo": "b", "bar": []string{"b"}}, []string{}},
	}
	var ids []string
	for _, s := range steps {
		var values apiclient.StateUpdateRequest_Values
		if err := values.FromStateUpdateRequestValues0(s.values); err != nil {
			t.Fatal(err)
		}
		ur, err := c.UpdateThreadStateWithResponse(ctx, tid, apiclient.StateUpdateRequest{
			Values: &values, AsNode: ptr(s.node)})
		want(t, "update_state as "+s.node, err, ur.StatusCode(), http.StatusOK, ur.Body)
		u := ur.JSON200
		if u.CheckpointId == nil || u.Configurable == nil || u.Checkpoint.CheckpointId != *u.CheckpointId ||
			u.Configurable.CheckpointId != *u.CheckpointId || u.Checkpoint.ThreadId != tid.String() {
			t.Fatalf("update_state answer: %s", ur.Body)
		}
		at, err := c.GetThreadStateAtCheckpointWithResponse(ctx, tid, *u.CheckpointId, nil)
		want(t, "state at", err, at.StatusCode(), http.StatusOK, at.Body)
		if !reflect.DeepEqual(at.JSON200.Next, s.next) {
			t.Fatalf("after %s next is %v, want %v", s.node, at.JSON200.Next, s.next)
		}
		ids = append(ids, *u.CheckpointId)
	}

	// The latest state: reducers applied, parent is the previous checkpoint.
	st, err = c.GetLatestThreadStateWithResponse(ctx, tid, &apiclient.GetLatestThreadStateParams{Subgraphs: ptr(true)})
	want(t, "state", err, st.StatusCode(), http.StatusOK, st.Body)
	s := st.JSON200
	if asJSON(t, s.Values) != `{"bar":["a","b"],"foo":"b"}` || len(s.Next) != 0 || len(s.Tasks) != 0 {
		t.Fatalf("state: %s", st.Body)
	}
	if cp, parent := ref(t, s.Checkpoint), ref(t, s.ParentCheckpoint); cp == nil || cp.CheckpointId != ids[2] ||
		parent == nil || parent.CheckpointId != ids[1] {
		t.Fatalf("state checkpoints: %s", st.Body)
	}
	if s.CreatedAt == nil || s.Metadata == nil || (*s.Metadata)["source"] != "update" {
		t.Fatalf("state created_at / metadata: %s", st.Body)
	}

	// The state at the middle checkpoint, POST form.
	mid, err := c.PostThreadStateAtCheckpointWithResponse(ctx, tid, apiclient.StateStateCheckpointRequest{
		Checkpoint: apiclient.StateCheckpointInput{CheckpointId: &ids[1]}})
	want(t, "state at (post)", err, mid.StatusCode(), http.StatusOK, mid.Body)
	if asJSON(t, mid.JSON200.Values) != `{"bar":["a"],"foo":"a"}` || len(mid.JSON200.Tasks) != 1 ||
		mid.JSON200.Tasks[0].Name != "node_b" {
		t.Fatalf("state at %s: %s", ids[1], mid.Body)
	}

	// PATCH state merges metadata into the latest checkpoint.
	ps, err := c.PatchThreadStateWithResponse(ctx, tid, apiclient.StatePatchStateRequest{
		Metadata: &map[string]interface{}{"reviewed": "yes"}})
	want(t, "patch state", err, ps.StatusCode(), http.StatusNoContent, ps.Body)

	// History, newest first, two at a time (GET with before, then POST).
	h1, err := c.GetThreadHistoryWithResponse(ctx, tid, &apiclient.GetThreadHistoryParams{Limit: ptr(2)})
	want(t, "history", err, h1.StatusCode(), http.StatusOK, h1.Body)
	page := *h1.JSON200
	if len(page) != 2 || ref(t, page[0].Checkpoint).CheckpointId != ids[2] || ref(t, page[1].Checkpoint).CheckpointId != ids[1] {
		t.Fatalf("history page 1: %s", h1.Body)
	}
	if (*page[0].Metadata)["reviewed"] != "yes" || (*page[1].Metadata)["reviewed"] != nil {
		t.Fatalf("patched metadata in history: %v / %v", page[0].Metadata, page[1].Metadata)
	}
	h2, err := c.GetThreadHistoryWithResponse(ctx, tid, &apiclient.GetThreadHistoryParams{
		Limit: ptr(2), Before: ptr(ids[1])})
	want(t, "history page 2", err, h2.StatusCode(), http.StatusOK, h2.Body)
	if len(*h2.JSON200) != 1 || ref(t, (*h2.JSON200)[0].Checkpoint).CheckpointId != ids[0] ||
		ref(t, (*h2.JSON200)[0].ParentCheckpoint) != nil {
		t.Fatalf("history page 2: %s", h2.Body)
	}
	var before apiclient.StateHistoryRequest_Before
	if err := before.FromStateHistoryRequestBefore0(ids[2]); err != nil {
		t.Fatal(err)
	}
	hp, err := c.GetThreadHistoryPostWithResponse(ctx, tid, apiclient.StateHistoryRequest{
		Limit: ptr(10), Before: &before, Metadata: &map[string]interface{}{"step": 1}})
	want(t, "history (post)", err, hp.StatusCode(), http.StatusOK, hp.Body)
	if len(*hp.JSON200) != 1 || ref(t, (*hp.JSON200)[0].Checkpoint).CheckpointId != ids[1] {
		t.Fatalf("history filtered by step 1 before %s: %s", ids[2], hp.Body)
	}

	// Copy: the copy has the same state under a new id.
	cp, err := c.CopyThreadPostWithResponse(ctx, tid)
	want(t, "copy", err, cp.StatusCode(), http.StatusOK, cp.Body)
	if cp.JSON200.ThreadId == tid || asJSON(t, cp.JSON200.Values) != `{"bar":["a","b"],"foo":"b"}` {
		t.Fatalf("copy: %s", cp.Body)
	}
	cs, err := c.GetLatestThreadStateWithResponse(ctx, cp.JSON200.ThreadId, nil)
	want(t, "copy state", err, cs.StatusCode(), http.StatusOK, cs.Body)
	if asJSON(t, cs.JSON200.Values) != `{"bar":["a","b"],"foo":"b"}` || ref(t, cs.JSON200.Checkpoint).ThreadId != cp.JSON200.ThreadId.String() {
		t.Fatalf("copy state: %s", cs.Body)
	}

	// An unknown node is a 400 with a detail.
	un, err := c.UpdateThreadStateWithResponse(ctx, tid, apiclient.StateUpdateRequest{AsNode: ptr("nope")})
	want(t, "unknown as_node", err, un.StatusCode(), http.StatusBadRequest, un.Body)
	if un.JSON400 == nil || un.JSON400.Detail == "" {
		t.Fatalf("400 without detail: %s", un.Body)
	}
}

func TestRunsThroughGeneratedClient(t *testing.T) {
	t.Parallel()
	c, ctx := setup(t)
	tid := fooBarThread(t, ctx, c)

	// Create a run on the thread, then join it.
	rr, err := c.CreateRunWithResponse(ctx, tid, apiclient.RunsCreateRequest{
		AssistantId: "foo_bar", Input: &map[string]interface{}{"foo": ""},
		Metadata: &map[string]interface{}{"who": "client_test"}})
	want(t, "create run", err, rr.StatusCode(), http.StatusOK, rr.Body)
	run := rr.JSON200
	if run.ThreadId != tid || run.Status != apiclient.RunsStatusPending || run.Metadata["who"] != "client_test" ||
		run.MultitaskStrategy != apiclient.RunsRunMultitaskStrategyEnqueue {
		t.Fatalf("created run: %s", rr.Body)
	}
	jr, err := c.JoinRunHttpWithResponse(ctx, tid, run.RunId, nil)
	want(t, "join", err, jr.StatusCode(), http.StatusOK, jr.Body)
	if asJSON(t, jr.JSON200) != `{"bar":["a","b"],"foo":"b"}` {
		t.Fatalf("join: %s", jr.Body)
	}
	got, err := c.GetRunHttpWithResponse(ctx, tid, run.RunId)
	want(t, "get run", err, got.StatusCode(), http.StatusOK, got.Body)
	if got.JSON200.Status != apiclient.RunsStatusSuccess || got.JSON200.RunId != run.RunId || got.JSON200.Attempt != 1 {
		t.Fatalf("finished run: %s", got.Body)
	}

	// The thread's state is the run's result, and the thread is idle again.
	th, err := c.GetThreadWithResponse(ctx, tid, nil)
	want(t, "get thread", err, th.StatusCode(), http.StatusOK, th.Body)
	if th.JSON200.Status != apiclient.ThreadsStatusIdle || asJSON(t, th.JSON200.Values) != `{"bar":["a","b"],"foo":"b"}` ||
		th.JSON200.LatestRunId == nil || *th.JSON200.LatestRunId != run.RunId || th.JSON200.ActiveRunId != nil {
		t.Fatalf("thread after run: %s", th.Body)
	}

	// A second run with wait on the same thread appends to bar.
	wr, err := c.WaitRunWithResponse(ctx, tid, apiclient.RunsCreateRequest{
		AssistantId: "foo_bar", Input: &map[string]interface{}{"foo": "again"}})
	want(t, "wait", err, wr.StatusCode(), http.StatusOK, wr.Body)
	if asJSON(t, wr.JSON200) != `{"bar":["a","b","a","b"],"foo":"b"}` {
		t.Fatalf("wait: %s", wr.Body)
	}

	// The thread's runs, newest first, one per page.
	lr, err := c.ListRunsHttpWithResponse(ctx, tid, &apiclient.ListRunsHttpParams{Limit: ptr(1)})
	want(t, "list runs", err, lr.StatusCode(), http.StatusOK, lr.Body)
	if len(*lr.JSON200) != 1 || (*lr.JSON200)[0].RunId == nil || *(*lr.JSON200)[0].RunId == run.RunId {
		t.Fatalf("runs page 1: %s", lr.Body)
	}
	lr, err = c.ListRunsHttpWithResponse(ctx, tid, &apiclient.ListRunsHttpParams{Limit: ptr(1), Offset: ptr(1)})
	want(t, "list runs page 2", err, lr.StatusCode(), http.StatusOK, lr.Body)
	if len(*lr.JSON200) != 1 || (*lr.JSON200)[0].RunId == nil || *(*lr.JSON200)[0].RunId != run.RunId {
		t.Fatalf("runs page 2: %s", lr.Body)
	}

	// A stateless run: runs/wait.
	sw, err := c.WaitRunStatelessWithResponse(ctx, apiclient.RunsStatelessCreateRequest{
		AssistantId: "foo_bar", Input: &map[string]interface{}{"foo": "x"}})
	want(t, "runs/wait", err, sw.StatusCode(), http.StatusOK, sw.Body)
	if asJSON(t, sw.JSON200) != `{"bar":["a","b"],"foo":"b"}` {
		t.Fatalf("runs/wait: %s", sw.Body)
	}

	// Deleting a finished run: 204, then 404.
	del, err := c.DeleteRunWithResponse(ctx, tid, run.RunId)
	want(t, "delete run", err, del.StatusCode(), http.StatusNoContent, del.Body)
	del, err = c.DeleteRunWithResponse(ctx, tid, run.RunId)
	want(t, "delete run again", err, del.StatusCode(), http.StatusNotFound, del.Body)

	// A graph name that is not registered is a 422 naming the graphs.
	nf, err := c.CreateRunWithResponse(ctx, tid, apiclient.RunsCreateRequest{AssistantId: "no_such_graph"})
	want(t, "unknown graph", err, nf.StatusCode(), http.StatusUnprocessableEntity, nf.Body)
	if nf.JSON422 == nil || !strings.Contains(nf.JSON422.Detail, "foo_bar") {
		t.Fatalf("422 without the graphs: %s", nf.Body)
	}
	// A run on a thread that does not exist is a 404.
	nt, err := c.CreateRunWithResponse(ctx, mustUUID(t, "00000000-0000-4000-8000-000000000002"),
		apiclient.RunsCreateRequest{AssistantId: "foo_bar"})
	want(t, "missing thread", err, nt.StatusCode(), http.StatusNotFound, nt.Body)
	if nt.JSON404 == nil || nt.JSON404.Detail == "" {
		t.Fatalf("404 without detail: %s", nt.Body)
	}
}

func TestStoreThroughGeneratedClient(t *testing.T) {
	t.Parallel()
	c, ctx := setup(t)

	put := func(ns []string, key string, value map[string]interface{}) {
		t.Helper()
		r, err := c.PutItemWithResponse(ctx, apiclient.StorePutRequest{Namespace: ns, Key: key, Value: value})
		want(t, "put "+key, err, r.StatusCode(), http.StatusNoContent, r.Body)
	}
	put([]string{"users", "u1", "memories"}, "colour", map[string]interface{}{"text": "likes green", "n": 1})
	put([]string{"users", "u1", "memories"}, "food", map[string]interface{}{"text": "likes soup", "n": 2})
	put([]string{"users", "u2", "prefs"}, "lang", map[string]interface{}{"text": "speaks Welsh", "n": 3})
	put([]string{"users", "u1", "memories"}, "colour", map[string]interface{}{"text": "likes blue", "n": 4})

	// Get: the namespace joined by dots, as the JS SDK sends it.
	g, err := c.GetItemWithResponse(ctx, &apiclient.GetItemParams{Namespace: ptr("users.u1.memories"), Key: "colour"})
	want(t, "get", err, g.StatusCode(), http.StatusOK, g.Body)
	it := orNull[apiclient.StoreItem](t, g.JSON200)
	if it == nil || it.Key != "colour" ||
		!reflect.DeepEqual(it.Namespace, []string{"users", "u1", "memories"}) ||
		asJSON(t, it.Value) != `{"n":4,"text":"likes blue"}` || it.CreatedAt.IsZero() ||
		it.UpdatedAt.Before(it.CreatedAt) {
		t.Fatalf("get: %s", g.Body)
	}
	bad, err := c.PutItemWithResponse(ctx, apiclient.StorePutRequest{Key: "k",
		Value: map[string]interface{}{"a": 1}})
	want(t, "put without namespace", err, bad.StatusCode(), http.StatusUnprocessableEntity, bad.Body)
	if bad.JSON422 == nil || bad.JSON422.Detail == "" {
		t.Fatalf("422 without detail: %s", bad.Body)
	}

	// Search under a prefix, with a filter, and with a query.
	search := func(req apiclient.StoreSearchRequest) []string {
		t.Helper()
		r, err := c.SearchItemsWithResponse(ctx, req)
		want(t, "search", err, r.StatusCode(), http.StatusOK, r.Body)
		var keys []string
		for _, it := range r.JSON200.Items {
			if it.Score != nil {
				t.Fatalf("score without a semantic index: %s", r.Body)
			}
			keys = append(keys, it.Key)
		}
		return keys
	}
	if got := search(apiclient.StoreSearchRequest{NamespacePrefix: &[]string{"users", "u1"}}); !reflect.DeepEqual(got, []string{"colour", "food"}) {
		t.Fatalf("search users.u1: %v, want colour (newest update) then food", got)
	}
	if got := search(apiclient.StoreSearchRequest{NamespacePrefix: &[]string{"users"},
		Filter: &map[string]interface{}{"n": 3}}); !reflect.DeepEqual(got, []string{"lang"}) {
		t.Fatalf("search filter n=3: %v", got)
	}
	if got := search(apiclient.StoreSearchRequest{Query: ptr("SOUP")}); !reflect.DeepEqual(got, []string{"food"}) {
		t.Fatalf("search query soup: %v", got)
	}
	if got := search(apiclient.StoreSearchRequest{NamespacePrefix: &[]string{"users"}, Limit: ptr(1), Offset: ptr(1)}); len(got) != 1 {
		t.Fatalf("search page: %v", got)
	}

	// Namespaces, whole and truncated.
	ns, err := c.ListNamespacesWithResponse(ctx, apiclient.StoreNamespacesRequest{Prefix: &[]string{"users"}})
	want(t, "namespaces", err, ns.StatusCode(), http.StatusOK, ns.Body)
	if got := asJSON(t, ns.JSON200.Namespaces); got != `[["users","u1","memories"],["users","u2","prefs"]]` {
		t.Fatalf("namespaces: %s", got)
	}
	ns, err = c.ListNamespacesWithResponse(ctx, apiclient.StoreNamespacesRequest{MaxDepth: ptr(2),
		Suffix: &[]string{"prefs"}})
	want(t, "namespaces max_depth", err, ns.StatusCode(), http.StatusOK, ns.Body)
	if got := asJSON(t, ns.JSON200.Namespaces); got != `[["users","u2"]]` {
		t.Fatalf("namespaces suffix prefs, depth 2: %s", got)
	}

	// Delete, then the item reads as null.
	del, err := c.DeleteItemWithResponse(ctx, apiclient.StoreDeleteRequest{
		Namespace: &[]string{"users", "u1", "memories"}, Key: "colour"})
	want(t, "delete", err, del.StatusCode(), http.StatusNoContent, del.Body)
	g, err = c.GetItemWithResponse(ctx, &apiclient.GetItemParams{Namespace: ptr("users.u1.memories"), Key: "colour"})
	want(t, "get deleted", err, g.StatusCode(), http.StatusOK, g.Body)
	// The body is JSON null, which the schema declares (an item or null).
	if strings.TrimSpace(string(g.Body)) != "null" || orNull[apiclient.StoreItem](t, g.JSON200) != nil {
		t.Fatalf("deleted item: %s", g.Body)
	}
}

func TestAssistantsThroughGeneratedClient(t *testing.T) {
	t.Parallel()
	c, ctx := setup(t)

	// A graph's system assistant, by graph name.
	sys, err := c.GetAssistantWithResponse(ctx, "foo_bar")
	want(t, "get system assistant", err, sys.StatusCode(), http.StatusOK, sys.Body)
	if sys.JSON200.GraphId != "foo_bar" || sys.JSON200.AssistantId.String() != "59bfe87c-f4fa-5cd5-8a97-4f116167b027" {
		t.Fatalf("system assistant: %s", sys.Body)
	}

	// Create one, then patch it: version 2.
	cr, err := c.CreateAssistantWithResponse(ctx, apiclient.AssistantsCreateRequest{GraphId: "foo_bar",
		Name: ptr("mine"), Metadata: &map[string]interface{}{"team": "red"},
		Config: &map[string]interface{}{"configurable": map[string]interface{}{"k": "v1"}}})
	want(t, "create assistant", err, cr.StatusCode(), http.StatusOK, cr.Body)
	a := cr.JSON200
	if a.AssistantId == sys.JSON200.AssistantId || a.Version != 1 ||
		a.Name != "mine" || a.Metadata["team"] != "red" {
		t.Fatalf("created assistant: %s", cr.Body)
	}
	id := a.AssistantId.String()
	pr, err := c.PatchAssistantWithResponse(ctx, id, apiclient.AssistantsPatchRequest{
		Metadata: &map[string]interface{}{"stage": "beta"}, Description: ptr("second")})
	want(t, "patch assistant", err, pr.StatusCode(), http.StatusOK, pr.Body)
	if pr.JSON200.Version != 2 || pr.JSON200.Description == nil || *pr.JSON200.Description != "second" ||
		pr.JSON200.Metadata["stage"] != "beta" || pr.JSON200.Name != "mine" {
		t.Fatalf("patched assistant: %s", pr.Body)
	}

	// Versions, newest first; then back to version 1.
	vr, err := c.GetAssistantVersionsWithResponse(ctx, id, apiclient.AssistantsVersionsRequest{})
	want(t, "versions", err, vr.StatusCode(), http.StatusOK, vr.Body)
	if vs := *vr.JSON200; len(vs) != 2 || vs[0].Version != 2 || vs[1].Version != 1 || vs[0].AssistantId.String() != id {
		t.Fatalf("versions: %s", vr.Body)
	}
	lr, err := c.SetLatestAssistantVersionWithResponse(ctx, id, nil, apiclient.AssistantsLatestRequest{Version: ptr(1)})
	want(t, "latest", err, lr.StatusCode(), http.StatusOK, lr.Body)
	if lr.JSON200.Version != 1 || lr.JSON200.Description != nil && *lr.JSON200.Description == "second" {
		t.Fatalf("set latest to 1: %s", lr.Body)
	}

	// Graph and schemas of the graph.
	gr, err := c.GetAssistantGraphWithResponse(ctx, id, nil)
	want(t, "graph", err, gr.StatusCode(), http.StatusOK, gr.Body)
	nodes := map[string]bool{}
	for _, n := range gr.JSON200.Nodes {
		nodes[n.Id] = true
	}
	if !nodes["node_a"] || !nodes["node_b"] || !nodes["__start__"] || !nodes["__end__"] || len(gr.JSON200.Edges) != 3 {
		t.Fatalf("graph: %s", gr.Body)
	}
	sr, err := c.GetAssistantSchemasWithResponse(ctx, id)
	want(t, "schemas", err, sr.StatusCode(), http.StatusOK, sr.Body)
	props, _ := (*sr.JSON200.StateSchema)["properties"].(map[string]interface{})
	if sr.JSON200.GraphId != "foo_bar" || props["foo"] == nil || props["bar"] == nil {
		t.Fatalf("schemas: %s", sr.Body)
	}

	// Search and count by metadata.
	se, err := c.SearchAssistantsWithResponse(ctx, apiclient.AssistantsSearchRequest{GraphId: ptr("foo_bar"),
		Metadata: &map[string]interface{}{"team": "red"}})
	want(t, "search assistants", err, se.StatusCode(), http.StatusOK, se.Body)
	if len(*se.JSON200) != 1 || (*se.JSON200)[0].AssistantId.String() != id {
		t.Fatalf("search: %s", se.Body)
	}
	co, err := c.CountAssistantsWithResponse(ctx, apiclient.AssistantsSearchRequest{GraphId: ptr("foo_bar")})
	want(t, "count assistants", err, co.StatusCode(), http.StatusOK, co.Body)
	if *co.JSON200 != 2 {
		t.Fatalf("count of foo_bar assistants: %d, want 2 (system + mine)", *co.JSON200)
	}

	// A run through the created assistant, by its id.
	wr, err := c.WaitRunStatelessWithResponse(ctx, apiclient.RunsStatelessCreateRequest{AssistantId: id,
		Input: &map[string]interface{}{"foo": ""}})
	want(t, "run with assistant", err, wr.StatusCode(), http.StatusOK, wr.Body)
	if asJSON(t, wr.JSON200) != `{"bar":["a","b"],"foo":"b"}` {
		t.Fatalf("run result: %s", wr.Body)
	}

	// Delete: 204, then 404.
	dr, err := c.DeleteAssistantWithResponse(ctx, id, nil)
	want(t, "delete assistant", err, dr.StatusCode(), http.StatusNoContent, dr.Body)
	gone, err := c.GetAssistantWithResponse(ctx, id)
	want(t, "get deleted assistant", err, gone.StatusCode(), http.StatusNotFound, gone.Body)
	if gone.JSON404 == nil || gone.JSON404.Detail == "" {
		t.Fatalf("404 without detail: %s", gone.Body)
	}
}
