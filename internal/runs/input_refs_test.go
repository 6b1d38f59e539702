package runs_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
	"github.com/weftdev/weft/migrations"
)

// numbersInput is slow's input with numbers jsonb keeps as written (1.0,
// 1.50, a 30-digit integer) or rewrites (1e3 reads 1000, -0.0 reads 0.0),
// and characters encoding/json and jsonb write differently.
const numbersInput = `{"tag": {"n": 1.0, "e": 1e3, "f": 1.50, "big": 123456789012345678901234567890, "neg": -0.0,
	"u": "é 😀 \u2028 \\u0041 <b> & \"q\""}, "ms": 0.0}`

// inputRefsRuns counts the runs whose row holds an input reference to the
// __start__ blob of their own input checkpoint, and no input.
const inputRefsRuns = `SELECT count(*) FROM runs r WHERE r.kwargs ? 'input_ref' AND NOT r.kwargs ? 'input'
	AND EXISTS (SELECT 1 FROM checkpoints c WHERE c.thread_id = r.thread_id::text AND c.checkpoint_ns = ''
		AND c.metadata ->> 'source' = 'input' AND c.metadata ->> 'run_id' = r.run_id::text
		AND c.checkpoint -> 'channel_versions' ->> '__start__' = r.kwargs ->> 'input_ref')`

// danglingInputRefs counts the runs whose input reference names no blob.
const danglingInputRefs = `SELECT count(*) FROM runs r WHERE r.kwargs ? 'input_ref' AND NOT EXISTS (SELECT 1 FROM checkpoint_blobs b
	WHERE b.thread_id = r.thread_id::text AND b.checkpoint_ns = '' AND b.channel = '__start__' AND b.version = r.kwargs ->> 'input_ref')`

// inputRefScenario runs chat turns (unicode, a long text, a webhook), an
// input of numbers (with a webhook), an empty input, an interrupt and its
// resume (a command, no input) and a command's update, and returns every
// read of the runs, in order: each run (GET), each thread's run list,
// each run's join, the UI's run pages (the run, /inspect's summary of it
// and of the thread's runs, its dispatches), the webhooks' bodies; again
// after a keep_latest prune of two threads; the runs of a thread whose
// blobs a stock saver deleted through the "langgraph" views. refsBefore is how many
// runs held an input reference before the prunes.
func inputRefScenario(t *testing.T, s *servertest.Server, hook *rawReceiver) (out []string, refsBefore int) {
	t.Helper()
	type ran struct{ tid, rid string }
	var all []ran
	run := func(tid string, body map[string]any) string {
		resp := s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs/wait", body)
		rid := strings.TrimPrefix(resp.Header.Get("Content-Location"), "/threads/"+tid+"/runs/")
		all = append(all, ran{tid, rid})
		return rid
	}
	chat, nums, empty, h := newThread(t, s), newThread(t, s), newThread(t, s), newThread(t, s)
	for i, text := range []string{"hello", "a <b> & \"c\" é 😀 \u2028 \\u0041", strings.Repeat("long ", 120)} {
		body := map[string]any{"assistant_id": "echo_chat", "input": human(text)}
		if i == 1 {
			body["webhook"] = hook.URL
		}
		run(chat, body)
	}
	run(chat, map[string]any{"assistant_id": "echo_chat", "command": map[string]any{"update": human("no answer")}})
	run(nums, map[string]any{"assistant_id": "slow", "input": json.RawMessage(numbersInput), "webhook": hook.URL})
	hooked := []ran{all[1], all[len(all)-1]}
	run(empty, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{}})
	run(h, map[string]any{"assistant_id": "hitl", "input": map[string]any{"input": "draft"}})
	run(h, map[string]any{"assistant_id": "hitl", "command": map[string]any{"resume": map[string]any{"ok": 1.5}}})
	refsBefore = dbCount(t, s, `SELECT count(*) FROM runs WHERE kwargs ? 'input_ref'`)
	for _, r := range hooked {
		webhookState(t, s, r.tid, r.rid, "delivered")
	}

	read := func(path string) {
		r := s.Must(http.StatusOK, "GET", path, nil)
		out = append(out, "GET "+path+"\n"+strings.ReplaceAll(string(r.Body), hook.URL, "<hook>"))
	}
	readAll := func() {
		for _, r := range all {
			read("/threads/" + r.tid + "/runs/" + r.rid)
		}
		for _, tid := range []string{chat, nums, empty, h} {
			read("/threads/" + tid + "/runs")
			read("/inspect/threads/" + tid + "/runs")
		}
		for _, r := range all {
			read("/threads/" + r.tid + "/runs/" + r.rid + "/join")
			read("/inspect/threads/" + r.tid + "/runs/" + r.rid)
		}
	}
	readAll()
	for _, r := range all {
		read("/threads/" + r.tid + "/runs/" + r.rid + "/dispatches")
	}
	out = append(out, hook.byRun(t, []string{hooked[0].rid, hooked[1].rid})...)

	s.Must(http.StatusOK, "POST", "/threads/prune", map[string]any{"thread_ids": []string{chat, nums}, "strategy": "keep_latest"})
	readAll()
	// A stock saver's delete (the joins would then read results whose
	// checkpoints are gone: not the point here).
	if _, err := s.DB.Exec(context.Background(), `DELETE FROM langgraph.checkpoint_blobs WHERE thread_id = $1`, h); err != nil {
		t.Fatal(err)
	}
	read("/threads/" + h + "/runs")
	for _, r := range all {
		if r.tid == h {
			read("/threads/" + r.tid + "/runs/" + r.rid)
		}
	}
	return out, refsBefore
}

