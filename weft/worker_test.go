package weft

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

// chatGraph streams a reply in chunks, then asks for approval (an
// interrupt) and records the answer. Message ids are deterministic, so two
// servers running it hold equal states. Its channels have no Default
// (TestWorkerGraphChannelDefaults covers those).
func chatGraph() *graph.Graph {
	return &graph.Graph{
		ID:       "go_chat",
		Channels: []graph.Channel{{Name: "messages", Kind: graph.Messages}, {Name: "approved"}},
		Nodes: []graph.Node{
			{Name: "reply", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
				msgs, _ := in.Values["messages"].([]any)
				text := ""
				if len(msgs) > 0 {
					text = graph.MessageText(msgs[len(msgs)-1].(map[string]any)["content"])
				}
				id := fmt.Sprintf("ai-%d", len(msgs))
				for _, w := range []string{"echo: ", text} {
					in.MessageChunk(map[string]any{"type": "AIMessageChunk", "content": w, "id": id})
				}
				return graph.State{"messages": []any{map[string]any{"type": "ai", "content": "echo: " + text, "id": id}}}, nil
			}},
			{Name: "ask", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
				r, err := in.Interrupt(map[string]any{"question": "ok?"})
				if err != nil {
					return nil, err
				}
				return graph.State{"approved": r}, nil
			}},
		},
		Edges: []graph.Edge{{From: graph.START, To: "reply"}, {From: "reply", To: "ask"}, {From: "ask", To: graph.END}},
	}
}

// registry registers gs in a new registry.
func registry(t *testing.T, gs ...*graph.Graph) *graph.Registry {
	t.Helper()
	r := graph.NewRegistry()
	for _, g := range gs {
		if err := r.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// startServer runs a server without in-process workers (-workers 0).
func startServer(t *testing.T, lease time.Duration) *servertest.Server {
	t.Helper()
	srv := servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) {
		c.Workers = 0
		if lease > 0 {
			c.Lease = lease
		}
	})
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		rows, err := srv.DB.Query(context.Background(), `SELECT row_to_json(d)::text FROM run_dispatches d`)
		if err != nil {
			t.Log(err)
			return
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			_ = rows.Scan(&s)
			t.Log("dispatch:", s)
		}
	})
	return srv
}

// startWorker runs RunWorker against srv until the test ends, and waits
// until every graph of r is registered.
func startWorker(t *testing.T, srv *servertest.Server, r *graph.Registry, opt WorkerOptions) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	if opt.Logger == nil {
		opt.Logger = quietLog()
	}
	go func() { done <- RunWorker(ctx, srv.URL, r, opt) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("RunWorker: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("RunWorker did not return after its context ended")
		}
	})
	for _, id := range r.IDs() {
		waitFor(t, 10*time.Second, "graph "+id+" registered", func() bool {
			resp, err := srv.Try("GET", "/assistants/"+id, nil)
			return err == nil && resp.Status == http.StatusOK
		})
	}
}

func waitFor(t *testing.T, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sseEvent is one server-sent event.
type sseEvent struct {
	Event string
	Data  json.RawMessage
}

func parseSSE(t *testing.T, body []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	for _, block := range strings.Split(string(body), "\n\n") {
		var e sseEvent
		for _, line := range strings.Split(block, "\n") {
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				e.Event = v
			} else if v, ok := strings.CutPrefix(line, "data: "); ok {
				e.Data = json.RawMessage(v)
			}
		}
		if e.Event != "" {
			out = append(out, e)
		}
	}
	return out
}

// chatSession drives go_chat on srv through one thread: a streamed run
// that stops at the interrupt, then a resume. It returns the thread id,
// the stream's events and the final result.
func chatSession(t *testing.T, srv *servertest.Server) (string, []sseEvent, map[string]any) {
	t.Helper()
	tid := srv.Must(200, "POST", "/threads", map[string]any{}).Map(t)["thread_id"].(string)
	resp := srv.Must(200, "POST", "/threads/"+tid+"/runs/stream", map[string]any{"assistant_id": "go_chat",
		"input":       map[string]any{"messages": []any{map[string]any{"type": "human", "content": "hi", "id": "h-0"}}},
		"stream_mode": []string{"values", "updates", "messages-tuple"}})
	events := parseSSE(t, resp.Body)
	st := srv.Must(200, "GET", "/threads/"+tid+"/state", nil).Map(t)
	if next := fmt.Sprint(st["next"]); next != "[ask]" {
		t.Fatalf("after the first run next = %s, want [ask]; state %v", next, st)
	}
	final := srv.Must(200, "POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "go_chat",
		"command": map[string]any{"resume": "yes"}}).Map(t)
	return tid, events, final
}

