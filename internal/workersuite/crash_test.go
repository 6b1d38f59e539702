package workersuite_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server/servertest"
)

// client returns a servertest client for a server process.
func client(t *testing.T, dsn string, p *servertest.Process) *servertest.Server {
	pool, err := postgres.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return servertest.Client(t, p.URL, pool)
}

// kill -9 of the server during a slow run: another server process retries
// the run, which continues after the last committed step and completes
// once, with no duplicate checkpoint. Its input, stored by reference once
// its input checkpoint was committed, reads as it was sent.
func TestCrashDuringRunIsRetried(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs server processes")
	}
	t.Parallel()
	dsn := pgtest.DSN(t)
	a := servertest.StartProcess(t, dsn, "A", "WEFT_LEASE=2s")
	sa := client(t, dsn, a)
	tid := newThread(t, sa)
	tag := strings.Repeat("k", 150) // past runs.InputRefMinBytes
	run := create(t, sa, tid, slowBody(tag, 1500, ""))
	rid := run["run_id"].(string)
	// Wait until "first" has committed (input, start mapping, first).
	deadline := time.Now().Add(20 * time.Second)
	for dbCount(t, sa, `SELECT count(*) FROM checkpoints WHERE thread_id = $1`, tid) < 3 {
		if time.Now().After(deadline) {
			t.Fatal("first node never committed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	a.Kill() // SIGKILL: no shutdown, no nack

	b := servertest.StartProcess(t, dsn, "B", "WEFT_LEASE=2s")
	sb := client(t, dsn, b)
	got := runStatus(t, sb, tid, rid, "success")
	if got["attempt"] != float64(2) {
		t.Fatalf("run %s", js(got))
	}
	wantJSON(t, "log", thread(t, sb, tid)["values"].(map[string]any)["log"], js([]string{"first:" + tag, "second:" + tag}))
	if n := dbCount(t, sb, `SELECT count(*) FROM runs WHERE run_id = $1 AND kwargs ? 'input_ref' AND NOT kwargs ? 'input'`, rid); n != 1 {
		t.Fatal("the retried run's row does not reference its input")
	}
	wantJSON(t, "input", mustKwargs(t, sb, tid, run)["input"], js(slowBody(tag, 1500, "")["input"]))
	if n := dbCount(t, sb, `SELECT count(*) FROM checkpoints WHERE thread_id = $1`, tid); n != 4 {
		t.Fatalf("%d checkpoints, want 4 (input, start, first, second)", n)
	}
	var hist []map[string]any
	sb.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs/"+rid+"/dispatches", nil).JSON(t, &hist)
	at := hist[0]["attempts"].([]any)
	wantJSON(t, "attempts", []any{at[0].(map[string]any)["worker"], at[0].(map[string]any)["outcome"],
		at[1].(map[string]any)["worker"], at[1].(map[string]any)["outcome"]}, `["A","lease_expired","B","success"]`)
}

// Two server processes on one database drain 1,000 runs: every run executes
// exactly once, none is lost, and runs of one thread stay in order.
func TestTwoProcessesDrainRunsExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs server processes")
	}
	t.Parallel()
	const threadsN, perThread = 100, 10
	dsn := pgtest.DSN(t)
	procs := []*servertest.Server{
		client(t, dsn, servertest.StartProcess(t, dsn, "A", "WEFT_WORKERS=4")),
		client(t, dsn, servertest.StartProcess(t, dsn, "B", "WEFT_WORKERS=4")),
	}
	tids := make([]string, threadsN)
	for i := range tids {
		tids[i] = newThread(t, procs[i%2])
	}
	var wg sync.WaitGroup
	errs := make(chan error, threadsN*perThread)
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < threadsN*perThread; i += 16 {
				s := procs[i%2]
				r, err := s.Try("POST", "/threads/"+tids[i%threadsN]+"/runs",
					map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": fmt.Sprint(i)}})
				if err == nil && r.Status != http.StatusOK {
					err = fmt.Errorf("create: %d %s", r.Status, r.Body)
				}
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for dbCount(t, procs[0], `SELECT count(*) FROM runs WHERE status = 'success'`) < threadsN*perThread {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d runs succeeded", dbCount(t, procs[0], `SELECT count(*) FROM runs WHERE status = 'success'`), threadsN*perThread)
		}
		time.Sleep(100 * time.Millisecond)
	}
	s := procs[0]
	if n := dbCount(t, s, `SELECT count(*) FROM runs`); n != threadsN*perThread {
		t.Fatalf("%d runs", n)
	}
	// Executed exactly once: each run wrote one input and three loop
	// checkpoints, and its dispatch was claimed once.
	if n := dbCount(t, s, `SELECT count(*) FROM runs r WHERE (SELECT count(*) FROM checkpoints c
		WHERE c.thread_id = r.thread_id::text AND c.metadata->>'run_id' = r.run_id::text) <> 4`); n != 0 {
		t.Fatalf("%d runs did not write exactly 4 checkpoints", n)
	}
	if n := dbCount(t, s, `SELECT count(*) FROM run_dispatch_attempts`); n != threadsN*perThread {
		t.Fatalf("%d attempts for %d runs", n, threadsN*perThread)
	}
	if n := dbCount(t, s, `SELECT count(*) FROM threads WHERE jsonb_array_length("values"->'bar') <> $1 OR status <> 'idle'`, 2*perThread); n != 0 {
		t.Fatalf("%d threads without exactly %d bar entries", n, 2*perThread)
	}
	// One thread's runs never overlapped, and ran in creation order.
	if n := dbCount(t, s, `SELECT count(*) FROM runs r1 JOIN runs r2 ON r1.thread_id = r2.thread_id
		AND r1.created_at < r2.created_at AND r1.finished_at > r2.started_at`); n != 0 {
		t.Fatalf("%d overlapping or out-of-order runs", n)
	}
	for _, w := range []string{"A", "B"} {
		if n := dbCount(t, s, `SELECT count(*) FROM run_dispatch_attempts WHERE worker = $1`, w); n == 0 {
			t.Fatalf("server %s executed no run", w)
		}
	}
}
