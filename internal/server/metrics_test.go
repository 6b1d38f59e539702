package server_test

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

// scrape is one parsed scrape: series (as the text format prints them,
// labels sorted by name) → value.
type scrape map[string]float64

func parseScrape(t *testing.T, body []byte) scrape {
	t.Helper()
	out := scrape{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("scrape line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// get is a series' value; a series that is absent is 0 (a counter or
// histogram child not created yet).
func (s scrape) get(series string) float64 { return s[series] }

func scrapeURL(t *testing.T, url string) scrape {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return parseScrape(t, body)
}

// extGraph is a graph served by an external worker (registered over the
// worker API): the in-process workers leave its runs alone.
var extGraph = map[string]any{
	"graph_id": "ext_echo", "worker_id": "test",
	"drawable": map[string]any{
		"nodes": []any{map[string]any{"id": "__start__"}, map[string]any{"id": "talk"}, map[string]any{"id": "__end__"}},
		"edges": []any{map[string]any{"source": "__start__", "target": "talk"}, map[string]any{"source": "talk", "target": "__end__"}},
	},
	"state_schema": map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{}}},
}

type claimedRun struct {
	Dispatch struct {
		DispatchID string `json:"dispatch_id"`
	} `json:"dispatch"`
	Run struct {
		RunID    string `json:"run_id"`
		ThreadID string `json:"thread_id"`
	} `json:"run"`
	ClaimToken string `json:"claim_token"`
}

// The metrics move with the work: a run executed in process, and an
// external worker's claim, commits and stream, change exactly the
// counters and histograms they should; HTTP requests are counted by route
// template; a stale worker's refused commit and heartbeat count as fenced;
// webhook attempts count by outcome; the separate metrics address serves
// the same registry and nothing else.
func TestMetricsMove(t *testing.T) {
	t.Parallel()
	var hooks atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hooks.Add(1) }))
	defer hook.Close()
	s := servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) {
		c.MetricsAddr = "127.0.0.1:0"
		c.WebhookAllowPrivate = true
		c.StreamHeartbeat = 100 * time.Millisecond
	})
	main := s.URL + "/metrics"
	before := scrapeURL(t, main)
	for _, series := range []string{`weft_build_info{version="` + server.Version + `"}`, "weft_db_pool_max_connections", "go_goroutines"} {
		if _, ok := before[series]; !ok {
			t.Errorf("series %s missing from the scrape", series)
		}
	}
	if _, ok := before["process_cpu_seconds_total"]; !ok {
		t.Error("process collector missing")
	}

	// A run executed by the in-process pool, with a webhook.
	tid := s.Must(http.StatusOK, "POST", "/threads", map[string]any{}).Map(t)["thread_id"].(string)
	s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "foo_bar",
		"input": map[string]any{"foo": ""}, "webhook": hook.URL + "/done"})
	waitFor(t, "the webhook", func() bool {
		return scrapeURL(t, main).get(`weft_webhook_deliveries_total{outcome="delivered"}`) == 1
	})
	if hooks.Load() != 1 {
		t.Fatalf("webhook received %d times", hooks.Load())
	}

	// An external worker's run: queued, claimed, streamed while it commits.
	s.Must(http.StatusOK, "POST", "/dispatch/graphs", extGraph)
	tid2 := s.Must(http.StatusOK, "POST", "/threads", map[string]any{}).Map(t)["thread_id"].(string)
	run := s.Must(http.StatusOK, "POST", "/threads/"+tid2+"/runs", map[string]any{"assistant_id": "ext_echo", "input": map[string]any{"n": 1}}).Map(t)
	queued := scrapeURL(t, main)
	if got := queued.get(`weft_queue_dispatches{graph_id="ext_echo",state="queued"}`); got != 1 {
		t.Errorf("queued ext_echo dispatches %v, want 1", got)
	}
	var got []claimedRun
	s.Must(http.StatusOK, "POST", "/dispatch/claim", map[string]any{"worker_id": "w1", "graph_ids": []string{"ext_echo"}, "wait_ms": 5000}).JSON(t, &got)
	if len(got) != 1 || got[0].Run.RunID != run["run_id"] {
		t.Fatalf("claimed %+v", got)
	}
	c := got[0]
	stream, err := http.Get(s.URL + "/threads/" + tid2 + "/runs/" + c.Run.RunID + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	waitFor(t, "the stream to open", func() bool { return scrapeURL(t, main).get("weft_sse_streams_open") == 1 })
	commit := "/dispatch/" + c.Dispatch.DispatchID + "/commit"
	s.Must(http.StatusOK, "POST", commit, map[string]any{"claim_token": c.ClaimToken, "commit_id": "1",
		"events": []any{map[string]any{"event": "values", "data": map[string]any{"n": 1}}}})
	s.Must(http.StatusOK, "POST", commit, map[string]any{"claim_token": c.ClaimToken, "commit_id": "end",
		"events": []any{map[string]any{"event": "values", "data": map[string]any{"n": 2}}, map[string]any{"event": "end", "data": map[string]any{}}},
		"end":    map[string]any{"status": "success", "result": map[string]any{"n": 2}}})
	body, _ := io.ReadAll(stream.Body) // the stream ends after the run's end
	if !bytes.Contains(body, []byte(`"n":2`)) {
		t.Fatalf("stream %s", body)
	}
	// A stale worker: its commit and heartbeat after the end are refused.
	s.Must(http.StatusConflict, "POST", commit, map[string]any{"claim_token": c.ClaimToken, "commit_id": "late", "events": []any{}})
	s.Must(http.StatusConflict, "POST", "/dispatch/"+c.Dispatch.DispatchID+"/heartbeat", map[string]any{"claim_token": c.ClaimToken})
	s.Must(http.StatusConflict, "POST", "/dispatch/"+c.Dispatch.DispatchID+"/nack", map[string]any{"claim_token": uuid.NewString()})
	waitFor(t, "the stream to close", func() bool { return scrapeURL(t, main).get("weft_sse_streams_open") == 0 })

	after := scrapeURL(t, main)
	delta := func(series string) float64 { return after.get(series) - before.get(series) }
	for series, want := range map[string]float64{
		`weft_runs_finished_total{outcome="success"}`:                                                           2,
		`weft_runs_finished_total{outcome="error"}`:                                                             0,
		`weft_run_duration_seconds_count{outcome="success"}`:                                                    2,
		`weft_dispatch_claim_latency_seconds_count`:                                                             2,
		`weft_commit_duration_seconds_count{source="worker"}`:                                                   2,
		`weft_commit_batch_size_sum{kind="events",source="worker"}`:                                             3,
		`weft_fenced_total{op="commit"}`:                                                                        1,
		`weft_fenced_total{op="heartbeat"}`:                                                                     1,
		`weft_fenced_total{op="nack"}`:                                                                          1,
		`weft_webhook_deliveries_total{outcome="delivered"}`:                                                    1,
		`weft_webhook_deliveries_total{outcome="retrying"}`:                                                     0,
		`weft_dead_letters_total`:                                                                               0,
		`weft_http_requests_total{method="POST",route="/threads/{thread_id}/runs/wait",status="200"}`:           1,
		`weft_http_requests_total{method="POST",route="/dispatch/{dispatch_id}/commit",status="200"}`:           2,
		`weft_http_requests_total{method="POST",route="/dispatch/{dispatch_id}/commit",status="409"}`:           1,
		`weft_http_requests_total{method="GET",route="/threads/{thread_id}/runs/{run_id}/stream",status="200"}`: 1,
		`weft_http_request_duration_seconds_count{method="POST",route="/threads/{thread_id}/runs/wait"}`:        1,
		`weft_queue_dispatches{graph_id="ext_echo",state="queued"}`:                                             0,
	} {
		if got := delta(series); got != want {
			t.Errorf("%s moved by %v, want %v", series, got, want)
		}
	}
	// The in-process run committed at least its steps and its end.
	if got := delta(`weft_commit_duration_seconds_count{source="in_process"}`); got < 1 {
		t.Errorf("in-process commits moved by %v", got)
	}
	if got := delta("weft_sse_events_sent_total"); got < 2 {
		t.Errorf("SSE events sent moved by %v, want >= 2 (metadata-free join: two values events)", got)
	}
	if got := after.get(`weft_queue_dispatches{graph_id="ext_echo",state="claimed"}`); got != 0 {
		t.Errorf("claimed ext_echo dispatches %v after the end", got)
	}
	// Routes are templates, never raw paths.
	for series := range after {
		if strings.Contains(series, tid) || strings.Contains(series, c.Dispatch.DispatchID) {
			t.Errorf("a raw path became a label: %s", series)
		}
	}

	// The separate metrics address serves the same registry, and nothing else.
	maddr := s.Srv.MetricsAddr()
	if maddr == "" {
		t.Fatal("no metrics listener")
	}
	sep := scrapeURL(t, "http://"+maddr+"/metrics")
	if sep.get(`weft_runs_finished_total{outcome="success"}`) != after.get(`weft_runs_finished_total{outcome="success"}`) {
		t.Errorf("the metrics address serves another registry")
	}
	resp, err := http.Get("http://" + maddr + "/threads")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /threads on the metrics address: %d, want 404", resp.StatusCode)
	}
}