// A run's input stored by reference reads byte for byte as one stored
// whole, everywhere a run is read: the same scenario on a server storing
// every input whole and on one storing each by reference gives the same
// responses and webhook bodies, up to ids and timestamps, before and after
// prunes; the reference server's rows hold references, not inputs.
func TestRunInputRefsSameBytesAsWhole(t *testing.T) {
	wholeHook, refsHook := newRawReceiver(t), newRawReceiver(t)
	one := func(c *server.Config) { c.Graphs = testGraphs(); allowPrivate(c); c.WorkerID = "w" }
	whole := startWith(t, func(c *server.Config) { one(c); c.InputRefMinBytes = -1 })
	refs := servertest.StartWith(t, pgtest.DSN(t), one)
	a, n := inputRefScenario(t, whole, wholeHook)
	if n != 0 || dbCount(t, whole, `SELECT count(*) FROM runs WHERE kwargs ? 'input_ref'`) != 0 {
		t.Fatalf("the whole server stored %d inputs by reference", n)
	}
	b, n := inputRefScenario(t, refs, refsHook)
	// Every run with an input (six: not the two commands) held a reference
	// to its input checkpoint's __start__ blob.
	if n != 6 {
		t.Fatalf("%d runs held an input reference, want 6", n)
	}
	sameTranscripts(t, a, b)
	// The scenario read what it meant to: the inputs as sent (1e3 as
	// jsonb prints it), the commands, the webhooks' runs.
	joined := strings.Join(b, "\n")
	for _, want := range []string{`"input":{"ms":0.0,"tag":{"e":1000,"f":1.50,"n":1.0,"u":"é 😀 \u2028 \\u0041 \u003cb\u003e \u0026 \"q\"","big":123456789012345678901234567890,"neg":0.0}}`,
		`"input":{}`, `"content":"long long `, `"input":{"input":"draft"}`, `"command":{"resume":{"ok":1.5}}`,
		`"content":"a \u003cb\u003e \u0026 \"c\" é 😀 \u2028 \\u0041"`} {
		if !strings.Contains(joined, want) {
			t.Fatalf("no read holds %s", want)
		}
	}
	if n := dbCount(t, refs, danglingInputRefs); n != 0 {
		t.Fatalf("%d runs reference a blob that is gone", n)
	}
	// The pruned threads' inputs were stored whole again, so were those of
	// the thread whose blobs a stock saver deleted.
	if n := dbCount(t, refs, `SELECT count(*) FROM runs WHERE kwargs ? 'input'`); n < 6 {
		t.Fatalf("%d runs store their input whole after the prunes, want at least 6", n)
	}
}

