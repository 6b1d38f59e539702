package executor

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/trace"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/coordinator"
	"github.com/weftdev/weft/internal/dispatch"
	"github.com/weftdev/weft/internal/metrics"
	"github.com/weftdev/weft/internal/postgres"
)

// Config tunes the in-process pool.
type Config struct {
	// Workers is the size of the in-process worker pool (0: none; runs
	// then wait for external workers).
	Workers int
	// WorkerID names this process's workers in claims ("" → generated).
	WorkerID string
	// PollInterval is the fallback claim poll when no notification came.
	PollInterval time.Duration
	// Metrics count attempts stopped by a lost lease (nil: not counted).
	Metrics *metrics.Metrics
	// Tracer traces run attempts, supersteps and nodes (nil: tracing off).
	Tracer trace.Tracer
}

// Service is the in-process worker pool: it claims runs of the graphs
// compiled into the binary and executes them, committing through the
// coordinator.
type Service struct {
	db     *pgxpool.Pool
	graphs *graph.Registry
	coord  *coordinator.Service
	log    *slog.Logger
	cfg    Config

	wake    chan struct{}
	cancels sync.Map // dispatch id → context.CancelCauseFunc of its in-process execution
	// outage logs a database outage once for all workers (not once per
	// worker and tick); they keep polling at their usual pace and resume
	// by themselves when it ends.
	outage *postgres.Outage
}

// NewService returns the pool; Start runs its workers.
func NewService(db *pgxpool.Pool, graphs *graph.Registry, coord *coordinator.Service, log *slog.Logger, cfg Config) *Service {
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.WorkerID == "" {
		cfg.WorkerID = "weft-" + uuid.NewString()[:8]
	}
	return &Service{db: db, graphs: graphs, coord: coord, log: log, cfg: cfg, wake: make(chan struct{}, max(cfg.Workers, 1)),
		outage: &postgres.Outage{Log: log, What: "run workers"}}
}

// WorkerID is the name of this process's workers in claims.
func (s *Service) WorkerID() string { return s.cfg.WorkerID }

// Start subscribes to cancellation requests on l (which the caller runs),
// has the coordinator wake the pool when work arrives, and starts the
// workers; they stop when ctx is cancelled (their runs are given back),
// and the returned wait function blocks until they have.
func (s *Service) Start(ctx context.Context, l *postgres.Listener) (wait func()) {
	l.Subscribe(dispatch.ChannelCancel, func(p string) {
		if id, err := uuid.Parse(p); err == nil {
			if c, ok := s.cancels.Load(id); ok {
				c.(context.CancelCauseFunc)(ErrCancelRequested)
			}
		}
	})
	s.coord.OnWork(s.wakeWorkers)
	var wg sync.WaitGroup
	if len(s.graphs.IDs()) == 0 {
		// Nothing compiled in to run (a claim naming no graph would take
		// any): every run goes to external workers.
		return wg.Wait
	}
	for i := range s.cfg.Workers {
		wg.Go(func() { s.workerLoop(ctx, i) })
	}
	return wg.Wait
}

// wakeWorkers wakes up to n idle workers (all of them when n < 0) when
// work of graphID ("": any) may have been queued; a graph not compiled in
// wakes none (an external worker's run is not this pool's to claim).
func (s *Service) wakeWorkers(n int, graphID string) {
	if graphID != "" {
		if _, ok := s.graphs.Lookup(graphID); !ok {
			return
		}
	}
	if n < 0 {
		n = s.cfg.Workers
	}
	for range max(n, 1) {
		select {
		case s.wake <- struct{}{}:
		default:
			return
		}
	}
}

// workerLoop is one in-process worker: claim a run of a graph compiled into
// this binary, execute it through the commit coordinator, repeat; sleep on
// the queue's notifications (with a poll as fallback) when there is none.
func (s *Service) workerLoop(ctx context.Context, i int) {
	worker := s.cfg.WorkerID
	graphs := s.graphs.IDs()
	for ctx.Err() == nil {
		got, err := s.coord.Claim(ctx, worker, graphs, 1)
		switch {
		case err == nil:
			s.outage.Succeeded()
		case ctx.Err() != nil, s.outage.Failed(err):
			// Shutting down, or the database is away (logged once): poll
			// again at the usual pace; the listener's reconnect wakes us.
			got = nil
		default:
			s.log.Warn("claim failed", "worker", worker, "error", err)
			got = nil
		}
		if len(got) == 0 {
			select {
			case <-ctx.Done():
				return
			case <-s.wake:
			case <-time.After(s.cfg.PollInterval):
			}
			continue
		}
		// More work queued meanwhile woke other workers (each queued run
		// leaves a wake-up, kept while every worker is busy), and this one
		// claims again when its run is done: no claim on speculation.
		s.execute(ctx, got[0])
	}
}

// ErrCancelRequested is the cause with which a requested cancellation
// stops an execution (Attempt.Track): the run ends at its step boundary,
// interrupted, or rolled back by the coordinator.
var ErrCancelRequested = errors.New("run cancellation requested")

// Errors that end an execution early (context causes).
var (
	errLeaseLost = errors.New("lease lost")
	errShutdown  = errors.New("server shutting down")
)
