package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/builtin"
	"github.com/weftdev/weft/internal/server"
)

// Figures the stream suite compares with.
const (
	loopSteps           = 200    // supersteps of the measured loop run
	targetJoinP50MS     = 5.0    // join latency p50 target
	refJSPollMS         = 1000.0 // the JS dev server's stream poll interval (up to)
	idleSlowMS          = 60000  // the slow graph's per-node sleep for idle streams
	streamPhaseDeadline = 2 * time.Minute
)

// loadGraphs is the registry of the in-process servers: the built-in
// graphs plus "loop" (channels n, to and step_ms; START → inc; inc sleeps
// step_ms milliseconds (default 0), adds 1 to n and loops back to itself
// until n reaches to (default 200), then ends). The sleep channel is not
// called ms: the slow graph's ms would carry over on a shared thread.
func loadGraphs() *graph.Registry {
	r := builtin.Graphs()
	err := r.Register(&graph.Graph{
		ID:       "loop",
		Channels: []graph.Channel{{Name: "n", Default: float64(0)}, {Name: "to", Default: float64(loopSteps)}, {Name: "step_ms", Default: float64(0)}},
		Nodes: []graph.Node{{Name: "inc", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
			if ms := loopNumber(in.Values["step_ms"]); ms > 0 {
				t := time.NewTimer(time.Duration(min(ms, 1000) * float64(time.Millisecond)))
				defer t.Stop()
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-t.C:
				}
			}
			return graph.State{"n": loopNumber(in.Values["n"]) + 1}, nil
		}}},
		Edges: []graph.Edge{{From: graph.START, To: "inc"}, {From: "inc", Targets: []string{"inc", graph.END},
			Route: func(v graph.State) ([]string, error) {
				if loopNumber(v["n"]) >= loopNumber(v["to"]) {
					return []string{graph.END}, nil
				}
				return []string{"inc"}, nil
			}}},
	})
	if err != nil {
		panic(err)
	}
	return r
}

// loopNumber reads a JSON number (float64 from a node, json.Number once
// read back from the database).
func loopNumber(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case json.Number:
		f, _ := n.Float64()
		return f
	}
	return 0
}

// loopBody is the create body of a 200-superstep loop run (each step
// sleeping stepMS first when it is above 0).
func loopBody(stepMS int) map[string]any {
	in := map[string]any{"n": 0, "to": loopSteps}
	if stepMS > 0 {
		in["step_ms"] = stepMS
	}
	return map[string]any{"assistant_id": "loop", "input": in,
		"stream_mode": []string{"values", "updates"}, "config": map[string]any{"recursion_limit": 1000}}
}

// pacedStepMS is the per-superstep sleep of the paced join variant.
const pacedStepMS = 5

// sseEvent is one received Server-Sent Event and the time its terminating
// blank line was read by the client.
type sseEvent struct {
	Event, Data, ID string
	At              time.Time
}

// sseReader reads events from a response body.
type sseReader struct {
	r     *bufio.Reader
	bytes int64
}

func newSSEReader(body io.Reader) *sseReader { return &sseReader{r: bufio.NewReader(body)} }

// next returns the next event; err is io.EOF when the stream closed cleanly.
func (s *sseReader) next() (sseEvent, error) {
	var e sseEvent
	for {
		line, err := s.r.ReadString('\n')
		s.bytes += int64(len(line))
		if err != nil {
			if err == io.EOF && line == "" {
				return e, io.EOF
			}
			if err == io.EOF {
				return e, io.ErrUnexpectedEOF
			}
			return e, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if e.Event != "" {
				e.At = time.Now()
				return e, nil
			}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "event: "):
			e.Event = line[7:]
		case strings.HasPrefix(line, "data: "):
			e.Data = line[6:]
		case strings.HasPrefix(line, "id: "):
			e.ID = line[4:]
		}
	}
}

// streamLoad is the state of the stream suite.
type streamLoad struct {
	*load
	sc   *http.Client // no timeout, unlimited connections per host
	b    *server.Server
	bURL string
}

// openSSE sends a request whose answer must be an event stream.
func (s *streamLoad) openSSE(ctx context.Context, method, url string, body any, header map[string]string) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := s.sc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, fmt.Errorf("%s %s: %d %s %s", method, url, resp.StatusCode, resp.Header.Get("Content-Type"), bytes.TrimSpace(b))
	}
	return resp, nil
}

func (s *streamLoad) newThread() (string, error) {
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if err := s.post("/threads", map[string]any{}, &th); err != nil {
		return "", err
	}
	return th.ThreadID, nil
}

// createRun creates a background run on A and returns its id.
func (s *streamLoad) createRun(tid string, body map[string]any) (string, error) {
	var run struct {
		RunID string `json:"run_id"`
	}
	if err := s.post("/threads/"+tid+"/runs", body, &run); err != nil {
		return "", err
	}
	return run.RunID, nil
}

