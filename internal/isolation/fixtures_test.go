package isolation_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/server/servertest"
)

// marker is written into every tenant-A row that has room for it
// (metadata, values, names, store values and namespaces): a response to B
// holding it is a leak, whatever the route.
const marker = "tenant-a-secret-7f3c"

// aNamespace is a store namespace only tenant A uses; sharedNS is one
// both tenants file an item under, with the same key.
var (
	aNamespace = []string{marker, "notes"}
	sharedNS   = []string{"shared", "notes"}
)

const sharedKey = "k1"

// ids are the ids of tenant A's resources (or, forged, random ones in
// their place).
type ids struct {
	Thread, Child, Copy       string // a thread with history, its child, its copy
	StreamThread, StreamRun   string // a run created with /runs/stream
	PendingThread, PendingRun string // a run that stays pending (after_seconds)
	Run                       string // the finished run of Thread
	StatelessRun              string // a stateless run (kept)
	Checkpoint                string // a checkpoint of Thread
	Assistant                 string // an assistant with two versions
	Cron, ThreadCron          string // a stateless cron and a cron of Thread
	Dispatch                  string // the dispatch of Run
}

// list is every id, for the leak check.
func (x ids) list() []string {
	return []string{x.Thread, x.Child, x.Copy, x.StreamThread, x.StreamRun, x.PendingThread, x.PendingRun,
		x.Run, x.StatelessRun, x.Checkpoint, x.Assistant, x.Cron, x.ThreadCron, x.Dispatch}
}

// forged returns random ids in the shape of x.
func forged() ids {
	n := func() string { return uuid.NewString() }
	return ids{Thread: n(), Child: n(), Copy: n(), StreamThread: n(), StreamRun: n(), PendingThread: n(),
		PendingRun: n(), Run: n(), StatelessRun: n(), Checkpoint: n(), Assistant: n(), Cron: n(), ThreadCron: n(),
		Dispatch: n()}
}

// tenant sends requests as one tenant (servertest.TestTenants).
type tenant struct {
	t      testing.TB
	srv    *servertest.Server
	name   string
	scopes string // servertest.ScopesHeader; "": tenant data
	http   *http.Client
}

func newTenant(t testing.TB, srv *servertest.Server, name string) *tenant {
	return &tenant{t: t, srv: srv, name: name, http: &http.Client{Timeout: 60 * time.Second}}
}