// comparable drops what differs between two servers running the same
// graph: ids of threads, runs, checkpoints, tasks and interrupts (UUIDs and
// checkpoint ids), and timestamps.
func comparable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			switch k {
			case "thread_id", "run_id", "checkpoint_id", "parent_checkpoint_id", "created_at", "updated_at":
				continue
			case "id": // task ids (UUIDs), interrupt ids (32 hex digits)
				if s, ok := e.(string); ok && (len(s) == 36 || len(s) == 32) {
					continue
				}
			}
			out[k] = comparable(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = comparable(e)
		}
		return out
	}
	return v
}

// A Go graph served by a remote worker (the server has no in-process
// workers): runs/wait, streaming with values, updates and message chunks,
// an interrupt and its resume, and state and history that read the same as
// the same graph's on an embedded server.
func TestWorkerServesGoGraph(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	startWorker(t, srv, registry(t, chatGraph()), WorkerOptions{WorkerID: "go-w1", Concurrency: 2})

	// Stateless wait: the run stops at the interrupt.
	out := srv.Must(200, "POST", "/runs/wait", map[string]any{"assistant_id": "go_chat",
		"input": map[string]any{"messages": []any{map[string]any{"type": "human", "content": "x", "id": "h-0"}}}}).Map(t)
	msgs, _ := out["messages"].([]any)
	if len(msgs) != 2 || msgs[1].(map[string]any)["content"] != "echo: x" || out["__interrupt__"] == nil {
		t.Fatalf("runs/wait = %v", out)
	}

	tid, events, final := chatSession(t, srv)
	if final["approved"] != "yes" || len(final["messages"].([]any)) != 2 {
		t.Fatalf("resumed result = %v", final)
	}
	var chunks []string
	seen := map[string]bool{}
	for _, e := range events {
		seen[e.Event] = true
		if e.Event == "messages" {
			var tuple []map[string]any
			if err := json.Unmarshal(e.Data, &tuple); err != nil || len(tuple) != 2 {
				t.Fatalf("messages event %s: %v", e.Data, err)
			}
			if tuple[1]["langgraph_node"] != "reply" {
				t.Errorf("message metadata = %v", tuple[1])
			}
			chunks = append(chunks, fmt.Sprint(tuple[0]["content"]))
		}
		if e.Event == "updates" && strings.Contains(string(e.Data), `"__interrupt__"`) {
			seen["interrupt"] = true
		}
	}
	for _, want := range []string{"metadata", "values", "updates", "messages", "interrupt"} {
		if !seen[want] {
			t.Errorf("stream has no %s event: %v", want, events)
		}
	}
	if strings.Join(chunks, "|") != "echo: |hi" {
		t.Errorf("message chunks = %q", chunks)
	}

	// The same session on an embedded server reads the same.
	emb, err := Start(t.Context(), registry(t, chatGraph()), Options{Addr: "127.0.0.1:0", DatabaseURL: pgtest.DSN(t), Workers: 1, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emb.Shutdown(context.Background()) })
	embc := servertest.Client(t, emb.URL(), nil)
	etid, eevents, efinal := chatSession(t, embc)
	if !reflect.DeepEqual(final, efinal) {
		t.Errorf("result: remote %v, embedded %v", final, efinal)
	}
	names := func(es []sseEvent) (n []string) {
		for _, e := range es {
			n = append(n, e.Event)
		}
		return n
	}
	if !reflect.DeepEqual(names(events), names(eevents)) {
		t.Errorf("stream events: remote %v, embedded %v", names(events), names(eevents))
	}
	for _, path := range []string{"/state", "/history"} {
		var got, want any
		srv.Must(200, "GET", "/threads/"+tid+path, nil).JSON(t, &got)
		embc.Must(200, "GET", "/threads/"+etid+path, nil).JSON(t, &want)
		if g, w := comparable(got), comparable(want); !reflect.DeepEqual(g, w) {
			gj, _ := json.MarshalIndent(g, "", " ")
			wj, _ := json.MarshalIndent(w, "", " ")
			t.Errorf("%s differs:\nremote:   %s\nembedded: %s", path, gj, wj)
		}
	}
}