// streamSuite runs the three stream measurements.
func (l *load) streamSuite(a *server.Server, workers int) error {
	fmt.Printf("\n== stream: Server-Sent Events (issue 8)\n")
	if a == nil {
		fmt.Printf("stream: skipped: it needs the in-process server (it registers the loop graph and starts a second server on the same database); run without -url\n")
		return nil
	}
	fmt.Printf("process: client, server A (%d run workers) and server B (0 workers, same database) all run in this one process; PostgreSQL runs in its own processes\n", workers)
	if err := raiseNoFile(); err != nil {
		return err
	}
	b, err := server.Start(context.Background(), server.Config{Addr: "127.0.0.1:0", DatabaseURL: a.DSN(), Migrate: false,
		MaxBodyBytes: 1 << 20, ShutdownTimeout: 10 * time.Second, Workers: 0, Graphs: loadGraphs()},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return fmt.Errorf("start server B: %w", err)
	}
	defer b.Shutdown(context.Background())
	s := &streamLoad{load: l, b: b, bURL: b.URL(),
		sc: &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: 1100, MaxIdleConns: 2200,
			DisableCompression: true, IdleConnTimeout: 30 * time.Second}}}
	defer s.sc.CloseIdleConnections()
	fmt.Printf("server B: in-process Weft on %s, DatabaseURL = server A's DSN, Workers 0 (serves HTTP and streams only)\n", s.bURL)
	if err := s.firstEvent(); err != nil {
		return err
	}
	if err := s.idleStreams(); err != nil {
		return err
	}
	return s.joinLatency()
}

// raiseNoFile lifts the soft RLIMIT_NOFILE to the hard limit and checks
// that the idle-stream phase fits (two descriptors per stream in one
// process, plus slack).
func raiseNoFile() error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("getrlimit: %w", err)
	}
	before := lim.Cur
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			return fmt.Errorf("setrlimit: %w", err)
		}
	}
	fmt.Printf("fd limit: RLIMIT_NOFILE soft %d → %d (hard %d)\n", before, lim.Cur, lim.Max)
	return nil
}

// fdLimit is the current soft RLIMIT_NOFILE.
func fdLimit() uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 1024
	}
	return lim.Cur
}

