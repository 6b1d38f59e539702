package crons_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

// A cron on a thread fires when the clock reaches its tick, not before:
// an ordinary run on the thread, with cron_id (and the cron's metadata)
// in its run metadata, executed to its result; next_run_date moves to the
// following tick.
func TestCronFiresOnThread(t *testing.T) {
	e := start(t, nil)
	tid := e.newThread(t)
	c := e.cron(t, tid, map[string]any{"schedule": "* * * * *", "assistant_id": "foo_bar", "input": fooBarInput,
		"metadata": map[string]any{"origin": "test"}, "stream_mode": []string{"values", "updates"}})
	id := c["cron_id"].(string)
	tick := time.Date(2030, 1, 1, 0, 1, 0, 0, time.UTC)
	wantTime(t, "next_run_date", c["next_run_date"], tick)

	// Not due yet: a few scheduler rounds create nothing.
	e.clk.Set(tick.Add(-time.Millisecond))
	time.Sleep(100 * time.Millisecond)
	if got := e.cronRuns(t, id); len(got) != 0 {
		t.Fatalf("fired before its tick: %s", js(got))
	}

	e.clk.Set(tick)
	c = e.waitNext(t, id, tick)
	wantTime(t, "next_run_date", c["next_run_date"], tick.Add(time.Minute))
	got := e.cronRuns(t, id)
	if len(got) != 1 {
		t.Fatalf("runs = %s, want 1", js(got))
	}
	run := got[0]
	if run["thread_id"] != tid || run["temporary"] != false {
		t.Fatalf("run = %s", js(run))
	}
	md := run["metadata"].(map[string]any)
	if md["cron_id"] != id || md["origin"] != "test" || md["assistant_id"] != fooBarSystem {
		t.Errorf("run metadata = %s", js(md))
	}
	if js(run["kwargs"].(map[string]any)["stream_mode"]) != `["values","updates"]` {
		t.Errorf("kwargs = %s", js(run["kwargs"]))
	}
	rid := run["run_id"].(string)
	// It is an ordinary run: get, join (its result), its thread's state.
	e.runStatus(t, tid, rid, "success")
	if res := e.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs/"+rid+"/join", nil).Map(t); js(res) != fooBarResult {
		t.Errorf("join = %s, want %s", js(res), fooBarResult)
	}
	if v := e.Must(http.StatusOK, "GET", "/threads/"+tid+"/state", nil).Map(t)["values"]; js(v) != fooBarResult {
		t.Errorf("state = %s", js(v))
	}
	// The next tick is another run on the same thread.
	e.clk.Set(tick.Add(time.Minute))
	e.waitNext(t, id, tick.Add(time.Minute))
	if got := e.cronRuns(t, id); len(got) != 2 || got[1]["thread_id"] != tid {
		t.Fatalf("after the second tick: %s", js(got))
	}
}

// A stateless cron's runs each get a new thread: kept with
// on_run_completed keep, deleted after the run with delete (the default:
// the run is temporary, its thread swept like a stateless run's).
func TestCronStatelessThreads(t *testing.T) {
	// Temporary threads are kept 5 s after their run: long enough for the
	// test to list both runs of the deleting cron before the sweep removes
	// the first (with 1 ms it could already be gone), short enough for the
	// deletion to be seen within eventually's 15 s.
	e := start(t, func(c *server.Config) { c.TempRetention = 5 * time.Second; c.Lease = 2 * time.Second })
	keep := e.cron(t, "", map[string]any{"schedule": "* * * * *", "assistant_id": "foo_bar", "input": fooBarInput,
		"on_run_completed": "keep"})
	del := e.cron(t, "", map[string]any{"schedule": "* * * * *", "assistant_id": "foo_bar", "input": fooBarInput})
	tick := time.Date(2030, 1, 1, 0, 1, 0, 0, time.UTC)
	for i := range 2 {
		e.clk.Set(tick.Add(time.Duration(i) * time.Minute))
		e.waitNext(t, keep["cron_id"].(string), tick.Add(time.Duration(i)*time.Minute))
		e.waitNext(t, del["cron_id"].(string), tick.Add(time.Duration(i)*time.Minute))
	}
	kept := e.cronRuns(t, keep["cron_id"].(string))
	if len(kept) != 2 || kept[0]["thread_id"] == kept[1]["thread_id"] {
		t.Fatalf("keep runs = %s, want 2 on two threads", js(kept))
	}
	for _, r := range kept {
		e.runStatus(t, r["thread_id"].(string), r["run_id"].(string), "success")
		th := e.Must(http.StatusOK, "GET", "/threads/"+r["thread_id"].(string), nil).Map(t)
		if js(th["values"]) != fooBarResult || th["status"] != "idle" || th["metadata"].(map[string]any)["cron_id"] != keep["cron_id"] {
			t.Errorf("kept thread = %s", js(th))
		}
	}
	// The threads of a stateless cron are found by its id.
	var found []map[string]any
	e.Must(http.StatusOK, "POST", "/threads/search", map[string]any{"metadata": map[string]any{"cron_id": keep["cron_id"]}}).JSON(t, &found)
	if len(found) != 2 {
		t.Errorf("threads with metadata cron_id = %d, want 2", len(found))
	}
	deleted := e.cronRuns(t, del["cron_id"].(string))
	if len(deleted) != 2 || deleted[0]["thread_id"] == deleted[1]["thread_id"] {
		t.Fatalf("delete runs = %s, want 2 on two threads", js(deleted))
	}
	for _, r := range deleted {
		if r["temporary"] != true {
			t.Errorf("run of an on_run_completed=delete cron is not temporary: %s", js(r))
		}
		tid := r["thread_id"].(string)
		eventually(t, "thread "+tid+" deleted after its run", func() bool {
			return e.Do("GET", "/threads/"+tid, nil).Status == http.StatusNotFound
		})
	}
}

