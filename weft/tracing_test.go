package weft

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

// recorder is an in-memory tracer provider and what it recorded.
type recorder struct {
	rec *tracetest.SpanRecorder
	tp  *sdktrace.TracerProvider
}

func newRecorder(t *testing.T) *recorder {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return &recorder{rec: rec, tp: tp}
}

// spans are the ended spans of trace tid named name.
func (r *recorder) spans(tid trace.TraceID, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range r.rec.Ended() {
		if s.SpanContext().TraceID() == tid && s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// childrenOf are the spans of list whose parent is one of parents.
func childrenOf(list []sdktrace.ReadOnlySpan, parents ...sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
	ids := map[trace.SpanID]bool{}
	for _, p := range parents {
		ids[p.SpanContext().SpanID()] = true
	}
	var out []sdktrace.ReadOnlySpan
	for _, s := range list {
		if ids[s.Parent().SpanID()] {
			out = append(out, s)
		}
	}
	return out
}

// clientTrace is the traceparent of a caller's span in a new trace.
func clientTrace(t *testing.T) (string, trace.TraceID, trace.SpanID) {
	t.Helper()
	var tid trace.TraceID
	var sid trace.SpanID
	_, _ = rand.Read(tid[:])
	_, _ = rand.Read(sid[:])
	return "00-" + tid.String() + "-" + sid.String() + "-01", tid, sid
}

// postTraced POSTs body to url with a traceparent header and fails the
// test unless the answer is 200.
func postTraced(t *testing.T, url, traceparent string, body any) []byte {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", traceparent)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out bytes.Buffer
	_, _ = out.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d %s", url, resp.StatusCode, out.Bytes())
	}
	return out.Bytes()
}

// one waits until find returns exactly one span, and returns it.
func one(t *testing.T, what string, find func() []sdktrace.ReadOnlySpan) sdktrace.ReadOnlySpan {
	t.Helper()
	var got []sdktrace.ReadOnlySpan
	waitFor(t, 10*time.Second, what, func() bool { got = find(); return len(got) == 1 })
	return got[0]
}

// some waits until find returns at least n spans, and returns them.
func some(t *testing.T, n int, what string, find func() []sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
	t.Helper()
	var got []sdktrace.ReadOnlySpan
	waitFor(t, 10*time.Second, what, func() bool { got = find(); return len(got) >= n })
	return got
}

// A run executed in process continues the trace of the request that
// created it: request → run attempt → supersteps → nodes and commits, all
// under the caller's trace id; its webhook POST carries a traceparent of
// that trace, whose parent is the delivery's span, a child of the request.
func TestTraceInProcessRun(t *testing.T) {
	t.Parallel()
	r := newRecorder(t)
	var mu sync.Mutex
	var hookTP string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		hookTP = req.Header.Get("traceparent")
		mu.Unlock()
	}))
	defer hook.Close()
	srv := servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) {
		c.TracerProvider = r.tp
		c.WebhookAllowPrivate = true
	})
	th := srv.Must(http.StatusOK, "POST", "/threads", map[string]any{}).Map(t)
	tp, tid, caller := clientTrace(t)
	postTraced(t, srv.URL+"/threads/"+th["thread_id"].(string)+"/runs/wait", tp,
		map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}, "webhook": hook.URL + "/hook"})

	req := one(t, "the request's span", func() []sdktrace.ReadOnlySpan { return r.spans(tid, "POST /threads/{thread_id}/runs/wait") })
	if req.Parent().SpanID() != caller || !req.Parent().IsRemote() || req.SpanKind() != trace.SpanKindServer {
		t.Fatalf("request span's parent %v (remote %v), want the caller's %v", req.Parent().SpanID(), req.Parent().IsRemote(), caller)
	}
	run := one(t, "the run span", func() []sdktrace.ReadOnlySpan { return childrenOf(r.spans(tid, "weft.run"), req) })
	steps := some(t, 2, "two supersteps", func() []sdktrace.ReadOnlySpan { return childrenOf(r.spans(tid, "weft.superstep"), run) })
	one(t, "node_a's span", func() []sdktrace.ReadOnlySpan { return childrenOf(r.spans(tid, "weft.node node_a"), steps...) })
	one(t, "node_b's span", func() []sdktrace.ReadOnlySpan { return childrenOf(r.spans(tid, "weft.node node_b"), steps...) })
	some(t, 1, "a commit under a superstep", func() []sdktrace.ReadOnlySpan { return childrenOf(r.spans(tid, "weft.commit"), steps...) })

	wh := one(t, "the webhook's span", func() []sdktrace.ReadOnlySpan { return childrenOf(r.spans(tid, "weft.webhook"), req) })
	mu.Lock()
	got := hookTP
	mu.Unlock()
	if want := "00-" + tid.String() + "-" + wh.SpanContext().SpanID().String() + "-01"; got != want {
		t.Fatalf("webhook traceparent %q, want %q", got, want)
	}
}

