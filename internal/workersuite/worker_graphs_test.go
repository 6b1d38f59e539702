package workersuite_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

var jsGraph = map[string]any{
	"graph_id":  "js_echo",
	"worker_id": "test",
	"drawable": map[string]any{
		"nodes": []any{map[string]any{"id": "__start__"}, map[string]any{"id": "talk", "type": "runnable"},
			map[string]any{"id": "done"}, map[string]any{"id": "__end__"}},
		"edges": []any{map[string]any{"source": "__start__", "target": "talk"}, map[string]any{"source": "talk", "target": "done"},
			map[string]any{"source": "done", "target": "__end__"}},
	},
	"input_schema": map[string]any{"type": "object", "properties": map[string]any{"messages": map[string]any{}}},
	"state_schema": map[string]any{"title": "js_echo", "type": "object", "properties": map[string]any{"messages": map[string]any{}, "n": map[string]any{}}},
}

func TestWorkerGraphRegistration(t *testing.T) {
	s := start(t) // in-process workers run: they must leave js_echo alone
	reg := s.Must(http.StatusOK, "POST", "/dispatch/graphs", jsGraph).Map(t)
	wantJSON(t, "registration", []any{reg["graph_id"], reg["nodes"]}, `["js_echo",["talk","done"]]`)
	aid := reg["assistant_id"].(string)
	// Registering again is a no-op that answers the same.
	wantJSON(t, "again", s.Must(http.StatusOK, "POST", "/dispatch/graphs", jsGraph).Map(t)["assistant_id"], `"`+aid+`"`)
	a := s.Must(http.StatusOK, "GET", "/assistants/"+aid, nil).Map(t)
	if a["graph_id"] != "js_echo" {
		t.Fatalf("system assistant %s", js(a))
	}
	schemas := s.Must(http.StatusOK, "GET", "/assistants/"+aid+"/schemas", nil).Map(t)
	wantJSON(t, "state schema", schemas["state_schema"], js(jsGraph["state_schema"]))
	drawing := s.Must(http.StatusOK, "GET", "/assistants/"+aid+"/graph", nil).Map(t)
	if len(drawing["nodes"].([]any)) != 4 {
		t.Fatalf("drawing %s", js(drawing))
	}

	for _, bad := range []map[string]any{
		{"graph_id": "", "drawable": jsGraph["drawable"]},
		{"graph_id": "a/b", "drawable": jsGraph["drawable"]},
		{"graph_id": uuid.NewString(), "drawable": jsGraph["drawable"]},
		{"graph_id": "x"},
		{"graph_id": "x", "drawable": map[string]any{"nodes": []any{map[string]any{}}, "edges": []any{}}},
	} {
		s.Must(http.StatusUnprocessableEntity, "POST", "/dispatch/graphs", bad)
	}
	s.Must(http.StatusConflict, "POST", "/dispatch/graphs", map[string]any{"graph_id": "foo_bar", "drawable": jsGraph["drawable"]})

	// Runs are validated against the registered state channels; keys that
	// are none and interrupt nodes the graph lacks are accepted, as
	// LangGraph accepts them.
	tid := newThread(t, s)
	s.Must(http.StatusUnprocessableEntity, "POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "js_echo", "input": "text"})
	run := create(t, s, tid, map[string]any{"assistant_id": "js_echo", "input": map[string]any{"messages": []any{"hi"}},
		"interrupt_before": []string{"done"}})
	// The in-process pool never claims it; a worker serving js_echo does.
	time.Sleep(300 * time.Millisecond)
	runStatus(t, s, tid, run["run_id"].(string), "pending")
	var none []claimed
	s.Must(http.StatusOK, "POST", "/dispatch/claim", map[string]any{"worker_id": "w", "graph_ids": []string{"foo_bar"}}).JSON(t, &none)
	if len(none) != 0 {
		t.Fatalf("a foo_bar worker claimed %s", js(none))
	}
	var got []claimed
	begin := time.Now()
	s.Must(http.StatusOK, "POST", "/dispatch/claim", map[string]any{"worker_id": "w", "graph_ids": []string{"js_echo"}, "wait_ms": 5000}).JSON(t, &got)
	if len(got) != 1 || got[0].Run.RunID != run["run_id"] || time.Since(begin) > 2*time.Second {
		t.Fatalf("claimed %s", js(got))
	}
	runStatus(t, s, tid, run["run_id"].(string), "running")

	// Run creation reads the registered graph through a cache; the
	// worker registering it again through this server is seen at once: a
	// node it adds is a valid command.goto the next moment.
	s.Must(http.StatusUnprocessableEntity, "POST", "/threads/"+newThread(t, s)+"/runs", map[string]any{"assistant_id": "js_echo", "command": map[string]any{"goto": "review"}})
	more := map[string]any{}
	for k, v := range jsGraph {
		more[k] = v
	}
	more["drawable"] = map[string]any{
		"nodes": []any{map[string]any{"id": "__start__"}, map[string]any{"id": "talk", "type": "runnable"}, map[string]any{"id": "review"},
			map[string]any{"id": "done"}, map[string]any{"id": "__end__"}},
		"edges": []any{map[string]any{"source": "__start__", "target": "talk"}, map[string]any{"source": "talk", "target": "review"},
			map[string]any{"source": "review", "target": "done"}, map[string]any{"source": "done", "target": "__end__"}},
	}
	s.Must(http.StatusOK, "POST", "/dispatch/graphs", more)
	create(t, s, newThread(t, s), map[string]any{"assistant_id": "js_echo", "command": map[string]any{"goto": "review"}})
}

// A long-polling claim returns a run created while it waits (woken by the
// queue notification; the 250 ms poll is only the fallback).
func TestClaimWaitWokenByNewRun(t *testing.T) {
	s := external(t, nil)
	s.Must(http.StatusOK, "POST", "/dispatch/graphs", jsGraph)
	tid := newThread(t, s)
	done := make(chan []claimed, 1)
	go func() {
		var got []claimed
		s.Must(http.StatusOK, "POST", "/dispatch/claim", map[string]any{"worker_id": "w", "graph_ids": []string{"js_echo"}, "wait_ms": 10000}).JSON(t, &got)
		done <- got
	}()
	time.Sleep(300 * time.Millisecond)
	created := time.Now()
	create(t, s, tid, map[string]any{"assistant_id": "js_echo"})
	select {
	case got := <-done:
		if len(got) != 1 {
			t.Fatalf("claimed %s", js(got))
		}
		if d := time.Since(created); d > 200*time.Millisecond {
			t.Logf("claim took %s after the run's creation", d) // a poll would take up to 250 ms
		}
	case <-time.After(8 * time.Second):
		t.Fatal("the long poll did not return the new run")
	}
}

// A worker's long poll right after a claim that left nothing to take
// waits for a queue notification instead of claiming first (the queue is
// then usually empty: a worker polls again as soon as it started its
// runs). Work that turns claimable without a notification (here a claim
// undone in SQL) is found by the wait's periodic claim, a quarter second
// on; a notification since the empty claim (a new run) makes the next poll
// claim at once.
func TestClaimWaitAfterDrainedClaimWaitsForNotification(t *testing.T) {
	s := external(t, nil)
	s.Must(http.StatusOK, "POST", "/dispatch/graphs", jsGraph)
	poll := func(worker string, limit, waitMS int) []claimed {
		var got []claimed
		s.Must(http.StatusOK, "POST", "/dispatch/claim", map[string]any{"worker_id": worker, "graph_ids": []string{"js_echo"},
			"limit": limit, "wait_ms": waitMS}).JSON(t, &got)
		return got
	}
	run := create(t, s, newThread(t, s), map[string]any{"assistant_id": "js_echo"})
	other := poll("other", 1, 5000)
	if len(other) != 1 || other[0].Run.RunID != run["run_id"] {
		t.Fatalf("claimed %s", js(other))
	}
	time.Sleep(100 * time.Millisecond) // the run's notification has arrived
	if got := poll("w", 2, 0); len(got) != 0 {
		t.Fatalf("claimed %s", js(got))
	}
	// The run is claimable again, and no notification says so.
	if _, err := s.DB.Exec(t.Context(), `UPDATE run_dispatches SET state = 'queued', claim_token = NULL, claimed_by = NULL,
		lease_expires_at = NULL WHERE dispatch_id = $1`, other[0].Dispatch.DispatchID); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	got := poll("w", 2, 5000)
	if len(got) != 1 || got[0].Run.RunID != run["run_id"] {
		t.Fatalf("claimed %s", js(got))
	}
	if d := time.Since(begin); d < 200*time.Millisecond {
		t.Fatalf("the poll after an empty claim claimed at once (%s): want it to wait for a notification or its periodic claim", d)
	}

	// That claim took fewer than its limit: the next poll would wait, but a
	// run created since notifies the queue, so it claims at once.
	run2 := create(t, s, newThread(t, s), map[string]any{"assistant_id": "js_echo"})
	time.Sleep(100 * time.Millisecond)
	if got := poll("w", 2, 5000); len(got) != 1 || got[0].Run.RunID != run2["run_id"] {
		t.Fatalf("claimed %s", js(got))
	}
}

// State reads of a worker graph's thread take the graph's stand-in (its
// channel defaults here) through the catalog's cache, as run creation
// does: a registration through this server is seen at once, one through
// another replica (here a change of the catalog row) within
// assistants.StandInTTL.
func TestWorkerGraphStateReadsCachedStandIn(t *testing.T) {
	s := external(t, nil)
	register := func(n int) {
		g := map[string]any{}
		for k, v := range jsGraph {
			g[k] = v
		}
		g["channel_defaults"] = map[string]any{"n": n}
		s.Must(http.StatusOK, "POST", "/dispatch/graphs", g)
	}
	register(1)
	tid := newThread(t, s)
	run := create(t, s, tid, map[string]any{"assistant_id": "js_echo"})
	c := claimOne(t, s, "js_echo")
	v1 := "00000000000000000000000000000001.0.1"
	cp := map[string]any{"v": 4, "id": "1f000000-0000-6000-8000-000000000001", "ts": "2026-11-23T00:00:00.000Z",
		"channel_values": map[string]any{"messages": []any{"hi"}}, "channel_versions": map[string]any{"messages": v1},
		"versions_seen": map[string]any{}}
	s.Must(http.StatusOK, "POST", "/dispatch/"+c.Dispatch.DispatchID+"/commit", map[string]any{"claim_token": c.ClaimToken,
		"checkpoints": []any{map[string]any{"parent_checkpoint_id": "", "checkpoint": cp,
			"metadata": map[string]any{"source": "input", "step": -1, "run_id": run["run_id"]}, "new_versions": map[string]any{"messages": v1}}}})
	n := func() any {
		return s.Must(http.StatusOK, "GET", "/threads/"+tid+"/state", nil).Map(t)["values"].(map[string]any)["n"]
	}
	if got := n(); got != float64(1) {
		t.Fatalf("n = %v, want the default 1", got)
	}
	register(2)
	if got := n(); got != float64(2) {
		t.Fatalf("n = %v after a registration through this server, want 2 at once", got)
	}
	if _, err := s.DB.Exec(t.Context(), `UPDATE graphs SET channel_defaults = '{"n": 3}' WHERE graph_id = 'js_echo'`); err != nil {
		t.Fatal(err)
	}
	if got := n(); got != float64(2) {
		t.Fatalf("n = %v right after another replica's registration, want the cached 2", got)
	}
}

// A run enqueued behind a worker's run on the same thread can be claimed
// once that run ends: the end notifies the queue for its graph, so waiting
// long polls take it at once rather than at their periodic claim. An end
// with nothing queued behind it notifies nothing.
func TestRunEndNotifiesQueuedRunOfItsThread(t *testing.T) {
	s := external(t, nil)
	s.Must(http.StatusOK, "POST", "/dispatch/graphs", jsGraph)
	tid := newThread(t, s)
	first := create(t, s, tid, map[string]any{"assistant_id": "js_echo"})
	c := claimOne(t, s, "js_echo")
	if c.Run.RunID != first["run_id"] {
		t.Fatalf("claimed %s", js(c))
	}
	second := create(t, s, tid, map[string]any{"assistant_id": "js_echo", "multitask_strategy": "enqueue"})

	conn, err := s.DB.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(t.Context(), "LISTEN weft_dispatch"); err != nil {
		t.Fatal(err)
	}
	notified := func(within time.Duration) string {
		ctx, cancel := context.WithTimeout(t.Context(), within)
		defer cancel()
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			return ""
		}
		return n.Payload
	}
	ack := func(c claimed) {
		s.Must(http.StatusOK, "POST", "/dispatch/"+c.Dispatch.DispatchID+"/ack", map[string]any{"claim_token": c.ClaimToken, "status": "success"})
	}
	ack(c)
	if got := notified(5 * time.Second); got != "js_echo" {
		t.Fatalf("notification after the first run's end: %q, want js_echo", got)
	}
	if c = claimOne(t, s, "js_echo"); c.Run.RunID != second["run_id"] {
		t.Fatalf("claimed %s", js(c))
	}
	ack(c)
	if got := notified(300 * time.Millisecond); got != "" {
		t.Fatalf("notification after the last run's end: %q, want none", got)
	}
}