// msOf renders a duration in milliseconds.
func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// pctDur is the p-th percentile of sorted durations, in ms.
func pctDur(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return msOf(sorted[min(int(p*float64(len(sorted))), len(sorted)-1)])
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// ---------------------------------------------------------------- phase 1

// loopStream is what one POST …/runs/stream of a loop run measured.
type loopStream struct {
	headers, first, firstValues, total time.Duration
	events                             int
	problems                           []string
	// On the database clock: dispatch created→claimed, claimed→start of
	// the first commit's transaction (run_events.created_at is now()); the
	// number of commits that appended events.
	claim, claimToCommit time.Duration
	commits              int
}

// runDBTimes reads a run's dispatch and event-log timings and its commits
// (distinct transaction ids of its event rows).
func runDBTimes(ctx context.Context, conn *pgx.Conn, rid string) (claim, toCommit time.Duration, commits int, err error) {
	var c, t float64
	err = conn.QueryRow(ctx, `SELECT
		extract(epoch FROM d.claimed_at - d.created_at)::float8,
		extract(epoch FROM (SELECT min(created_at) FROM run_events WHERE run_id = $1) - d.claimed_at)::float8,
		(SELECT count(DISTINCT xmin::text) FROM run_events WHERE run_id = $1)::int
		FROM run_dispatches d WHERE d.run_id = $1 ORDER BY d.created_at LIMIT 1`, rid).Scan(&c, &t, &commits)
	return time.Duration(c * float64(time.Second)), time.Duration(t * float64(time.Second)), commits, err
}

// checkLoopEvents checks a loop run's events: ids from, from+1, … without gaps,
// one metadata first, values n = 0 … 200 and 200 updates in between.
func checkLoopEvents(evs []sseEvent, from int64) []string {
	var probs []string
	next := from
	lastN := -1.0
	values, updates, meta := 0, 0, 0
	for _, e := range evs {
		id, err := strconv.ParseInt(e.ID, 10, 64)
		if err != nil || id != next {
			if len(probs) < 5 {
				probs = append(probs, fmt.Sprintf("event %q has id %q, want %d", e.Event, e.ID, next))
			}
			if err == nil {
				next = id
			}
		}
		next++
		switch e.Event {
		case "metadata":
			meta++
		case "updates":
			updates++
		case "values":
			var v struct{ N float64 }
			_ = json.Unmarshal([]byte(e.Data), &v)
			if lastN >= 0 && v.N != lastN+1 && len(probs) < 5 {
				probs = append(probs, fmt.Sprintf("values n=%v after n=%v", v.N, lastN))
			}
			lastN = v.N
			values++
		default:
			if len(probs) < 5 {
				probs = append(probs, fmt.Sprintf("unexpected event %s %s", e.Event, e.Data))
			}
		}
	}
	if from == 1 && (meta != 1 || values != loopSteps+1 || updates != loopSteps || lastN != loopSteps) {
		probs = append(probs, fmt.Sprintf("%d metadata, %d values (last n=%v), %d updates; want 1, %d (last n=%d), %d",
			meta, values, lastN, updates, loopSteps+1, loopSteps, loopSteps))
	}
	return probs
}

// streamLoop creates a loop run with POST /threads/{id}/runs/stream on A
// and reads it to the end.
func (s *streamLoad) streamLoop(conn *pgx.Conn) (loopStream, error) {
	var m loopStream
	tid, err := s.newThread()
	if err != nil {
		return m, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t0 := time.Now()
	resp, err := s.openSSE(ctx, "POST", s.target+"/threads/"+tid+"/runs/stream", loopBody(0), nil)
	if err != nil {
		return m, err
	}
	defer resp.Body.Close()
	m.headers = time.Since(t0)
	rid := strings.TrimPrefix(resp.Header.Get("Content-Location"), "/threads/"+tid+"/runs/")
	rd := newSSEReader(resp.Body)
	var evs []sseEvent
	for {
		e, err := rd.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return m, fmt.Errorf("stream of a loop run after %d events: %w", len(evs), err)
		}
		evs = append(evs, e)
	}
	m.total = time.Since(t0)
	m.events = len(evs)
	if len(evs) > 0 {
		m.first = evs[0].At.Sub(t0)
		if evs[0].Event != "metadata" {
			m.problems = append(m.problems, "first event is "+evs[0].Event+", not metadata")
		}
	}
	for _, e := range evs {
		if e.Event == "values" {
			m.firstValues = e.At.Sub(t0)
			break
		}
	}
	m.problems = append(m.problems, checkLoopEvents(evs, 0)...)
	if m.claim, m.claimToCommit, m.commits, err = runDBTimes(ctx, conn, rid); err != nil {
		m.problems = append(m.problems, "database timings: "+err.Error())
	}
	return m, nil
}

func (s *streamLoad) firstEvent() error {
	reps := min(s.streamRuns, s.maxReq)
	fmt.Printf("\n-- stream 1: time to first event and events/s of a %d-superstep run on one stream (server A)\n", loopSteps)
	fmt.Printf("op: POST /threads {} (not timed), then POST /threads/{id}/runs/stream %s on graph loop (START → inc → inc …, n+1 per superstep, ends at n=%d); "+
		"t0 = just before the request is sent; headers = response headers received (after the run is created); first event = metadata received "+
		"(includes run creation, dispatch, claim and the first commit); first values = the input's values event; total = stream closed by the server; "+
		"events/s = events / total; every stream is checked: ids 1…N without gaps, 1 metadata, %d values (n 0…%d in order), %d updates\n",
		mustJSONString(loopBody(0)), loopSteps, loopSteps+1, loopSteps, loopSteps)
	fmt.Printf("breakdown (database clock, not the client's): claim = the dispatch's claimed_at − created_at; →commit = start of the transaction of the first commit that appended events (run_events.created_at, now()) − claimed_at; commits = transactions that appended the run's events (distinct xmin)\n")
	fmt.Printf("repeats: up to %d runs, one after another, stopping after %s\n", reps, s.duration)
	conn, err := pgx.Connect(context.Background(), s.dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	fmt.Printf("%4s %10s %12s %14s %10s %8s %10s %9s %10s %8s %s\n", "run", "headers ms", "1st event ms", "1st values ms", "total ms", "events", "events/s", "claim ms", "→commit ms", "commits", "problems")
	var hd, fe, fv, tot, eps, cl, cc, nc []float64
	start := time.Now()
	var errs errorLog
	for i := 1; i <= reps && (i == 1 || time.Since(start) < s.duration); i++ {
		m, err := s.streamLoop(conn)
		if err != nil {
			errs.add(err)
			fmt.Printf("%4d error: %v\n", i, err)
			continue
		}
		rate := float64(m.events) / m.total.Seconds()
		fmt.Printf("%4d %10.2f %12.2f %14.2f %10.1f %8d %10.0f %9.2f %10.2f %8d %s\n", i, msOf(m.headers), msOf(m.first), msOf(m.firstValues), msOf(m.total), m.events, rate,
			msOf(m.claim), msOf(m.claimToCommit), m.commits, strings.Join(m.problems, "; "))
		hd, fe, fv, tot, eps = append(hd, msOf(m.headers)), append(fe, msOf(m.first)), append(fv, msOf(m.firstValues)), append(tot, msOf(m.total)), append(eps, rate)
		cl, cc, nc = append(cl, msOf(m.claim)), append(cc, msOf(m.claimToCommit)), append(nc, float64(m.commits))
	}
	fmt.Printf("%4s %10.2f %12.2f %14.2f %10.1f %8s %10.0f %9.2f %10.2f %8.0f (medians of %d runs)\n", "p50", median(hd), median(fe), median(fv), median(tot), "", median(eps),
		median(cl), median(cc), median(nc), len(tot))
	errs.print("    error: ")
	return nil
}

func mustJSONString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// ---------------------------------------------------------------- phase 2

// cancelRun cancels a run on A (without wait: 202; 200 or 204 also do).
func (s *streamLoad) cancelRun(tid, rid string) error {
	path := "/threads/" + tid + "/runs/" + rid + "/cancel"
	resp, err := s.client.Post(s.target+path, "application/json", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	switch resp.StatusCode {
	case http.StatusOK, http.StatusAccepted, http.StatusNoContent:
		return nil
	}
	return fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, bytes.TrimSpace(msg))
}

// rssKB reads VmRSS of this process from /proc/self/status.
func rssKB() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				return strconv.ParseInt(f[0], 10, 64)
			}
		}
	}
	return 0, errors.New("no VmRSS in /proc/self/status")
}