// traceGraph is a two-step graph for the remote worker.
func traceGraph() *graph.Graph {
	node := func(v string) graph.NodeFunc {
		return func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
			return graph.State{"steps": []any{v}}, nil
		}
	}
	return &graph.Graph{
		ID:       "go_traced",
		Channels: []graph.Channel{{Name: "steps", Kind: graph.Append, Default: []any{}}},
		Nodes:    []graph.Node{{Name: "first", Func: node("1")}, {Name: "second", Func: node("2")}},
		Edges:    []graph.Edge{{From: graph.START, To: "first"}, {From: "first", To: "second"}, {From: "second", To: graph.END}},
	}
}

// A run executed by a Go remote worker (RunWorker, its own tracer
// provider, as another process would have) continues the server's trace:
// the claim carries the run's traceparent, the worker's run span is a child
// of the creating request's span, its commits are client spans under its
// supersteps, and the server's spans of those commits (HTTP, then
// weft.commit) are their children; one trace id across server and worker.
func TestTraceRemoteWorker(t *testing.T) {
	t.Parallel()
	sr, wr := newRecorder(t), newRecorder(t)
	srv := servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) {
		c.Workers = 0
		c.TracerProvider = sr.tp
	})
	startWorker(t, srv, registry(t, traceGraph()), WorkerOptions{TracerProvider: wr.tp})
	th := srv.Must(http.StatusOK, "POST", "/threads", map[string]any{}).Map(t)
	tp, tid, _ := clientTrace(t)
	out := postTraced(t, srv.URL+"/threads/"+th["thread_id"].(string)+"/runs/wait", tp,
		map[string]any{"assistant_id": "go_traced", "input": map[string]any{}})
	if !bytes.Contains(out, []byte(`"steps":["1","2"]`)) {
		t.Fatalf("run result %s", out)
	}

	req := one(t, "the request's span", func() []sdktrace.ReadOnlySpan { return sr.spans(tid, "POST /threads/{thread_id}/runs/wait") })
	run := one(t, "the worker's run span", func() []sdktrace.ReadOnlySpan { return childrenOf(wr.spans(tid, "weft.run"), req) })
	if !run.Parent().IsRemote() {
		t.Fatal("the worker's run span has a local parent")
	}
	steps := some(t, 2, "the worker's supersteps", func() []sdktrace.ReadOnlySpan { return childrenOf(wr.spans(tid, "weft.superstep"), run) })
	one(t, "the node first", func() []sdktrace.ReadOnlySpan { return childrenOf(wr.spans(tid, "weft.node first"), steps...) })
	one(t, "the node second", func() []sdktrace.ReadOnlySpan { return childrenOf(wr.spans(tid, "weft.node second"), steps...) })
	sent := some(t, 1, "the worker's commit requests", func() []sdktrace.ReadOnlySpan {
		return childrenOf(wr.spans(tid, "POST /dispatch/{dispatch_id}/commit"), append(steps, run)...)
	})
	for _, c := range sent {
		if c.SpanKind() != trace.SpanKindClient {
			t.Fatalf("commit request span kind %v", c.SpanKind())
		}
	}
	served := some(t, len(sent), "the server's commit requests", func() []sdktrace.ReadOnlySpan {
		return childrenOf(sr.spans(tid, "POST /dispatch/{dispatch_id}/commit"), sent...)
	})
	some(t, len(served), "the server's commits", func() []sdktrace.ReadOnlySpan {
		return childrenOf(sr.spans(tid, "weft.commit"), served...)
	})
	// Nothing of the run's execution left the trace.
	for _, s := range wr.rec.Ended() {
		if s.Name() == "weft.run" && s.SpanContext().TraceID() != tid {
			t.Fatalf("a run span in trace %v", s.SpanContext().TraceID())
		}
	}
}

