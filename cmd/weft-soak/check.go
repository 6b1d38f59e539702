package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// findings are the end-of-soak results: figures and violations.
type findings struct {
	statuses   map[string]int // runs by status
	violations []string
	figures    []string // measured facts for the report
	windows    []window // runs finished per 10 s
	exec       execSummary
}

func (fd *findings) violate(format string, args ...any) {
	fd.violations = append(fd.violations, fmt.Sprintf(format, args...))
}

func (fd *findings) figure(format string, args ...any) {
	fd.figures = append(fd.figures, fmt.Sprintf(format, args...))
}

// settle waits, up to limit, until no run is pending or running.
func settle(ctx context.Context, db *pgxpool.Pool, limit time.Duration) (int, error) {
	deadline := time.Now().Add(limit)
	for {
		var n int
		err := db.QueryRow(ctx, `SELECT count(*) FROM runs WHERE status IN ('pending', 'running')`).Scan(&n)
		if err == nil && n == 0 {
			return 0, nil
		}
		if time.Now().After(deadline) {
			return n, err
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// checkDatabase checks the run, dispatch and thread invariants.
func checkDatabase(ctx context.Context, db *pgxpool.Pool, fd *findings) error {
	rows, err := db.Query(ctx, `SELECT status, count(*) FROM runs GROUP BY status`)
	if err != nil {
		return err
	}
	fd.statuses = map[string]int{}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return err
		}
		fd.statuses[s] = n
	}
	if err := rows.Err(); err != nil {
		return err
	}
	type bad struct {
		What string `db:"what"`
		ID   string `db:"id"`
	}
	checks := []struct{ name, sql string }{
		{"run not in a final state", `SELECT status AS what, run_id::text AS id FROM runs WHERE status IN ('pending', 'running')`},
		{"claimed dispatch without a live lease", `SELECT 'lease expired ' || (now() - lease_expires_at)::text || ' ago, by ' || coalesce(claimed_by, '?') AS what,
			dispatch_id::text AS id FROM run_dispatches WHERE state = 'claimed' AND lease_expires_at < now()`},
		{"claimed dispatch of a finished run", `SELECT r.status || ', by ' || coalesce(d.claimed_by, '?') AS what, d.dispatch_id::text AS id
			FROM run_dispatches d JOIN runs r USING (run_id) WHERE d.state = 'claimed' AND r.status NOT IN ('pending', 'running')`},
		{"queued dispatch of a finished run", `SELECT r.status AS what, d.dispatch_id::text AS id
			FROM run_dispatches d JOIN runs r USING (run_id) WHERE d.state = 'queued' AND r.status NOT IN ('pending', 'running')`},
		{"thread left busy", `SELECT status AS what, thread_id::text AS id FROM threads WHERE status = 'busy'`},
		{"attempt left open on an ended dispatch", `SELECT d.state || ' attempt ' || a.attempt || ' by ' || a.worker AS what, d.dispatch_id::text AS id
			FROM run_dispatch_attempts a JOIN run_dispatches d USING (dispatch_id) WHERE a.ended_at IS NULL AND d.state <> 'claimed'`},
	}
	for _, c := range checks {
		rows, err := db.Query(ctx, c.sql)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		found, err := pgx.CollectRows(rows, pgx.RowToStructByName[bad])
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		for i, b := range found {
			if i == 10 {
				fd.violate("%s: %d more", c.name, len(found)-10)
				break
			}
			fd.violate("%s: %s (%s)", c.name, b.ID, b.What)
		}
	}
	return nil
}

// window is how many runs finished in one 10-second window of the soak.
type window struct {
	from     time.Duration // since the load started
	finished int
}

// runWindows counts finished runs per 10 s from the load's start to its
// end (rolled-back runs are deleted and not counted).
func runWindows(ctx context.Context, db *pgxpool.Pool, start, end time.Time) ([]window, error) {
	rows, err := db.Query(ctx, `SELECT floor(extract(epoch FROM finished_at - $1::timestamptz) / 10)::int AS w, count(*)
		FROM runs WHERE finished_at >= $1 AND finished_at < $2 GROUP BY 1 ORDER BY 1`, start, end)
	if err != nil {
		return nil, err
	}
	counts := map[int]int{}
	for rows.Next() {
		var w, n int
		if err := rows.Scan(&w, &n); err != nil {
			return nil, err
		}
		counts[w] = n
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []window
	// Whole windows only (a last partial one would read as a stall).
	for w := 0; time.Duration(w+1)*10*time.Second <= end.Sub(start)+time.Second; w++ {
		out = append(out, window{from: time.Duration(w) * 10 * time.Second, finished: counts[w]})
	}
	return out, nil
}

// checkStalls reports windows in which no run finished, except windows
// that overlap PostgreSQL's outage (and the recovery after it).
func checkStalls(fd *findings, start time.Time, tl *timeline) {
	for _, w := range fd.windows {
		from := start.Add(w.from)
		to := from.Add(10 * time.Second)
		if w.finished > 0 || tl.duringOutage(from, outageSlack) || tl.duringOutage(to, outageSlack) {
			continue
		}
		if pf, pt := tl.pgDown(); !pf.IsZero() && !pf.After(to) && !pt.Add(outageSlack).Before(from) {
			continue
		}
		fd.violate("no run finished from %v to %v after the start", w.from, w.from+10*time.Second)
	}
}

// outageSlack is how long after PostgreSQL is back 503s and a slower
// throughput still count as the outage's.
const outageSlack = 15 * time.Second

// checkResponses: no 5xx but 503, and 503 only during the outage.
func checkResponses(fd *findings, st *stats, tl *timeline) {
	n503 := 0
	for _, f := range st.errors5xx {
		switch {
		case f.status != http.StatusServiceUnavailable:
			fd.violate("%d outside a database outage: %s", f.status, f.what)
		case !tl.duringOutage(f.at, outageSlack):
			fd.violate("503 while PostgreSQL was up: %s", f.what)
		default:
			n503++
		}
	}
	fd.figure("%d responses were 503 during the PostgreSQL outage", n503)
}

// checkStreams: every resumed stream saw exactly the run's events (those
// its modes put on the wire), in order, once each, across its connections.
func checkStreams(ctx context.Context, db *pgxpool.Pool, fd *findings, st *stats) error {
	resumed, complete := 0, 0
	for _, tr := range st.streams {
		if !tr.completed {
			fd.violate("stream of run %s did not end within its deadline (%d connections, %d events, %s)", tr.runID, tr.conns, len(tr.ids), tr.errEvent)
			continue
		}
		complete++
		if tr.conns > 1 {
			resumed++
		}
		var exists bool
		if err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM runs WHERE run_id = $1)`, tr.runID).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			continue // rolled back
		}
		rows, err := db.Query(ctx, `SELECT seq, event FROM run_events WHERE run_id = $1 ORDER BY seq`, tr.runID)
		if err != nil {
			return err
		}
		var want []int64
		for rows.Next() {
			var seq int64
			var ev string
			if err := rows.Scan(&seq, &ev); err != nil {
				return err
			}
			if onWire(ev) {
				// A stream's ids number the events it sends, from 0.
				want = append(want, int64(len(want)))
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if msg := gapCheck(want, tr.ids); msg != "" {
			fd.violate("stream of run %s over %d connections: %s", tr.runID, tr.conns, msg)
		}
	}
	fd.figure("%d streams ended, %d of them over several connections (%d dropped by the client, %d broken by kills)",
		complete, resumed, sumStreams(st, func(t *streamTrace) int { return t.drops }), sumStreams(st, func(t *streamTrace) int { return t.broken }))
	return nil
}

func sumStreams(st *stats, f func(*streamTrace) int) int {
	n := 0
	for _, t := range st.streams {
		n += f(t)
	}
	return n
}

// onWire reports whether a stored event goes out on a stream asking for
// streamModes (values, updates, custom): metadata, error and those modes,
// not end (nor messages, which were not asked for).
func onWire(event string) bool {
	switch event {
	case "metadata", "error", "values", "updates", "custom":
		return true
	}
	return false
}

// gapCheck compares the ids a stream received with the ids it should have:
// "" when equal, else what differs first.
func gapCheck(want, got []int64) string {
	for i := range min(len(want), len(got)) {
		if want[i] != got[i] {
			prev := "the start"
			if i > 0 {
				prev = "id " + strconv.FormatInt(got[i-1], 10)
			}
			return fmt.Sprintf("after %s got id %d, want %d (got %s)", prev, got[i], want[i], shortIDs(got))
		}
	}
	switch {
	case len(got) < len(want):
		return fmt.Sprintf("ended after %d of %d events (got %s, want %s)", len(got), len(want), shortIDs(got), shortIDs(want))
	case len(got) > len(want):
		return fmt.Sprintf("got %d events, the log has %d (got %s)", len(got), len(want), shortIDs(got))
	}
	return ""
}

func shortIDs(ids []int64) string {
	var b strings.Builder
	for i, id := range ids {
		if i == 30 {
			b.WriteString(" …")
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	return "[" + b.String() + "]"
}

// threadValues reads a thread's state values through the API.
func threadValues(c *client, tid string) (map[string]any, error) {
	r := c.retry("GET", "/threads/"+tid+"/state", nil, 20*time.Second, 10)
	if r.status != http.StatusOK {
		return nil, fmt.Errorf("GET /threads/%s/state: %d %s", tid, r.status, truncate(r.body, 200))
	}
	var s struct {
		Values map[string]any `json:"values"`
	}
	if err := json.Unmarshal(r.body, &s); err != nil {
		return nil, err
	}
	return s.Values, nil
}

// checkSlowLogs: the built-in slow graph appends "<node>:<tag>" with a tag
// unique per run, so an entry found twice in a thread's log is a step
// committed twice (the built-in graphs cannot count executions, being in the
// server binary; their commits are checked instead).
func checkSlowLogs(ctx context.Context, db *pgxpool.Pool, c *client, fd *findings) error {
	tids, err := threadsOf(ctx, db, "slow")
	if err != nil {
		return err
	}
	entries := 0
	for _, tid := range tids {
		v, err := threadValues(c, tid)
		if err != nil {
			fd.violate("state of slow thread %s: %v", tid, err)
			continue
		}
		seen := map[string]bool{}
		log, _ := v["log"].([]any)
		for _, e := range log {
			s, _ := e.(string)
			if seen[s] {
				fd.violate("slow thread %s: %q committed twice", tid, s)
			}
			seen[s] = true
			entries++
		}
	}
	fd.figure("%d slow-graph threads: %d committed node entries, each once", len(tids), entries)
	return nil
}

// threadsOf lists the threads that have (or had) a run of graph.
func threadsOf(ctx context.Context, db *pgxpool.Pool, graphID string) ([]string, error) {
	rows, err := db.Query(ctx, `SELECT DISTINCT thread_id::text FROM runs WHERE graph_id = $1`, graphID)
	if err != nil {
		return nil, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	sort.Strings(ids)
	return ids, err
}
