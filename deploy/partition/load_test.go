package partition

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The steady load: a few clients, each doing one action after another on
// the servers in turn (the next server after a failure), a few runs a
// second in all: stateful runs/wait, stateless runs/wait (kept, so the
// checker finds them), runs/stream read to the end (resumed with
// Last-Event-ID on another server when the connection breaks) and a
// create followed by join. A run is acknowledged once a server has named it
// (Content-Location, or the created run's body); from then on the client
// follows it to its end through any server.

// graphs the load runs: count_py twice as often (two Python workers, the
// pair whose failover fault (a) cuts), count_js by the JS worker.
var loadGraphs = []string{"count_py", "count_py", "count_js"}

// streamModes are the modes of the load's streams.
var streamModes = []string{"values", "updates"}

// runRec is one run the load or a fault made.
type runRec struct {
	Kind     string // wait, stateless, stream, join, or a fault's probe
	Graph    string
	ThreadID string
	RunID    string
	Server   int       // the server that acknowledged it
	AckAt    time.Time // when it was acknowledged
	DoneAt   time.Time // when the client saw its end (zero: never)
	Stream   *streamRec
}

// streamRec is what a streamed run's client received over all its
// connections.
type streamRec struct {
	Events    []sseEvent
	Conns     int
	Completed bool
	Err       string
}

// callFail is a request that failed (a transport error or a 5xx).
type callFail struct {
	At     time.Time
	Server int
	Status int // 0: transport error
	What   string
}

type load struct {
	e    *env
	stop chan struct{}
	wg   sync.WaitGroup

	mu       sync.Mutex
	runs     []*runRec
	fails    []callFail
	statuses map[int]int
	actions  int
}

// startLoad starts n clients; Stop ends them.
func startLoad(e *env, n int, seed uint64) *load {
	l := &load{e: e, stop: make(chan struct{}), statuses: map[int]int{}}
	for i := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		l.wg.Go(func() { l.client(i, rng) })
	}
	return l
}

// Stop stops starting actions and waits for those under way.
func (l *load) Stop() {
	close(l.stop)
	l.wg.Wait()
}

func (l *load) stopped() bool {
	select {
	case <-l.stop:
		return true
	default:
		return false
	}
}

func (l *load) client(id int, rng *rand.Rand) {
	srv := id % len(l.e.servers)
	for !l.stopped() {
		graph := loadGraphs[rng.IntN(len(loadGraphs))]
		var ok bool
		switch p := rng.IntN(10); {
		case p < 3:
			ok = l.waitAction(srv, graph, false)
		case p < 5:
			ok = l.waitAction(srv, graph, true)
		case p < 8:
			ok = l.streamAction(srv, graph)
		default:
			ok = l.joinAction(srv, graph)
		}
		l.mu.Lock()
		l.actions++
		l.mu.Unlock()
		srv = (srv + 1) % len(l.e.servers)
		pause := time.Duration(150+rng.IntN(200)) * time.Millisecond
		if !ok {
			pause = 300 * time.Millisecond
		}
		select {
		case <-l.stop:
		case <-time.After(pause):
		}
	}
}

// actionLimit bounds one action, from its first request to the run's end.
const actionLimit = 90 * time.Second

func (l *load) input() map[string]any { return map[string]any{"ms": 50} }

// call sends one request to server srv and counts its answer.
func (l *load) call(srv int, method, p string, body any, timeout time.Duration) (response, bool) {
	r, err := l.e.client.do(method, l.e.servers[srv].ClientURL+p, body, timeout)
	l.count(srv, method+" "+p, r.status, err)
	return r, err == nil && r.status/100 == 2
}

func (l *load) count(srv int, what string, status int, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		status = 0
	}
	l.statuses[status]++
	if status == 0 || status >= 500 {
		msg := what
		if err != nil {
			msg += ": " + err.Error()
		}
		l.fails = append(l.fails, callFail{At: time.Now(), Server: srv, Status: status, What: msg})
	}
}

func (l *load) markDone(rec *runRec) {
	l.mu.Lock()
	rec.DoneAt = time.Now()
	l.mu.Unlock()
}

func (l *load) add(rec *runRec) {
	l.mu.Lock()
	l.runs = append(l.runs, rec)
	l.mu.Unlock()
}

func (l *load) newThread(srv int) (string, bool) {
	r, ok := l.call(srv, "POST", "/threads", map[string]any{"metadata": map[string]any{"suite": "partition"}}, 10*time.Second)
	if !ok {
		return "", false
	}
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if r.decode(http.StatusOK, &th) != nil || th.ThreadID == "" {
		return "", false
	}
	return th.ThreadID, true
}