// memSnap is the process's memory at one point, after a GC and returning
// freed memory to the OS.
type memSnap struct {
	rssKB      int64
	heapInuse  uint64
	stackInuse uint64
	goroutines int
}

func snapshot() memSnap {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, _ := rssKB()
	return memSnap{rssKB: rss, heapInuse: ms.HeapInuse, stackInuse: ms.StackInuse, goroutines: runtime.NumGoroutine()}
}

// heldStreams are open event streams whose bodies are drained in the
// background.
type heldStreams struct {
	cancels  []context.CancelFunc
	done     sync.WaitGroup
	open     atomic.Int64 // streams still open
	bytes    atomic.Int64 // bytes received (heartbeats included)
	events   atomic.Int64 // events received
	badClose atomic.Int64 // closed with an error rather than a clean end
	openErrs errorLog
	closeErr errorLog
	lastEnd  atomic.Int64 // unix ns of the last stream end
}

// hold opens n streams with open (concurrency c) and drains each in a
// goroutine until it ends; it returns when all are open or failed.
func (h *heldStreams) hold(n, c int, deadline time.Time, open func(ctx context.Context, i int) (*http.Response, error)) {
	h.cancels = make([]context.CancelFunc, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || time.Now().After(deadline) {
					return
				}
				ctx, cancel := context.WithCancel(context.Background())
				h.cancels[i] = cancel
				resp, err := open(ctx, i)
				if err != nil {
					h.openErrs.add(err)
					continue
				}
				h.open.Add(1)
				h.done.Go(func() {
					defer resp.Body.Close()
					rd := newSSEReader(resp.Body)
					for {
						_, err := rd.next()
						if err != nil {
							h.bytes.Add(rd.bytes)
							if err != io.EOF && ctx.Err() == nil {
								h.badClose.Add(1)
								h.closeErr.add(err)
							}
							h.lastEnd.Store(time.Now().UnixNano())
							h.open.Add(-1)
							return
						}
						h.events.Add(1)
					}
				})
			}
		})
	}
	wg.Wait()
}

// cancelAll closes every stream from the client side.
func (h *heldStreams) cancelAll() {
	for _, c := range h.cancels {
		if c != nil {
			c()
		}
	}
}

