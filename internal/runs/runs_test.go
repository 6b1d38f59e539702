package runs_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestFooBarRunWaitJoinAndProjection(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	r := s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}})
	wantJSON(t, "wait result", r.Map(t), `{"foo":"b","bar":["a","b"]}`)
	loc, cloc := r.Header.Get("Location"), r.Header.Get("Content-Location")
	if !strings.HasPrefix(cloc, "/threads/"+tid+"/runs/") || loc != cloc+"/join" {
		t.Fatalf("Content-Location %q, Location %q", cloc, loc)
	}
	rid := strings.TrimPrefix(cloc, "/threads/"+tid+"/runs/")

	th := thread(t, s, tid)
	wantJSON(t, "thread values", th["values"], `{"foo":"b","bar":["a","b"]}`)
	if th["status"] != "idle" || th["metadata"].(map[string]any)["graph_id"] != "foo_bar" ||
		th["metadata"].(map[string]any)["assistant_id"] != "59bfe87c-f4fa-5cd5-8a97-4f116167b027" {
		t.Fatalf("thread after run: %s", js(th))
	}
	run := s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs/"+rid, nil).Map(t)
	if run["status"] != "success" || run["assistant_id"] != "59bfe87c-f4fa-5cd5-8a97-4f116167b027" || run["attempt"] != float64(1) {
		t.Fatalf("run: %s", js(run))
	}
	var list []map[string]any
	s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs?status=success", nil).JSON(t, &list)
	if len(list) != 1 || list[0]["run_id"] != rid {
		t.Fatalf("runs list: %s", js(list))
	}
	join := s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs/"+rid+"/join", nil)
	wantJSON(t, "join result", join.Map(t), `{"foo":"b","bar":["a","b"]}`)

	// LangGraph's checkpoints: input at step -1, then one per superstep,
	// each tagged with the run.
	h := history(t, s, tid)
	var steps []string
	for _, st := range h {
		md := st["metadata"].(map[string]any)
		if md["run_id"] != rid || md["graph_id"] != "foo_bar" {
			t.Fatalf("checkpoint metadata %s", js(md))
		}
		steps = append(steps, js([]any{md["source"], md["step"], st["next"]}))
	}
	wantJSON(t, "history", steps, `["[\"loop\",2,[]]","[\"loop\",1,[\"node_b\"]]","[\"loop\",0,[\"node_a\"]]","[\"input\",-1,[\"__start__\"]]"]`)

	// The event log: metadata first, values after each step, the end.
	var events []string
	rows, err := s.DB.Query(t.Context(), `SELECT event FROM run_events WHERE run_id = $1 ORDER BY seq`, rid)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var e string
		_ = rows.Scan(&e)
		events = append(events, e)
	}
	wantJSON(t, "events", events, `["metadata","values","updates","values","updates","values","end"]`)

	// A second run on the same thread continues from its state.
	wantJSON(t, "second run", wait(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": "x"}}),
		`{"foo":"b","bar":["a","b","a","b"]}`)
	if n := len(history(t, s, tid)); n != 8 {
		t.Fatalf("history has %d checkpoints after two runs, want 8", n)
	}
	s.Must(http.StatusNoContent, "DELETE", "/threads/"+tid+"/runs/"+rid, nil)
	s.Must(http.StatusNotFound, "GET", "/threads/"+tid+"/runs/"+rid, nil)
}