// The raw checkpoint reads return the rows as stored: blobs base64 with
// their type, pending writes in order, filters by namespace, metadata and
// position.
func TestWorkerCheckpointReads(t *testing.T) {
	s := external(t, nil)
	s.Must(http.StatusOK, "POST", "/dispatch/graphs", jsGraph)
	tid := newThread(t, s)
	run := create(t, s, tid, map[string]any{"assistant_id": "js_echo"})
	type claimedRun struct {
		claimed
		ThreadEmpty bool `json:"thread_empty"`
	}
	var c []claimedRun
	s.Must(http.StatusOK, "POST", "/dispatch/claim", map[string]any{"worker_id": "w", "graph_ids": []string{"js_echo"}, "wait_ms": 5000}).JSON(t, &c)
	if len(c) != 1 || !c[0].ThreadEmpty {
		t.Fatalf("claim of a new thread's run (thread_empty) %s", js(c))
	}
	d := "/dispatch/" + c[0].Dispatch.DispatchID
	v1, v2 := "00000000000000000000000000000001.0.1", "00000000000000000000000000000002.0.2"
	msg := map[string]any{"lc": 1, "type": "constructor", "id": []any{"langchain_core", "messages", "AIMessageChunk"},
		"kwargs": map[string]any{"content": "hi", "id": "m1"}}
	cp1 := map[string]any{"v": 4, "id": "1f000000-0000-6000-8000-000000000001", "ts": "2026-11-23T00:00:00.000Z",
		"channel_values":   map[string]any{"messages": []any{msg}, "__start__": map[string]any{"x": 1}},
		"channel_versions": map[string]any{"messages": v1, "__start__": v1}, "versions_seen": map[string]any{"__input__": map[string]any{}}}
	cp2 := map[string]any{"v": 4, "id": "1f000000-0000-6000-8000-000000000002", "ts": "2026-11-23T00:00:01.000Z",
		"channel_values":   map[string]any{"n": 2},
		"channel_versions": map[string]any{"messages": v1, "n": v2}, "versions_seen": map[string]any{"talk": map[string]any{"messages": v1}}}
	s.Must(http.StatusOK, "POST", d+"/commit", map[string]any{"claim_token": c[0].ClaimToken, "commit_id": "c1",
		"checkpoints": []any{
			map[string]any{"parent_checkpoint_id": "", "checkpoint": cp1, "metadata": map[string]any{"source": "input", "step": -1, "run_id": run["run_id"]}, "new_versions": map[string]any{"messages": v1, "__start__": v1}},
			map[string]any{"parent_checkpoint_id": cp1["id"], "checkpoint": cp2, "metadata": map[string]any{"source": "loop", "step": 0, "run_id": run["run_id"]}, "new_versions": map[string]any{"n": v2}},
			map[string]any{"parent_checkpoint_id": "", "checkpoint_ns": "sub:1", "checkpoint": map[string]any{"v": 4, "id": "1f000000-0000-6000-8000-000000000003", "ts": "x",
				"channel_values": map[string]any{}, "channel_versions": map[string]any{}, "versions_seen": map[string]any{}}, "metadata": map[string]any{}, "new_versions": map[string]any{}},
		},
		"writes": []any{map[string]any{"checkpoint_id": cp2["id"], "writes": []any{
			map[string]any{"task_id": "t2", "channel": "n", "value": 3, "idx": 0},
			map[string]any{"task_id": "t1", "channel": "__interrupt__", "value": []any{map[string]any{"value": "q", "id": "i1"}}, "idx": 0},
		}}},
		"events": []any{map[string]any{"event": "messages", "data": []any{msg, map[string]any{"langgraph_node": "talk"}}}},
	})

	var latest struct {
		Config             map[string]string `json:"config"`
		ParentCheckpointID *string           `json:"parent_checkpoint_id"`
		Checkpoint         map[string]any    `json:"checkpoint"`
		Metadata           map[string]any    `json:"metadata"`
		ChannelValues      [][]any           `json:"channel_values"`
		PendingWrites      [][]any           `json:"pending_writes"`
	}
	s.Must(http.StatusOK, "POST", "/dispatch/checkpoints/get", map[string]any{"thread_id": tid}).JSON(t, &latest)
	if latest.Config["checkpoint_id"] != cp2["id"] || *latest.ParentCheckpointID != cp1["id"] || latest.Metadata["step"] != float64(0) {
		t.Fatalf("latest %s", js(latest))
	}
	blobs := map[string]string{}
	for _, b := range latest.ChannelValues {
		raw, err := base64.StdEncoding.DecodeString(b[2].(string))
		if err != nil || b[1] != "json" {
			t.Fatalf("blob %s: %v", js(b), err)
		}
		blobs[b[0].(string)] = string(raw)
	}
	// The message stays as the JS serializer wrote it (an lc envelope), for
	// the worker's serializer to revive.
	if !strings.Contains(blobs["messages"], `"lc":1`) || blobs["n"] != "2" || len(blobs) != 2 {
		t.Fatalf("blobs %v", blobs)
	}
	if len(latest.PendingWrites) != 2 || latest.PendingWrites[0][0] != "t1" || latest.PendingWrites[0][1] != "__interrupt__" || latest.PendingWrites[1][0] != "t2" {
		t.Fatalf("writes %s", js(latest.PendingWrites))
	}
	// State reads normalise the same rows; events were normalised on commit
	// (a LangChain.js chunk with its message's type, as LangGraph.js's
	// server shows it).
	msgs := state(t, s, tid)["values"].(map[string]any)["messages"].([]any)
	if m := msgs[0].(map[string]any); m["type"] != "ai" || m["content"] != "hi" {
		t.Fatalf("state message %s", js(msgs))
	}
	var ev string
	if err := s.DB.QueryRow(t.Context(), `SELECT data->0->>'type' FROM run_events WHERE run_id = $1 AND event = 'messages'`, run["run_id"]).Scan(&ev); err != nil || ev != "ai" {
		t.Fatalf("event message type %q: %v", ev, err)
	}

	list := func(body map[string]any) []string {
		var rows []struct {
			Config map[string]string `json:"config"`
		}
		body["thread_id"] = tid
		s.Must(http.StatusOK, "POST", "/dispatch/checkpoints/list", body).JSON(t, &rows)
		ids := []string{}
		for _, r := range rows {
			ids = append(ids, r.Config["checkpoint_ns"]+"/"+r.Config["checkpoint_id"][len(r.Config["checkpoint_id"])-1:])
		}
		return ids
	}
	wantJSON(t, "all", list(map[string]any{}), `["sub:1/3","/2","/1"]`)
	wantJSON(t, "root", list(map[string]any{"checkpoint_ns": ""}), `["/2","/1"]`)
	wantJSON(t, "before", list(map[string]any{"checkpoint_ns": "", "before": cp2["id"]}), `["/1"]`)
	wantJSON(t, "filter", list(map[string]any{"filter": map[string]any{"source": "input"}}), `["/1"]`)
	wantJSON(t, "limit", list(map[string]any{"limit": 1}), `["sub:1/3"]`)
	wantJSON(t, "one", list(map[string]any{"checkpoint_id": cp1["id"]}), `["/1"]`)

	s.Must(http.StatusNotFound, "POST", "/dispatch/checkpoints/get", map[string]any{"thread_id": tid, "checkpoint_id": "nope"})
	s.Must(http.StatusNotFound, "POST", "/dispatch/checkpoints/get", map[string]any{"thread_id": uuid.NewString()})
	s.Must(http.StatusUnprocessableEntity, "POST", "/dispatch/checkpoints/get", map[string]any{})
	s.Must(http.StatusUnprocessableEntity, "POST", "/dispatch/checkpoints/list", map[string]any{"thread_id": tid, "limit": 5000})
	s.Must(http.StatusUnprocessableEntity, "POST", "/dispatch/checkpoints/list", map[string]any{"thread_id": tid, "filter": "x"})

	// The thread's next run is claimed without thread_empty: it has checkpoints.
	s.Must(http.StatusOK, "POST", d+"/commit", map[string]any{"claim_token": c[0].ClaimToken, "end": map[string]any{"status": "success", "result": map[string]any{}}})
	create(t, s, tid, map[string]any{"assistant_id": "js_echo"})
	var next []claimedRun
	s.Must(http.StatusOK, "POST", "/dispatch/claim", map[string]any{"worker_id": "w", "graph_ids": []string{"js_echo"}, "wait_ms": 5000}).JSON(t, &next)
	if len(next) != 1 || next[0].ThreadEmpty {
		t.Fatalf("claim of a run on a thread with checkpoints (no thread_empty) %s", js(next))
	}
}