// Cancelling a run reaches the worker: the node's context ends, the run
// ends interrupted.
func TestWorkerCancel(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	var started, cancelled atomic.Bool
	g := &graph.Graph{ID: "go_block", Channels: []graph.Channel{{Name: "x"}},
		Nodes: []graph.Node{{Name: "block", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
			started.Store(true)
			select {
			case <-ctx.Done():
				cancelled.Store(true)
				return nil, ctx.Err()
			case <-time.After(30 * time.Second):
				return graph.State{"x": 1}, nil
			}
		}}},
		Edges: []graph.Edge{{From: graph.START, To: "block"}}}
	startWorker(t, srv, registry(t, g), WorkerOptions{WorkerID: "go-cancel"})
	tid := srv.Must(200, "POST", "/threads", map[string]any{}).Map(t)["thread_id"].(string)
	run := srv.Must(200, "POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "go_block", "input": map[string]any{"x": 0}}).Map(t)
	rid := run["run_id"].(string)
	waitFor(t, 10*time.Second, "node started", started.Load)
	t0 := time.Now()
	srv.Must(202, "POST", "/threads/"+tid+"/runs/"+rid+"/cancel", nil)
	waitFor(t, 10*time.Second, "run ended", func() bool {
		return srv.Must(200, "GET", "/threads/"+tid+"/runs/"+rid, nil).Map(t)["status"] != "running"
	})
	if st := srv.Must(200, "GET", "/threads/"+tid+"/runs/"+rid, nil).Map(t)["status"]; st != "interrupted" {
		t.Fatalf("status = %v, want interrupted", st)
	}
	if !cancelled.Load() {
		t.Fatal("the node's context was not cancelled")
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Fatalf("cancellation took %v", d)
	}
}

// A remote graph's channel defaults (registered by the worker) show in
// state reads exactly as on an embedded server running the same graph:
// every history item, state at each checkpoint, and the thread's values.
func TestWorkerGraphChannelDefaults(t *testing.T) {
	t.Parallel()
	g := func() *graph.Graph {
		return &graph.Graph{ID: "go_defaults",
			Channels: []graph.Channel{{Name: "items", Kind: graph.Append, Default: []any{}}, {Name: "n", Default: 7}, {Name: "x"}},
			Nodes: []graph.Node{{Name: "add", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
				return graph.State{"items": []any{"a"}}, nil
			}}},
			Edges: []graph.Edge{{From: graph.START, To: "add"}}}
	}
	srv := startServer(t, 0)
	startWorker(t, srv, registry(t, g()), WorkerOptions{WorkerID: "go-defaults"})
	emb, err := Start(t.Context(), registry(t, g()), Options{Addr: "127.0.0.1:0", DatabaseURL: pgtest.DSN(t), Workers: 1, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emb.Shutdown(context.Background()) })
	embc := servertest.Client(t, emb.URL(), nil)
	session := func(c *servertest.Server) (string, []map[string]any) {
		tid := c.Must(200, "POST", "/threads", map[string]any{}).Map(t)["thread_id"].(string)
		c.Must(200, "POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "go_defaults", "input": map[string]any{"x": 1}})
		var h []map[string]any
		c.Must(200, "GET", "/threads/"+tid+"/history", nil).JSON(t, &h)
		return tid, h
	}
	tid, remote := session(srv)
	etid, embedded := session(embc)
	if g, w := comparable(anySlice(remote)), comparable(anySlice(embedded)); !reflect.DeepEqual(g, w) {
		t.Fatalf("history differs:\nremote:   %v\nembedded: %v", g, w)
	}
	if first := remote[len(remote)-1]["values"]; !reflect.DeepEqual(first, map[string]any{"items": []any{}, "n": json.Number("7")}) &&
		!reflect.DeepEqual(first, map[string]any{"items": []any{}, "n": float64(7)}) {
		t.Fatalf("step -1 values = %v, want the defaults items [] and n 7", first)
	}
	for i, item := range remote {
		cid := item["checkpoint"].(map[string]any)["checkpoint_id"].(string)
		at := srv.Must(200, "GET", "/threads/"+tid+"/state/"+cid, nil).Map(t)
		if !reflect.DeepEqual(at["values"], item["values"]) {
			t.Errorf("state at history[%d] = %v, history says %v", i, at["values"], item["values"])
		}
	}
	th, eth := srv.Must(200, "GET", "/threads/"+tid, nil).Map(t), embc.Must(200, "GET", "/threads/"+etid, nil).Map(t)
	if !reflect.DeepEqual(th["values"], eth["values"]) {
		t.Fatalf("thread values: remote %v, embedded %v", th["values"], eth["values"])
	}
}

