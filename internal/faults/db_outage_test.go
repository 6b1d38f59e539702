package faults_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/server"
)

// TestDatabaseOutageUnderLoad stops the server's PostgreSQL while clients
// create threads and runs, and starts it again, without restarting the
// server. While it is down every request that needs it gets a 503 with
// Retry-After (never a 500, never a hang), liveness stays 200 and readiness
// says 503; once it is back the server serves 2xx again by itself, and every
// thread and run a client was told about (a 2xx) exists, every run ends as
// success (runs caught by the outage are given back or requeued when their
// lease runs out), and every runs/wait that answered 200 answered the run's
// values.
func TestDatabaseOutageUnderLoad(t *testing.T) {
	logs := &recorder{}
	cluster, dsn := startCluster(t)
	srv, err := server.Start(context.Background(), server.Config{Addr: "127.0.0.1:0", DatabaseURL: dsn, Migrate: true,
		MaxBodyBytes: 1 << 20, ShutdownTimeout: 5 * time.Second, Workers: 4, Lease: 2 * time.Second}, slog.New(logs))
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	c := &client{base: srv.URL(), http: &http.Client{Timeout: 60 * time.Second}}

	// Load: a few clients, each creating a thread and then either waiting
	// for a run on it or creating one in the background.
	var acked ackLog
	stop := make(chan struct{})
	var load sync.WaitGroup
	for g := range 4 {
		load.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				r := c.do("POST", "/threads", `{"metadata":{"fault":"outage"}}`)
				if r.status != http.StatusOK {
					time.Sleep(50 * time.Millisecond) // a client backing off after a 503
					continue
				}
				var th struct {
					ThreadID string `json:"thread_id"`
				}
				_ = json.Unmarshal(r.body, &th)
				acked.add(&acked.threads, th.ThreadID)
				body := `{"assistant_id":"foo_bar","input":{"foo":""}}`
				if (g+i)%2 == 0 {
					r = c.do("POST", "/threads/"+th.ThreadID+"/runs/wait", body)
					if r.status == http.StatusOK {
						acked.add(&acked.waits, path.Base(r.header.Get("Content-Location")))
						if bytes.Contains(r.body, []byte("__error__")) || !bytes.Contains(r.body, []byte(`"bar"`)) {
							acked.add(&acked.badWaits, string(bytes.TrimSpace(r.body)))
						}
					}
				} else {
					r = c.do("POST", "/threads/"+th.ThreadID+"/runs", body)
					if r.status == http.StatusOK {
						var run struct {
							RunID string `json:"run_id"`
						}
						_ = json.Unmarshal(r.body, &run)
						acked.add(&acked.runs, run.RunID)
					}
				}
			}
		})
	}
	stopLoad := func() {
		select {
		case <-stop:
			return
		default:
		}
		close(stop)
		done := make(chan struct{})
		go func() { load.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Fatal("load clients did not finish within 60 s after the outage")
		}
	}
	t.Cleanup(stopLoad)

	waitFor(t, 20*time.Second, "load before the outage", func() bool { return acked.len(&acked.waits) >= 5 && acked.len(&acked.runs) >= 5 })
	before := acked.len(&acked.threads)

	// Runs in the middle of executing when the database goes: a few in the
	// background and one waited for, each sleeping in its nodes, so their
	// commits fail and they must be given back or requeued.
	slowBody := `{"assistant_id":"slow","input":{"ms":700}}`
	var inflight []string
	for range 3 {
		r := c.do("POST", "/threads", "{}")
		var th struct {
			ThreadID string `json:"thread_id"`
		}
		_ = json.Unmarshal(r.body, &th)
		acked.add(&acked.threads, th.ThreadID)
		r = c.do("POST", "/threads/"+th.ThreadID+"/runs", slowBody)
		var run struct {
			RunID string `json:"run_id"`
		}
		_ = json.Unmarshal(r.body, &run)
		if r.status != http.StatusOK {
			t.Fatalf("create slow run: %d %s", r.status, r.body)
		}
		acked.add(&acked.runs, run.RunID)
		inflight = append(inflight, "/threads/"+th.ThreadID+"/runs/"+run.RunID)
	}
	load.Go(func() {
		r := c.do("POST", "/threads", "{}")
		var th struct {
			ThreadID string `json:"thread_id"`
		}
		_ = json.Unmarshal(r.body, &th)
		acked.add(&acked.threads, th.ThreadID)
		r = c.do("POST", "/threads/"+th.ThreadID+"/runs/wait", `{"assistant_id":"slow","input":{"ms":700,"tag":"x"}}`)
		if r.status == http.StatusOK {
			acked.add(&acked.waits, path.Base(r.header.Get("Content-Location")))
			if bytes.Contains(r.body, []byte("__error__")) || !bytes.Contains(r.body, []byte(`"second:x"`)) {
				acked.add(&acked.badWaits, string(bytes.TrimSpace(r.body)))
			}
		}
	})
	waitFor(t, 10*time.Second, "the slow runs to start", func() bool {
		for _, p := range inflight {
			if !bytes.Contains(c.do("GET", p, "").body, []byte(`"status":"running"`)) {
				return false
			}
		}
		return true
	})

	// A client joins one of them as a stream: it must stay open through
	// the outage (heartbeats) and end normally once the run is done.
	var stream response
	streamDone, streamOpen := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(streamDone)
		resp, err := c.http.Get(c.base + inflight[0] + "/stream")
		close(streamOpen)
		if err != nil {
			stream.body = []byte(err.Error())
			return
		}
		defer resp.Body.Close()
		stream.status = resp.StatusCode
		stream.body, err = io.ReadAll(resp.Body)
		if err != nil {
			stream.body = append(stream.body, "\nread: "+err.Error()...)
		}
	}()
	<-streamOpen

	// Outage.
	stopped := time.Now()
	if err := cluster.Stop(); err != nil {
		t.Fatalf("stop PostgreSQL: %v", err)
	}
	t.Logf("PostgreSQL stopped in %v (load had %d threads acknowledged)", time.Since(stopped).Round(time.Millisecond), before)
	some := acked.first(&acked.threads)
	probes := 0
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); probes++ {
		if r := c.do("GET", "/livez", ""); r.status != http.StatusOK {
			t.Errorf("liveness GET /livez during the outage: %d %s", r.status, r.body)
		}
		for _, p := range []struct{ method, path, body string }{
			{"GET", "/ok", ""},
			{"GET", "/ok?check_db=1", ""},
			{"POST", "/threads", "{}"},
			{"GET", "/threads/" + some, ""},
			{"POST", "/threads/search", `{"limit":5}`},
			{"POST", "/threads/" + some + "/runs", `{"assistant_id":"foo_bar","input":{"foo":""}}`},
		} {
			r := c.do(p.method, p.path, p.body)
			if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" || !bytes.Contains(r.body, []byte(`"detail"`)) {
				t.Errorf("%s %s during the outage: %d (Retry-After %q) %s, want 503 with Retry-After", p.method, p.path, r.status, r.header.Get("Retry-After"), r.body)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Recovery, without touching the server.
	restarted := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := cluster.Start(ctx); err != nil {
		t.Fatalf("start PostgreSQL again: %v", err)
	}
	started := time.Since(restarted)
	waitFor(t, 15*time.Second, "GET /ok?check_db=1 to answer 200 after the restart", func() bool {
		return c.do("GET", "/ok?check_db=1", "").status == http.StatusOK
	})
	ready := time.Since(restarted)
	waitFor(t, 15*time.Second, "POST /threads to answer 200 after the restart", func() bool {
		return c.do("POST", "/threads", "{}").status == http.StatusOK
	})
	writable := time.Since(restarted)
	after := acked.len(&acked.threads)
	waitFor(t, 20*time.Second, "the load to make progress after the restart", func() bool {
		return acked.len(&acked.threads) >= after+5 && acked.len(&acked.waits) > 0
	})
	stopLoad()
	select {
	case <-streamDone:
	case <-time.After(60 * time.Second):
		t.Fatal("the join stream did not end within 60 s after the outage")
	}
	if stream.status != http.StatusOK || bytes.Contains(stream.body, []byte("event: error")) || !bytes.Contains(stream.body, []byte("second:")) {
		t.Errorf("join stream across the outage: %d\n%s", stream.status, stream.body)
	}

	// Nothing acknowledged is lost.
	pool, err := postgres.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	threads := acked.all(&acked.threads)
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM threads WHERE thread_id = ANY($1::uuid[])`, threads).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != len(threads) {
		t.Errorf("%d of %d acknowledged threads exist", n, len(threads))
	}
	runs := append(acked.all(&acked.waits), acked.all(&acked.runs)...)
	var statuses map[string]string
	settled := func() bool {
		rows, err := pool.Query(context.Background(), `SELECT run_id::text, status FROM runs WHERE run_id = ANY($1::uuid[])`, runs)
		if err != nil {
			t.Fatal(err)
		}
		statuses = map[string]string{}
		for rows.Next() {
			var id, st string
			if err := rows.Scan(&id, &st); err != nil {
				t.Fatal(err)
			}
			statuses[id] = st
		}
		for _, id := range runs {
			if st := statuses[id]; st == "pending" || st == "running" {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(40 * time.Second)
	for !settled() && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	for _, id := range runs {
		if st, ok := statuses[id]; !ok {
			t.Errorf("acknowledged run %s does not exist", id)
		} else if st != "success" {
			t.Errorf("acknowledged run %s is %s, want success", id, st)
		}
	}
	var retried int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM runs WHERE run_id = ANY($1::uuid[]) AND attempt > 1`, runs).Scan(&retried); err != nil {
		t.Fatal(err)
	}
	for _, b := range acked.all(&acked.badWaits) {
		t.Errorf("runs/wait answered 200 without the run's values: %s", b)
	}

	// What clients saw, and what the server logged.
	counts := c.counts()
	for status, k := range counts {
		if status >= 500 && status != http.StatusServiceUnavailable || status == 0 {
			t.Errorf("%d responses with status %d (0: transport error)", k, status)
		}
	}
	if counts[http.StatusServiceUnavailable] == 0 {
		t.Error("no 503 during the outage")
	}
	for _, b := range c.badResponses() {
		t.Error(b)
	}
	if slow := c.slowestRequest(); slow > 6*time.Second {
		t.Errorf("a request that does not wait for a run took %v", slow)
	}
	warns, internal := logs.count("database unavailable: run workers"), logs.count("internal error")
	if internal > 0 {
		t.Errorf("%d internal errors logged: %s", internal, logs.matching("internal error"))
	}
	if warns < 1 || warns > 3 {
		t.Errorf("background loops logged the outage %d times, want once (at most a few)", warns)
	}
	t.Logf("statuses %v; %d outage probe rounds; PostgreSQL restarted in %v, ready (check_db 200) %v and writable %v after the restart began",
		fmtCounts(counts), probes, started.Round(time.Millisecond), ready.Round(time.Millisecond), writable.Round(time.Millisecond))
	t.Logf("acknowledged: %d threads, %d runs/wait, %d background runs (%d of all runs needed a second attempt); outage warnings from background loops: %d; slowest non-wait request %v",
		len(threads), acked.len(&acked.waits), acked.len(&acked.runs), retried, warns, c.slowestRequest().Round(time.Millisecond))
	if testing.Verbose() {
		t.Logf("server log about the outage:\n%s", logs.matching("database"))
	}
}