// A server that was down for an hour fires an every-minute cron once, not
// sixty times, and its next tick is the first one after now.
func TestCronMissedTicksFireOnce(t *testing.T) {
	e := start(t, nil)
	tid := e.newThread(t)
	c := e.cron(t, tid, map[string]any{"schedule": "* * * * *", "assistant_id": "foo_bar", "input": fooBarInput})
	id := c["cron_id"].(string)
	now := t0.Add(time.Hour + 15*time.Second) // 01:00:45, 60 ticks missed
	e.clk.Set(now)
	c = e.waitNext(t, id, now)
	wantTime(t, "next_run_date", c["next_run_date"], time.Date(2030, 1, 1, 1, 1, 0, 0, time.UTC))
	time.Sleep(100 * time.Millisecond) // many more scheduler rounds
	if got := e.cronRuns(t, id); len(got) != 1 {
		t.Fatalf("runs after an hour of missed ticks = %d, want 1", len(got))
	}
}

// end_time: ticks up to it fire, then next_run_date is null and nothing
// more fires. enabled=false: nothing fires; re-enabled, the cron goes on
// from the next tick without firing what it missed.
func TestCronEndTimeAndEnabled(t *testing.T) {
	e := start(t, nil)
	ended := e.cron(t, "", map[string]any{"schedule": "* * * * *", "assistant_id": "foo_bar", "input": fooBarInput,
		"on_run_completed": "keep", "end_time": "2030-01-01T00:02:30Z"})
	off := e.cron(t, "", map[string]any{"schedule": "* * * * *", "assistant_id": "foo_bar", "input": fooBarInput,
		"on_run_completed": "keep", "enabled": false})
	endID, offID := ended["cron_id"].(string), off["cron_id"].(string)
	for m := 1; m <= 5; m++ {
		tick := time.Date(2030, 1, 1, 0, m, 0, 0, time.UTC)
		e.clk.Set(tick)
		if m <= 3 {
			e.waitNext(t, endID, tick)
		} else {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if got := e.cronRuns(t, endID); len(got) != 2 {
		t.Errorf("runs of a cron ending at 00:02:30 by 00:05 = %d, want 2 (00:01, 00:02)", len(got))
	}
	if c := e.getCron(t, endID); c["next_run_date"] != nil {
		t.Errorf("ended cron's next_run_date = %v, want null", c["next_run_date"])
	}
	if got := e.cronRuns(t, offID); len(got) != 0 {
		t.Fatalf("a disabled cron fired: %s", js(got))
	}

	e.clk.Set(time.Date(2030, 1, 1, 0, 5, 30, 0, time.UTC))
	on := e.Must(http.StatusOK, "PATCH", "/runs/crons/"+offID, map[string]any{"enabled": true}).Map(t)
	wantTime(t, "next_run_date after enabling", on["next_run_date"], time.Date(2030, 1, 1, 0, 6, 0, 0, time.UTC))
	time.Sleep(50 * time.Millisecond)
	if got := e.cronRuns(t, offID); len(got) != 0 {
		t.Fatalf("enabling fired the missed ticks: %s", js(got))
	}
	e.clk.Set(time.Date(2030, 1, 1, 0, 6, 0, 0, time.UTC))
	e.waitNext(t, offID, time.Date(2030, 1, 1, 0, 6, 0, 0, time.UTC))
	if got := e.cronRuns(t, offID); len(got) != 1 {
		t.Fatalf("runs after enabling and one tick = %d, want 1", len(got))
	}
}

// A tick whose run is refused (a busy thread, multitask_strategy reject)
// is skipped: no run, the cron moves on, and the other crons of the same
// round still fire.
func TestCronRefusedRunSkipsTick(t *testing.T) {
	e := start(t, nil)
	tid := e.newThread(t)
	busy := e.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow",
		"input": map[string]any{"ms": 1000, "tag": "busy"}}).Map(t)
	e.runStatus(t, tid, busy["run_id"].(string), "running")
	rejecting := e.cron(t, tid, map[string]any{"schedule": "* * * * *", "assistant_id": "foo_bar", "input": fooBarInput,
		"multitask_strategy": "reject"})
	other := e.cron(t, "", map[string]any{"schedule": "* * * * *", "assistant_id": "foo_bar", "input": fooBarInput,
		"on_run_completed": "keep"})
	tick := time.Date(2030, 1, 1, 0, 1, 0, 0, time.UTC)
	e.clk.Set(tick)
	c := e.waitNext(t, rejecting["cron_id"].(string), tick)
	wantTime(t, "next_run_date of the skipped cron", c["next_run_date"], tick.Add(time.Minute))
	e.waitNext(t, other["cron_id"].(string), tick)
	if got := e.cronRuns(t, rejecting["cron_id"].(string)); len(got) != 0 {
		t.Errorf("a refused tick created runs: %s", js(got))
	}
	if got := e.cronRuns(t, other["cron_id"].(string)); len(got) != 1 {
		t.Errorf("the other cron's runs = %d, want 1", len(got))
	}
	// Once the thread is free the next tick fires.
	e.runStatus(t, tid, busy["run_id"].(string), "success")
	e.clk.Set(tick.Add(time.Minute))
	e.waitNext(t, rejecting["cron_id"].(string), tick.Add(time.Minute))
	if got := e.cronRuns(t, rejecting["cron_id"].(string)); len(got) != 1 {
		t.Errorf("runs after the thread was free = %d, want 1", len(got))
	}
}