// A run played by the executor and the same run played by hand through
// update_state give the same history (values and next at every step).
func TestExecutorHistoryMatchesUpdateState(t *testing.T) {
	s := start(t)
	ran := newThread(t, s)
	wait(t, s, ran, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}})
	byHand := s.Must(http.StatusOK, "POST", "/threads", map[string]any{"metadata": map[string]any{"graph_id": "foo_bar"}}).Map(t)["thread_id"].(string)
	for _, u := range []map[string]any{
		{"values": map[string]any{"foo": ""}, "as_node": "__start__"},
		{"values": map[string]any{"foo": "a", "bar": []any{"a"}}, "as_node": "node_a"},
		{"values": map[string]any{"foo": "b", "bar": []any{"b"}}, "as_node": "node_b"},
	} {
		s.Must(http.StatusOK, "POST", "/threads/"+byHand+"/state", u)
	}
	shape := func(h []map[string]any) []string {
		var out []string
		for _, st := range h {
			out = append(out, js([]any{st["values"], st["next"]}))
		}
		return out
	}
	got, want := shape(history(t, s, ran)), shape(history(t, s, byHand))
	// The executor also records the input checkpoint (next: __start__),
	// which update_state as __start__ skips.
	if len(got) != len(want)+1 || js(got[:len(want)]) != js(want) {
		t.Fatalf("executor history %v\nupdate_state history %v", got, want)
	}
}

func TestStatelessRuns(t *testing.T) {
	s := start(t)
	r := s.Must(http.StatusOK, "POST", "/runs/wait", map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}})
	wantJSON(t, "stateless wait", r.Map(t), `{"foo":"b","bar":["a","b"]}`)
	threadGone(t, s, strings.Split(r.Header.Get("Content-Location"), "/")[2])

	run := s.Must(http.StatusOK, "POST", "/runs", map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}, "on_completion": "keep"})
	kept := run.Map(t)
	if !strings.HasPrefix(run.Header.Get("Content-Location"), "/runs/") {
		t.Fatalf("Content-Location %q", run.Header.Get("Content-Location"))
	}
	runStatus(t, s, kept["thread_id"].(string), kept["run_id"].(string), "success")
	if got := s.Must(http.StatusOK, "GET", run.Header.Get("Content-Location"), nil).Map(t); got["status"] != "success" {
		t.Fatalf("GET %s: %s", run.Header.Get("Content-Location"), js(got))
	}
	wantJSON(t, "kept thread values", thread(t, s, kept["thread_id"].(string))["values"], `{"foo":"b","bar":["a","b"]}`)

	var batch []map[string]any
	s.Must(http.StatusOK, "POST", "/runs/batch", []map[string]any{
		{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}, "on_completion": "keep"},
		{"assistant_id": "echo_chat", "input": map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}, "on_completion": "keep"},
	}).JSON(t, &batch)
	if len(batch) != 2 {
		t.Fatalf("batch: %s", js(batch))
	}
	for _, b := range batch {
		runStatus(t, s, b["thread_id"].(string), b["run_id"].(string), "success")
	}
	msgs := thread(t, s, batch[1]["thread_id"].(string))["values"].(map[string]any)["messages"].([]any)
	if len(msgs) != 2 || msgs[1].(map[string]any)["content"] != "echo: hi" {
		t.Fatalf("echo_chat: %s", js(msgs))
	}
	s.Must(http.StatusBadRequest, "POST", "/runs", map[string]any{"assistant_id": "hitl", "command": map[string]any{"resume": "x"}})
}

// As LangGraph: input keys that are not channels are ignored, and
// interrupt_before / interrupt_after may name nodes the graph lacks.
func TestRunIgnoresUnknownInputKeysAndNodes(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	values := wait(t, s, tid, map[string]any{"assistant_id": "foo_bar",
		"input": map[string]any{"foo": "x", "nope": 1}, "interrupt_before": []string{"nope"}, "interrupt_after": []string{"nope"}})
	if _, ok := values["nope"]; ok || values["foo"] == nil {
		t.Fatalf("values %s", js(values))
	}
}

