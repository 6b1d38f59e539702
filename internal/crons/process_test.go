package crons_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server/servertest"
)

// replica is a Weft server running as its own process.
type replica struct {
	*servertest.Server
	cmd *exec.Cmd
	log string
}

// startReplica starts the server binary on dsn with its crons scheduler
// looking for due crons every 5 ms, on the database's clock, with no run
// workers (runs are counted here, not executed), and waits until it
// answers. The process is stopped at the end of the test.
func startReplica(t *testing.T, dsn, name string) *replica {
	t.Helper()
	addr := servertest.FreeAddr(t)
	logPath := filepath.Join(t.TempDir(), name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(servertest.Binary(t))
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dsn, "WEFT_ADDR="+addr, "WEFT_WORKER_ID="+name, "WEFT_WORKERS=0",
		"WEFT_TEST_CRON_INTERVAL=5ms", "WEFT_LOG_LEVEL=debug", "WEFT_LOG_FORMAT=json")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the test
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
		}
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("%s log (last 4 KiB):\n%s", name, b[max(0, len(b)-4096):])
		}
	})
	pool, err := postgres.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	r := &replica{Server: servertest.Client(t, "http://"+addr, pool), cmd: cmd, log: logPath}
	eventually(t, name+" to answer", func() bool {
		resp, err := http.Get(r.URL + "/ok")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return r
}

// fired is how many "cron fired" lines the replica logged.
func (r *replica) fired(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(r.log)
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
	count := func() map[string]int {
		rows, err := a.DB.Query(ctx, `SELECT metadata ->> 'cron_id', count(*) FROM runs WHERE metadata ? 'cron_id' GROUP BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]int{}
		for rows.Next() {
			var id string
			var n int
			if err := rows.Scan(&id, &n); err != nil {
				t.Fatal(err)
			}
			out[id] = n
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for k := 1; k <= rounds; k++ {
		var due time.Time
		if err := a.DB.QueryRow(ctx, `UPDATE crons SET next_run_date = now() - interval '1 second' RETURNING now()`).Scan(&due); err != nil {
			t.Fatal(err)
		}
		if k == killAfter+1 {
			if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
		eventually(t, fmt.Sprintf("round %d fired", k), func() bool {
			var pending int
			if err := a.DB.QueryRow(ctx, `SELECT count(*) FROM crons WHERE next_run_date <= $1`, due).Scan(&pending); err != nil {
				t.Fatal(err)
			}
			return pending == 0
		})
		got := count()
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