// waitClosed waits until every stream ended or the timeout passed.
func (h *heldStreams) waitClosed(d time.Duration) bool {
	ch := make(chan struct{})
	go func() { h.done.Wait(); close(ch) }()
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

func (s *streamLoad) idleStreams() error {
	n := s.idleN
	if limit := fdLimit(); uint64(2*n+1000) > limit {
		n = max(1, int(limit-1000)/2)
		fmt.Printf("note: fd limit %d: idle streams reduced to %d\n", limit, n)
	}
	fmt.Printf("\n-- stream 2: %d concurrent idle streams (served by server B)\n", n)
	fmt.Printf("setup: %d threads, each with one run of graph slow with input {\"ms\": %d} created on server A (its %d workers execute as many; the others stay pending), not measured\n",
		n, idleSlowMS, s.workers)
	deadline := time.Now().Add(streamPhaseDeadline)
	type tr struct{ tid, rid string }
	runs := make([]tr, n)
	var created atomic.Int64
	var cerrs errorLog
	t0 := time.Now()
	phase(16, time.Until(deadline), n, func(i int) error {
		tid, err := s.newThread()
		if err != nil {
			return cerrs.add(err)
		}
		rid, err := s.createRun(tid, map[string]any{"assistant_id": "slow", "input": map[string]any{"ms": idleSlowMS}})
		if err != nil {
			return cerrs.add(err)
		}
		runs[i-1] = tr{tid, rid}
		created.Add(1)
		return nil
	})
	fmt.Printf("created %d of %d runs in %.1f s\n", created.Load(), n, time.Since(t0).Seconds())
	cerrs.print("    error: ")
	// cancel ends every created run, whatever happens next.
	cancelRuns := func() (int, time.Duration) {
		t := time.Now()
		var ok atomic.Int64
		var errs errorLog
		phase(16, time.Minute, n, func(i int) error {
			r := runs[i-1]
			if r.rid == "" {
				return nil
			}
			if err := s.cancelRun(r.tid, r.rid); err != nil {
				return errs.add(err)
			}
			ok.Add(1)
			return nil
		})
		errs.print("    cancel error: ")
		return int(ok.Load()), time.Since(t)
	}
	before := snapshot()
	var h heldStreams
	t1 := time.Now()
	h.hold(n, 32, deadline, func(ctx context.Context, i int) (*http.Response, error) {
		r := runs[i]
		if r.rid == "" {
			return nil, errors.New("run not created")
		}
		return s.openSSE(ctx, "GET", s.bURL+"/threads/"+r.tid+"/runs/"+r.rid+"/stream", nil, nil)
	})
	opened := time.Since(t1)
	openNow := h.open.Load()
	fmt.Printf("op: GET /threads/{id}/runs/{run_id}/stream on server B without Last-Event-ID (events from now on: none while the runs sleep), 32 openers; %d streams open after %.2f s (open = 200 text/event-stream headers received)\n",
		openNow, opened.Seconds())
	h.openErrs.print("    open error: ")
	hold := s.idleHold
	xacts := func() int64 {
		var n int64
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, s.dsn)
		if err != nil {
			return -1
		}
		defer conn.Close(ctx)
		if err := conn.QueryRow(ctx, `SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()`).Scan(&n); err != nil {
			return -1
		}
		return n
	}
	x0, tx0 := xacts(), time.Now()
	time.Sleep(hold)
	x1, tx1 := xacts(), time.Now()
	during := snapshot()
	if x0 >= 0 && x1 >= 0 {
		fmt.Printf("database while held: %.0f transactions/s (pg_stat_database xact_commit+xact_rollback of the whole database, servers A and B, stats flushed with up to ~1 s delay)\n",
			float64(x1-x0)/tx1.Sub(tx0).Seconds())
	}
	stillOpen := h.open.Load()
	fmt.Printf("held %s: %d still open, %d events received so far\n", hold, stillOpen, h.events.Load())
	cancelStart := time.Now()
	cancelled, took := cancelRuns()
	fmt.Printf("cancelled %d runs (POST /threads/{id}/runs/{run_id}/cancel on A, 16 at a time) in %.2f s\n", cancelled, took.Seconds())
	allClosed := h.waitClosed(30 * time.Second)
	if allClosed {
		fmt.Printf("all streams closed by server B %.2f s after the first cancel was sent (%d events and %d bytes received in all (heartbeat comments included), %d closed with an error)\n",
			time.Unix(0, h.lastEnd.Load()).Sub(cancelStart).Seconds(), h.events.Load(), h.bytes.Load(), h.badClose.Load())
	} else {
		fmt.Printf("SUSPICIOUS: %d streams still open 30 s after the cancels; closing them from the client\n", h.open.Load())
		h.cancelAll()
		h.waitClosed(10 * time.Second)
	}
	h.closeErr.print("    stream error: ")
	h.cancelAll()
	s.sc.CloseIdleConnections()

	// Baseline: the same number of held SSE responses on a bare net/http
	// server in this process (client and server), so that what Weft adds
	// per stream can be told apart from Go's HTTP cost of an open request.
	base, err := bareBaseline(int(openNow), hold)
	if err != nil {
		return err
	}
	fmt.Printf("RSS: VmRSS of this process (client, server A, server B and the baseline server share it; PostgreSQL's backends are other processes and not counted), each reading after runtime.GC + debug.FreeOSMemory\n")
	fmt.Printf("%-34s %10s %10s %12s %12s %11s\n", "", "VmRSS MiB", "Δ MiB", "Δ KiB/stream", "heap Δ MiB", "goroutines")
	row := func(name string, a, b memSnap, k int64) {
		d := b.rssKB - a.rssKB
		per := 0.0
		if k > 0 {
			per = float64(d) / float64(k)
		}
		fmt.Printf("%-34s %10.1f %10.1f %12.1f %12.1f %5d→%-5d\n", name, float64(b.rssKB)/1024, float64(d)/1024, per,
			(float64(b.heapInuse)-float64(a.heapInuse))/(1<<20), a.goroutines, b.goroutines)
	}
	row(fmt.Sprintf("weft: %d join streams", stillOpen), before, during, stillOpen)
	row(fmt.Sprintf("bare net/http: %d held responses", base.n), base.before, base.during, int64(base.n))
	if stillOpen > 0 && base.n > 0 {
		w := float64(during.rssKB-before.rssKB) / float64(stillOpen)
		bb := float64(base.during.rssKB-base.before.rssKB) / float64(base.n)
		fmt.Printf("weft per stream minus the bare net/http baseline: %.1f KiB (RSS before: %.1f MiB)\n", w-bb, float64(before.rssKB)/1024)
	}
	return nil
}

type baseline struct {
	n              int
	before, during memSnap
}

// bareBaseline holds n SSE-like responses on a plain net/http server
// (headers flushed, then nothing until the client leaves) for hold.
func bareBaseline(n int, hold time.Duration) (baseline, error) {
	b := baseline{n: n}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return b, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_ = http.NewResponseController(w).Flush()
		<-r.Context().Done()
	})}
	go srv.Serve(ln)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: 1100, DisableCompression: true}}
	defer client.CloseIdleConnections()
	s := &streamLoad{sc: client}
	b.before = snapshot()
	var h heldStreams
	h.hold(n, 32, time.Now().Add(time.Minute), func(ctx context.Context, i int) (*http.Response, error) {
		return s.openSSE(ctx, "GET", "http://"+ln.Addr().String()+"/", nil, nil)
	})
	time.Sleep(hold)
	b.during = snapshot()
	b.n = int(h.open.Load())
	h.cancelAll()
	h.waitClosed(10 * time.Second)
	return b, nil
}