// The row of a run whose input checkpoint is committed holds the
// reference, not the input; one smaller than the threshold, a command and
// a continue without input hold theirs as they came.
func TestRunInputRefsRow(t *testing.T) {
	s := startWith(t, func(c *server.Config) { c.InputRefMinBytes = 60 })
	tid := newThread(t, s)
	wait(t, s, tid, map[string]any{"assistant_id": "echo_chat", "input": human(strings.Repeat("x", 100))})
	short := create(t, s, tid, map[string]any{"assistant_id": "echo_chat", "input": human("hi")})
	runStatus(t, s, tid, short["run_id"].(string), "success")
	cmd := create(t, s, tid, map[string]any{"assistant_id": "echo_chat", "command": map[string]any{"update": human(strings.Repeat("y", 100))}})
	runStatus(t, s, tid, cmd["run_id"].(string), "success")
	none := create(t, s, tid, map[string]any{"assistant_id": "echo_chat"})
	runStatus(t, s, tid, none["run_id"].(string), "success")
	stored := func(rid string) map[string]json.RawMessage {
		var k map[string]json.RawMessage
		if err := s.DB.QueryRow(context.Background(), `SELECT kwargs FROM runs WHERE run_id = $1`, rid).Scan(&k); err != nil {
			t.Fatal(err)
		}
		return k
	}
	var rows []string
	if err := s.DB.QueryRow(context.Background(), `SELECT array_agg(run_id::text ORDER BY created_at) FROM runs WHERE thread_id = $1`, tid).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if n := dbCount(t, s, inputRefsRuns); n != 1 {
		t.Fatalf("%d runs reference their input checkpoint, want 1 (the long input)", n)
	}
	if k := stored(rows[0]); k["input"] != nil || len(k["input_ref"]) == 0 {
		t.Fatalf("the long input's row: %v", k)
	}
	for i, want := range []string{`{"messages": [{"type": "human", "content": "hi"}]}`, `null`, `null`} {
		if k := stored(rows[i+1]); string(k["input"]) != want || k["input_ref"] != nil {
			t.Fatalf("run %d's row: input %s, input_ref %s; want input %s", i+1, k["input"], k["input_ref"], want)
		}
	}
	if got := js(mustKwargs(t, s, tid, map[string]any{"run_id": rows[0]})["input"]); got != js(human(strings.Repeat("x", 100))) {
		t.Fatalf("the long input reads %s", got)
	}
	if got := js(mustKwargs(t, s, tid, cmd)["command"]); !strings.Contains(got, strings.Repeat("y", 100)) {
		t.Fatalf("the command reads %s", got)
	}
}

