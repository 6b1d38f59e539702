package runs_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

// receiver is a local webhook endpoint that records every POST and answers
// with the next of its statuses (the last one repeats).
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	bodies   []map[string]any
	ctypes   []string
	statuses []int
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	t.Helper()
	r := &receiver{statuses: statuses}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		r.mu.Lock()
		r.bodies = append(r.bodies, m)
		r.ctypes = append(r.ctypes, req.Header.Get("Content-Type"))
		status := http.StatusOK
		if n := len(r.bodies); len(r.statuses) > 0 {
			status = r.statuses[min(n, len(r.statuses))-1]
		}
		r.mu.Unlock()
		w.WriteHeader(status)
		_, _ = w.Write([]byte("receiver says " + http.StatusText(status)))
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) received() []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]any(nil), r.bodies...)
}

// allowPrivate lets webhooks reach the loopback receivers, with fast retries.
func allowPrivate(c *server.Config) {
	c.WebhookAllowPrivate = true
	c.WebhookBackoff = 50 * time.Millisecond
}

// webhookState polls run rid until its webhook_state is one of want
// (within 20 s) and returns the run.
func webhookState(t *testing.T, s *servertest.Server, tid, rid string, want ...string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		run := s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs/"+rid, nil).Map(t)
		for _, w := range want {
			if run["webhook_state"] == w {
				return run
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s: webhook_state %v (attempts %v, last error %v), want %v", rid,
				run["webhook_state"], run["webhook_attempts"], run["webhook_last_error"], want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestWebhookDeliversFinalRunWithValues(t *testing.T) {
	s := startWith(t, allowPrivate)
	rcv := newReceiver(t)
	tid := newThread(t, s)
	hook := rcv.URL + "/hook?x=1"
	run := create(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""},
		"webhook": hook, "metadata": map[string]any{"k": "v"}})
	rid := run["run_id"].(string)
	if run["webhook_state"] != nil || run["webhook_attempts"] != float64(0) {
		t.Fatalf("new run: webhook_state %v, attempts %v; want null, 0", run["webhook_state"], run["webhook_attempts"])
	}
	got := webhookState(t, s, tid, rid, "delivered", "failed")
	if got["webhook_state"] != "delivered" || got["webhook_attempts"] != float64(1) || got["webhook_last_status"] != float64(200) ||
		got["webhook_last_error"] != nil {
		t.Fatalf("run after delivery: %s", js(got))
	}
	time.Sleep(300 * time.Millisecond) // a second POST would arrive by now
	bodies := rcv.received()
	if len(bodies) != 1 {
		t.Fatalf("receiver got %d POSTs, want exactly 1: %s", len(bodies), js(bodies))
	}
	b := bodies[0]
	if rcv.ctypes[0] != "application/json" {
		t.Fatalf("Content-Type %q", rcv.ctypes[0])
	}
	wantJSON(t, "values", b["values"], `{"foo":"b","bar":["a","b"]}`)
	for k, want := range map[string]any{"run_id": rid, "thread_id": tid, "status": "success",
		"assistant_id": run["assistant_id"], "multitask_strategy": "enqueue", "created_at": run["created_at"]} {
		if b[k] != want {
			t.Fatalf("body %s = %v, want %v; body %s", k, b[k], want, js(b))
		}
	}
	if md, _ := b["metadata"].(map[string]any); md["k"] != "v" {
		t.Fatalf("body metadata = %v", b["metadata"])
	}
	if kw, _ := b["kwargs"].(map[string]any); kw["webhook"] != hook {
		t.Fatalf("body kwargs = %v", b["kwargs"])
	}
	var times []time.Time
	for _, k := range []string{"run_started_at", "run_ended_at", "webhook_sent_at", "updated_at"} {
		v, _ := b[k].(string)
		ts, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			t.Fatalf("body %s = %v: not an ISO time", k, b[k])
		}
		times = append(times, ts)
	}
	if !(!times[0].After(times[1]) && !times[1].After(times[2])) {
		t.Fatalf("started %v, ended %v, sent %v: out of order", times[0], times[1], times[2])
	}
	if _, has := b["error"]; has {
		t.Fatalf("a successful run's body has an error: %s", js(b))
	}
	for _, k := range []string{"webhook_state", "webhook_attempts", "result"} {
		if _, has := b[k]; has {
			t.Fatalf("body has %s: %s", k, js(b))
		}
	}
}

func TestWebhookRetriedUntilDelivered(t *testing.T) {
	s := startWith(t, allowPrivate)
	rcv := newReceiver(t, http.StatusInternalServerError, http.StatusOK)
	tid := newThread(t, s)
	run := create(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""},
		"webhook": rcv.URL})
	rid := run["run_id"].(string)
	got := webhookState(t, s, tid, rid, "delivered", "failed")
	if got["webhook_state"] != "delivered" || got["webhook_attempts"] != float64(2) || got["webhook_last_status"] != float64(200) {
		t.Fatalf("run after retry: %s", js(got))
	}
	bodies := rcv.received()
	if len(bodies) != 2 || bodies[0]["run_id"] != rid || bodies[1]["run_id"] != rid {
		t.Fatalf("receiver got %s, want the run twice", js(bodies))
	}
	var first, second time.Time
	first, _ = time.Parse(time.RFC3339Nano, bodies[0]["webhook_sent_at"].(string))
	second, _ = time.Parse(time.RFC3339Nano, bodies[1]["webhook_sent_at"].(string))
	if second.Sub(first) < 25*time.Millisecond {
		t.Fatalf("retry %v after the first attempt: no backoff", second.Sub(first))
	}
}

