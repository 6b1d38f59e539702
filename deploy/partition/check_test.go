package partition

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"
)

// The checker, after the load (as cmd/weft-soak's): every acknowledged run
// ended exactly once (success, one successful attempt in its dispatch
// audit), no thread's history holds a step twice and its state no node's
// execution twice, every stream completed and received each event of its
// run once, no dispatch is left claimed past its lease, no answer was a
// 5xx but 503, no process died; then the report per fault.

// dispatchView is a dispatch as GET /dispatches and a run's audit show it.
type dispatchView struct {
	DispatchID     string        `json:"dispatch_id"`
	RunID          string        `json:"run_id"`
	State          string        `json:"state"`
	ClaimedBy      *string       `json:"claimed_by"`
	LeaseExpiresAt *time.Time    `json:"lease_expires_at"`
	Attempts       []attemptView `json:"attempts"`
}

type attemptView struct {
	Attempt      int     `json:"attempt"`
	Worker       string  `json:"worker"`
	Outcome      *string `json:"outcome"`
	FencedWrites int     `json:"fenced_writes"`
}

// anyServer sends a request to each server in turn until one answers 200.
func (e *env) anyServer(method, p string, body any, timeout time.Duration) (response, error) {
	var last response
	var err error
	for _, s := range e.servers {
		last, err = e.client.do(method, s.ClientURL+p, body, timeout)
		if err == nil && last.status == http.StatusOK {
			return last, nil
		}
	}
	if err == nil {
		err = fmt.Errorf("%s %s: %d %s", method, p, last.status, strings.TrimSpace(string(last.body[:min(len(last.body), 200)])))
	}
	return last, err
}

// dispatches is a run's dispatch audit (nil when no server answers).
func (e *env) dispatches(tid, rid string) []dispatchView {
	r, err := e.anyServer("GET", "/threads/"+tid+"/runs/"+rid+"/dispatches", nil, 5*time.Second)
	if err != nil {
		return nil
	}
	var out []dispatchView
	_ = json.Unmarshal(r.body, &out)
	return out
}

// runStatus reads a run's status ("" when no server answers).
func (e *env) runStatus(tid, rid string) string {
	r, err := e.anyServer("GET", "/threads/"+tid+"/runs/"+rid, nil, 5*time.Second)
	if err != nil {
		return ""
	}
	var run struct {
		Status string `json:"status"`
	}
	_ = json.Unmarshal(r.body, &run)
	return run.Status
}

