package crons_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server/servertest"
)

// replica is a Weft server running as its own process.
type replica struct {
	*servertest.Server
	proc *servertest.Process
}

// startReplica starts the server binary on dsn with its crons scheduler
// looking for due crons every 5 ms, on the database's clock, firing 3 a
// transaction (with a whole round in one transaction, the replica whose
// polls come first after a round's update would take every round), with
// no run workers (runs are counted here, not executed), and waits until it
// answers. The process is stopped at the end of the test.
func startReplica(t *testing.T, dsn, name string) *replica {
	t.Helper()
	p := servertest.StartProcess(t, dsn, name, "WEFT_WORKERS=0", "WEFT_TEST_CRON_INTERVAL=5ms", "WEFT_TEST_CRON_BATCH=3",
		"WEFT_LOG_LEVEL=debug", "WEFT_LOG_FORMAT=json")
	pool, err := postgres.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return &replica{Server: servertest.Client(t, p.URL, pool), proc: p}
}

// fired is how many "cron fired" lines the replica logged.
func (r *replica) fired(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(r.proc.Log)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte(`"msg":"cron fired"`))
}

// Exactly once across server processes: two Weft processes on one
// database, each polling for due crons every 5 ms on the database's
// clock. Each round makes every cron due (next_run_date moved into the
// past, as the passing of its tick would) and waits until every cron has
// been advanced; after round k every cron has exactly k runs. Half the
// crons are on threads, half stateless (a new thread per firing). Midway
// one process is SIGKILLed right after a round's ticks came due (it may
// be in the middle of firing them): the survivor fires what the dead one
// did not commit, and the counts stay exact.
func TestCronExactlyOnceServerProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs server processes")
	}
	t.Parallel()
	dsn := pgtest.DSN(t)
	a, b := startReplica(t, dsn, "A"), startReplica(t, dsn, "B")
	const crons, rounds, killAfter = 30, 12, 8
	var ids []string
	for i := range crons {
		s := []*replica{a, b}[i%2] // created through either process
		// A yearly schedule: no real tick comes due during the test, so
		// only the rounds' ticks fire.
		body := map[string]any{"schedule": "0 0 1 1 *", "assistant_id": "foo_bar", "input": fooBarInput}
		path := "/runs/crons"
		if i%3 == 0 {
			tid := s.Must(http.StatusOK, "POST", "/threads", map[string]any{}).Map(t)["thread_id"].(string)
			path = "/threads/" + tid + "/runs/crons"
		} else {
			body["on_run_completed"] = "keep"
		}
		ids = append(ids, s.Must(http.StatusOK, "POST", path, body).Map(t)["cron_id"].(string))
	}
	ctx := context.Background()
	for k := 1; k <= rounds; k++ {
		var due time.Time
		if err := a.DB.QueryRow(ctx, `UPDATE crons SET next_run_date = now() - interval '1 second' RETURNING now()`).Scan(&due); err != nil {
			t.Fatal(err)
		}
		if k == killAfter+1 {
			a.proc.Kill()
		}
		eventually(t, fmt.Sprintf("round %d fired", k), func() bool {
			var pending int
			if err := a.DB.QueryRow(ctx, `SELECT count(*) FROM crons WHERE next_run_date <= $1`, due).Scan(&pending); err != nil {
				t.Fatal(err)
			}
			return pending == 0
		})
		got := cronRunCounts(t, a.DB)
		for _, id := range ids {
			if got[id] != k {
				t.Fatalf("after round %d cron %s has %d runs, want %d (all: %v)", k, id, got[id], k, got)
			}
		}
	}
	// Both processes fired (the test raced two of them, not one).
	fa, fb := a.fired(t), b.fired(t)
	if fa == 0 || fb == 0 || fa+fb < crons*killAfter {
		t.Fatalf("firings logged: A %d, B %d; want both > 0 and at least %d together", fa, fb, crons*killAfter)
	}
	t.Logf("firings logged: A %d (killed after round %d), B %d; runs %d", fa, killAfter, fb, crons*rounds)
	var threads int
	if err := b.DB.QueryRow(ctx, `SELECT count(DISTINCT thread_id) FROM runs`).Scan(&threads); err != nil {
		t.Fatal(err)
	}
	if want := crons/3 + (crons-crons/3)*rounds; threads != want {
		t.Errorf("threads of the runs = %d, want %d (a thread per cron on a thread, a new one per stateless firing)", threads, want)
	}
}