// startCluster starts a PostgreSQL cluster of this test's own (the shared
// one of pgtest must not be stopped) with a database "weft", and returns it
// with that database's DSN. It is stopped and removed when t ends.
func startCluster(t *testing.T) (*postgres.Cluster, string) {
	t.Helper()
	// Not t.TempDir(): as root, the cluster runs as an unprivileged user
	// that must reach the directory (t.TempDir's parent is 0700).
	dir, err := os.MkdirTemp("", "weft-fault-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	cluster, err := postgres.NewCluster(dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if errors.Is(err, postgres.ErrNoBinaries) {
		t.Skip("fault tests need the PostgreSQL server binaries to run a cluster of their own:", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := cluster.Start(ctx); err != nil {
		t.Fatalf("start PostgreSQL: %v", err)
	}
	t.Cleanup(func() {
		if err := cluster.Stop(); err != nil {
			t.Logf("stop PostgreSQL: %v", err)
		}
		if cluster.Dir != dir {
			_ = os.RemoveAll(cluster.Dir)
		}
	})
	if err := cluster.EnsureDatabase(ctx, "weft"); err != nil {
		t.Fatal(err)
	}
	return cluster, cluster.DSN("weft")
}

func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
	}
}

// client sends requests and tallies what came back.
type client struct {
	base string
	http *http.Client

	mu      sync.Mutex
	byCode  map[int]int
	bad     []string
	slowest time.Duration
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request; status 0 is a transport error (the server hung up
// or the client timed out).
func (c *client) do(method, p, body string) response {
	start := time.Now()
	req, err := http.NewRequest(method, c.base+p, strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	var r response
	resp, err := c.http.Do(req)
	if err == nil {
		r.body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		r.status, r.header = resp.StatusCode, resp.Header
	}
	took := time.Since(start)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byCode == nil {
		c.byCode = map[int]int{}
	}
	if err != nil {
		r.status = 0
		c.bad = append(c.bad, fmt.Sprintf("%s %s: %v after %v", method, p, err, took))
	}
	c.byCode[r.status]++
	if r.status == http.StatusServiceUnavailable && r.header.Get("Retry-After") == "" {
		c.bad = append(c.bad, fmt.Sprintf("%s %s: 503 without Retry-After", method, p))
	}
	if r.status >= 500 && r.status != http.StatusServiceUnavailable {
		c.bad = append(c.bad, fmt.Sprintf("%s %s: %d %s", method, p, r.status, r.body))
	}
	if !strings.HasSuffix(p, "/wait") && took > c.slowest {
		c.slowest = took
	}
	return r
}

func (c *client) counts() map[int]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[int]int{}
	for k, v := range c.byCode {
		out[k] = v
	}
	return out
}

func (c *client) badResponses() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.bad...)
}