// waitRunStatus waits until the run has status want, or limit passes; it
// returns the last status read.
func (e *env) waitRunStatus(tid, rid, want string, limit time.Duration) string {
	deadline := time.Now().Add(limit)
	for {
		st := e.runStatus(tid, rid)
		if st == want || time.Now().After(deadline) {
			return st
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// fullStream reads a run's whole stream (Last-Event-ID -1) through server
// srv: after the run, it is the run's event log.
func (e *env) fullStream(srv int, tid, rid string) ([]sseEvent, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := e.client.send(ctx, "GET", e.servers[srv].ClientURL+"/threads/"+tid+"/runs/"+rid+"/stream", nil, "-1")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	var evs []sseEvent
	ended, err := readSSE(resp, &evs, streamIdle, nil)
	if !ended {
		return evs, fmt.Errorf("the stream did not end: %v", err)
	}
	return evs, nil
}

// sameEvents compares what a client received with the run's whole stream:
// "" when they are the same events (id, event, data), in order, once each.
func sameEvents(got, full []sseEvent) string {
	for i := range min(len(got), len(full)) {
		if got[i].ID != full[i].ID || got[i].Event != full[i].Event || got[i].Data != full[i].Data {
			return fmt.Sprintf("event %d: got id %d %s, the run's stream has id %d %s (ids got %s, want %s)",
				i, got[i].ID, got[i].Event, full[i].ID, full[i].Event, ids(got), ids(full))
		}
	}
	if len(got) != len(full) {
		return fmt.Sprintf("got %d events, the run's stream has %d (ids got %s, want %s)", len(got), len(full), ids(got), ids(full))
	}
	for i, ev := range full {
		if ev.ID != int64(i) {
			return fmt.Sprintf("the run's stream has id %d at %d (ids %s)", ev.ID, i, ids(full))
		}
	}
	return ""
}

func ids(evs []sseEvent) string {
	var b strings.Builder
	for i, ev := range evs {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprint(&b, ev.ID)
	}
	return "[" + b.String() + "]"
}

// waitLogLine waits until a line of the log at path matches, or limit
// passes; it returns the line ("" if none) and when it was seen.
func waitLogLine(path string, limit time.Duration, match func(string) bool) (string, time.Time) {
	deadline := time.Now().Add(limit)
	for {
		if f, err := os.Open(path); err == nil {
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				if match(sc.Text()) {
					f.Close()
					return sc.Text(), time.Now()
				}
			}
			f.Close()
		}
		if time.Now().After(deadline) {
			return "", time.Time{}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func trimLog(s string) string {
	if len(s) > 240 {
		return s[:240] + "…"
	}
	return s
}

func short(id string) string { return id[:min(8, len(id))] }

// firstDoneAckedAfter waits until a run acknowledged after t0 has ended,
// and returns when it ended (zero after limit).
func (l *load) firstDoneAckedAfter(t0 time.Time, limit time.Duration) time.Time {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		var first time.Time
		l.mu.Lock()
		for _, r := range l.runs {
			if r.AckAt.After(t0) && !r.DoneAt.IsZero() && (first.IsZero() || r.DoneAt.Before(first)) {
				first = r.DoneAt
			}
		}
		l.mu.Unlock()
		if !first.IsZero() {
			return first
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Time{}
}

// verdict is what the checker found about one run.
type verdict struct {
	lost  string // why the run is lost ("" if it is not)
	twice string // why it ran twice ("" if it did not)
}

// check settles, checks every invariant and prints the report.
func check(t *testing.T, e *env, l *load, faults []*fault) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	runs, fails := l.snapshot()
	var violations []string
	violate := func(format string, args ...any) { violations = append(violations, fmt.Sprintf(format, args...)) }

	// Settle: no run pending or running.
	settleStart := time.Now()
	for {
		var n int
		err := e.pool.QueryRow(ctx, `SELECT count(*) FROM runs WHERE status IN ('pending', 'running')`).Scan(&n)
		if err == nil && n == 0 {
			break
		}
		if time.Since(settleStart) > 60*time.Second {
			violate("%d runs still pending or running 60 s after the load (%v)", n, err)
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	e.logf("settled in %v", time.Since(settleStart).Round(10*time.Millisecond))

	// Every acknowledged run: success, exactly one successful attempt.
	verdicts := map[string]*verdict{}
	var runIDs []string
	for _, r := range runs {
		verdicts[r.RunID] = &verdict{}
		runIDs = append(runIDs, r.RunID)
	}
	status := map[string]string{}
	rows, err := e.pool.Query(ctx, `SELECT run_id::text, status FROM runs WHERE run_id::text = ANY($1)`, runIDs)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, st string
		if err := rows.Scan(&id, &st); err != nil {
			t.Fatal(err)
		}
		status[id] = st
	}
	rows.Close()
	attempts := map[string][2]int{} // successful, all
	rows, err = e.pool.Query(ctx, `SELECT d.run_id::text, count(*) FILTER (WHERE a.outcome = 'success'), count(*)
		FROM run_dispatches d JOIN run_dispatch_attempts a USING (dispatch_id) WHERE d.run_id::text = ANY($1) GROUP BY 1`, runIDs)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var ok, all int
		if err := rows.Scan(&id, &ok, &all); err != nil {
			t.Fatal(err)
		}
		attempts[id] = [2]int{ok, all}
	}
	rows.Close()
	retried := 0
	for _, r := range runs {
		v := verdicts[r.RunID]
		switch st, found := status[r.RunID]; {
		case !found:
			v.lost = "not in the database"
		case st != "success":
			v.lost = "ended " + st
		}
		a := attempts[r.RunID]
		if a[0] > 1 {
			v.twice = fmt.Sprintf("%d successful attempts", a[0])
		}
		if a[1] > 1 {
			retried++
		}
	}

	// Every thread: its history holds each step once, its state each
	// node's execution once.
	checkThreads(e, runs, verdicts)
	lost, twice := 0, 0
	for _, r := range runs {
		v := verdicts[r.RunID]
		if v.lost != "" {
			lost++
			violate("run %s (%s, %s, acknowledged by s%d at +%v) is lost: %s", r.RunID, r.Kind, r.Graph, r.Server+1,
				r.AckAt.Sub(e.started).Round(100*time.Millisecond), v.lost)
		}
		if v.twice != "" {
			twice++
			violate("run %s (%s, %s) ran twice: %s", r.RunID, r.Kind, r.Graph, v.twice)
		}
	}

	// Every stream completed, with each event of its run once.
	streams, resumed := 0, 0
	for _, r := range runs {
		if r.Stream == nil {
			continue
		}
		streams++
		if r.Stream.Conns > 1 {
			resumed++
		}
		if !r.Stream.Completed {
			violate("stream of run %s did not complete: %s", r.RunID, r.Stream.Err)
			continue
		}
		full, err := e.fullStream(streams%len(e.servers), r.ThreadID, r.RunID)
		if err != nil {
			violate("the whole stream of run %s: %v", r.RunID, err)
			continue
		}
		if msg := sameEvents(r.Stream.Events, full); msg != "" {
			violate("stream of run %s over %d connections: %s", r.RunID, r.Stream.Conns, msg)
		}
	}

	// No dispatch claimed past its lease.
	claimed := 0
	if r, err := e.anyServer("GET", "/dispatches?state=claimed&limit=1000", nil, 10*time.Second); err != nil {
		violate("GET /dispatches: %v", err)
	} else {
		var ds []dispatchView
		if err := json.Unmarshal(r.body, &ds); err != nil {
			violate("GET /dispatches: %v", err)
		}
		for _, d := range ds {
			claimed++
			if d.LeaseExpiresAt != nil && d.LeaseExpiresAt.Before(time.Now()) {
				violate("dispatch %s of run %s is claimed past its lease (expired at %v)", d.DispatchID, d.RunID, d.LeaseExpiresAt)
			}
		}
	}
	var unfinished int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM runs WHERE status IN ('pending', 'running')`).Scan(&unfinished); err != nil || unfinished > 0 {
		violate("%d runs (acknowledged or not) are not final (%v)", unfinished, err)
	}
	var allRuns int
	_ = e.pool.QueryRow(ctx, `SELECT count(*) FROM runs`).Scan(&allRuns)

	// Answers: no 5xx but 503.
	n503, n0 := 0, 0
	for _, f := range fails {
		switch f.Status {
		case 0:
			n0++
		case http.StatusServiceUnavailable:
			n503++
		default:
			violate("s%d answered %d: %s", f.Server+1, f.Status, f.What)
		}
	}
	for _, s := range e.servers {
		if s.proc.Exited() {
			violate("server %s exited: %v", s.Name, s.proc.err)
		}
	}
	for name, w := range e.workers {
		if w.proc.Exited() {
			violate("worker %s exited: %v", name, w.proc.err)
		}
	}
	for _, f := range faults {
		for _, msg := range f.failed {
			violate("fault %s: %s", f.Name, msg)
		}
	}

	rep := report(runs, fails, verdicts, faults)
	rep += fmt.Sprintf("\nruns: %d acknowledged (%d in the database), %d lost, %d run twice, %d retried on another attempt\n",
		len(runs), allRuns, lost, twice, retried)
	rep += execFigure(e, allRuns)
	rep += fmt.Sprintf("streams: %d completed of %d, %d resumed over several connections, each event once\n", streams-countIncomplete(runs), streams, resumed)
	rep += fmt.Sprintf("answers: %s; %d failed requests were 503, %d got no answer (cut links); %d load actions\n",
		fmtStatuses(l), n503, n0, l.actions)
	rep += fmt.Sprintf("dispatches still claimed: %d; suite time %v\n", claimed, e.since())
	fmt.Print(rep)
	t.Log("\n" + rep)
	for _, v := range violations {
		t.Error(v)
	}
}

func countIncomplete(runs []*runRec) int {
	n := 0
	for _, r := range runs {
		if r.Stream != nil && !r.Stream.Completed {
			n++
		}
	}
	return n
}

func fmtStatuses(l *load) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var keys []int
	for k := range l.statuses {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d×%d", k, l.statuses[k]))
	}
	return strings.Join(parts, " ")
}

// checkThreads reads every run's thread history (POST
// /threads/{id}/history): each step once among the root checkpoints, and
// the latest state's execs naming three distinct executions (one per node:
// the graphs are a → b → c, one run per thread); a run breaking either
// ran a step twice.
func checkThreads(e *env, runs []*runRec, verdicts map[string]*verdict) {
	var mu sync.Mutex
	jobs := make(chan *runRec)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for r := range jobs {
				msg := threadTwice(e, r)
				if msg != "" {
					mu.Lock()
					if v := verdicts[r.RunID]; v.twice == "" && v.lost == "" {
						v.twice = msg
					}
					mu.Unlock()
				}
			}
		})
	}
	for _, r := range runs {
		jobs <- r
	}
	close(jobs)
	wg.Wait()
}

func threadTwice(e *env, r *runRec) string {
	resp, err := e.anyServer("POST", "/threads/"+r.ThreadID+"/history", map[string]any{"limit": 100}, 10*time.Second)
	if err != nil {
		return "history unreadable: " + err.Error()
	}
	var hist []struct {
		Values     map[string]any `json:"values"`
		Metadata   map[string]any `json:"metadata"`
		Checkpoint struct {
			NS string `json:"checkpoint_ns"`
		} `json:"checkpoint"`
	}
	if err := json.Unmarshal(resp.body, &hist); err != nil {
		return "history: " + err.Error()
	}
	if len(hist) == 0 {
		return "no history"
	}
	steps := map[float64]int{}
	for _, h := range hist {
		if h.Checkpoint.NS != "" {
			continue
		}
		if s, ok := h.Metadata["step"].(float64); ok {
			steps[s]++
			if steps[s] > 1 {
				return fmt.Sprintf("step %v twice in the thread's history", s)
			}
		}
	}
	execs, _ := hist[0].Values["execs"].([]any)
	var names []string
	for _, x := range execs {
		s, _ := x.(string)
		names = append(names, s)
	}
	slices.Sort(names)
	if len(names) != 3 || len(slices.Compact(slices.Clone(names))) != 3 {
		return fmt.Sprintf("the thread's state holds executions %v (want one per node a, b, c)", names)
	}
	if r.Graph == "count_py" {
		for i, node := range []string{"a@", "b@", "c@"} {
			if !strings.HasPrefix(names[i], node) {
				return fmt.Sprintf("the thread's state holds executions %v (want one per node a, b, c)", names)
			}
		}
	}
	return ""
}

// report is the table per fault: runs/s (client-seen completions) in the
// 5 s before, during and in the 4 s after the fault, its duration, its
// recovery time, and the runs acknowledged around it that were lost or ran
// twice.
func report(runs []*runRec, fails []callFail, verdicts map[string]*verdict, faults []*fault) string {
	rate := func(from, to time.Time) string {
		if !to.After(from) {
			return "-"
		}
		n := 0
		for _, r := range runs {
			if !r.DoneAt.IsZero() && !r.DoneAt.Before(from) && r.DoneAt.Before(to) {
				n++
			}
		}
		return fmt.Sprintf("%.1f", float64(n)/to.Sub(from).Seconds())
	}
	var b strings.Builder
	b.WriteString("\n== network partitions: report ==\n")
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "fault\tlasted\trecovered\truns/s before\tduring\tafter\tfailed calls\truns\tlost\ttwice")
	for _, f := range faults {
		if f.Start.IsZero() {
			fmt.Fprintf(tw, "%s\tnot injected\t\t\t\t\t\t\t\n", f.Name)
			continue
		}
		end := f.End
		if end.IsZero() {
			end = f.Start
		}
		last := end
		if f.Recovered.After(last) {
			last = f.Recovered
		}
		from, to := f.Start.Add(-5*time.Second), last.Add(2*time.Second)
		n, lost, twice := 0, 0, 0
		for _, r := range runs {
			if r.AckAt.Before(from) || r.AckAt.After(to) {
				if !slices.Contains(f.probes, r) {
					continue
				}
			}
			n++
			if v := verdicts[r.RunID]; v.lost != "" {
				lost++
			} else if v.twice != "" {
				twice++
			}
		}
		recovered := "-"
		if !f.Recovered.IsZero() {
			recovered = f.Recovery().Round(10 * time.Millisecond).String()
		}
		n503, n0 := 0, 0
		for _, c := range fails {
			if !c.At.Before(f.Start) && c.At.Before(last) {
				if c.Status == 0 {
					n0++
				} else {
					n503++
				}
			}
		}
		fmt.Fprintf(tw, "%s\t%v\t%s\t%s\t%s\t%s\t%d+%d\t%d\t%d\t%d\n", f.Name, end.Sub(f.Start).Round(10*time.Millisecond), recovered,
			rate(f.Start.Add(-5*time.Second), f.Start), rate(f.Start, end), rate(end, end.Add(4*time.Second)), n503, n0, n, lost, twice)
	}
	tw.Flush()
	b.WriteString("(lasted: injected to healed; recovered: injected to the fault's own recovery, see its notes; runs/s: load runs\n" +
		"seen ending by their client, in the 5 s before, while injected, in the 4 s after; failed calls: the load's 5xx + calls\n" +
		"without an answer, injected to recovered; runs: acknowledged from 5 s before to 2 s after it)\n")
	for _, f := range faults {
		fmt.Fprintf(&b, "%s: %s\n", f.Name, strings.Join(f.Notes, "; "))
	}
	return b.String()
}

// execFigure counts the node executions the workers logged (every one,
// committed or not) against the committed ones (three per finished run):
// the difference is work redone after a worker lost its claim.
func execFigure(e *env, finishedRuns int) string {
	n := 0
	for name := range e.workers {
		b, err := os.ReadFile(filepath.Join(e.logDir, name+".exec.jsonl"))
		if err != nil {
			continue
		}
		n += strings.Count(string(b), "\n")
	}
	return fmt.Sprintf("executions: %d node executions logged by the workers, %d committed (3 per run), %d not committed (their worker lost its claim first)\n",
		n, 3*finishedRuns, n-3*finishedRuns)
}