// A run dead-lettered by the reaper counts its expired leases, the dead
// letter and its error outcome.
func TestMetricsLeaseExpiryAndDeadLetter(t *testing.T) {
	t.Parallel()
	s := servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) {
		c.Workers = 0
		c.MaxAttempts = 1
		c.Lease = time.Second
	})
	before := scrapeURL(t, s.URL+"/metrics")
	s.Must(http.StatusOK, "POST", "/dispatch/graphs", extGraph)
	tid := s.Must(http.StatusOK, "POST", "/threads", map[string]any{}).Map(t)["thread_id"].(string)
	s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "ext_echo", "input": map[string]any{"n": 1}})
	var got []claimedRun
	s.Must(http.StatusOK, "POST", "/dispatch/claim", map[string]any{"worker_id": "dies", "graph_ids": []string{"ext_echo"}, "wait_ms": 5000}).JSON(t, &got)
	if len(got) != 1 {
		t.Fatalf("claimed %d", len(got))
	}
	// The worker never heartbeats: the reaper finds its lease expired.
	waitFor(t, "the dead letter", func() bool { return scrapeURL(t, s.URL+"/metrics").get("weft_dead_letters_total") == 1 })
	after := scrapeURL(t, s.URL+"/metrics")
	for series, want := range map[string]float64{
		"weft_leases_expired_total":                                      1,
		"weft_dead_letters_total":                                        1,
		`weft_runs_finished_total{outcome="error"}`:                      1,
		`weft_run_duration_seconds_count{outcome="error"}`:               1,
		`weft_queue_dispatches{graph_id="ext_echo",state="dead_letter"}`: 1,
	} {
		if d := after.get(series) - before.get(series); d != want {
			t.Errorf("%s moved by %v, want %v", series, d, want)
		}
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An in-process worker whose claim is taken from it (another claimer's
// token, as after its lease ran out and another replica claimed the run)
// stops the run at its next heartbeat: the refused heartbeat counts as
// fenced and the stopped attempt as a lease lost. The pool's gauges and
// counters read the pgx pool.
func TestMetricsExecutorLeaseLost(t *testing.T) {
	t.Parallel()
	s := servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) {
		c.Lease = time.Second // heartbeats every ~⅓ s
	})
	before := scrapeURL(t, s.URL+"/metrics")
	tid := s.Must(http.StatusOK, "POST", "/threads", map[string]any{}).Map(t)["thread_id"].(string)
	run := s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow",
		"input": map[string]any{"ms": 5000}}).Map(t)
	waitFor(t, "the run to be claimed", func() bool {
		var n int
		if err := s.DB.QueryRow(t.Context(), `SELECT count(*) FROM run_dispatches WHERE run_id = $1 AND state = 'claimed'`,
			run["run_id"]).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	})
	if _, err := s.DB.Exec(t.Context(), `UPDATE run_dispatches SET claim_token = gen_random_uuid()
		WHERE run_id = $1 AND state = 'claimed'`, run["run_id"]); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the lease lost", func() bool {
		return scrapeURL(t, s.URL+"/metrics").get("weft_executor_leases_lost_total")-before.get("weft_executor_leases_lost_total") == 1
	})
	after := scrapeURL(t, s.URL+"/metrics")
	if d := after.get(`weft_fenced_total{op="heartbeat"}`) - before.get(`weft_fenced_total{op="heartbeat"}`); d != 1 {
		t.Errorf(`weft_fenced_total{op="heartbeat"} moved by %v, want 1`, d)
	}
	if d := after.get("weft_db_pool_acquires_total") - before.get("weft_db_pool_acquires_total"); d < 3 {
		t.Errorf("weft_db_pool_acquires_total moved by %v, want several (requests, claims, heartbeats)", d)
	}
	if d := after.get("weft_db_pool_acquire_wait_seconds_total") - before.get("weft_db_pool_acquire_wait_seconds_total"); d <= 0 {
		t.Errorf("weft_db_pool_acquire_wait_seconds_total moved by %v, want > 0", d)
	}
	if after.get(`weft_db_pool_connections{state="idle"}`)+after.get(`weft_db_pool_connections{state="acquired"}`) < 1 {
		t.Errorf("no pool connections in the scrape: %v idle, %v acquired", after.get(`weft_db_pool_connections{state="idle"}`),
			after.get(`weft_db_pool_connections{state="acquired"}`))
	}
}