// A run executed by the JS worker (worker-js, its own process) continues
// the trace of the request that created it: the claim hands the worker the
// run's traceparent, and the worker's commits carry it, so the server's
// spans of those commit requests, and the commit coordinator's under them,
// are in the caller's trace, children of the creating request's span (no
// OpenTelemetry SDK is registered in the worker process, so its requests
// carry the claim's traceparent as it is).
func TestTraceJSWorker(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is needed for the JS worker: %v", err)
	}
	modules, err := filepath.Abs("../worker-js/node_modules")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(modules, "@langchain", "langgraph")); err != nil {
		t.Fatalf("worker-js's packages are missing (cd worker-js && npm ci; make test does it): %v", err)
	}
	r := newRecorder(t)
	srv := servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) {
		c.Workers = 0
		c.TracerProvider = r.tp
	})
	var out bytes.Buffer
	var outMu sync.Mutex
	cmd := exec.Command(node, "../worker-js/bin/weft-worker.mjs", "--config", "../worker-js/test/fixtures/langgraph.json",
		"--url", srv.URL, "--graphs", "foo_bar_js", "--log-level", "debug")
	cmd.Stdout, cmd.Stderr = lockedWriter{&out, &outMu}, lockedWriter{&out, &outMu}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			outMu.Lock()
			t.Logf("JS worker output:\n%s", out.String())
			outMu.Unlock()
		}
	})
	waitFor(t, 60*time.Second, "the JS worker to register foo_bar_js", func() bool {
		resp, err := srv.Try("GET", "/assistants/foo_bar_js", nil)
		return err == nil && resp.Status == http.StatusOK
	})
	th := srv.Must(http.StatusOK, "POST", "/threads", map[string]any{}).Map(t)
	tp, tid, _ := clientTrace(t)
	res := postTraced(t, srv.URL+"/threads/"+th["thread_id"].(string)+"/runs/wait", tp,
		map[string]any{"assistant_id": "foo_bar_js", "input": map[string]any{}})
	if !bytes.Contains(res, []byte(`"bar":["a","b"]`)) {
		t.Fatalf("run result %s", res)
	}

	req := one(t, "the request's span", func() []sdktrace.ReadOnlySpan { return r.spans(tid, "POST /threads/{thread_id}/runs/wait") })
	commits := some(t, 1, "the JS worker's commit requests", func() []sdktrace.ReadOnlySpan {
		return childrenOf(r.spans(tid, "POST /dispatch/{dispatch_id}/commit"), req)
	})
	for _, c := range commits {
		if !c.Parent().IsRemote() || c.SpanKind() != trace.SpanKindServer {
			t.Fatalf("commit request span: parent remote %v, kind %v", c.Parent().IsRemote(), c.SpanKind())
		}
	}
	some(t, len(commits), "the commits under them", func() []sdktrace.ReadOnlySpan {
		return childrenOf(r.spans(tid, "weft.commit"), commits...)
	})
	// Every commit of the run was in the trace: none went out without the
	// claim's traceparent.
	for _, s := range r.rec.Ended() {
		if s.Name() == "POST /dispatch/{dispatch_id}/commit" && s.SpanContext().TraceID() != tid {
			t.Fatalf("a commit request in another trace %v (parent %v)", s.SpanContext().TraceID(), s.Parent().SpanID())
		}
	}
}

// lockedWriter serializes writes to a buffer shared by a process's stdout
// and stderr.
type lockedWriter struct {
	b  *bytes.Buffer
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