func anySlice(ms []map[string]any) []any {
	out := make([]any, len(ms))
	for i, m := range ms {
		out[i] = m
	}
	return out
}

// The interrupt strategy on a busy thread reaches a remote worker at once
// (its cancellation watch), not at its next heartbeat or commit: issued
// while the first run's second node runs, it stops that node, so the log is
// first:r1, first:r2, second:r2 — as with in-process runs and LangGraph's
// server (the heartbeat comes every 10 s here; a node takes 1 s, room for a
// loaded machine: the cancellation takes tens of milliseconds).
func TestWorkerCancelArrivesBeforeNextStep(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	var mu sync.Mutex
	var log []string
	cancelledAt := map[string]time.Time{}
	step := func(name string) graph.NodeFunc {
		return func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
			tag, _ := in.Values["tag"].(string)
			select {
			case <-ctx.Done():
				mu.Lock()
				cancelledAt[name+":"+tag] = time.Now()
				mu.Unlock()
				return nil, ctx.Err()
			case <-time.After(time.Second):
			}
			mu.Lock()
			log = append(log, name+":"+tag)
			mu.Unlock()
			return graph.State{}, nil
		}
	}
	g := &graph.Graph{ID: "go_two", Channels: []graph.Channel{{Name: "tag"}},
		Nodes: []graph.Node{{Name: "first", Func: step("first")}, {Name: "second", Func: step("second")}},
		Edges: []graph.Edge{{From: graph.START, To: "first"}, {From: "first", To: "second"}}}
	startWorker(t, srv, registry(t, g), WorkerOptions{WorkerID: "go-two"})
	tid := srv.Must(200, "POST", "/threads", map[string]any{}).Map(t)["thread_id"].(string)
	r1 := srv.Must(200, "POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "go_two", "input": map[string]any{"tag": "r1"}}).Map(t)["run_id"].(string)
	waitFor(t, 10*time.Second, "first:r1", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(log) == 1
	})
	waitFor(t, 10*time.Second, "first's checkpoint committed", func() bool { // second runs
		next, _ := srv.Must(200, "GET", "/threads/"+tid+"/state", nil).Map(t)["next"].([]any)
		return len(next) == 1 && next[0] == "second"
	})
	issued := time.Now()
	r2 := srv.Must(200, "POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "go_two", "input": map[string]any{"tag": "r2"},
		"multitask_strategy": "interrupt"}).Map(t)["run_id"].(string)
	waitFor(t, 15*time.Second, "r2 ended", func() bool {
		return srv.Must(200, "GET", "/threads/"+tid+"/runs/"+r2, nil).Map(t)["status"] == "success"
	})
	if st := srv.Must(200, "GET", "/threads/"+tid+"/runs/"+r1, nil).Map(t)["status"]; st != "interrupted" {
		t.Fatalf("r1 status = %v, want interrupted", st)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(log, ", "); got != "first:r1, first:r2, second:r2" {
		t.Fatalf("log = %s, want first:r1, first:r2, second:r2", got)
	}
	t.Logf("the cancellation reached the worker's node %v after the interrupt was issued", cancelledAt["second:r1"].Sub(issued))
}

// stallTransport makes a worker lose its lease: while stall is set its
// heartbeats fail before reaching the server. It records the statuses of
// its commits.
type stallTransport struct {
	stall   atomic.Bool
	mu      sync.Mutex
	commits []int
}