func TestBadRunRequestsChangeNothing(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	for _, c := range []struct {
		status int
		body   any
	}{
		{http.StatusUnprocessableEntity, map[string]any{}},
		{http.StatusUnprocessableEntity, map[string]any{"assistant_id": "nope"}},
		{http.StatusNotFound, map[string]any{"assistant_id": "00000000-0000-0000-0000-000000000001"}},
		{http.StatusUnprocessableEntity, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"bar": "not a list"}}},
		{http.StatusUnprocessableEntity, map[string]any{"assistant_id": "foo_bar", "input": "text"}},
		{http.StatusUnprocessableEntity, map[string]any{"assistant_id": "foo_bar", "multitask_strategy": "later"}},
		{http.StatusUnprocessableEntity, map[string]any{"assistant_id": "foo_bar", "checkpoint_id": "x"}},
		{http.StatusNotFound, map[string]any{"assistant_id": "foo_bar", "checkpoint_id": "1ef4a9b8-d80d-6fa7-8000-9300467fad0f"}},
		{http.StatusUnprocessableEntity, map[string]any{"assistant_id": "foo_bar", "config": map[string]any{"recursion_limit": -1}}},
		{http.StatusUnprocessableEntity, map[string]any{"assistant_id": "foo_bar", "after_seconds": -1}},
		{http.StatusUnprocessableEntity, map[string]any{"assistant_id": "foo_bar", "command": map[string]any{"goto": "nope"}}},
		{http.StatusUnprocessableEntity, `{"assistant_id":"foo_bar","input":{"foo":"a\u0000b"}}`},
		{http.StatusUnprocessableEntity, `{"assistant_id":"foo_bar","metadata":{"k":"\u0000"}}`},
		{http.StatusUnprocessableEntity, `{"assistant_id":"foo_bar","input":{"foo":1e200000}}`},
		{http.StatusUnprocessableEntity, "[1]"},
		{http.StatusUnprocessableEntity, "{"},
	} {
		if r := s.Do("POST", "/threads/"+tid+"/runs", c.body); r.Status != c.status || r.Detail(t) == "" {
			t.Errorf("%v: %d %s, want %d with a detail", c.body, r.Status, r.Body, c.status)
		}
	}
	s.Must(http.StatusNotFound, "POST", "/threads/00000000-0000-0000-0000-000000000002/runs", map[string]any{"assistant_id": "foo_bar"})
	s.Must(http.StatusUnprocessableEntity, "POST", "/threads/nope/runs", map[string]any{"assistant_id": "foo_bar"})
	if n := dbCount(t, s, `SELECT count(*) FROM runs`); n != 0 {
		t.Fatalf("%d runs after bad requests", n)
	}
	if th := thread(t, s, tid); th["status"] != "idle" || js(th["metadata"]) != "{}" {
		t.Fatalf("thread changed: %s", js(th))
	}
	// if_not_exists=create makes the thread.
	const fresh = "6f1b1b1e-0000-4000-8000-000000000003"
	wait(t, s, fresh, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}, "if_not_exists": "create"})
	if thread(t, s, fresh)["status"] != "idle" {
		t.Fatal("if_not_exists=create")
	}
}

func TestAssistants(t *testing.T) {
	s := start(t)
	a := s.Must(http.StatusOK, "GET", "/assistants/foo_bar", nil).Map(t)
	if a["assistant_id"] != "59bfe87c-f4fa-5cd5-8a97-4f116167b027" || a["graph_id"] != "foo_bar" || a["version"] != float64(1) {
		t.Fatalf("assistant: %s", js(a))
	}
	s.Must(http.StatusOK, "GET", "/assistants/59bfe87c-f4fa-5cd5-8a97-4f116167b027", nil)
	s.Must(http.StatusNotFound, "GET", "/assistants/00000000-0000-0000-0000-000000000001", nil)
	var list []map[string]any
	r := s.Must(http.StatusOK, "POST", "/assistants/search", map[string]any{"graph_id": "hitl"})
	r.JSON(t, &list)
	if len(list) != 1 || list[0]["graph_id"] != "hitl" || r.Header.Get("X-Pagination-Total") != "1" {
		t.Fatalf("search: %s", js(list))
	}
	s.Must(http.StatusOK, "POST", "/assistants/search", nil).JSON(t, &list)
	if len(list) != 9 { // one system assistant per test graph
		t.Fatalf("all assistants: %d", len(list))
	}
}

