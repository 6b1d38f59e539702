package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/builtin"
	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/coordinator"
	"github.com/weftdev/weft/internal/dispatch"
	"github.com/weftdev/weft/internal/executor"
	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
	"github.com/weftdev/weft/internal/threads"
	"github.com/weftdev/weft/internal/wire"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// bundle is a server without in-process workers (it creates runs and
// answers reads over HTTP) and, on its database, a coordinator of the
// test's own with the built-in graphs: the executor under test claims and
// commits through it.
type bundle struct {
	s      *servertest.Server
	graphs *graph.Registry
	coord  *coordinator.Service
	log    *slog.Logger
}

func setup(t *testing.T) *bundle {
	t.Helper()
	t.Parallel()
	s := servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) { c.Workers = 0 })
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	graphs := builtin.Graphs()
	ts := threads.NewStore(s.DB, threads.Config{})
	coord := coordinator.NewService(s.DB, graphs, ts, log, coordinator.Config{Lease: 5 * time.Second})
	return &bundle{s: s, graphs: graphs, coord: coord, log: log}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// queue creates a run of graph on a new thread (nothing claims it: the
// server has no workers) and returns the thread and run ids.
func (b *bundle) queue(t *testing.T, body map[string]any) (tid, rid string) {
	t.Helper()
	tid = b.s.Must(http.StatusOK, "POST", "/threads", map[string]any{}).Map(t)["thread_id"].(string)
	run := b.s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs", body).Map(t)
	return tid, run["run_id"].(string)
}

// runStatus polls until the run has one of the statuses want (within 20 s).
func (b *bundle) runStatus(t *testing.T, tid, rid string, want ...string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		run := b.s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs/"+rid, nil).Map(t)
		if slices.Contains(want, run["status"].(string)) {
			return run
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s: status %v, want %v", rid, run["status"], want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (b *bundle) thread(t *testing.T, tid string) map[string]any {
	t.Helper()
	return b.s.Must(http.StatusOK, "GET", "/threads/"+tid, nil).Map(t)
}

// recIO is the executor's IO on the test's coordinator and database, as
// the in-process pool's is, recording every commit it is handed; failAt
// (1-based, 0: never) makes that commit fail without reaching the
// database.
type recIO struct {
	b      *bundle
	cl     wire.Claimed
	failAt int

	mu      sync.Mutex
	commits []coordinator.Commit
	nacks   []string
	state   dispatch.State
}

var errInjected = errors.New("injected commit failure")

func (r *recIO) Local() bool { return true }

func (r *recIO) Tuple(ctx context.Context, id string) (*checkpoints.Tuple, error) {
	return checkpoints.GetTuple(ctx, r.b.s.DB, checkpoints.Config{ThreadID: r.cl.Run.ThreadID.String(), CheckpointID: id})
}

func (r *recIO) Span(context.Context) (executor.Span, bool, error) {
	return executor.Span{}, false, nil
}

func (r *recIO) MaxIntVersion(ctx context.Context) (int64, error) {
	return checkpoints.BlobMaxIntVersion(ctx, r.b.s.DB, checkpoints.Config{ThreadID: r.cl.Run.ThreadID.String()})
}

func (r *recIO) Commit(ctx context.Context, c *coordinator.Commit) (*wire.CommitResult, error) {
	r.mu.Lock()
	r.commits = append(r.commits, *c)
	n := len(r.commits)
	r.mu.Unlock()
	if n == r.failAt {
		return nil, errInjected
	}
	c.InProcess, c.RunID, c.ThreadID = true, r.cl.Run.RunID, r.cl.Run.ThreadID
	return r.b.coord.Commit(ctx, r.cl.Dispatch.DispatchID, c)
}

func (r *recIO) Heartbeat(ctx context.Context) (string, error) {
	_, action, err := r.b.coord.Heartbeat(ctx, r.cl.Dispatch.DispatchID, r.cl.ClaimToken)
	return action, err
}

func (r *recIO) Nack(ctx context.Context, reason string) (dispatch.State, error) {
	st, err := r.b.coord.Nack(ctx, r.cl.Dispatch.DispatchID, r.cl.ClaimToken, reason)
	r.mu.Lock()
	r.nacks, r.state = append(r.nacks, reason), st
	r.mu.Unlock()
	return st, err
}

// attempt queues a foo_bar run with durability, claims it on the test's
// coordinator and runs one attempt over a recIO to its end (within 20 s).
func (b *bundle) attempt(t *testing.T, durability string, failAt int) (tid string, io *recIO) {
	t.Helper()
	body := map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}}
	if durability != "" {
		body["durability"] = durability
	}
	tid, rid := b.queue(t, body)
	got, err := b.coord.Claim(context.Background(), "rec", []string{"foo_bar"}, 1)
	if err != nil || len(got) != 1 || got[0].Run.RunID.String() != rid {
		t.Fatalf("claim: %v %s", err, js(got))
	}
	io = &recIO{b: b, cl: got[0], failAt: failAt}
	g, _ := b.graphs.Lookup("foo_bar")
	done := make(chan struct{})
	go func() {
		defer close(done)
		executor.Attempt{IO: io, Graph: g, Log: b.log, WorkerID: "rec", Beat: time.Second}.Run(context.Background(), got[0])
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the attempt did not end within 20 s")
	}
	return tid, io
}