func (s *stallTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if s.stall.Load() && strings.HasSuffix(r.URL.Path, "/heartbeat") {
		return nil, errors.New("stalled")
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && strings.HasSuffix(r.URL.Path, "/commit") {
		s.mu.Lock()
		s.commits = append(s.commits, resp.StatusCode)
		s.mu.Unlock()
	}
	return resp, err
}

// A worker whose lease expired cannot commit (409) and stops; the run is
// retried once by another worker, and no step is written twice.
func TestWorkerLeaseLost(t *testing.T) {
	t.Parallel()
	srv := startServer(t, time.Second)
	var calls atomic.Int32
	release := make(chan struct{})
	g := &graph.Graph{ID: "go_stall", Channels: []graph.Channel{{Name: "log", Kind: graph.Append, Default: []any{}}},
		Nodes: []graph.Node{
			{Name: "work", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
				if calls.Add(1) == 1 {
					<-release // the first attempt outlives its lease
				}
				return graph.State{"log": []any{"work"}}, nil
			}},
			{Name: "after", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
				return graph.State{"log": []any{"after"}}, nil
			}},
		},
		Edges: []graph.Edge{{From: graph.START, To: "work"}, {From: "work", To: "after"}}}
	stale := &stallTransport{}
	stale.stall.Store(true)
	startWorker(t, srv, registry(t, g), WorkerOptions{WorkerID: "go-stale", Concurrency: 1, HTTPClient: &http.Client{Transport: stale}})
	tid := srv.Must(200, "POST", "/threads", map[string]any{}).Map(t)["thread_id"].(string)
	rid := srv.Must(200, "POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "go_stall", "input": map[string]any{}}).Map(t)["run_id"].(string)
	waitFor(t, 10*time.Second, "first attempt started", func() bool { return calls.Load() == 1 })
	// The second worker starts once the first holds the run.
	startWorker(t, srv, registry(t, g), WorkerOptions{WorkerID: "go-fresh"})
	waitFor(t, 20*time.Second, "run retried and ended", func() bool {
		return srv.Must(200, "GET", "/threads/"+tid+"/runs/"+rid, nil).Map(t)["status"] == "success"
	})
	close(release)
	waitFor(t, 10*time.Second, "stale worker's commit refused", func() bool {
		stale.mu.Lock()
		defer stale.mu.Unlock()
		return len(stale.commits) > 1
	})
	time.Sleep(200 * time.Millisecond) // nothing may follow the refused commit
	stale.mu.Lock()
	// Its first step committed before it stalled; the next one is refused
	// and it stops.
	if fmt.Sprint(stale.commits) != "[200 409]" {
		t.Errorf("stale worker's commits = %v, want one accepted, then one refused with 409", stale.commits)
	}
	stale.mu.Unlock()
	checkRunOnce(t, srv, tid, rid, []any{"work", "after"}, map[string]int{"go-stale": 1, "go-fresh": 2})
}

