package coordinator

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/trace"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/assistants"
	"github.com/weftdev/weft/internal/dispatch"
	"github.com/weftdev/weft/internal/metrics"
	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/runs"
	"github.com/weftdev/weft/internal/threads"
)

// Config tunes the coordinator.
type Config struct {
	// Lease is how long a claim lasts without a heartbeat or commit.
	Lease time.Duration
	// ReapInterval is how often this replica looks for expired leases.
	ReapInterval time.Duration
	// TempRetention is how long a stateless run's temporary thread is kept
	// after the run ended when nobody waited for it.
	TempRetention time.Duration
	// Metrics count claims, commits, fences, expired leases, dead letters
	// and ended runs (nil: not counted).
	Metrics *metrics.Metrics
	// Tracer traces commits (nil: tracing off).
	Tracer trace.Tracer
	// Assistants caches the stand-ins of worker graphs the projections of
	// their runs' ends use (nil: a cache of the service's own).
	Assistants *assistants.Store
	// EventRefMinBytes is how many bytes of a checkpoint's values an event
	// must repeat to be stored as a reference to that checkpoint rather
	// than whole (eventlog.Options.MinBytes: 0 the default, < 0 never).
	EventRefMinBytes int
	// InputRefMinBytes is the size of a run's input from which its row
	// stores it by reference to its input checkpoint once that is
	// committed (runs.InputRefSet: 0 runs.InputRefMinBytes, < 0 never).
	InputRefMinBytes int
}

func (c *Config) defaults() {
	if c.Lease <= 0 {
		c.Lease = 30 * time.Second
	}
	if c.ReapInterval <= 0 {
		c.ReapInterval = min(c.Lease/2, 5*time.Second)
	}
	if c.TempRetention <= 0 {
		c.TempRetention = time.Minute
	}
	if c.InputRefMinBytes == 0 {
		c.InputRefMinBytes = runs.InputRefMinBytes
	}
}

// Service is the commit coordinator and the lifecycle of claimed runs:
// claims, commits, heartbeats, nacks and the reaper.
type Service struct {
	db      *pgxpool.Pool
	graphs  *graph.Registry
	threads *threads.Store
	log     *slog.Logger
	cfg     Config

	// queue wakes long-polling claims (ClaimWait) when work may have been
	// queued, and long-polling CancellationsWait on cancellation requests;
	// onWork are the in-process pools told of new work.
	queue  *postgres.Hub
	mu     sync.Mutex
	onWork []func(n int, graphID string)
	// drained: see ClaimWait.
	drained drainedClaims
	// claims remembers the run, thread and graph of dispatches claimed
	// through the worker API, for their commits' one-round-trip path.
	claims claimCache
	// outage logs a database outage of the reaper once, not once a tick.
	outage *postgres.Outage
}

// NewService returns a coordinator; Start runs its reaper.
func NewService(db *pgxpool.Pool, graphs *graph.Registry, ts *threads.Store, log *slog.Logger, cfg Config) *Service {
	cfg.defaults()
	if cfg.Assistants == nil {
		cfg.Assistants = assistants.NewStore(db)
	}
	return &Service{db: db, graphs: graphs, threads: ts, log: log, cfg: cfg, queue: postgres.NewHub(),
		outage: &postgres.Outage{Log: log, What: "reaper"}}
}

// Lease is the lease a claim gets (and a heartbeat renews).
func (s *Service) Lease() time.Duration { return s.cfg.Lease }

// OnWork registers fn to be called with a hint of how many dispatches may
// have become claimable and of which graph ("": any graph; a requeue by
// the reaper, a reconnect of the listener). fn must not block.
func (s *Service) OnWork(fn func(n int, graphID string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onWork = append(s.onWork, fn)
}

// Wake tells long-polling claims and the registered pools that up to n
// dispatches of any graph may have become claimable (all pools' workers
// when n < 0).
func (s *Service) Wake(n int) {
	s.drained.signal()
	s.queue.FireAll()
	s.wakePools(n, "")
}

// WakeGraph tells the long-polling claims that may take a run of graphID
// (those with no graph filter, and those naming it), and the registered
// pools, that a dispatch of graphID was queued. A claimer whose filter
// does not name the graph sleeps on: a run of a graph only a worker serves
// costs the in-process pool no claim, and the reverse.
func (s *Service) WakeGraph(graphID string) {
	if graphID == "" {
		s.Wake(1)
		return
	}
	s.drained.signal()
	s.queue.Fire(queueGrew)
	s.queue.Fire(graphKey(graphID))
	s.wakePools(1, graphID)
}

func (s *Service) wakePools(n int, graphID string) {
	s.mu.Lock()
	fns := s.onWork
	s.mu.Unlock()
	for _, fn := range fns {
		fn(n, graphID)
	}
}

// queueGrew is the queue hub's key of claims that take any graph: fired
// whenever work may have been queued, it wakes long-polling claims of
// external workers at once instead of at their next poll. Claims limited
// to some graphs wait on those graphs' keys (graphKey).
var queueGrew = uuid.Nil

// graphKeys is the name space of graphKey.
var graphKeys = uuid.MustParse("6c1f0e55-2f5e-4d0b-9a59-3f3b6f0c8a11")

// graphKey is the queue hub's key of claims that take runs of graphID.
func graphKey(graphID string) uuid.UUID { return uuid.NewSHA1(graphKeys, []byte(graphID)) }

// NotifyChannels are the channels a Listener must hold for the run
// packages: the queue's, the cancellation requests and the runs' own.
func NotifyChannels() []string {
	return []string{dispatch.ChannelDispatch, dispatch.ChannelCancel, runs.ChannelRunEnd, runs.ChannelRunEvent}
}

// Start subscribes to the queue's notifications on l (which the caller
// runs) and starts the reaper; it stops when ctx is cancelled, and the
// returned wait function blocks until it has.
func (s *Service) Start(ctx context.Context, l *postgres.Listener) (wait func()) {
	l.Subscribe(dispatch.ChannelDispatch, s.WakeGraph) // the payload is the graph id
	l.Subscribe(dispatch.ChannelCancel, func(string) { s.queue.Fire(cancelRequested) })
	l.OnConnect(func() { s.Wake(-1); s.queue.Fire(cancelRequested) })
	var wg sync.WaitGroup
	wg.Go(func() { s.reapLoop(ctx) })
	return wg.Wait
}

func (s *Service) reapLoop(ctx context.Context) {
	t := time.NewTicker(s.cfg.ReapInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := s.Reap(ctx)
		switch {
		case err == nil:
			s.outage.Succeeded()
		case ctx.Err() != nil, s.outage.Failed(err):
		default:
			s.log.Warn("reaper", "error", err)
		}
		if n > 0 {
			s.log.Info("reaper requeued expired claims", "count", n)
			s.Wake(n)
		}
	}
}