func (c *client) slowestRequest() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slowest
}

func fmtCounts(m map[int]int) string {
	codes := make([]int, 0, len(m))
	for k := range m {
		codes = append(codes, k)
	}
	sort.Ints(codes)
	var b strings.Builder
	for _, k := range codes {
		fmt.Fprintf(&b, "%d×%d ", k, m[k])
	}
	return strings.TrimSpace(b.String())
}

// ackLog records what the server acknowledged with a 2xx.
type ackLog struct {
	mu                             sync.Mutex
	threads, waits, runs, badWaits []string
}

func (a *ackLog) add(list *[]string, v string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	*list = append(*list, v)
}

func (a *ackLog) len(list *[]string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(*list)
}

func (a *ackLog) first(list *[]string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return (*list)[0]
}

func (a *ackLog) all(list *[]string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), (*list)...)
}

// recorder is a slog.Handler keeping every record's level and text, for
// assertions on what the server logged.
type recorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	b.WriteString(rec.Level.String() + " " + rec.Message)
	rec.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, b.String())
	return nil
}

func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }

func (r *recorder) count(substr string) int { return len(r.matchingLines(substr)) }

func (r *recorder) matching(substr string) string {
	return strings.Join(r.matchingLines(substr), "\n")
}

func (r *recorder) matchingLines(substr string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, l := range r.lines {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return out
}
