package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Run outcomes (the outcome label of weft_runs_finished_total and
// weft_run_duration_seconds): a run's final status, or rolled_back for a
// run a rollback deleted.
const (
	OutcomeSuccess     = "success"
	OutcomeError       = "error"
	OutcomeInterrupted = "interrupted"
	OutcomeTimeout     = "timeout"
	OutcomeRolledBack  = "rolled_back"
)

// Commit sources (the source label of the commit metrics).
const (
	SourceInProcess = "in_process" // this process's executor
	SourceWorker    = "worker"     // an external worker, over the worker API
)

// Fenced operations (the op label of weft_fenced_total).
const (
	OpCommit    = "commit"
	OpHeartbeat = "heartbeat"
	OpNack      = "nack"
)

// Webhook delivery outcomes (the outcome label of
// weft_webhook_deliveries_total), one per attempt.
const (
	WebhookDelivered = "delivered" // a 2xx answer
	WebhookRetrying  = "retrying"  // failed; another attempt follows after a backoff
	WebhookFailed    = "failed"    // failed for good (last attempt, or an address refused)
)

// Buckets, in seconds (or items for batch sizes).
var (
	runBuckets    = []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800}
	claimBuckets  = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}
	commitBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}
	batchBuckets  = []float64{0, 1, 2, 4, 8, 16, 32, 64, 128, 256}
	httpBuckets   = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}
)

// Metrics are one process's Prometheus metrics (N replicas are N scrape
// targets). Each component gets the *Metrics of its server; every method is
// safe on a nil *Metrics (it does nothing), so components built without
// one (tests, the remote Go worker) need no guard. The label values of the
// event counters are fixed sets whose children are created up front: an
// event costs an atomic add, no label lookup and no allocation.
type Metrics struct {
	reg *prometheus.Registry

	runsFinished map[string]prometheus.Counter
	runsVec      *prometheus.CounterVec
	runDuration  map[string]prometheus.Observer
	durationVec  *prometheus.HistogramVec

	claimLatency prometheus.Histogram

	commitDuration map[string]prometheus.Observer
	commitErrors   map[string]prometheus.Counter
	commitBatch    map[string][3]prometheus.Observer // source → checkpoints, writes, events

	fenced       map[string]prometheus.Counter
	leaseExpired prometheus.Counter
	leaseLost    prometheus.Counter
	deadLetters  prometheus.Counter

	webhooks map[string]prometheus.Counter

	streamsOpen prometheus.Gauge
	eventsSent  prometheus.Counter

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec
	// httpSeries caches the children of each (method, route, status): the
	// label lookup of a request happens once per series, not per request.
	httpSeries sync.Map // httpKey → *httpSeries

	// snap is what Snapshot (GET /metrics?format=json) reads (snapshot.go).
	snap snapshotSources
}