func TestWebhookKeepsFailingThenGivesUp(t *testing.T) {
	s := startWith(t, func(c *server.Config) { c.WebhookAllowPrivate, c.WebhookBackoff = true, 5*time.Millisecond })
	rcv := newReceiver(t, http.StatusServiceUnavailable)
	tid := newThread(t, s)
	run := create(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""},
		"webhook": rcv.URL})
	got := webhookState(t, s, tid, run["run_id"].(string), "delivered", "failed")
	if got["webhook_state"] != "failed" || got["webhook_attempts"] != float64(8) || got["webhook_last_status"] != float64(503) ||
		!strings.Contains(got["webhook_last_error"].(string), "503") {
		t.Fatalf("run after giving up: %s", js(got))
	}
	if n := len(rcv.received()); n != 8 {
		t.Fatalf("receiver got %d POSTs, want 8", n)
	}
}

func TestWebhookErrorRunSendsErrorMessage(t *testing.T) {
	s := startWith(t, allowPrivate)
	rcv := newReceiver(t)
	tid := newThread(t, s)
	callsMu.Lock()
	failB["wh-err"] = 100
	callsMu.Unlock()
	run := create(t, s, tid, map[string]any{"assistant_id": "fan", "input": map[string]any{"tag": "wh-err"},
		"webhook": rcv.URL})
	webhookState(t, s, tid, run["run_id"].(string), "delivered")
	b := rcv.received()[0]
	if b["status"] != "error" || !strings.Contains(js(b["error"]), "b failed on purpose") {
		t.Fatalf("body of a failed run: %s", js(b))
	}
	if _, isString := b["error"].(string); !isString {
		t.Fatalf("error = %s, want a string", js(b["error"]))
	}
}

func TestWebhookLoopbackRefused(t *testing.T) {
	s := startWith(t, func(c *server.Config) { c.WebhookBackoff = 50 * time.Millisecond }) // private not allowed
	rcv := newReceiver(t)
	tid := newThread(t, s)
	run := create(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""},
		"webhook": rcv.URL + "/hook"})
	got := webhookState(t, s, tid, run["run_id"].(string), "delivered", "failed")
	msg, _ := got["webhook_last_error"].(string)
	if got["webhook_state"] != "failed" || got["webhook_attempts"] != float64(1) || got["webhook_last_status"] != nil ||
		!strings.Contains(msg, "loopback") || !strings.Contains(msg, "127.0.0.1") {
		t.Fatalf("run with a loopback webhook: %s", js(got))
	}
	if n := len(rcv.received()); n != 0 {
		t.Fatalf("the refused receiver got %d POSTs", n)
	}
}

func TestWebhookPathOnThisServerAllowed(t *testing.T) {
	s := start(t) // private not allowed: a path on this server still is
	tid := newThread(t, s)
	run := create(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""},
		"webhook": "/assistants/search"})
	got := webhookState(t, s, tid, run["run_id"].(string), "delivered", "failed")
	if got["webhook_state"] != "delivered" || got["webhook_last_status"] != float64(200) {
		t.Fatalf("run with a webhook path: %s", js(got))
	}
}

func TestWebhookRollbackSendsNothing(t *testing.T) {
	s := startWith(t, allowPrivate)
	rcv := newReceiver(t)
	tid := newThread(t, s)
	slow := create(t, s, tid, map[string]any{"assistant_id": "slow", "input": map[string]any{"ms": 5000, "tag": "x"},
		"webhook": rcv.URL})
	runStatus(t, s, tid, slow["run_id"].(string), "running")
	next := create(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""},
		"multitask_strategy": "rollback", "webhook": rcv.URL})
	webhookState(t, s, tid, next["run_id"].(string), "delivered")
	time.Sleep(300 * time.Millisecond)
	bodies := rcv.received()
	if len(bodies) != 1 || bodies[0]["run_id"] != next["run_id"] {
		t.Fatalf("receiver got %s, want only the run that replaced the rolled-back one", js(bodies))
	}
	if n := dbCount(t, s, `SELECT count(*) FROM runs WHERE run_id = $1`, slow["run_id"]); n != 0 {
		t.Fatalf("rolled-back run still exists")
	}
}

func TestWebhookNoneWithoutURL(t *testing.T) {
	s := startWith(t, allowPrivate)
	tid := newThread(t, s)
	wait(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}})
	run := s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs", nil)
	var list []map[string]any
	run.JSON(t, &list)
	if len(list) != 1 || list[0]["webhook_state"] != nil || list[0]["webhook_attempts"] != float64(0) {
		t.Fatalf("run without webhook: %s", js(list))
	}
}

func TestWebhookInvalidIs422(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	for _, hook := range []string{"ftp://example.com/x", "example.com/hook", "http://", "https:///x", "not a url", "hooks/done"} {
		r := s.Do("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""},
			"webhook": hook})
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Detail(t), "webhook") {
			t.Fatalf("webhook %q: %d %s, want 422", hook, r.Status, r.Body)
		}
		r = s.Do("POST", "/runs/wait", map[string]any{"assistant_id": "foo_bar", "webhook": hook})
		if r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("stateless webhook %q: %d %s, want 422", hook, r.Status, r.Body)
		}
	}
	for _, hook := range []string{"https://example.com/hook", "http://10.0.0.1:9000/x", "/hooks/done"} {
		r := s.Do("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""},
			"webhook": hook})
		if r.Status != http.StatusOK {
			t.Fatalf("webhook %q: %d %s, want 200", hook, r.Status, r.Body)
		}
	}
}
