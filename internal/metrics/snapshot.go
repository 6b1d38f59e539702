package metrics

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Snapshot is GET /metrics?format=json: the keys of LangGraph's server's
// JSON metrics that Weft has the numbers for (not requests_queued nor
// requests_errors of the pool, which pgxpool does not count, nor redis).
type Snapshot struct {
	// Postgres is the database pool of this process (absent when not
	// watched: WatchPool).
	Postgres *PoolStats `json:"postgres,omitempty"`
	// Queue is the runs pending and running, of every tenant (absent when
	// not watched: WatchRuns).
	Queue *QueueStats `json:"queue,omitempty"`
	// Workers are this process's in-process run workers (absent when it
	// has none: -workers 0, or not watched: WatchWorkers).
	Workers *WorkerStats `json:"workers,omitempty"`
	API     APIStats     `json:"api" validate:"required"`
}

// PoolStats is the database pool: its size limit, its connections, the
// idle ones.
type PoolStats struct {
	PoolMax       int32 `json:"pool_max" validate:"required"`
	PoolSize      int32 `json:"pool_size" validate:"required"`
	PoolAvailable int32 `json:"pool_available" validate:"required"`
}

// QueueStats are the runs waiting and running. Wait times are seconds
// since a pending run was created (null when none is pending); unblocked
// runs are pending runs whose thread has no running run.
type QueueStats struct {
	NPending                        int64    `json:"n_pending" validate:"required"`
	NRunning                        int64    `json:"n_running" validate:"required"`
	PendingRunsWaitTimeMaxSecs      *float64 `json:"pending_runs_wait_time_max_secs" validate:"required" extensions:"x-nullable"`
	PendingRunsWaitTimeMedSecs      *float64 `json:"pending_runs_wait_time_med_secs" validate:"required" extensions:"x-nullable"`
	PendingUnblockedRunsWaitTimeMax *float64 `json:"pending_unblocked_runs_wait_time_max_secs" validate:"required" extensions:"x-nullable"`
}

// WorkerStats are the in-process run workers: how many, how many run a
// run now, how many are free.
type WorkerStats struct {
	Max       int64 `json:"max" validate:"required"`
	Active    int64 `json:"active" validate:"required"`
	Available int64 `json:"available" validate:"required"`
}

// APIStats are the HTTP requests this process served.
type APIStats struct {
	HTTPRequestsTotal []HTTPCount `json:"http_requests_total" validate:"required"`
}

// HTTPCount is how many requests of one method to one route template
// answered one status.
type HTTPCount struct {
	Method string `json:"method" validate:"required"`
	Path   string `json:"path" validate:"required"`
	Status int    `json:"status" validate:"required"`
	Count  int64  `json:"count" validate:"required"`
}

// snapshotOmits are the routes the JSON snapshot leaves out, as LangGraph's
// server does (probes, metadata, this endpoint, the documents).
var snapshotOmits = map[string]bool{"/ok": true, "/info": true, "/metrics": true, "/docs": true, "/openapi.json": true}

// WatchRuns has Snapshot read the run queue with stats (one query).
func (m *Metrics) WatchRuns(stats func(ctx context.Context) (QueueStats, error)) {
	m.snap.mu.Lock()
	defer m.snap.mu.Unlock()
	m.snap.runs = stats
}

// WatchWorkers has Snapshot report max in-process workers, active of them
// busy as active says (no workers: max 0, left out).
func (m *Metrics) WatchWorkers(max int, active func(ctx context.Context) (int64, error)) {
	m.snap.mu.Lock()
	defer m.snap.mu.Unlock()
	m.snap.workersMax, m.snap.workersActive = max, active
}

// snapshotSources are what Snapshot reads besides the registry.
type snapshotSources struct {
	mu            sync.Mutex
	pool          *pgxpool.Pool
	runs          func(ctx context.Context) (QueueStats, error)
	workersMax    int
	workersActive func(ctx context.Context) (int64, error)
}

// Snapshot reads the JSON metrics now: the pool's statistics, the queue
// and the workers from the database (a query each), the HTTP request
// counts from the registry.
func (m *Metrics) Snapshot(ctx context.Context) (*Snapshot, error) {
	out := &Snapshot{API: APIStats{HTTPRequestsTotal: []HTTPCount{}}}
	if m == nil {
		return out, nil
	}
	m.snap.mu.Lock()
	pool, runs, workersMax, workersActive := m.snap.pool, m.snap.runs, m.snap.workersMax, m.snap.workersActive
	m.snap.mu.Unlock()
	if pool != nil {
		s := pool.Stat()
		out.Postgres = &PoolStats{PoolMax: s.MaxConns(), PoolSize: s.TotalConns(), PoolAvailable: s.IdleConns()}
	}
	if runs != nil {
		q, err := runs(ctx)
		if err != nil {
			return nil, fmt.Errorf("metrics: run queue: %w", err)
		}
		out.Queue = &q
	}
	if workersMax > 0 && workersActive != nil {
		n, err := workersActive(ctx)
		if err != nil {
			return nil, fmt.Errorf("metrics: workers: %w", err)
		}
		out.Workers = &WorkerStats{Max: int64(workersMax), Active: n, Available: max(0, int64(workersMax)-n)}
	}
	families, err := m.reg.Gather()
	if err != nil {
		return nil, fmt.Errorf("metrics: gather: %w", err)
	}
	for _, f := range families {
		if f.GetName() != "weft_http_requests_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			var c HTTPCount
			for _, l := range s.GetLabel() {
				switch l.GetName() {
				case "method":
					c.Method = l.GetValue()
				case "route":
					c.Path = l.GetValue()
				case "status":
					c.Status, _ = strconv.Atoi(l.GetValue())
				}
			}
			if snapshotOmits[c.Path] {
				continue
			}
			c.Count = int64(s.GetCounter().GetValue())
			out.API.HTTPRequestsTotal = append(out.API.HTTPRequestsTotal, c)
		}
	}
	sort.Slice(out.API.HTTPRequestsTotal, func(i, j int) bool {
		a, b := out.API.HTTPRequestsTotal[i], out.API.HTTPRequestsTotal[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Method != b.Method {
			return a.Method < b.Method
		}
		return a.Status < b.Status
	})
	return out, nil
}