// New returns the metrics of one server process, registered in a registry
// of their own together with the Go runtime and process collectors and
// weft_build_info{version}.
func New(version string) *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{reg: reg}
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	build := prometheus.NewGauge(prometheus.GaugeOpts{Name: "weft_build_info", Help: "Always 1; the version label is this server's version.",
		ConstLabels: prometheus.Labels{"version": version}})
	build.Set(1)
	f(build)

	m.runsVec = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weft_runs_finished_total",
		Help: "Runs this process ended (a worker's final commit, a nack or an expired lease at the last attempt, a cancellation), by outcome."},
		[]string{"outcome"})
	m.durationVec = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "weft_run_duration_seconds",
		Help:    "Seconds from a run's first claim to its end, for the runs counted in weft_runs_finished_total (rolled back runs excepted), by outcome.",
		Buckets: runBuckets}, []string{"outcome"})
	f(m.runsVec)
	f(m.durationVec)
	m.runsFinished, m.runDuration = map[string]prometheus.Counter{}, map[string]prometheus.Observer{}
	for _, o := range []string{OutcomeSuccess, OutcomeError, OutcomeInterrupted, OutcomeTimeout, OutcomeRolledBack} {
		m.runsFinished[o] = m.runsVec.WithLabelValues(o)
		if o != OutcomeRolledBack {
			m.runDuration[o] = m.durationVec.WithLabelValues(o)
		}
	}

	m.claimLatency = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "weft_dispatch_claim_latency_seconds",
		Help:    "Seconds from a dispatch becoming claimable (created, or its delay or retry backoff over) to its claim, for claims made through this process (in-process workers and the worker API).",
		Buckets: claimBuckets})
	f(m.claimLatency)

	commitDuration := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "weft_commit_duration_seconds",
		Help:    "Seconds one successful commit took in the commit coordinator (fence check and every write, one transaction), by source (in_process, worker).",
		Buckets: commitBuckets}, []string{"source"})
	commitErrors := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weft_commit_errors_total",
		Help: "Commits that failed for another reason than a fence (invalid, database error), by source."}, []string{"source"})
	commitBatch := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "weft_commit_batch_size",
		Help:    "What one successful commit carried, by source and kind: checkpoints, writes (pending writes) and events.",
		Buckets: batchBuckets}, []string{"source", "kind"})
	f(commitDuration)
	f(commitErrors)
	f(commitBatch)
	m.commitDuration, m.commitErrors, m.commitBatch = map[string]prometheus.Observer{}, map[string]prometheus.Counter{}, map[string][3]prometheus.Observer{}
	for _, s := range []string{SourceInProcess, SourceWorker} {
		m.commitDuration[s] = commitDuration.WithLabelValues(s)
		m.commitErrors[s] = commitErrors.WithLabelValues(s)
		m.commitBatch[s] = [3]prometheus.Observer{commitBatch.WithLabelValues(s, "checkpoints"),
			commitBatch.WithLabelValues(s, "writes"), commitBatch.WithLabelValues(s, "events")}
	}

	fenced := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weft_fenced_total",
		Help: "Operations refused (409) because the claim they presented was no longer valid (lease expired, reclaimed, cancelled, finished), by op: commit, heartbeat, nack."},
		[]string{"op"})
	f(fenced)
	m.fenced = map[string]prometheus.Counter{}
	for _, op := range []string{OpCommit, OpHeartbeat, OpNack} {
		m.fenced[op] = fenced.WithLabelValues(op)
	}
	m.leaseExpired = prometheus.NewCounter(prometheus.CounterOpts{Name: "weft_leases_expired_total",
		Help: "Claims whose lease ran out (their worker died or hung) that this process's reaper requeued, dead-lettered or ended."})
	m.leaseLost = prometheus.NewCounter(prometheus.CounterOpts{Name: "weft_executor_leases_lost_total",
		Help: "Run attempts of this process's in-process workers stopped because their lease was lost (a refused heartbeat or commit)."})
	m.deadLetters = prometheus.NewCounter(prometheus.CounterOpts{Name: "weft_dead_letters_total",
		Help: "Dispatches this process dead-lettered (a nack or an expired lease at the last attempt); their runs end as error."})
	f(m.leaseExpired)
	f(m.leaseLost)
	f(m.deadLetters)

	webhooks := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weft_webhook_deliveries_total",
		Help: "Webhook POST attempts this process made, by outcome: delivered (2xx), retrying (failed, another attempt follows), failed (given up)."},
		[]string{"outcome"})
	f(webhooks)
	m.webhooks = map[string]prometheus.Counter{}
	for _, o := range []string{WebhookDelivered, WebhookRetrying, WebhookFailed} {
		m.webhooks[o] = webhooks.WithLabelValues(o)
	}

	m.streamsOpen = prometheus.NewGauge(prometheus.GaugeOpts{Name: "weft_sse_streams_open",
		Help: "Server-Sent Event streams this process is serving now (run, join, thread and protocol streams)."})
	m.eventsSent = prometheus.NewCounter(prometheus.CounterOpts{Name: "weft_sse_events_sent_total",
		Help: "Server-Sent Events written to clients (heartbeat comments excluded)."})
	f(m.streamsOpen)
	f(m.eventsSent)

	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weft_http_requests_total",
		Help: "HTTP requests served, by method, route template (chi's route pattern, e.g. /threads/{thread_id}/runs/wait; unmatched for none) and status."},
		[]string{"method", "route", "status"})
	m.httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "weft_http_request_duration_seconds",
		Help:    "Seconds from a request's arrival to its handler's return (streams: until the stream ends), by method and route template.",
		Buckets: httpBuckets}, []string{"method", "route"})
	f(m.httpRequests)
	f(m.httpDuration)
	return m
}

// Registry is the registry the metrics are in (for tests and for adding
// collectors).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus text format (gzip when
// asked). A collector that fails is logged and left out; the rest is
// served.
func (m *Metrics) Handler(log *slog.Logger) http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorLog: slogPrinter{log}, ErrorHandling: promhttp.ContinueOnError})
}

type slogPrinter struct{ log *slog.Logger }

func (p slogPrinter) Println(v ...any) {
	if p.log != nil {
		p.log.Warn("metrics", "error", v)
	}
}