// try sends body (nil: none; else JSON) with extra headers.
func (c *tenant) try(method, path string, body any, hdr map[string]string) (*servertest.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.srv.URL+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set(servertest.TenantHeader, c.name)
	if c.scopes != "" {
		req.Header.Set(servertest.ScopesHeader, c.scopes)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &servertest.Response{Status: resp.StatusCode, Header: resp.Header, Body: data}, nil
}

func (c *tenant) do(method, path string, body any) *servertest.Response {
	c.t.Helper()
	r, err := c.try(method, path, body, nil)
	if err != nil {
		c.t.Fatalf("tenant %q: %s %s: %v", c.name, method, path, err)
	}
	return r
}

// must sends the request and fails the test unless the status is want.
func (c *tenant) must(want int, method, path string, body any) *servertest.Response {
	c.t.Helper()
	r := c.do(method, path, body)
	if r.Status != want {
		c.t.Fatalf("tenant %q: %s %s: status %d, want %d; body %s", c.name, method, path, r.Status, want, r.Body)
	}
	return r
}

// id reads field from a JSON object body.
func id(t testing.TB, r *servertest.Response, field string) string {
	t.Helper()
	v, _ := r.Map(t)[field].(string)
	if v == "" {
		t.Fatalf("no %s in %s", field, r.Body)
	}
	return v
}

// waitRun polls path (a run) until its status is final.
func (c *tenant) waitRun(path string) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		m := c.must(http.StatusOK, "GET", path, nil).Map(c.t)
		switch m["status"] {
		case "success", "error", "interrupted", "timeout":
			return m
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("run %s did not end: %v", path, m)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func storeQuery(ns []string, key string) string {
	return "/store/items?" + url.Values{"namespace": {strings.Join(ns, ".")}, "key": {key}}.Encode()
}

// seedA creates tenant A's resources and returns their ids.
func seedA(t testing.TB, a *tenant) ids {
	t.Helper()
	var x ids
	owner := map[string]any{"owner": marker}

	// An assistant with two versions.
	x.Assistant = id(t, a.must(200, "POST", "/assistants", map[string]any{"graph_id": "foo_bar", "name": marker,
		"metadata": owner}), "assistant_id")
	a.must(200, "PATCH", "/assistants/"+x.Assistant, map[string]any{"metadata": map[string]any{"v": 2}})

	// A thread with history (a finished run of A's assistant), a child
	// and a copy.
	x.Thread = id(t, a.must(200, "POST", "/threads", map[string]any{"metadata": owner}), "thread_id")
	a.must(200, "POST", "/threads/"+x.Thread+"/runs/wait", map[string]any{"assistant_id": x.Assistant,
		"input": map[string]any{"foo": marker}, "metadata": owner})
	var runList []map[string]any
	a.must(200, "GET", "/threads/"+x.Thread+"/runs", nil).JSON(t, &runList)
	if len(runList) != 1 {
		t.Fatalf("thread runs: %v", runList)
	}
	x.Run = runList[0]["run_id"].(string)
	var hist []map[string]any
	a.must(200, "GET", "/threads/"+x.Thread+"/history", nil).JSON(t, &hist)
	if len(hist) < 2 {
		t.Fatalf("history: %d checkpoints", len(hist))
	}
	x.Checkpoint = hist[1]["checkpoint"].(map[string]any)["checkpoint_id"].(string)
	x.Child = id(t, a.must(200, "POST", "/threads", map[string]any{"metadata": owner, "parent_thread_id": x.Thread}), "thread_id")
	x.Copy = id(t, a.must(200, "POST", "/threads/"+x.Thread+"/copy", nil), "thread_id")
	var disp []map[string]any
	a.must(200, "GET", "/threads/"+x.Thread+"/runs/"+x.Run+"/dispatches", nil).JSON(t, &disp)
	if len(disp) == 0 {
		t.Fatal("no dispatch of A's run")
	}
	x.Dispatch = disp[0]["dispatch_id"].(string)

	// A streamed run (the SSE body ends with the run).
	x.StreamThread = id(t, a.must(200, "POST", "/threads", map[string]any{"metadata": owner}), "thread_id")
	sr := a.must(200, "POST", "/threads/"+x.StreamThread+"/runs/stream", map[string]any{"assistant_id": x.Assistant,
		"input": map[string]any{"foo": marker}, "stream_mode": []string{"values", "updates"}})
	if !bytes.Contains(sr.Body, []byte(marker)) {
		t.Fatalf("A's own stream lacks its values: %s", sr.Body)
	}
	loc := sr.Header.Get("Content-Location")
	x.StreamRun = loc[strings.LastIndex(loc, "/")+1:]

	// A run that stays pending for the whole test.
	x.PendingThread = id(t, a.must(200, "POST", "/threads", map[string]any{"metadata": owner}), "thread_id")
	x.PendingRun = id(t, a.must(200, "POST", "/threads/"+x.PendingThread+"/runs", map[string]any{"assistant_id": x.Assistant,
		"input": map[string]any{"foo": marker}, "after_seconds": 3600}), "run_id")

	// A stateless run, kept.
	x.StatelessRun = id(t, a.must(200, "POST", "/runs", map[string]any{"assistant_id": x.Assistant,
		"input": map[string]any{"foo": marker}, "on_completion": "keep", "metadata": owner}), "run_id")
	a.waitRun("/runs/" + x.StatelessRun)

	// Crons: stateless and on A's thread (yearly: they do not fire here).
	cronBody := map[string]any{"assistant_id": x.Assistant, "schedule": "0 0 1 1 *", "metadata": owner,
		"input": map[string]any{"foo": marker}}
	x.Cron = id(t, a.must(200, "POST", "/runs/crons", cronBody), "cron_id")
	x.ThreadCron = id(t, a.must(200, "POST", "/threads/"+x.Thread+"/runs/crons", cronBody), "cron_id")

	// Store items: one in A's own namespace, one under the namespace and
	// key B uses too.
	a.must(204, "PUT", "/store/items", map[string]any{"namespace": aNamespace, "key": sharedKey,
		"value": map[string]any{"text": marker}})
	a.must(204, "PUT", "/store/items", map[string]any{"namespace": sharedNS, "key": sharedKey,
		"value": map[string]any{"text": marker}})
	return x
}

// seedB creates tenant B's own resources, colliding with A's wherever
// names are the client's choice.
func seedB(t testing.TB, b *tenant) (thread string) {
	t.Helper()
	thread = id(t, b.must(200, "POST", "/threads", map[string]any{"metadata": map[string]any{"owner": "b"}}), "thread_id")
	b.must(200, "POST", "/threads/"+thread+"/runs/wait", map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": "b"}})
	b.must(204, "PUT", "/store/items", map[string]any{"namespace": sharedNS, "key": sharedKey,
		"value": map[string]any{"text": "b"}})
	return thread
}

// snapshot is what A sees of its resources; the walk must leave it as it
// was.
func snapshot(t testing.TB, a *tenant, x ids) string {
	t.Helper()
	var sb strings.Builder
	for _, p := range []string{
		"/threads/" + x.Thread, "/threads/" + x.Child, "/threads/" + x.Copy, "/threads/" + x.StreamThread,
		"/threads/" + x.PendingThread, "/threads/" + x.Thread + "/runs", "/threads/" + x.Thread + "/state",
		"/threads/" + x.PendingThread + "/runs/" + x.PendingRun, "/runs/" + x.StatelessRun,
		"/assistants/" + x.Assistant, "/runs/crons/" + x.Cron, "/runs/crons/" + x.ThreadCron,
		storeQuery(aNamespace, sharedKey), storeQuery(sharedNS, sharedKey),
	} {
		r := a.do("GET", p, nil)
		fmt.Fprintf(&sb, "GET %s → %d %s\n", p, r.Status, r.Body)
	}
	for _, q := range []struct{ path, body string }{
		{"/threads/count", `{}`}, {"/assistants/count", `{"metadata":{"owner":"` + marker + `"}}`},
		{"/runs/crons/count", `{}`}, {"/threads/" + x.Thread + "/history", `{"limit":100}`},
	} {
		var body any
		_ = json.Unmarshal([]byte(q.body), &body)
		r := a.do("POST", q.path, body)
		fmt.Fprintf(&sb, "POST %s %s → %d %s\n", q.path, q.body, r.Status, r.Body)
	}
	return sb.String()
}