// ---------------------------------------------------------------- phase 3

// notification is one NOTIFY received by the independent listener.
type notification struct {
	at      time.Time
	payload string
}

// notifyLog LISTENs on weft_run_event on its own connection and records
// the arrival time of every notification.
type notifyLog struct {
	mu   sync.Mutex
	list []notification
	stop context.CancelFunc
	done chan error
}

func listen(dsn string) (*notifyLog, error) {
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		cancel()
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN weft_run_event"); err != nil {
		cancel()
		conn.Close(context.Background())
		return nil, err
	}
	nl := &notifyLog{stop: cancel, done: make(chan error, 1)}
	go func() {
		defer conn.Close(context.Background())
		for {
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				if ctx.Err() != nil {
					err = nil
				}
				nl.done <- err
				return
			}
			at := time.Now()
			nl.mu.Lock()
			nl.list = append(nl.list, notification{at: at, payload: n.Payload})
			nl.mu.Unlock()
		}
	}()
	return nl, nil
}

// notifyChildEnv names the database a re-executed weft-load listens on: it
// then only prints "<unix ns> <payload>" per notification of
// weft_run_event ("ready" first) until its stdin closes.
const notifyChildEnv = "WEFT_LOAD_NOTIFY_CHILD_DSN"

func init() {
	dsn := os.Getenv(notifyChildEnv)
	if dsn == "" {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); cancel() }()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		fmt.Fprintln(os.Stderr, "notify child:", err)
		os.Exit(1)
	}
	if _, err := conn.Exec(ctx, "LISTEN weft_run_event"); err != nil {
		fmt.Fprintln(os.Stderr, "notify child:", err)
		os.Exit(1)
	}
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(out, "ready")
	out.Flush()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			os.Exit(0)
		}
		fmt.Fprintf(out, "%d %s\n", time.Now().UnixNano(), n.Payload)
		out.Flush()
	}
}

// listenChild starts the listener in a child process (this executable
// again), so that its arrival times do not depend on this process's
// scheduler, busy with both servers and the client.
func listenChild(dsn string) (*notifyLog, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), notifyChildEnv+"="+dsn)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	nl := &notifyLog{done: make(chan error, 1)}
	nl.stop = func() { stdin.Close() }
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() || sc.Text() != "ready" {
		stdin.Close()
		_ = cmd.Wait()
		return nil, fmt.Errorf("notify child did not start: %q", sc.Text())
	}
	go func() {
		for sc.Scan() {
			ns, payload, _ := strings.Cut(sc.Text(), " ")
			n, _ := strconv.ParseInt(ns, 10, 64)
			nl.mu.Lock()
			nl.list = append(nl.list, notification{at: time.Unix(0, n), payload: payload})
			nl.mu.Unlock()
		}
		nl.done <- cmd.Wait()
	}()
	return nl, nil
}

// forRun returns the notifications whose payload names the run, in order.
func (nl *notifyLog) forRun(runID string) []notification {
	nl.mu.Lock()
	defer nl.mu.Unlock()
	var out []notification
	for _, n := range nl.list {
		if strings.HasPrefix(n.payload, runID+" ") {
			out = append(out, n)
		}
	}
	return out
}

// joinRun is what one joined loop run measured.
type joinRun struct {
	child, inproc match // by the child-process and in-process listeners
	note          string
	problems      []string
}

// match is a run's stream events matched to one listener's notifications.
type match struct {
	exact, sinceLatest []time.Duration
	early              int // events received before their commit's NOTIFY
	matched            bool
	notifs, commits    int
	lateNotifs         int // notifications received before the join was open
}

// matchEvents computes the latencies of evs against notifs, given each
// event's commit (0, 1, … in commit order) and the number of commits.
func matchEvents(evs []sseEvent, commitOf map[int64]int, commits int, notifs []notification, joinedAt time.Time) match {
	m := match{matched: commits == len(notifs), notifs: len(notifs), commits: commits}
	for _, n := range notifs {
		if n.at.Before(joinedAt) {
			m.lateNotifs++
		}
	}
	for _, e := range evs {
		// A stream's ids number the events it sends (0 = metadata); in
		// values+updates mode a loop run's stream sends every stored event
		// but the end, so an event's log seq is its id + 1.
		id, _ := strconv.ParseInt(e.ID, 10, 64)
		id++
		if m.matched {
			if k, ok := commitOf[id]; ok {
				d := e.At.Sub(notifs[k].at)
				if d < 0 {
					m.early++
				}
				m.exact = append(m.exact, d)
			}
		}
		var latest time.Time
		for _, n := range notifs {
			if n.at.After(e.At) {
				break
			}
			latest = n.at
		}
		if !latest.IsZero() {
			m.sinceLatest = append(m.sinceLatest, e.At.Sub(latest))
		}
	}
	slices.Sort(m.exact)
	slices.Sort(m.sinceLatest)
	return m
}

