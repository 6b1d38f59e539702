package crons_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// clock is the crons' clock in a test: it stands still until the test
// moves it.
type clock struct{ ns atomic.Int64 }

func newClock(t time.Time) *clock {
	c := &clock{}
	c.Set(t)
	return c
}

func (c *clock) Now() time.Time      { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) Set(t time.Time)     { c.ns.Store(t.UnixNano()) }
func (c *clock) Add(d time.Duration) { c.ns.Add(int64(d)) }

// t0 is where test clocks start: 30 seconds before a minute's tick.
var t0 = time.Date(2030, 1, 1, 0, 0, 30, 0, time.UTC)

// env is a server whose crons run by clk, looking for due crons every few
// milliseconds.
type env struct {
	*servertest.Server
	clk *clock
}

func start(t *testing.T, edit func(*server.Config)) *env {
	t.Helper()
	t.Parallel()
	clk := newClock(t0)
	s := servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) {
		c.CronClock, c.CronInterval = clk.Now, 5*time.Millisecond
		if edit != nil {
			edit(c)
		}
	})
	return &env{Server: s, clk: clk}
}

func (e *env) newThread(t *testing.T) string {
	t.Helper()
	return e.Must(http.StatusOK, "POST", "/threads", map[string]any{}).Map(t)["thread_id"].(string)
}

// cron creates a cron (on thread tid, or stateless when tid is "") and
// returns it.
func (e *env) cron(t *testing.T, tid string, body map[string]any) map[string]any {
	t.Helper()
	path := "/runs/crons"
	if tid != "" {
		path = "/threads/" + tid + "/runs/crons"
	}
	return e.Must(http.StatusOK, "POST", path, body).Map(t)
}

func (e *env) getCron(t *testing.T, id string) map[string]any {
	t.Helper()
	return e.Must(http.StatusOK, "GET", "/runs/crons/"+id, nil).Map(t)
}

// cronRuns returns the runs a cron created, oldest first.
func (e *env) cronRuns(t *testing.T, cronID string) []map[string]any {
	t.Helper()
	rows, err := e.DB.Query(context.Background(), `SELECT run_id::text, thread_id::text, status, weft_run_metadata(metadata, assistant_id), weft_run_kwargs(kwargs, thread_id), temporary
		FROM runs WHERE metadata ->> 'cron_id' = $1 ORDER BY created_at, run_id`, cronID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []map[string]any
	for rows.Next() {
		var rid, tid, status string
		var md, kw json.RawMessage
		var temp bool
		if err := rows.Scan(&rid, &tid, &status, &md, &kw, &temp); err != nil {
			t.Fatal(err)
		}
		var mdm, kwm map[string]any
		_ = json.Unmarshal(md, &mdm)
		_ = json.Unmarshal(kw, &kwm)
		out = append(out, map[string]any{"run_id": rid, "thread_id": tid, "status": status, "metadata": mdm,
			"kwargs": kwm, "temporary": temp})
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// eventually polls cond every few milliseconds until it holds (within
// 15 s) and fails the test with what otherwise.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitNext waits until the cron's next_run_date is after tick (the
// scheduler handled the tick) and returns the cron.
func (e *env) waitNext(t *testing.T, id string, tick time.Time) map[string]any {
	t.Helper()
	var c map[string]any
	eventually(t, "cron "+id+" to pass "+tick.Format(time.RFC3339), func() bool {
		c = e.getCron(t, id)
		next := parseTime(t, c["next_run_date"])
		return next.IsZero() || next.After(tick)
	})
	return c
}

// runStatus polls a run until its status is one of want.
func (e *env) runStatus(t *testing.T, tid, rid string, want ...string) map[string]any {
	t.Helper()
	var run map[string]any
	eventually(t, "run "+rid+" to be "+js(want), func() bool {
		run = e.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs/"+rid, nil).Map(t)
		for _, w := range want {
			if run["status"] == w {
				return true
			}
		}
		return false
	})
	return run
}

// parseTime reads a date-time field (null: the zero time).
func parseTime(t *testing.T, v any) time.Time {
	t.Helper()
	if v == nil {
		return time.Time{}
	}
	s, ok := v.(string)
	if !ok {
		t.Fatalf("not a date-time: %v", v)
	}
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("date-time %q: %v", s, err)
	}
	return tm.UTC()
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// wantTime fails unless the date-time field v is want.
func wantTime(t *testing.T, what string, v any, want time.Time) {
	t.Helper()
	if got := parseTime(t, v); !got.Equal(want) {
		t.Fatalf("%s = %v, want %v", what, v, want.Format(time.RFC3339))
	}
}

// fooBarInput makes foo_bar end at fooBarResult.
var fooBarInput = map[string]any{"foo": ""}

const fooBarResult = `{"bar":["a","b"],"foo":"b"}`

// cronRunCounts is how many runs each cron has fired, by cron id (the
// cron_id of their metadata).
func cronRunCounts(t *testing.T, db *pgxpool.Pool) map[string]int {
	t.Helper()
	rows, err := db.Query(context.Background(), `SELECT metadata ->> 'cron_id', count(*) FROM runs
		WHERE metadata ? 'cron_id' GROUP BY 1`)
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