// RunEnded counts a run that ended with outcome; seconds (since its first
// claim) is observed when >= 0.
func (m *Metrics) RunEnded(outcome string, seconds float64) {
	if m == nil {
		return
	}
	c, ok := m.runsFinished[outcome]
	if !ok {
		c = m.runsVec.WithLabelValues(outcome)
	}
	c.Inc()
	if seconds < 0 || outcome == OutcomeRolledBack {
		return
	}
	h, ok := m.runDuration[outcome]
	if !ok {
		h = m.durationVec.WithLabelValues(outcome)
	}
	h.Observe(seconds)
}

// Claimed observes the latency of one claim.
func (m *Metrics) Claimed(latency time.Duration) {
	if m == nil {
		return
	}
	m.claimLatency.Observe(max(latency.Seconds(), 0))
}

// Committed observes one successful commit from source (SourceInProcess,
// SourceWorker): its duration and what it carried.
func (m *Metrics) Committed(source string, d time.Duration, checkpoints, writes, events int) {
	if m == nil {
		return
	}
	m.commitDuration[source].Observe(d.Seconds())
	b := m.commitBatch[source]
	b[0].Observe(float64(checkpoints))
	b[1].Observe(float64(writes))
	b[2].Observe(float64(events))
}

// CommitFailed counts a commit from source that failed for another reason
// than a fence.
func (m *Metrics) CommitFailed(source string) {
	if m == nil {
		return
	}
	m.commitErrors[source].Inc()
}

// Fenced counts an operation (OpCommit, OpHeartbeat, OpNack) refused by the
// fence.
func (m *Metrics) Fenced(op string) {
	if m == nil {
		return
	}
	m.fenced[op].Inc()
}

// LeasesExpired counts n claims whose lease ran out, handled by the reaper.
func (m *Metrics) LeasesExpired(n int) {
	if m == nil || n <= 0 {
		return
	}
	m.leaseExpired.Add(float64(n))
}

// LeaseLost counts an in-process run attempt stopped by a lost lease.
func (m *Metrics) LeaseLost() {
	if m == nil {
		return
	}
	m.leaseLost.Inc()
}

// DeadLettered counts a dead-lettered dispatch.
func (m *Metrics) DeadLettered() {
	if m == nil {
		return
	}
	m.deadLetters.Inc()
}

// WebhookAttempt counts a webhook attempt with outcome (WebhookDelivered,
// WebhookRetrying, WebhookFailed).
func (m *Metrics) WebhookAttempt(outcome string) {
	if m == nil {
		return
	}
	m.webhooks[outcome].Inc()
}

// StreamOpened counts an SSE stream as open; StreamClosed undoes it.
func (m *Metrics) StreamOpened() {
	if m != nil {
		m.streamsOpen.Inc()
	}
}

// StreamClosed counts an SSE stream as closed.
func (m *Metrics) StreamClosed() {
	if m != nil {
		m.streamsOpen.Dec()
	}
}

// EventSent counts one SSE event written to a client.
func (m *Metrics) EventSent() {
	if m != nil {
		m.eventsSent.Inc()
	}
}

type httpKey struct {
	method, route string
	status        int
}

type httpSeries struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

// maxHTTPSeries bounds the cache of (method, route, status) children: the
// routes are a fixed table, but methods and statuses come from clients.
const maxHTTPSeries = 4096

// ObserveHTTP counts one served request: method, route template ("" for a
// request no route matched) and status, and its duration.
func (m *Metrics) ObserveHTTP(method, route string, status int, d time.Duration) {
	if m == nil {
		return
	}
	if route == "" {
		route = "unmatched"
	}
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
	default:
		method = "other"
	}
	k := httpKey{method: method, route: route, status: status}
	v, ok := m.httpSeries.Load(k)
	if !ok {
		s := &httpSeries{count: m.httpRequests.WithLabelValues(method, route, strconv.Itoa(status)),
			duration: m.httpDuration.WithLabelValues(method, route)}
		v, _ = m.httpSeries.LoadOrStore(k, s)
	}
	s := v.(*httpSeries)
	s.count.Inc()
	s.duration.Observe(d.Seconds())
}

// WatchPool adds the connection pool's statistics, read at scrape time.
func (m *Metrics) WatchPool(pool *pgxpool.Pool) {
	m.reg.MustRegister(&poolCollector{pool: pool})
	m.snap.mu.Lock()
	m.snap.pool = pool
	m.snap.mu.Unlock()
}

// QueueDepth is a number of dispatches in one state of one graph.
type QueueDepth struct {
	State   string
	GraphID string
	Count   int64
}