func (s *streamLoad) joinLatency() error {
	fmt.Printf("\n-- stream 3: join latency from a second process (run on server A, stream from server B)\n")
	fmt.Printf("op: POST /threads {} on A; POST /threads/{id}/runs on A: graph slow {\"ms\": 75} (two 75 ms nodes: holds the thread ~150 ms); POST /threads/{id}/runs on A: %s (enqueued behind it, so the join below is open before the loop run writes anything); "+
		"GET /threads/{id}/runs/{run_id}/stream on B with Last-Event-ID: -1, read to the end\n", mustJSONString(loopBody(0)))
	fmt.Printf("variants: (a) the loop run as in stream 1 (its steps take microseconds, so async commits carry many supersteps each); (b) paced: input step_ms=%d, each superstep sleeps %d ms first, so most commits carry one superstep (live, event by event)\n",
		pacedStepMS, pacedStepMS)
	fmt.Printf("clock: two independent pgx connections LISTEN on weft_run_event: one in a child process (this executable re-run; it stamps each notification with the wall clock when WaitForNotification returns and pipes it back) " +
		"and one in this process (stamped likewise); each stream event's arrival is stamped when its blank line is read by the client in this process\n")
	fmt.Printf("latency (exact) = event's arrival on B's stream − arrival of the NOTIFY of the commit that wrote it; commits are told apart by the xmin of the event rows in run_events (one transaction per commit), " +
		"and the k-th commit of the run (by sequence) is matched to the k-th notification naming the run (one pg_notify per commit, delivered in commit order)\n")
	fmt.Printf("latency (since latest) = event's arrival − arrival of the latest notification naming the run received before it (the brief's simpler form, a cross-check)\n")
	nl, err := listen(s.dsn)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer func() {
		nl.stop()
		if err := <-nl.done; err != nil {
			fmt.Printf("listener error: %v\n", err)
		}
	}()
	cl, err := listenChild(s.dsn)
	if err != nil {
		return fmt.Errorf("child listener: %w", err)
	}
	defer func() {
		cl.stop()
		if err := <-cl.done; err != nil {
			fmt.Printf("child listener error: %v\n", err)
		}
	}()
	conn, err := pgx.Connect(context.Background(), s.dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	for _, v := range []struct {
		name   string
		stepMS int
	}{{"(a) 200 steps", 0}, {fmt.Sprintf("(b) 200 steps, %d ms each", pacedStepMS), pacedStepMS}} {
		s.joinVariant(conn, cl, nl, v.name, v.stepMS)
	}
	return nil
}

// joinVariant measures the join latency of loop runs with stepMS.
func (s *streamLoad) joinVariant(conn *pgx.Conn, cl, nl *notifyLog, name string, stepMS int) {
	reps := min(s.streamRuns, s.maxReq)
	fmt.Printf("%s: up to %d runs, one after another, stopping after %s; latencies in ms\n", name, reps, s.duration)
	fmt.Printf("%4s %10s %10s %10s %10s %10s %10s %s\n", "run", "child p50", "child p99", "latest p50", "latest p99", "inproc p50", "inproc p99", "notes")
	var all struct{ child, inproc match }
	unmatched := 0
	start := time.Now()
	var errs errorLog
	for i := 1; i <= reps && (i == 1 || time.Since(start) < s.duration); i++ {
		j, err := s.joinOne(conn, cl, nl, stepMS)
		if err != nil {
			errs.add(err)
			fmt.Printf("%4d error: %v\n", i, err)
			continue
		}
		notes := j.note
		if len(j.problems) > 0 {
			notes += " PROBLEMS: " + strings.Join(j.problems, "; ")
		}
		fmt.Printf("%4d %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f %s\n", i, pctDur(j.child.exact, .5), pctDur(j.child.exact, .99), pctDur(j.child.sinceLatest, .5), pctDur(j.child.sinceLatest, .99),
			pctDur(j.inproc.exact, .5), pctDur(j.inproc.exact, .99), notes)
		for _, p := range []struct{ to, from *match }{{&all.child, &j.child}, {&all.inproc, &j.inproc}} {
			p.to.exact = append(p.to.exact, p.from.exact...)
			p.to.sinceLatest = append(p.to.sinceLatest, p.from.sinceLatest...)
			p.to.early += p.from.early
		}
		if !j.child.matched || !j.inproc.matched {
			unmatched++
		}
	}
	errs.print("    error: ")
	for _, p := range []struct {
		name string
		m    *match
	}{{"child-process listener", &all.child}, {"in-process listener", &all.inproc}} {
		slices.Sort(p.m.exact)
		slices.Sort(p.m.sinceLatest)
		fmt.Printf("%s, %s: exact: %d events p50 %.2f ms p90 %.2f ms p99 %.2f ms max %.2f ms (%d arrived before this listener got their commit's NOTIFY: negative, included); "+
			"since latest: %d events p50 %.2f ms p99 %.2f ms\n", name, p.name, len(p.m.exact), pctDur(p.m.exact, .5), pctDur(p.m.exact, .9), pctDur(p.m.exact, .99), pctDur(p.m.exact, 1), p.m.early,
			len(p.m.sinceLatest), pctDur(p.m.sinceLatest, .5), pctDur(p.m.sinceLatest, .99))
	}
	if unmatched > 0 {
		fmt.Printf("note: %d runs could not be matched commit by commit by a listener (their events count only under since latest)\n", unmatched)
	}
	if exact := all.child.exact; len(exact) > 0 {
		p50 := pctDur(exact, .5)
		verdict := "MISS"
		if p50 <= targetJoinP50MS {
			verdict = "PASS"
		}
		fmt.Printf("%-42s %10s %40s %12s %s\n", name+" join latency p50 (child listener, exact)", fmt.Sprintf("%.2f ms", p50),
			fmt.Sprintf("JS dev server polls up to every %.0f ms", refJSPollMS), fmt.Sprintf("≤%.0f ms", targetJoinP50MS), verdict)
	}
}

// joinOne runs one loop run on A and reads it on B.
func (s *streamLoad) joinOne(conn *pgx.Conn, cl, nl *notifyLog, stepMS int) (joinRun, error) {
	var j joinRun
	tid, err := s.newThread()
	if err != nil {
		return j, err
	}
	if _, err := s.createRun(tid, map[string]any{"assistant_id": "slow", "input": map[string]any{"ms": 75}}); err != nil {
		return j, err
	}
	rid, err := s.createRun(tid, loopBody(stepMS))
	if err != nil {
		return j, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := s.openSSE(ctx, "GET", s.bURL+"/threads/"+tid+"/runs/"+rid+"/stream", nil, map[string]string{"Last-Event-ID": "-1"})
	if err != nil {
		return j, err
	}
	defer resp.Body.Close()
	joinedAt := time.Now()
	rd := newSSEReader(resp.Body)
	var evs []sseEvent
	for {
		e, err := rd.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return j, fmt.Errorf("join stream after %d events: %w", len(evs), err)
		}
		evs = append(evs, e)
	}
	time.Sleep(100 * time.Millisecond) // late notifications
	j.problems = checkLoopEvents(evs, 0)
	// The run's log: seq → commit (transaction id of the row).
	rows, err := conn.Query(ctx, `SELECT seq, event, xmin::text FROM run_events WHERE run_id = $1 ORDER BY seq`, rid)
	if err != nil {
		return j, err
	}
	type logRow struct {
		seq   int64
		event string
		xmin  string
	}
	var log []logRow
	for rows.Next() {
		var r logRow
		if err := rows.Scan(&r.seq, &r.event, &r.xmin); err != nil {
			return j, err
		}
		log = append(log, r)
	}
	if err := rows.Err(); err != nil {
		return j, err
	}
	commitOf := map[int64]int{}
	commits := 0
	seen := map[string]int{}
	stored := map[int64]string{}
	for _, r := range log {
		k, ok := seen[r.xmin]
		if !ok {
			k = commits
			seen[r.xmin] = k
			commits++
		}
		commitOf[r.seq] = k
		stored[r.seq] = r.event
	}
	got := map[int64]bool{}
	for _, e := range evs {
		id, _ := strconv.ParseInt(e.ID, 10, 64)
		got[id+1] = true // its log seq (see above)
	}
	var missing []string
	for _, r := range log {
		if r.event != "end" && !got[r.seq] {
			missing = append(missing, fmt.Sprintf("%d %s", r.seq, r.event))
		}
	}
	if len(missing) > 0 {
		j.problems = append(j.problems, fmt.Sprintf("%d stored events not received: %v", len(missing), missing[:min(len(missing), 5)]))
	}
	var status string
	_ = conn.QueryRow(ctx, `SELECT status FROM runs WHERE run_id = $1`, rid).Scan(&status)
	if status != "success" {
		j.problems = append(j.problems, "run status "+status)
	}
	j.child = matchEvents(evs, commitOf, commits, cl.forRun(rid), joinedAt)
	j.inproc = matchEvents(evs, commitOf, commits, nl.forRun(rid), joinedAt)
	for _, m := range []struct {
		name string
		m    match
	}{{"child", j.child}, {"in-process", j.inproc}} {
		if m.m.lateNotifs > 0 {
			j.problems = append(j.problems, fmt.Sprintf("%s listener: %d notifications arrived before the join was open", m.name, m.m.lateNotifs))
		}
		if !m.m.matched {
			j.problems = append(j.problems, fmt.Sprintf("%s listener: %d notifications for %d commits: exact latency not computed", m.name, m.m.notifs, commits))
		}
	}
	j.note = fmt.Sprintf("%d events, %d commits, %d/%d notifications (child/in-process)", len(evs), commits, j.child.notifs, j.inproc.notifs)
	if len(evs) > 0 {
		j.note += fmt.Sprintf(", join→1st event %.0f ms, 1st→last event %.0f ms", msOf(evs[0].At.Sub(joinedAt)), msOf(evs[len(evs)-1].At.Sub(evs[0].At)))
	}
	if j.child.early > 0 || j.inproc.early > 0 {
		j.note += fmt.Sprintf(", events before their NOTIFY: %d/%d", j.child.early, j.inproc.early)
	}
	return j, nil
}