// Exactly once across replicas: two servers on one database, each with
// its own scheduler looking for due crons every millisecond, fire 20
// crons over 15 ticks; after every tick each cron has exactly one run
// more.
func TestCronExactlyOnceTwoServers(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	clk := newClock(t0)
	var servers []*servertest.Server
	for range 2 {
		servers = append(servers, servertest.StartWith(t, dsn, func(c *server.Config) {
			c.CronClock, c.CronInterval = clk.Now, time.Millisecond
			c.Workers = 0 // runs are only counted here, not executed
		}))
	}
	a := &env{Server: servers[0], clk: clk}
	const crons, ticks = 20, 15
	var ids []string
	for i := range crons {
		s := servers[i%2] // created through either server
		c := s.Must(http.StatusOK, "POST", "/runs/crons", map[string]any{"schedule": "* * * * *", "assistant_id": "foo_bar",
			"input": fooBarInput, "on_run_completed": "keep"}).Map(t)
		ids = append(ids, c["cron_id"].(string))
	}
	for k := 1; k <= ticks; k++ {
		tick := time.Date(2030, 1, 1, 0, k, 0, 0, time.UTC)
		clk.Set(tick)
		for _, id := range ids {
			eventually(t, fmt.Sprintf("tick %d of cron %s", k, id), func() bool {
				c := a.getCron(t, id)
				return parseTime(t, c["next_run_date"]).After(tick)
			})
		}
		got := cronRunCounts(t, a.DB)
		for _, id := range ids {
			if got[id] != k {
				t.Fatalf("after tick %d cron %s has %d runs, want %d (all: %v)", k, id, got[id], k, got)
			}
		}
	}
	var threads int
	if err := a.DB.QueryRow(context.Background(), `SELECT count(DISTINCT thread_id) FROM runs`).Scan(&threads); err != nil {
		t.Fatal(err)
	}
	if threads != crons*ticks {
		t.Errorf("threads of the runs = %d, want %d (one new thread per firing)", threads, crons*ticks)
	}
}