// summary is what a commit carried: its checkpoints' (step, source), its
// write batches' channels, its events' names, and its end's status.
type summary struct {
	Steps    []string `json:"steps,omitempty"`
	Channels []string `json:"writes,omitempty"`
	Events   []string `json:"events,omitempty"`
	End      string   `json:"end,omitempty"`
	Proj     bool     `json:"projection,omitempty"`
}

func summarize(cs []coordinator.Commit) []summary {
	out := make([]summary, len(cs))
	for i, c := range cs {
		for _, cp := range c.Checkpoints {
			out[i].Steps = append(out[i].Steps, js(cp.Metadata["step"])+":"+js(cp.Metadata["source"]))
		}
		for _, b := range c.Writes {
			for _, w := range b.Writes {
				out[i].Channels = append(out[i].Channels, w.Channel)
			}
		}
		for _, e := range c.Events {
			out[i].Events = append(out[i].Events, e.Event)
		}
		if c.End != nil {
			out[i].End = string(c.End.Status)
		}
		out[i].Proj = c.Projection != nil
	}
	return out
}

// all flattens the summaries: every checkpoint, write and event in commit
// order, and the ends.
func all(ss []summary) summary {
	var a summary
	for _, s := range ss {
		a.Steps = append(a.Steps, s.Steps...)
		a.Channels = append(a.Channels, s.Channels...)
		a.Events = append(a.Events, s.Events...)
		if s.End != "" {
			a.End += s.End + ";"
		}
	}
	return a
}