func TestHITLInterruptThenResume(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	res := wait(t, s, tid, map[string]any{"assistant_id": "hitl", "input": map[string]any{"input": "x"}})
	intr, _ := res["__interrupt__"].([]any)
	if len(intr) != 1 || js(intr[0].(map[string]any)["value"]) != `{"input":"x","question":"approve?"}` {
		t.Fatalf("interrupt result: %s", js(res))
	}
	th := thread(t, s, tid)
	if th["status"] != "interrupted" || len(th["interrupts"].(map[string]any)) != 1 {
		t.Fatalf("thread: %s", js(th))
	}
	st := state(t, s, tid)
	tasks := st["tasks"].([]any)
	if js(st["next"]) != `["ask"]` || len(tasks) != 1 || len(tasks[0].(map[string]any)["interrupts"].([]any)) != 1 {
		t.Fatalf("state: %s", js(st))
	}
	var runs []map[string]any
	s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs", nil).JSON(t, &runs)
	if runs[0]["status"] != "success" {
		t.Fatalf("an interrupted run ends success: %s", js(runs[0]))
	}
	res = wait(t, s, tid, map[string]any{"assistant_id": "hitl", "input": map[string]any{}, "command": map[string]any{"resume": "ok"}})
	wantJSON(t, "resumed", res, `{"input":"x","answer":"ok","result":"x:ok"}`)
	if th := thread(t, s, tid); th["status"] != "idle" || js(th["interrupts"]) != "{}" {
		t.Fatalf("thread after resume: %s", js(th))
	}
	// The resume is recorded as LangGraph does: under the interrupted
	// checkpoint, for the ask task and under the null task id.
	if n := dbCount(t, s, `SELECT count(*) FROM checkpoint_writes WHERE thread_id = $1 AND channel = '__resume__'`, tid); n != 2 {
		t.Fatalf("%d __resume__ writes, want 2", n)
	}
}

// An interrupt committed on its own while a parallel task still runs is
// in the thread's projection when the run ends: the thread lists it.
func TestParallelInterruptIsProjected(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	res := wait(t, s, tid, map[string]any{"assistant_id": "parask", "input": map[string]any{}})
	if intr, _ := res["__interrupt__"].([]any); len(intr) != 1 {
		t.Fatalf("result: %s", js(res))
	}
	th := thread(t, s, tid)
	if th["status"] != "interrupted" || len(th["interrupts"].(map[string]any)) != 1 {
		t.Fatalf("thread: %s", js(th))
	}
	res = wait(t, s, tid, map[string]any{"assistant_id": "parask", "command": map[string]any{"resume": "yes"}})
	wantJSON(t, "resumed", res, `{"log":["yes","slow"]}`)
	if th := thread(t, s, tid); th["status"] != "idle" || js(th["interrupts"]) != "{}" {
		t.Fatalf("thread after resume: %s", js(th))
	}
}

func TestStaticBreakpoints(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	res := wait(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}, "interrupt_before": []string{"node_b"}})
	wantJSON(t, "before node_b", res, `{"foo":"a","bar":["a"]}`)
	if th := thread(t, s, tid); th["status"] != "interrupted" || js(state(t, s, tid)["next"]) != `["node_b"]` {
		t.Fatalf("thread: %s", js(th))
	}
	// Resuming with null input passes the breakpoint.
	wantJSON(t, "resumed", wait(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": nil, "interrupt_before": []string{"node_b"}}),
		`{"foo":"b","bar":["a","b"]}`)

	tid = newThread(t, s)
	res = wait(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}, "interrupt_after": "*"})
	// "*" stops after every node, but not after the hidden input mapping.
	wantJSON(t, "after node_a", res, `{"foo":"a","bar":["a"]}`)
	wantJSON(t, "after node_b", wait(t, s, tid, map[string]any{"assistant_id": "foo_bar", "interrupt_after": []string{"node_b"}}), `{"foo":"b","bar":["a","b"]}`)
	if th := thread(t, s, tid); th["status"] != "idle" {
		t.Fatalf("thread: %s", js(th))
	}
}