// waitAction: runs/wait on a new thread (or a stateless one, kept). The
// run is acknowledged when the answer's headers name it; if the answer
// then breaks, the client joins the run through the other servers.
func (l *load) waitAction(srv int, graph string, stateless bool) bool {
	body := map[string]any{"assistant_id": graph, "input": l.input(), "on_disconnect": "continue"}
	p := "/runs/wait"
	kind := "stateless"
	if !stateless {
		tid, ok := l.newThread(srv)
		if !ok {
			return false
		}
		p, kind = "/threads/"+tid+"/runs/wait", "wait"
	} else {
		body["on_completion"] = "keep"
	}
	ctx, cancel := context.WithTimeout(context.Background(), actionLimit)
	defer cancel()
	resp, err := l.e.client.send(ctx, "POST", l.e.servers[srv].ClientURL+p, body, "")
	if err != nil {
		l.count(srv, "POST "+p, 0, err)
		return false
	}
	defer resp.Body.Close()
	l.count(srv, "POST "+p, resp.StatusCode, nil)
	tid, rid, named := runIDs(resp.Header)
	if resp.StatusCode != http.StatusOK || !named {
		return false
	}
	rec := &runRec{Kind: kind, Graph: graph, ThreadID: tid, RunID: rid, Server: srv, AckAt: time.Now()}
	l.add(rec)
	b, err := io.ReadAll(resp.Body)
	if err == nil && len(strings.TrimSpace(string(b))) > 0 {
		l.markDone(rec)
		return true
	}
	return l.follow(ctx, rec, srv)
}

// joinAction: create a run, then join it.
func (l *load) joinAction(srv int, graph string) bool {
	tid, ok := l.newThread(srv)
	if !ok {
		return false
	}
	r, ok := l.call(srv, "POST", "/threads/"+tid+"/runs",
		map[string]any{"assistant_id": graph, "input": l.input(), "on_disconnect": "continue"}, 10*time.Second)
	if !ok {
		return false
	}
	var run struct {
		RunID string `json:"run_id"`
	}
	if r.decode(http.StatusOK, &run) != nil || run.RunID == "" {
		return false
	}
	rec := &runRec{Kind: "join", Graph: graph, ThreadID: tid, RunID: run.RunID, Server: srv, AckAt: time.Now()}
	l.add(rec)
	ctx, cancel := context.WithTimeout(context.Background(), actionLimit)
	defer cancel()
	return l.follow(ctx, rec, srv)
}

// follow joins an acknowledged run until it ends, moving to the next
// server after each failure.
func (l *load) follow(ctx context.Context, rec *runRec, srv int) bool {
	for ctx.Err() == nil {
		r, ok := l.call(srv, "GET", "/threads/"+rec.ThreadID+"/runs/"+rec.RunID+"/join", nil, 30*time.Second)
		if ok && len(strings.TrimSpace(string(r.body))) > 0 {
			l.markDone(rec)
			return true
		}
		srv = (srv + 1) % len(l.e.servers)
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
	return false
}

// streamAction: create a run with runs/stream and read its stream to the
// end; a broken connection is resumed on the next server with
// Last-Event-ID.
func (l *load) streamAction(srv int, graph string) bool {
	tid, ok := l.newThread(srv)
	if !ok {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), actionLimit)
	defer cancel()
	p := "/threads/" + tid + "/runs/stream"
	resp, err := l.e.client.send(ctx, "POST", l.e.servers[srv].ClientURL+p,
		map[string]any{"assistant_id": graph, "input": l.input(), "stream_mode": streamModes, "on_disconnect": "continue"}, "")
	if err != nil {
		l.count(srv, "POST "+p, 0, err)
		return false
	}
	l.count(srv, "POST "+p, resp.StatusCode, nil)
	_, rid, named := runIDs(resp.Header)
	if resp.StatusCode != http.StatusOK || !named {
		resp.Body.Close()
		return false
	}
	rec := &runRec{Kind: "stream", Graph: graph, ThreadID: tid, RunID: rid, Server: srv, AckAt: time.Now(), Stream: &streamRec{}}
	l.add(rec)
	return l.readStream(ctx, rec, resp, srv)
}

// readStream reads a run's stream from resp, resuming on the next server
// (Last-Event-ID: the last id received) until the stream ends.
func (l *load) readStream(ctx context.Context, rec *runRec, resp *http.Response, srv int) bool {
	st := rec.Stream
	for {
		st.Conns++
		ended, err := readSSE(resp, &st.Events, streamIdle, nil)
		resp.Body.Close()
		if ended {
			st.Completed = true
			l.markDone(rec)
			return true
		}
		l.count(srv, "stream of "+rec.RunID, 0, err)
		for {
			srv = (srv + 1) % len(l.e.servers)
			select {
			case <-ctx.Done():
				st.Err = fmt.Sprintf("gave up after %d connections: %v", st.Conns, ctx.Err())
				return false
			case <-time.After(200 * time.Millisecond):
			}
			last := "-1"
			if n := len(st.Events); n > 0 {
				last = strconv.FormatInt(st.Events[n-1].ID, 10)
			}
			p := "/threads/" + rec.ThreadID + "/runs/" + rec.RunID + "/stream"
			resp, err = l.e.client.send(ctx, "GET", l.e.servers[srv].ClientURL+p, nil, last)
			if err != nil {
				l.count(srv, "GET "+p, 0, err)
				continue
			}
			l.count(srv, "GET "+p, resp.StatusCode, nil)
			if resp.StatusCode == http.StatusOK {
				break
			}
			resp.Body.Close()
		}
	}
}

// streamIdle is how long a stream may stay silent before the client takes
// it for broken: the servers send a heartbeat every 5 s.
const streamIdle = 8 * time.Second

// snapshot copies what the load recorded so far.
func (l *load) snapshot() ([]*runRec, []callFail) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*runRec(nil), l.runs...), append([]callFail(nil), l.fails...)
}
