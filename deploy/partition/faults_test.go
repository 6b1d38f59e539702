package partition

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
)

// The faults, injected one after another under the load. Each records
// when it was injected and healed, when its own recovery was seen, notes for
// the report, the runs it made itself, and what failed.

// fault is one injected fault and what was measured.
type fault struct {
	Name       string
	fn         func(*env, *load, *fault)
	Start, End time.Time // injected, healed
	Recovered  time.Time // when the fault's own recovery was seen (see each)
	Notes      []string
	probes     []*runRec // runs the fault made itself
	failed     []string  // what failed
}

func (f *fault) note(format string, args ...any) {
	f.Notes = append(f.Notes, fmt.Sprintf(format, args...))
}

func (f *fault) fail(format string, args ...any) {
	f.failed = append(f.failed, fmt.Sprintf(format, args...))
}

// Recovery is from the fault's injection to its recovery.
func (f *fault) Recovery() time.Duration {
	if f.Recovered.IsZero() {
		return 0
	}
	return f.Recovered.Sub(f.Start)
}

// faultWorkerCut is fault (a): a run of count_py whose nodes take 1.5 s is
// claimed by one of the Python workers, which is cut off (its veth down)
// in the middle of the first node, for longer than its lease; the other
// Python worker finishes the run. When the link returns, the first
// worker's late commit or heartbeat is refused with 409 and it drops the
// run (its log says so); the run's dispatch audit shows two attempts, one
// of them successful. Recovery: from the cut to the run's success.
func faultWorkerCut(e *env, l *load, f *fault) {
	s := e.servers[2]
	tid, ok := l.newThread(2)
	if !ok {
		f.fail("could not create the probe's thread")
		return
	}
	r, err := e.client.do("POST", s.ClientURL+"/threads/"+tid+"/runs",
		map[string]any{"assistant_id": "count_py", "input": map[string]any{"ms": 1500}}, 10*time.Second)
	var run struct {
		RunID string `json:"run_id"`
	}
	if err != nil || r.decode(http.StatusOK, &run) != nil {
		f.fail("could not create the probe run: %v %d %s", err, r.status, r.body)
		return
	}
	rec := &runRec{Kind: "probe-a", Graph: "count_py", ThreadID: tid, RunID: run.RunID, Server: 2, AckAt: time.Now()}
	l.add(rec)
	f.probes = append(f.probes, rec)
	claimedBy, dispatchID := "", ""
	deadline := time.Now().Add(20 * time.Second)
	for claimedBy == "" && time.Now().Before(deadline) {
		for _, d := range e.dispatches(tid, run.RunID) {
			if d.State == "claimed" && d.ClaimedBy != nil {
				claimedBy, dispatchID = *d.ClaimedBy, d.DispatchID
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	w, other := e.workers[claimedBy], e.workers[map[string]string{"py1": "py2", "py2": "py1"}[claimedBy]]
	if w == nil || other == nil {
		f.fail("the probe run was not claimed by a Python worker within 20 s (claimed by %q)", claimedBy)
		return
	}
	time.Sleep(500 * time.Millisecond) // in the middle of node a
	f.Start = time.Now()
	if err := w.host.Cut(); err != nil {
		f.fail("cut %s: %v", w.Name, err)
		return
	}
	f.note("run %s claimed by %s, which is cut off", short(run.RunID), w.Name)
	status := e.waitRunStatus(tid, run.RunID, "success", 45*time.Second)
	if status == "success" {
		f.Recovered = time.Now()
		l.markDone(rec)
	} else {
		f.fail("the probe run is %q 45 s after its worker was cut", status)
	}
	// The cut lasts at least the lease and a little more, so the cut worker's
	// claim has certainly expired before it can talk again.
	if d := time.Until(f.Start.Add(lease + 2*time.Second)); d > 0 {
		time.Sleep(d)
	}
	if err := w.host.Join(); err != nil {
		f.fail("join %s: %v", w.Name, err)
	}
	f.End = time.Now()
	// The fence: the cut worker's first call about the run after the link
	// returned is answered 409, and it drops the run.
	line, at := waitLogLine(w.proc.Log, 30*time.Second, func(s string) bool {
		return strings.Contains(s, "409") && (strings.Contains(s, dispatchID) || strings.Contains(s, run.RunID))
	})
	if line == "" {
		f.fail("%s's log has no 409 for dispatch %s within 30 s of the link's return", w.Name, dispatchID)
	} else {
		f.note("%s was refused with 409 %v after the link returned: %s", w.Name, at.Sub(f.End).Round(10*time.Millisecond), trimLog(line))
	}
	if line, _ := waitLogLine(w.proc.Log, 10*time.Second, func(s string) bool {
		return strings.Contains(s, "run stopped: lease lost") && strings.Contains(s, run.RunID)
	}); line == "" {
		f.fail("%s's log does not say it dropped run %s (run stopped: lease lost)", w.Name, run.RunID)
	} else {
		f.note("%s dropped the run", w.Name)
	}
	// The audit: two attempts (or more), the cut worker's not successful,
	// exactly one successful, by the other worker.
	var audit []string
	successes, byCut := 0, false
	for _, d := range e.dispatches(tid, run.RunID) {
		for _, a := range d.Attempts {
			outcome := ""
			if a.Outcome != nil {
				outcome = *a.Outcome
			}
			audit = append(audit, fmt.Sprintf("attempt %d by %s: %s (fenced writes %d)", a.Attempt, a.Worker, outcome, a.FencedWrites))
			if outcome == "success" {
				successes++
				if a.Worker != other.Name {
					f.fail("the probe run succeeded on %s, not on the other worker %s", a.Worker, other.Name)
				}
			}
			if a.Worker == w.Name {
				byCut = true
				if outcome == "success" {
					f.fail("the cut worker's attempt succeeded")
				}
			}
		}
	}
	if len(audit) < 2 || successes != 1 || !byCut {
		f.fail("the probe run's audit is not two attempts with one success after the cut worker's: %s", strings.Join(audit, "; "))
	}
	f.note("audit: %s", strings.Join(audit, "; "))
}

// serverDBCut is fault (b): server s2 is cut from PostgreSQL for a few
// seconds, in one of two ways. Refused: its proxy is disabled, which closes
// its connections and refuses new ones (a database that went away).
// Silent: its proxy drops every byte from PostgreSQL and closes nothing (a
// partition: the server hears nothing back). Either way its GET /ok must
// answer 503, and its API requests 503 within okWithin and answerWithin
// (they must not hang); when the link returns it serves again. Recovery:
// from the cut to its first GET /ok 200 and created thread after the link
// returned. What it acknowledged before is checked with every other run at
// the end.
type serverDBCut struct {
	silent bool
	// cut lasts at least this long
	cut time.Duration
	// okWithin bounds the time from the cut to GET /ok's 503; answerWithin
	// bounds each API request's answer during the cut.
	okWithin, answerWithin time.Duration
}

// Bounds of a server cut from its database. Refused: the dial fails at
// once. Silent: GET /ok pings with a 3 s timeout, and a request waits for a
// connection at most the pool's 5 s connect timeout
// (postgres.DefaultConnectTimeout); 3 s more for a busy machine.
var (
	refusedCut = serverDBCut{cut: 6 * time.Second, okWithin: 5 * time.Second, answerWithin: 3 * time.Second}
	silentCut  = serverDBCut{silent: true, cut: 10 * time.Second, okWithin: 6 * time.Second, answerWithin: 8 * time.Second}
)

func (c serverDBCut) run(e *env, l *load, f *fault) {
	s := e.servers[1]
	f.Start = time.Now()
	var err error
	if c.silent {
		err = e.tp.AddToxic("pg-s2", toxiproxy.Toxic{Name: "silent", Type: "timeout", Stream: "downstream",
			Attributes: toxiproxy.Attributes{"timeout": 0}})
	} else {
		err = e.tp.SetEnabled("pg-s2", false)
	}
	if err != nil {
		f.fail("cut pg-s2: %v", err)
		return
	}
	var okAt time.Time
	for time.Since(f.Start) < c.okWithin {
		if st, _, _ := e.client.get(s.ClientURL+"/ok", c.okWithin); st == http.StatusServiceUnavailable {
			okAt = time.Now()
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if okAt.IsZero() || okAt.Sub(f.Start) > c.okWithin {
		f.fail("s2's GET /ok did not answer 503 within %v of its database link's cut", c.okWithin)
	} else {
		f.note("s2 GET /ok 503 after %v", okAt.Sub(f.Start).Round(10*time.Millisecond))
	}
	// Two requests at a time, again and again, while the cut lasts.
	var mu sync.Mutex
	var slowest time.Duration
	probes, other := 0, map[int]int{}
	var wg sync.WaitGroup
	for _, p := range []string{"/threads", "/threads/search"} {
		wg.Go(func() {
			for time.Since(f.Start) < c.cut {
				t0 := time.Now()
				r, err := e.client.do("POST", s.ClientURL+p, map[string]any{}, 30*time.Second)
				took := time.Since(t0)
				mu.Lock()
				probes++
				slowest = max(slowest, took)
				if err != nil || r.status != http.StatusServiceUnavailable {
					other[r.status]++
				}
				mu.Unlock()
				time.Sleep(200 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	f.note("%d API requests to s2 while cut, each answered 503, the slowest in %v", probes, slowest.Round(time.Millisecond))
	if slowest > c.answerWithin {
		f.fail("a request to s2 took %v while it was cut from the database (want 503 within %v)", slowest, c.answerWithin)
	}
	if len(other) > 0 {
		f.fail("requests to s2 while cut answered other than 503: %v (0: no answer)", other)
	}
	if c.silent {
		err = e.tp.RemoveToxic("pg-s2", "silent")
	} else {
		err = e.tp.SetEnabled("pg-s2", true)
	}
	if err != nil {
		f.fail("heal pg-s2: %v", err)
	}
	f.End = time.Now()
	for time.Since(f.End) < 30*time.Second {
		if st, _, _ := e.client.get(s.ClientURL+"/ok", 5*time.Second); st == http.StatusOK {
			if _, ok := l.newThread(1); ok {
				f.Recovered = time.Now()
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if f.Recovered.IsZero() {
		f.fail("s2 did not serve again within 30 s of its database link's return")
	} else {
		f.note("s2 serves again %v after the link returned", f.Recovered.Sub(f.End).Round(10*time.Millisecond))
	}
}

// faultClientStream is fault (c): a client streams a run through s1; after
// two events its link to s1 stops passing data (Toxiproxy's timeout toxic:
// nothing gets through, and the connection is closed once nothing came for
// 1 s; the run's nodes take 1.5 s each, so the run is still going). The
// client resumes through s2 with Last-Event-ID and must receive every event
// of the run exactly once, as the run's whole stream read afterwards shows
// it. Recovery: from the cut to the first event received through s2.
func faultClientStream(e *env, l *load, f *fault) {
	tid, ok := l.newThread(2)
	if !ok {
		f.fail("could not create the probe's thread")
		return
	}
	st := &streamRec{}
	rec := &runRec{Kind: "probe-c", Graph: "count_js", ThreadID: tid, Stream: st}
	resp, err := e.client.send(e.t.Context(), "POST", e.servers[0].ClientURL+"/threads/"+tid+"/runs/stream",
		map[string]any{"assistant_id": "count_js", "input": map[string]any{"ms": 1500}, "stream_mode": streamModes,
			"on_disconnect": "continue"}, "")
	if err != nil || resp.StatusCode != http.StatusOK {
		f.fail("could not start the probe stream: %v", err)
		return
	}
	_, rec.RunID, _ = runIDs(resp.Header)
	rec.Server, rec.AckAt = 0, time.Now()
	l.add(rec)
	f.probes = append(f.probes, rec)
	st.Conns++
	_, err = readSSE(resp, &st.Events, streamIdle, func() bool { return len(st.Events) >= 2 })
	if err != nil {
		resp.Body.Close()
		f.fail("the probe stream broke before the cut: %v", err)
		return
	}
	f.Start = time.Now()
	if err := e.tp.AddToxic("cl-s1", toxiproxy.Toxic{Name: "cut", Type: "timeout", Stream: "downstream",
		Attributes: toxiproxy.Attributes{"timeout": 1000}}); err != nil {
		f.fail("cut the client from s1: %v", err)
		resp.Body.Close()
		return
	}
	healed := false
	heal := func() {
		if healed {
			return
		}
		healed = true
		if err := e.tp.RemoveToxic("cl-s1", "cut"); err != nil {
			f.fail("remove the cut: %v", err)
		}
		f.End = time.Now()
	}
	defer heal() // on every return: the next fault starts from a whole network
	before := len(st.Events)
	ended, err := readSSE(resp, &st.Events, streamIdle, nil)
	resp.Body.Close()
	if ended {
		f.fail("the stream through s1 ended normally despite the cut")
	}
	f.note("the stream through s1 broke %v after the cut (%v), %d events before it, %d after",
		time.Since(f.Start).Round(10*time.Millisecond), err, before, len(st.Events)-before)
	last := st.Events[len(st.Events)-1].ID
	f.note("the run was %s when the client resumed", e.runStatus(tid, rec.RunID))
	resp, err = e.client.send(e.t.Context(), "GET", e.servers[1].ClientURL+"/threads/"+tid+"/runs/"+rec.RunID+"/stream", nil,
		fmt.Sprint(last))
	if err != nil || resp.StatusCode != http.StatusOK {
		f.fail("could not resume through s2: %v", err)
		return
	}
	st.Conns++
	n := len(st.Events)
	_, err = readSSE(resp, &st.Events, streamIdle, func() bool {
		if f.Recovered.IsZero() && len(st.Events) > n {
			f.Recovered = time.Now()
		}
		return false
	})
	resp.Body.Close()
	if err != nil {
		f.fail("the resumed stream through s2 broke: %v", err)
		return
	}
	st.Completed = true
	l.markDone(rec)
	if d := time.Until(f.Start.Add(3 * time.Second)); d > 0 {
		time.Sleep(d) // the cut lasts 3 s at least: the load meets it too
	}
	heal()
	// The run's whole stream, read afterwards through s3.
	full, err := e.fullStream(2, tid, rec.RunID)
	if err != nil {
		f.fail("read the whole stream: %v", err)
		return
	}
	if msg := sameEvents(st.Events, full); msg != "" {
		f.fail("the resumed stream differs from the run's whole stream: %s", msg)
	} else {
		f.note("resumed after id %d through s2 with Last-Event-ID: %d events over 2 connections, each once, as the whole stream", last, len(full))
	}
}

// faultSlowLinks is fault (d), first half: every link through Toxiproxy
// (servers to PostgreSQL, client and workers to the servers) gets 200 ms
// (±20 ms) of latency on its answers and has what it sends cut into small
// pieces 1 ms apart (Toxiproxy's slicer; it has no packet-loss toxic) for
// 10 s. Recovery: from the slowdown to the first load run acknowledged after
// the links were healed to end.
func faultSlowLinks(e *env, l *load, f *fault) {
	f.Start = time.Now()
	for _, p := range e.tp.proxies {
		if err := e.tp.AddToxic(p.Name, toxiproxy.Toxic{Name: "slow", Type: "latency", Stream: "downstream",
			Attributes: toxiproxy.Attributes{"latency": 200, "jitter": 20}}); err != nil {
			f.fail("slow %s: %v", p.Name, err)
		}
		if err := e.tp.AddToxic(p.Name, toxiproxy.Toxic{Name: "sliced", Type: "slicer", Stream: "upstream",
			Attributes: toxiproxy.Attributes{"average_size": 64, "size_variation": 32, "delay": 1000}}); err != nil {
			f.fail("slice %s: %v", p.Name, err)
		}
	}
	f.note("latency 200±20 ms downstream and slicer 64±32 B/1 ms upstream on %d proxies", len(e.tp.proxies))
	time.Sleep(10 * time.Second)
	for _, p := range e.tp.proxies {
		for _, name := range []string{"slow", "sliced"} {
			if err := e.tp.RemoveToxic(p.Name, name); err != nil {
				f.fail("heal %s: %v", p.Name, err)
			}
		}
	}
	f.End = time.Now()
	f.Recovered = l.firstDoneAckedAfter(f.End, 30*time.Second)
	if f.Recovered.IsZero() {
		f.fail("no run acknowledged after the links were healed finished within 30 s")
	}
}

// faultDBUnreachable is fault (d), second half: PostgreSQL's host is cut
// off (its veth down) for 10 s. Every server's GET /ok must answer 503
// meanwhile. Recovery: from the cut to every server answering /ok 200 again
// and a new run finishing through each of them.
func faultDBUnreachable(e *env, l *load, f *fault) {
	f.Start = time.Now()
	if err := e.db.host.Cut(); err != nil {
		f.fail("cut PostgreSQL: %v", err)
		return
	}
	down := map[string]bool{}
	for time.Since(f.Start) < 10*time.Second {
		for _, s := range e.servers {
			if !down[s.Name] {
				if st, _, _ := e.client.get(s.ClientURL+"/ok", 5*time.Second); st == http.StatusServiceUnavailable {
					down[s.Name] = true
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(down) != len(e.servers) {
		f.fail("only %d of %d servers answered GET /ok 503 while PostgreSQL was unreachable", len(down), len(e.servers))
	}
	if err := e.db.host.Join(); err != nil {
		f.fail("join PostgreSQL: %v", err)
	}
	f.End = time.Now()
	deadline := f.End.Add(60 * time.Second)
	for i, s := range e.servers {
		for {
			if st, _, _ := e.client.get(s.ClientURL+"/ok", 5*time.Second); st == http.StatusOK {
				r, err := e.client.do("POST", s.ClientURL+"/runs/wait", map[string]any{"assistant_id": loadGraphs[i],
					"input": map[string]any{"ms": 10}, "on_completion": "keep"}, 30*time.Second)
				if err == nil && r.status == http.StatusOK {
					if tid, rid, ok := runIDs(r.header); ok {
						rec := &runRec{Kind: "probe-d2", Graph: loadGraphs[i], ThreadID: tid, RunID: rid, Server: i, AckAt: time.Now()}
						l.add(rec)
						l.markDone(rec)
						f.probes = append(f.probes, rec)
					}
					break
				}
			}
			if time.Now().After(deadline) {
				f.fail("%s did not run a run within 60 s of PostgreSQL's return", s.Name)
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	f.Recovered = time.Now()
	f.note("every server answered GET /ok 503 during the cut; all three ran a run %v after the link returned",
		f.Recovered.Sub(f.End).Round(10*time.Millisecond))
}