func TestNodeErrorFailsTheRun(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	res := wait(t, s, tid, map[string]any{"assistant_id": "slow", "input": map[string]any{"ms": "x"}})
	e, _ := res["__error__"].(map[string]any)
	if e == nil || !strings.Contains(e["message"].(string), "ms must be a number") || e["error"] == "" {
		t.Fatalf("wait result: %s", js(res))
	}
	th := thread(t, s, tid)
	if th["status"] != "error" || th["error"].(map[string]any)["message"] != e["message"] {
		t.Fatalf("thread: %s", js(th))
	}
	var runs []map[string]any
	s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs", nil).JSON(t, &runs)
	if runs[0]["status"] != "error" {
		t.Fatalf("run: %s", js(runs[0]))
	}
	task := state(t, s, tid)["tasks"].([]any)[0].(map[string]any)
	if task["name"] != "first" || !strings.Contains(task["error"].(string), "ms must be a number") {
		t.Fatalf("task: %s", js(task))
	}
	// A failed run is final: the dispatch was acked once, not retried.
	if n := dbCount(t, s, `SELECT count(*) FROM run_dispatch_attempts`); n != 1 {
		t.Fatalf("%d attempts", n)
	}
	// A new run on the errored thread works, and the thread recovers.
	wait(t, s, tid, map[string]any{"assistant_id": "slow", "input": map[string]any{"ms": 0}})
	if th := thread(t, s, tid); th["status"] != "idle" || th["error"] != nil {
		t.Fatalf("thread after a good run: %s", js(th))
	}
}

func TestRecursionLimit(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	res := wait(t, s, tid, map[string]any{"assistant_id": "loop", "input": map[string]any{"n": 0}, "config": map[string]any{"recursion_limit": 5}})
	e, _ := res["__error__"].(map[string]any)
	if e == nil || e["error"] != "GraphRecursionError" {
		t.Fatalf("result: %s", js(res))
	}
	// Steps 0 (input mapping) to 5 ran; the sixth would exceed the limit.
	wantJSON(t, "values", thread(t, s, tid)["values"], `{"n":5}`)
	res = wait(t, s, tid, map[string]any{"assistant_id": "loop", "input": map[string]any{"n": 990}})
	wantJSON(t, "default limit 25 is enough for 10 steps", res, `{"n":1000}`)
}

// A step whose node failed keeps the pending writes of the nodes that
// succeeded; continuing the thread re-runs only the failed node.
func TestFailedStepReusesPendingWrites(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	tag := tid
	callsMu.Lock()
	failB[tag] = 1
	callsMu.Unlock()
	res := wait(t, s, tid, map[string]any{"assistant_id": "fan", "input": map[string]any{"tag": tag}})
	if e, _ := res["__error__"].(map[string]any); e == nil || !strings.Contains(e["message"].(string), "b failed") {
		t.Fatalf("first run: %s", js(res))
	}
	st := state(t, s, tid)
	if js(st["next"]) != `["a","b"]` {
		t.Fatalf("next after failure: %s", js(st["next"]))
	}
	wantJSON(t, "continue", wait(t, s, tid, map[string]any{"assistant_id": "fan"}), `{"tag":"`+tag+`","log":["a","b","join"]}`)
	if a, b, j := count(tag+":a"), count(tag+":b"), count(tag+":join"); a != 1 || b != 2 || j != 1 {
		t.Fatalf("executions a=%d b=%d join=%d, want 1, 2, 1", a, b, j)
	}
}