// WatchQueue adds weft_queue_dispatches{state, graph_id}, read at scrape
// time with depth (one query; bounded by a timeout, and left out of that
// scrape when it fails).
func (m *Metrics) WatchQueue(depth func(ctx context.Context) ([]QueueDepth, error), log *slog.Logger) {
	m.reg.MustRegister(&queueCollector{depth: depth, log: log})
}

var queueDesc = prometheus.NewDesc("weft_queue_dispatches",
	"Dispatches by state (queued, claimed, dead_letter) and graph, read from the database at scrape time (the same for every replica; a graph once seen reads 0 when it has none).",
	[]string{"state", "graph_id"}, nil)

type queueCollector struct {
	depth func(ctx context.Context) ([]QueueDepth, error)
	log   *slog.Logger

	mu     sync.Mutex
	graphs map[string]bool // every graph seen: its states read 0 rather than vanish
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- queueDesc }

// queueScrapeTimeout bounds the queue query of one scrape.
const queueScrapeTimeout = 2 * time.Second

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), queueScrapeTimeout)
	defer cancel()
	rows, err := c.depth(ctx)
	if err != nil {
		if c.log != nil {
			c.log.Debug("metrics: queue depth", "error", err)
		}
		return
	}
	type key struct{ state, graph string }
	counts := make(map[key]int64, len(rows))
	c.mu.Lock()
	if c.graphs == nil {
		c.graphs = map[string]bool{}
	}
	for _, r := range rows {
		counts[key{r.State, r.GraphID}] = r.Count
		if len(c.graphs) < maxQueueGraphs {
			c.graphs[r.GraphID] = true
		}
	}
	for g := range c.graphs {
		for _, st := range queueStates {
			if _, ok := counts[key{st, g}]; !ok {
				counts[key{st, g}] = 0
			}
		}
	}
	c.mu.Unlock()
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(queueDesc, prometheus.GaugeValue, float64(n), k.state, k.graph)
	}
}

// queueStates are the states of weft_queue_dispatches.
var queueStates = []string{"queued", "claimed", "dead_letter"}

// maxQueueGraphs bounds the graphs remembered for zero values.
const maxQueueGraphs = 1000

var (
	poolConns = prometheus.NewDesc("weft_db_pool_connections",
		"Connections of the database pool by state: acquired (in use), idle, constructing.", []string{"state"}, nil)
	poolMax = prometheus.NewDesc("weft_db_pool_max_connections",
		"The database pool's size limit.", nil, nil)
	poolAcquires = prometheus.NewDesc("weft_db_pool_acquires_total",
		"Connections acquired from the database pool.", nil, nil)
	poolEmptyAcquires = prometheus.NewDesc("weft_db_pool_empty_acquires_total",
		"Acquires that had to wait for a connection (none was idle): a sign the pool is too small.", nil, nil)
	poolCanceledAcquires = prometheus.NewDesc("weft_db_pool_canceled_acquires_total",
		"Acquires cancelled by their context while waiting for a connection.", nil, nil)
	poolAcquireSeconds = prometheus.NewDesc("weft_db_pool_acquire_wait_seconds_total",
		"Seconds spent acquiring connections from the database pool, summed.", nil, nil)
)

type poolCollector struct{ pool *pgxpool.Pool }

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{poolConns, poolMax, poolAcquires, poolEmptyAcquires, poolCanceledAcquires, poolAcquireSeconds} {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pool.Stat()
	ch <- prometheus.MustNewConstMetric(poolConns, prometheus.GaugeValue, float64(s.AcquiredConns()), "acquired")
	ch <- prometheus.MustNewConstMetric(poolConns, prometheus.GaugeValue, float64(s.IdleConns()), "idle")
	ch <- prometheus.MustNewConstMetric(poolConns, prometheus.GaugeValue, float64(s.ConstructingConns()), "constructing")
	ch <- prometheus.MustNewConstMetric(poolMax, prometheus.GaugeValue, float64(s.MaxConns()))
	ch <- prometheus.MustNewConstMetric(poolAcquires, prometheus.CounterValue, float64(s.AcquireCount()))
	ch <- prometheus.MustNewConstMetric(poolEmptyAcquires, prometheus.CounterValue, float64(s.EmptyAcquireCount()))
	ch <- prometheus.MustNewConstMetric(poolCanceledAcquires, prometheus.CounterValue, float64(s.CanceledAcquireCount()))
	ch <- prometheus.MustNewConstMetric(poolAcquireSeconds, prometheus.CounterValue, s.AcquireDuration().Seconds())
}