// update_state on a thread of a worker graph is handed to a worker as a
// run carrying the update; the worker's answer is what update_state
// returns, and the run is gone afterwards.
func TestWorkerUpdateState(t *testing.T) {
	s := external(t, nil)
	s.Must(http.StatusOK, "POST", "/dispatch/graphs", jsGraph)
	tid := s.Must(http.StatusOK, "POST", "/threads", map[string]any{"metadata": map[string]any{"graph_id": "js_echo"}}).Map(t)["thread_id"].(string)

	type answer struct {
		status int
		body   map[string]any
	}
	update := func(body map[string]any) chan answer {
		ch := make(chan answer, 1)
		go func() {
			r := s.Do("POST", "/threads/"+tid+"/state", body)
			var m map[string]any
			_ = json.Unmarshal(r.Body, &m)
			ch <- answer{r.Status, m}
		}()
		return ch
	}
	work := func(result map[string]any) map[string]any {
		var c []struct {
			claimed
			Run struct {
				RunID    string         `json:"run_id"`
				Metadata map[string]any `json:"metadata"`
			} `json:"run"`
		}
		s.Must(http.StatusOK, "POST", "/dispatch/claim", map[string]any{"worker_id": "w", "graph_ids": []string{"js_echo"}, "wait_ms": 5000}).JSON(t, &c)
		if len(c) != 1 {
			t.Fatalf("claim %s", js(c))
		}
		s.Must(http.StatusOK, "POST", "/dispatch/"+c[0].Dispatch.DispatchID+"/commit", map[string]any{"claim_token": c[0].ClaimToken,
			"end": map[string]any{"status": "success", "result": result}})
		return c[0].Run.Metadata["__weft_update_state__"].(map[string]any)
	}

	ch := update(map[string]any{"values": map[string]any{"messages": []any{"x"}}, "as_node": "talk"})
	cp := "1f000000-0000-6000-8000-0000000000aa"
	got := work(map[string]any{"__update_state__": map[string]any{"thread_id": tid, "checkpoint_ns": "", "checkpoint_id": cp}})
	wantJSON(t, "the update the worker got", got, `{"values":{"messages":["x"]},"as_node":"talk","checkpoint_id":"","checkpoint_ns":""}`)
	a := <-ch
	if a.status != http.StatusOK || a.body["checkpoint_id"] != cp {
		t.Fatalf("update_state %d %s", a.status, js(a.body))
	}
	var runs []any
	s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs", nil).JSON(t, &runs)
	if len(runs) != 0 {
		t.Fatalf("the update's run is still listed: %s", js(runs))
	}

	// At a subgraph's namespace (a pending task's checkpoint): the worker
	// gets the namespace, and its answer names the subgraph's checkpoint.
	ch = update(map[string]any{"values": map[string]any{"city": "LA"}, "checkpoint": map[string]any{"thread_id": tid, "checkpoint_ns": "sub:1"}})
	got = work(map[string]any{"__update_state__": map[string]any{"thread_id": tid, "checkpoint_ns": "sub:1", "checkpoint_id": cp}})
	wantJSON(t, "the subgraph update the worker got", got, `{"values":{"city":"LA"},"as_node":"","checkpoint_id":"","checkpoint_ns":"sub:1"}`)
	if a := <-ch; a.status != http.StatusOK || a.body["checkpoint"].(map[string]any)["checkpoint_ns"] != "sub:1" {
		t.Fatalf("subgraph update_state %d %s", a.status, js(a.body))
	}

	ch = update(map[string]any{"values": map[string]any{}, "as_node": "nope"})
	work(map[string]any{"__update_error__": map[string]any{"error": "InvalidUpdateError", "message": "Node nope does not exist"}})
	if a := <-ch; a.status != http.StatusBadRequest || !strings.Contains(a.body["detail"].(string), "nope does not exist") {
		t.Fatalf("refused update %d %s", a.status, js(a.body))
	}
	// A busy thread refuses the update before any run is made.
	create(t, s, tid, map[string]any{"assistant_id": "js_echo"})
	s.Must(http.StatusConflict, "POST", "/threads/"+tid+"/state", map[string]any{"values": map[string]any{}})
}