// A replica that dies in the middle of firing a cron (its transaction
// holds the cron's row and has written part of the firing) neither loses
// nor doubles the tick: the others skip the locked row meanwhile, and once
// the dead replica's connection is gone its writes roll back and the tick
// fires once.
func TestCronReplicaDiesMidFire(t *testing.T) {
	e := start(t, nil)
	c := e.cron(t, "", map[string]any{"schedule": "* * * * *", "assistant_id": "foo_bar", "input": fooBarInput,
		"on_run_completed": "keep"})
	id := c["cron_id"].(string)
	ctx := context.Background()
	dead, err := pgx.Connect(ctx, e.DSN)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := dead.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// What a replica does first when it fires: lock the due cron, then
	// write (here a thread, as a stateless firing does).
	if _, err := tx.Exec(ctx, `SELECT 1 FROM crons WHERE cron_id = $1 FOR UPDATE`, id); err != nil {
		t.Fatal(err)
	}
	half := "22222222-2222-4222-8222-222222222222"
	if _, err := tx.Exec(ctx, `INSERT INTO threads (thread_id) VALUES ($1)`, half); err != nil {
		t.Fatal(err)
	}
	tick := time.Date(2030, 1, 1, 0, 1, 0, 0, time.UTC)
	e.clk.Set(tick)
	time.Sleep(100 * time.Millisecond) // many scheduler rounds
	if got := e.cronRuns(t, id); len(got) != 0 {
		t.Fatalf("fired while another replica held the cron: %s", js(got))
	}
	if err := dead.Close(ctx); err != nil { // the replica dies: no commit
		t.Fatal(err)
	}
	e.waitNext(t, id, tick)
	if got := e.cronRuns(t, id); len(got) != 1 {
		t.Fatalf("runs after the dead replica's tick = %d, want 1", len(got))
	}
	e.Must(http.StatusNotFound, "GET", "/threads/"+half, nil)
}

// A firing is an ordinary run for webhooks and streams too: the cron's
// webhook is POSTed the run (with cron_id in its metadata) when it ends,
// and the run's event log is joined from the start with the cron's
// stream_mode.
func TestCronFiringWebhookAndStream(t *testing.T) {
	hooks := make(chan map[string]any, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		hooks <- body
	}))
	defer hook.Close()
	e := start(t, func(c *server.Config) { c.WebhookAllowPrivate = true })
	tid := e.newThread(t)
	c := e.cron(t, tid, map[string]any{"schedule": "* * * * *", "assistant_id": "foo_bar", "input": fooBarInput,
		"webhook": hook.URL + "/done", "stream_mode": []string{"updates"}, "stream_resumable": true})
	id := c["cron_id"].(string)
	tick := time.Date(2030, 1, 1, 0, 1, 0, 0, time.UTC)
	e.clk.Set(tick)
	e.waitNext(t, id, tick)
	runs := e.cronRuns(t, id)
	if len(runs) != 1 {
		t.Fatalf("runs = %s, want 1", js(runs))
	}
	rid := runs[0]["run_id"].(string)
	select {
	case body := <-hooks:
		md, _ := body["metadata"].(map[string]any)
		if body["run_id"] != rid || body["status"] != "success" || md["cron_id"] != id {
			t.Fatalf("webhook body = %s, want run %s, success, metadata.cron_id %s", js(body), rid, id)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the cron's run delivered no webhook")
	}
	// Joined from the start, the run's stream replays what the cron's
	// stream_mode asked for: updates of node_a and node_b, then the end.
	req, _ := http.NewRequest(http.MethodGet, e.URL+"/threads/"+tid+"/runs/"+rid+"/stream", nil)
	req.Header.Set("Last-Event-ID", "-1")
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	body, err := io.ReadAll(stream.Body)
	if err != nil {
		t.Fatal(err)
	}
	s := string(body)
	if stream.StatusCode != http.StatusOK || !strings.Contains(s, "event: updates") || !strings.Contains(s, `"node_a"`) ||
		!strings.Contains(s, `"node_b"`) || strings.Contains(s, "event: values") {
		t.Fatalf("joined stream (%d):\n%s", stream.StatusCode, s)
	}
}