// checkRunOnce checks that run rid of thread tid ended once with log
// wantLog, its history having one checkpoint per step, and that the
// dispatch's attempts were claimed by the given workers (worker → attempt).
func checkRunOnce(t *testing.T, srv *servertest.Server, tid, rid string, wantLog []any, claims map[string]int) {
	t.Helper()
	st := srv.Must(200, "GET", "/threads/"+tid+"/state", nil).Map(t)
	if got := st["values"].(map[string]any)["log"]; !reflect.DeepEqual(got, wantLog) {
		t.Errorf("log = %v, want %v", got, wantLog)
	}
	var hist []map[string]any
	srv.Must(200, "GET", "/threads/"+tid+"/history", nil).JSON(t, &hist)
	steps := map[float64]int{}
	for _, h := range hist {
		steps[h["metadata"].(map[string]any)["step"].(float64)]++
	}
	for s, n := range steps {
		if n != 1 {
			t.Errorf("step %v has %d checkpoints: %v", s, n, hist)
		}
	}
	var ends int
	if err := srv.DB.QueryRow(context.Background(), `SELECT count(*) FROM run_events WHERE run_id = $1 AND event = 'end'`, rid).Scan(&ends); err != nil {
		t.Fatal(err)
	}
	if ends != 1 {
		t.Errorf("%d end events, want 1", ends)
	}
	rows, err := srv.DB.Query(context.Background(), `SELECT a.worker, a.attempt FROM run_dispatch_attempts a
		JOIN run_dispatches d USING (dispatch_id) WHERE d.run_id = $1`, rid)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for rows.Next() {
		var w string
		var n int
		if err := rows.Scan(&w, &n); err != nil {
			t.Fatal(err)
		}
		got[w] = n
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	if !reflect.DeepEqual(got, claims) {
		t.Errorf("attempts by worker = %v, want %v", got, claims)
	}
}

// Two workers share the runs of a graph: every run executes once.
func TestWorkersShareRuns(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	var mu sync.Mutex
	execs := map[string]int{}
	g := &graph.Graph{ID: "go_share", Channels: []graph.Channel{{Name: "n"}},
		Nodes: []graph.Node{{Name: "tick", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
			mu.Lock()
			execs[in.Run.ThreadID]++
			mu.Unlock()
			time.Sleep(100 * time.Millisecond)
			return graph.State{"n": 1}, nil
		}}},
		Edges: []graph.Edge{{From: graph.START, To: "tick"}}}
	startWorker(t, srv, registry(t, g), WorkerOptions{WorkerID: "go-a", Concurrency: 2})
	startWorker(t, srv, registry(t, g), WorkerOptions{WorkerID: "go-b", Concurrency: 2})
	const n = 12
	tids, rids := make([]string, n), make([]string, n)
	for i := range n {
		tids[i] = srv.Must(200, "POST", "/threads", map[string]any{}).Map(t)["thread_id"].(string)
		rids[i] = srv.Must(200, "POST", "/threads/"+tids[i]+"/runs", map[string]any{"assistant_id": "go_share", "input": map[string]any{"n": 0}}).Map(t)["run_id"].(string)
	}
	for i := range n {
		out := srv.Must(200, "GET", "/threads/"+tids[i]+"/runs/"+rids[i]+"/join", nil).Map(t)
		if out["n"] != float64(1) {
			t.Errorf("run %d joined %v", i, out)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, tid := range tids {
		if execs[tid] != 1 {
			t.Errorf("thread %s: node executed %d times", tid, execs[tid])
		}
	}
	var workers int
	if err := srv.DB.QueryRow(context.Background(), `SELECT count(DISTINCT worker) FROM run_dispatch_attempts`).Scan(&workers); err != nil {
		t.Fatal(err)
	}
	if workers != 2 {
		t.Errorf("runs claimed by %d workers, want both", workers)
	}
}

// killGraph is the graph of the worker processes of TestWorkerKill9: two
// steps, the second one slow when WEFT_TEST_SLOW is set.
func killGraph() *graph.Graph {
	return &graph.Graph{ID: "go_kill", Channels: []graph.Channel{{Name: "log", Kind: graph.Append, Default: []any{}}},
		Nodes: []graph.Node{
			{Name: "one", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
				return graph.State{"log": []any{"one"}}, nil
			}},
			{Name: "two", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
				if os.Getenv("WEFT_TEST_SLOW") != "" {
					select {
					case <-ctx.Done():
						return nil, ctx.Err()
					case <-time.After(time.Minute):
					}
				}
				return graph.State{"log": []any{"two"}}, nil
			}},
		},
		Edges: []graph.Edge{{From: graph.START, To: "one"}, {From: "one", To: "two"}}}
}

// workerProcess runs this test binary as a worker process of url (see
// TestMain) until the test ends.
func workerProcess(t *testing.T, url, id string, env ...string) *exec.Cmd {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), id+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "WEFT_TEST_WORKER=1", "WEFT_URL="+url, "WEFT_WORKER_ID="+id)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
		}
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("%s log:\n%s", id, b)
		}
	})
	return cmd
}

// kill -9 of a worker process mid-run: another worker process finishes the
// run once, from the last checkpoint the first one committed.
func TestWorkerKill9(t *testing.T) {
	t.Parallel()
	srv := startServer(t, time.Second)
	a := workerProcess(t, srv.URL, "go-doomed", "WEFT_TEST_SLOW=1")
	waitFor(t, 20*time.Second, "graph registered", func() bool {
		resp, err := srv.Try("GET", "/assistants/go_kill", nil)
		return err == nil && resp.Status == http.StatusOK
	})
	tid := srv.Must(200, "POST", "/threads", map[string]any{}).Map(t)["thread_id"].(string)
	rid := srv.Must(200, "POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "go_kill", "input": map[string]any{}}).Map(t)["run_id"].(string)
	waitFor(t, 20*time.Second, "step one committed", func() bool {
		st := srv.Must(200, "GET", "/threads/"+tid+"/state", nil).Map(t)
		return fmt.Sprint(st["next"]) == "[two]"
	})
	if err := a.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = a.Wait()
	workerProcess(t, srv.URL, "go-rescuer")
	waitFor(t, 30*time.Second, "run finished by the second worker", func() bool {
		return srv.Must(200, "GET", "/threads/"+tid+"/runs/"+rid, nil).Map(t)["status"] == "success"
	})
	checkRunOnce(t, srv, tid, rid, []any{"one", "two"}, map[string]int{"go-doomed": 1, "go-rescuer": 2})
}

// quietLog logs warnings and errors only.
func quietLog() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