func TestForkFromAnOlderCheckpoint(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	wait(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}})
	h := history(t, s, tid)
	afterA := h[1] // next: node_b
	cid := afterA["checkpoint"].(map[string]any)["checkpoint_id"].(string)
	res := wait(t, s, tid, map[string]any{"assistant_id": "foo_bar", "checkpoint_id": cid,
		"command": map[string]any{"update": map[string]any{"foo": "forked"}}})
	wantJSON(t, "fork result", res, `{"foo":"b","bar":["a","b"]}`)
	h2 := history(t, s, tid)
	if len(h2) != len(h)+2 {
		t.Fatalf("history %d → %d, want +2 (update input, node_b)", len(h), len(h2))
	}
	// The fork's first checkpoint hangs off the chosen checkpoint.
	fork := h2[1]
	if fork["parent_checkpoint"].(map[string]any)["checkpoint_id"] != cid || fork["metadata"].(map[string]any)["source"] != "input" {
		t.Fatalf("fork checkpoint: %s", js(fork))
	}
	wantJSON(t, "fork input values", fork["values"], `{"foo":"forked","bar":["a"]}`)
}

func TestCommandGotoAndDurability(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	wantJSON(t, "goto node_b", wait(t, s, tid, map[string]any{"assistant_id": "foo_bar",
		"command": map[string]any{"goto": "node_b", "update": map[string]any{"foo": "x"}}}), `{"foo":"b","bar":["b"]}`)
	// sync and async write every checkpoint; exit only the last, whose
	// values and versions are complete.
	for mode, want := range map[string]int{"sync": 4, "async": 4, "exit": 1} {
		tid := newThread(t, s)
		wantJSON(t, mode, wait(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}, "durability": mode}),
			`{"foo":"b","bar":["a","b"]}`)
		if n := len(history(t, s, tid)); n != want {
			t.Fatalf("durability %s: %d checkpoints, want %d", mode, n, want)
		}
		wantJSON(t, mode+" state", state(t, s, tid)["values"], `{"foo":"b","bar":["a","b"]}`)
		wantJSON(t, mode+" second run", wait(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}, "durability": mode}),
			`{"foo":"b","bar":["a","b","a","b"]}`)
	}
	// An interrupt under exit durability is kept with the last checkpoint.
	tid = newThread(t, s)
	res := wait(t, s, tid, map[string]any{"assistant_id": "hitl", "input": map[string]any{"input": "x"}, "durability": "exit"})
	if _, ok := res["__interrupt__"]; !ok || thread(t, s, tid)["status"] != "interrupted" {
		t.Fatalf("exit interrupt: %s", js(res))
	}
	wantJSON(t, "exit resume", wait(t, s, tid, map[string]any{"assistant_id": "hitl", "command": map[string]any{"resume": "ok"}, "durability": "exit"}),
		`{"input":"x","answer":"ok","result":"x:ok"}`)
	s.Must(http.StatusUnprocessableEntity, "POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "foo_bar", "durability": "never"})
}

// A page of runs stops growing past 4 MiB, and says where to go on.
func TestRunListPageIsBounded(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	big := strings.Repeat("x", 900<<10)
	for range 6 {
		create(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": big}})
	}
	r := s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs?limit=10", nil)
	var page []map[string]any
	r.JSON(t, &page)
	if len(page) != 5 || r.Header.Get("X-Pagination-Next") != "5" {
		t.Fatalf("first page: %d runs, next %q", len(page), r.Header.Get("X-Pagination-Next"))
	}
	r = s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs?limit=10&offset=5", nil)
	r.JSON(t, &page)
	if len(page) != 1 || r.Header.Get("X-Pagination-Next") != "" {
		t.Fatalf("second page: %d runs, next %q", len(page), r.Header.Get("X-Pagination-Next"))
	}
}