// Every way a blob goes away leaves the runs that referenced it readable
// with their inputs: keep_latest (API and ttl) and a stock saver's delete
// store the inputs whole first, a rollback deletes the run with its
// checkpoints, a thread delete its runs with its blobs; a copy copies no
// run. A reference whose blob is missing is an error, never a run without
// its input.
func TestRunInputRefsRetention(t *testing.T) {
	s := startWith(t, func(c *server.Config) { c.TTLSweepInterval = 20 * time.Millisecond })
	// runsOf reads every run of the thread (GET each, and the list).
	runsOf := func(tid string) string {
		var b strings.Builder
		b.Write(s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs", nil).Body)
		var list []map[string]any
		s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs", nil).JSON(t, &list)
		for _, r := range list {
			b.Write(s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs/"+r["run_id"].(string), nil).Body)
		}
		return b.String()
	}
	chat := func() string {
		tid := newThread(t, s)
		for i := range 3 {
			wait(t, s, tid, map[string]any{"assistant_id": "echo_chat", "input": human(strings.Repeat("turn ", 30) + string(rune('a'+i)))})
		}
		if n := dbCount(t, s, `SELECT count(*) FROM runs WHERE thread_id = $1 AND kwargs ? 'input_ref'`, tid); n != 3 {
			t.Fatalf("%d of 3 runs hold an input reference", n)
		}
		return tid
	}
	gone := func(what, tid string, before string) {
		t.Helper()
		if n := dbCount(t, s, danglingInputRefs+` AND r.thread_id = $1`, tid); n != 0 {
			t.Fatalf("%s: %d runs reference a blob that is gone", what, n)
		}
		if after := runsOf(tid); after != before {
			t.Fatalf("%s: the runs read\n%.600s\nbefore:\n%.600s", what, after, before)
		}
	}

	t.Run("keep_latest", func(t *testing.T) {
		tid := chat()
		before := runsOf(tid)
		s.Must(http.StatusOK, "POST", "/threads/prune", map[string]any{"thread_ids": []string{tid}, "strategy": "keep_latest"})
		if n := dbCount(t, s, `SELECT count(*) FROM runs WHERE thread_id = $1 AND kwargs ? 'input'`, tid); n < 2 {
			t.Fatalf("%d inputs stored whole after the prune, want at least the two older turns'", n)
		}
		gone("keep_latest", tid, before)
	})

	t.Run("ttl keep_latest", func(t *testing.T) {
		tid := chat()
		before := runsOf(tid)
		s.Must(http.StatusOK, "PATCH", "/threads/"+tid, map[string]any{"ttl": map[string]any{"ttl": 60, "strategy": "keep_latest"}})
		expireKeepLatest(t, s, tid)
		gone("ttl", tid, before)
	})

	t.Run("stock saver's delete through langgraph", func(t *testing.T) {
		tid := chat()
		before := runsOf(tid)
		for _, table := range []string{"checkpoint_writes", "checkpoint_blobs", "checkpoints"} {
			if _, err := s.DB.Exec(context.Background(), `DELETE FROM langgraph.`+table+` WHERE thread_id = $1`, tid); err != nil {
				t.Fatal(err)
			}
		}
		if n := dbCount(t, s, `SELECT count(*) FROM runs WHERE thread_id = $1 AND kwargs ? 'input'`, tid); n != 3 {
			t.Fatalf("%d of 3 inputs stored whole after the delete", n)
		}
		gone("langgraph delete", tid, before)
	})

	t.Run("rollback, copy and delete", func(t *testing.T) {
		// A run cancelled with rollback once its input checkpoint and a step
		// are committed goes with its checkpoints and blobs; the run before
		// it keeps its input.
		slowTID := newThread(t, s)
		wait(t, s, slowTID, slowBody(strings.Repeat("r", 200), 0, ""))
		kept := runsOf(slowTID)
		run := create(t, s, slowTID, slowBody(strings.Repeat("s", 200), 3000, ""))
		rid := run["run_id"].(string)
		stateUntil(t, s, slowTID, func(v map[string]any) bool { l, _ := v["log"].([]any); return len(l) == 3 })
		if n := dbCount(t, s, `SELECT count(*) FROM runs WHERE run_id = $1 AND kwargs ? 'input_ref'`, rid); n != 1 {
			t.Fatal("the running run's input is not referenced")
		}
		s.Must(http.StatusNoContent, "POST", "/threads/"+slowTID+"/runs/"+rid+"/cancel?wait=true&action=rollback", nil)
		s.Must(http.StatusNotFound, "GET", "/threads/"+slowTID+"/runs/"+rid, nil)
		gone("rollback", slowTID, kept)

		tid := chat()
		before := runsOf(tid)
		cp := s.Must(http.StatusOK, "POST", "/threads/"+tid+"/copy", nil).Map(t)["thread_id"].(string)
		if got := strings.TrimSpace(runsOf(cp)); got != "[]" {
			t.Fatalf("the copy has runs: %.300s", got)
		}
		gone("copy", tid, before)
		s.Must(http.StatusNoContent, "DELETE", "/threads/"+tid, nil)
		if n := dbCount(t, s, `SELECT count(*) FROM runs WHERE thread_id = $1`, tid); n != 0 {
			t.Fatalf("%d runs of the deleted thread remain", n)
		}
	})

	t.Run("a missing blob is an error", func(t *testing.T) {
		tid := chat()
		if _, err := s.DB.Exec(context.Background(), `DELETE FROM checkpoint_blobs WHERE thread_id = $1 AND channel = '__start__'`, tid); err != nil {
			t.Fatal(err)
		}
		var k []byte
		err := s.DB.QueryRow(context.Background(), `SELECT weft_run_kwargs(kwargs, thread_id) FROM runs WHERE thread_id = $1 LIMIT 1`, tid).Scan(&k)
		if err == nil || !strings.Contains(err.Error(), "of __start__ is not stored") {
			t.Fatalf("a run whose input blob is gone read %.200s (%v)", k, err)
		}
		if r := s.Do("GET", "/threads/"+tid+"/runs", nil); r.Status != http.StatusInternalServerError {
			t.Fatalf("GET runs: %d %.200s", r.Status, r.Body)
		}
	})
}

// inputPut is a worker's put of an input checkpoint in namespace ns whose
// __start__ holds start (JSON), with metadata md.
func inputPut(ns, start string, md map[string]any) map[string]any {
	v := "00000000000000000000000000000001.0.5"
	return map[string]any{"parent_checkpoint_id": "", "checkpoint_ns": ns,
		"checkpoint": map[string]any{"v": 4, "id": "1f0c0000-0000-6000-8000-000000000001", "ts": "2026-11-23T00:00:00Z",
			"channel_values": map[string]any{"__start__": json.RawMessage(start)}, "channel_versions": map[string]any{"__start__": v},
			"versions_seen": map[string]any{}},
		"metadata": md, "new_versions": map[string]any{"__start__": v}}
}

// A commit holds its run's dispatch, and a cancel locks the run's row
// before the dispatch: were the commit of an input checkpoint to wait for
// the run's row, the two would deadlock. It does not wait: a row locked
// meanwhile keeps its input whole.
func TestRunInputRefsCommitNeverWaitsForTheRunRow(t *testing.T) {
	s := external(t, nil)
	tid := newThread(t, s)
	input := `{"foo": "locked"}`
	run := create(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": json.RawMessage(input)})
	rid := run["run_id"].(string)
	got := claim(t, s, "ext-lock", 1, 5000)
	if len(got) != 1 || got[0].Run.RunID != rid {
		t.Fatalf("claimed %s", js(got))
	}
	c := got[0]
	ctx := context.Background()
	tx, err := s.DB.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT 1 FROM runs WHERE run_id = $1 FOR NO KEY UPDATE`, rid); err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() {
		done <- s.Do("POST", "/dispatch/"+c.Dispatch.DispatchID+"/commit", map[string]any{"claim_token": c.ClaimToken,
			"checkpoints": []any{inputPut("", input, map[string]any{"source": "input", "step": -1, "run_id": rid})}}).Status
	}()
	select {
	case st := <-done:
		if st != http.StatusOK {
			t.Fatalf("the commit answered %d", st)
		}
	case <-time.After(5 * time.Second):
		_ = tx.Rollback(ctx)
		t.Fatal("the commit of the input checkpoint waited for the locked run row")
	}
	// As a cancel would, the locker takes the dispatch next: free.
	if _, err := tx.Exec(ctx, `SELECT 1 FROM run_dispatches WHERE run_id = $1 FOR UPDATE`, rid); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if n := dbCount(t, s, `SELECT count(*) FROM runs WHERE run_id = $1 AND kwargs ->> 'input' = $2`, rid, `{"foo": "locked"}`); n != 1 {
		t.Fatal("the locked run's input is not stored whole")
	}
}

// An external worker's input checkpoint (LangGraph's: source "input", the
// run's id, __start__ holding the input) gets the run's input referenced
// when its blob reads back as the stored input; a worker that rewrote it
// (JavaScript reads 1.0 as 1), a put of another run or of a subgraph
// leave it whole.
func TestRunInputRefsExternalWorker(t *testing.T) {
	s := external(t, nil)
	for _, tc := range []struct {
		name, input, start string
		otherRun           bool
		ns                 string
		ref                bool
	}{
		{name: "exact", input: `{"foo": "` + strings.Repeat("é", 60) + `"}`, start: `{"foo": "` + strings.Repeat("é", 60) + `"}`, ref: true},
		{name: "rewritten number", input: `{"foo": 1.0}`, start: `{"foo": 1}`},
		{name: "another run's put", input: `{"foo": "x"}`, start: `{"foo": "x"}`, otherRun: true},
		{name: "a subgraph's put", input: `{"foo": "x"}`, start: `{"foo": "x"}`, ns: "sub:1"},
	} {
		tid := newThread(t, s)
		run := create(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": json.RawMessage(tc.input)})
		got := claim(t, s, "ext-input", 1, 5000)
		if len(got) != 1 || got[0].Run.RunID != run["run_id"] {
			t.Fatalf("%s: claimed %s", tc.name, js(got))
		}
		c := got[0]
		md := map[string]any{"source": "input", "step": -1, "run_id": c.Run.RunID}
		if tc.otherRun {
			md["run_id"] = run["thread_id"] // any other id
		}
		s.Must(http.StatusOK, "POST", "/dispatch/"+c.Dispatch.DispatchID+"/commit", map[string]any{"claim_token": c.ClaimToken,
			"checkpoints": []any{inputPut(tc.ns, tc.start, md)}, "end": map[string]any{"status": "success", "result": map[string]any{}}})
		if n := dbCount(t, s, `SELECT count(*) FROM runs WHERE run_id = $1 AND kwargs ? 'input_ref'`, c.Run.RunID); (n == 1) != tc.ref {
			t.Fatalf("%s: %d references, want %v", tc.name, n, tc.ref)
		}
		var read struct {
			Kwargs map[string]json.RawMessage `json:"kwargs"`
		}
		s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs/"+c.Run.RunID, nil).JSON(t, &read)
		in := read.Kwargs["input"]
		var want any
		_ = json.Unmarshal([]byte(tc.input), &want)
		var have any
		_ = json.Unmarshal(in, &have)
		if js(have) != js(want) || (tc.name == "rewritten number" && string(in) != `{"foo":1.0}`) {
			t.Fatalf("%s: the run's input reads %s, want %s", tc.name, in, tc.input)
		}
	}
}

// Migration 024's down stores every input whole again (the input it
// rendered), and its up reads them as they are.
func TestRunInputRefsMigrationDown(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	wait(t, s, tid, map[string]any{"assistant_id": "echo_chat", "input": human(strings.Repeat("down ", 40))})
	var rid, want string
	if err := s.DB.QueryRow(context.Background(), `SELECT run_id::text, weft_run_kwargs(kwargs, thread_id)::text FROM runs
		WHERE thread_id = $1 AND kwargs ? 'input_ref'`, tid).Scan(&rid, &want); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tx, err := s.DB.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	for _, step := range [][2]string{{"024_run_input_refs.down.sql", "weft_run_kwargs(kwargs)"},
		{"024_run_input_refs.up.sql", "weft_run_kwargs(kwargs, thread_id)"}} {
		name, kwargs := step[0], step[1]
		sql, err := migrations.FS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, string(sql)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var stored, read string
		if err := tx.QueryRow(ctx, `SELECT kwargs::text, `+kwargs+`::text FROM runs WHERE run_id = $1`, rid).Scan(&stored, &read); err != nil {
			t.Fatal(err)
		}
		if read != want || strings.Contains(stored, "input_ref") || !strings.Contains(stored, "down down") {
			t.Fatalf("after %s the row stores %.300s and reads %.300s, want %.300s", name, stored, read, want)
		}
	}
}