// The committer: what the steps of foo_bar become in commits, per the
// run's durability, and what a failed commit stops.
func TestCommitter(t *testing.T) {
	b := setup(t)
	checkpointsOf := func(t *testing.T, tid string) int {
		t.Helper()
		var n int
		if err := b.s.DB.QueryRow(context.Background(), `SELECT count(*) FROM checkpoints WHERE thread_id = $1`, tid).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	wantEnd := func(t *testing.T, tid string) {
		t.Helper()
		th := b.thread(t, tid)
		if th["status"] != "idle" || js(th["values"]) != `{"bar":["a","b"],"foo":"b"}` {
			t.Fatalf("thread after the run: %s", js(th))
		}
	}

	t.Run("sync commits each step's checkpoint on its own", func(t *testing.T) {
		tid, io := b.attempt(t, "sync", 0)
		got := summarize(io.commits)
		// The input checkpoint goes with the first step's; every step then
		// commits before the next runs, with its tasks' writes and the
		// events that repeat them; the last carries the end, the thread's
		// projection and the end marker, last.
		want := `[{"steps":["-1:\"input\"","0:\"loop\""],"writes":["foo","branch:to:node_a"],"events":["metadata","values"]},` +
			`{"steps":["1:\"loop\""],"writes":["bar","foo","branch:to:node_b"],"events":["updates","values"]},` +
			`{"steps":["2:\"loop\""],"writes":["bar","foo"],"events":["updates","values","end"],"end":"success","projection":true}]`
		if js(got) != want {
			t.Fatalf("commits\n%s\nwant\n%s", js(got), want)
		}
		if n := checkpointsOf(t, tid); n != 4 {
			t.Fatalf("%d checkpoints stored, want 4", n)
		}
		wantEnd(t, tid)
	})

	t.Run("exit commits only the last checkpoint, with the end", func(t *testing.T) {
		tid, io := b.attempt(t, "exit", 0)
		got := summarize(io.commits)
		a := all(got)
		if js(a.Steps) != `["2:\"loop\""]` || a.End != "success;" || got[len(got)-1].End != "success" || len(got[len(got)-1].Steps) != 1 {
			t.Fatalf("commits %s", js(got))
		}
		// The replaced checkpoints' writes are dropped with them.
		if len(a.Channels) != 0 {
			t.Fatalf("writes under dropped checkpoints were sent: %s", js(got))
		}
		if n := checkpointsOf(t, tid); n != 1 {
			t.Fatalf("%d checkpoints stored, want 1", n)
		}
		wantEnd(t, tid)
	})

	t.Run("async commits every checkpoint, in order, the end last", func(t *testing.T) {
		tid, io := b.attempt(t, "", 0)
		got := summarize(io.commits)
		a := all(got)
		if js(a.Steps) != `["-1:\"input\"","0:\"loop\"","1:\"loop\"","2:\"loop\""]` || a.End != "success;" || got[len(got)-1].End != "success" {
			t.Fatalf("commits %s", js(got))
		}
		// Each checkpoint's parent was committed before it or with it.
		seen := map[string]bool{"": true}
		for _, c := range io.commits {
			for _, cp := range c.Checkpoints {
				if !seen[cp.Parent] {
					t.Fatalf("checkpoint %s committed before its parent %s", cp.Checkpoint.ID, cp.Parent)
				}
				seen[cp.Checkpoint.ID] = true
			}
		}
		if n := checkpointsOf(t, tid); n != 4 {
			t.Fatalf("%d checkpoints stored, want 4", n)
		}
		wantEnd(t, tid)
	})

	t.Run("nothing follows a failed commit; the run is given back", func(t *testing.T) {
		tid, io := b.attempt(t, "sync", 2)
		if len(io.commits) != 2 {
			t.Fatalf("%d commits sent, want 2 (none after the failed one): %s", len(io.commits), js(summarize(io.commits)))
		}
		if len(io.nacks) != 1 || io.nacks[0] != errInjected.Error() || io.state != dispatch.Queued {
			t.Fatalf("nacks %q, dispatch %q", io.nacks, io.state)
		}
		// Only the first commit reached the database.
		if n := checkpointsOf(t, tid); n != len(io.commits[0].Checkpoints) {
			t.Fatalf("%d checkpoints stored, want %d", n, len(io.commits[0].Checkpoints))
		}
	})
}

// The in-process pool: it claims runs of the compiled-in graphs and runs
// them to their end, to an interrupt, or to a requested cancellation.
func TestPool(t *testing.T) {
	b := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	l := postgres.NewListener(b.s.DSN, b.log, coordinator.NotifyChannels()...)
	lDone := make(chan struct{})
	go func() { defer close(lDone); l.Run(ctx) }()
	pool := executor.NewService(b.s.DB, b.graphs, b.coord, b.log, executor.Config{Workers: 1, WorkerID: "pool-test", PollInterval: 50 * time.Millisecond})
	wait := pool.Start(ctx, l)
	t.Cleanup(func() {
		cancel()
		wait()
		<-lDone
	})
	if pool.WorkerID() != "pool-test" {
		t.Fatalf("worker id %q", pool.WorkerID())
	}
	claimedBy := func(t *testing.T, rid string) string {
		t.Helper()
		var w string
		if err := b.s.DB.QueryRow(context.Background(), `SELECT a.worker FROM run_dispatch_attempts a JOIN run_dispatches d USING (dispatch_id) WHERE d.run_id = $1 ORDER BY a.attempt DESC LIMIT 1`, rid).Scan(&w); err != nil {
			t.Fatalf("the run's attempt: %v", err)
		}
		return w
	}

	t.Run("a graph runs to its end", func(t *testing.T) {
		tid, rid := b.queue(t, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}})
		b.runStatus(t, tid, rid, "success")
		th := b.thread(t, tid)
		if th["status"] != "idle" || js(th["values"]) != `{"bar":["a","b"],"foo":"b"}` {
			t.Fatalf("thread %s", js(th))
		}
		if w := claimedBy(t, rid); w != "pool-test" {
			t.Fatalf("claimed by %q", w)
		}
	})

	t.Run("an interrupt ends the run and leaves the thread interrupted", func(t *testing.T) {
		tid, rid := b.queue(t, map[string]any{"assistant_id": "hitl", "input": map[string]any{"input": "x"}})
		b.runStatus(t, tid, rid, "success")
		th := b.thread(t, tid)
		if th["status"] != "interrupted" || js(th["values"]) != `{"input":"x"}` {
			t.Fatalf("thread %s", js(th))
		}
		var intr map[string][]map[string]any
		_ = json.Unmarshal([]byte(js(th["interrupts"])), &intr)
		found := false
		for _, list := range intr {
			for _, i := range list {
				found = found || js(i["value"]) == `{"input":"x","question":"approve?"}`
			}
		}
		if !found {
			t.Fatalf("interrupts %s", js(th["interrupts"]))
		}
		// Resuming runs the rest of the graph.
		_, rid2 := tid, b.s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "hitl",
			"command": map[string]any{"resume": "yes"}}).Map(t)["run_id"].(string)
		b.runStatus(t, tid, rid2, "success")
		if v := js(b.thread(t, tid)["values"]); v != `{"answer":"yes","input":"x","result":"x:yes"}` {
			t.Fatalf("values after resume %s", v)
		}
	})

	t.Run("a cancellation stops the run at its step boundary", func(t *testing.T) {
		tid, rid := b.queue(t, map[string]any{"assistant_id": "slow", "input": map[string]any{"ms": 10000, "tag": "t"}})
		b.runStatus(t, tid, rid, "running")
		start := time.Now()
		b.s.Must(http.StatusAccepted, "POST", "/threads/"+tid+"/runs/"+rid+"/cancel?action=interrupt", nil)
		b.runStatus(t, tid, rid, "interrupted")
		if d := time.Since(start); d > 8*time.Second {
			t.Fatalf("the cancelled run took %v to stop (its node sleeps 10 s)", d)
		}
		if v := js(b.thread(t, tid)["values"]); v != `{"log":[],"ms":10000,"tag":"t"}` {
			t.Fatalf("values after the cancellation %s", v)
		}
	})
}
