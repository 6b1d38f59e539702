package stream

import (
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftdev/weft/internal/eventlog"
	"github.com/weftdev/weft/internal/metrics"
	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/runs"
)

// Config tunes streams.
type Config struct {
	// StreamHeartbeat is how often an idle stream sends a comment line
	// (default 5 s, the Agent Server's cadence).
	StreamHeartbeat time.Duration
	// PollInterval is how often a stream re-reads its log when no
	// notification came (default 1 s).
	PollInterval time.Duration
	// Metrics count open streams and events sent (nil: not counted).
	Metrics *metrics.Metrics
	// Renderer renders events stored as checkpoint references (nil: one
	// of the default cache size).
	Renderer *eventlog.Renderer
}

// Service serves the streams of runs and threads from the durable event
// log.
type Service struct {
	db   *pgxpool.Pool
	runs *runs.Service
	log  *slog.Logger
	cfg  Config

	// render renders events stored as checkpoint references (shared by
	// every stream of this process, with its cache).
	render *eventlog.Renderer
	events *postgres.Hub // run or thread id → streams waiting for its next events
	// draining is closed when the server shuts down: streams end.
	draining     chan struct{}
	drainingOnce sync.Once
}

// NewService returns a Service; Start subscribes it to the event log's
// notifications.
func NewService(db *pgxpool.Pool, rs *runs.Service, log *slog.Logger, cfg Config) *Service {
	if cfg.StreamHeartbeat <= 0 {
		cfg.StreamHeartbeat = 5 * time.Second
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.Renderer == nil {
		cfg.Renderer = eventlog.NewRenderer(0)
	}
	return &Service{db: db, runs: rs, log: log, cfg: cfg, render: cfg.Renderer, events: postgres.NewHub(), draining: make(chan struct{})}
}

// Start wakes the streams of a run and of its thread on the notifications
// of l (which the caller runs): a run's log grew or the run ended; all of
// them when l reconnects.
func (s *Service) Start(l *postgres.Listener) {
	l.Subscribe(runs.ChannelRunEnd, func(p string) {
		if id, err := uuid.Parse(p); err == nil {
			s.events.Fire(id)
		}
	})
	l.Subscribe(runs.ChannelRunEvent, func(p string) {
		for _, f := range strings.Fields(p) { // the run's streams and the thread's
			if id, err := uuid.Parse(f); err == nil {
				s.events.Fire(id)
			}
		}
	})
	l.OnConnect(s.events.FireAll)
}

// BeginShutdown ends every open stream of this process (their clients
// resume on another replica, or this one once it is back, with
// Last-Event-ID); runs and waits are not affected.
func (s *Service) BeginShutdown() { s.drainingOnce.Do(func() { close(s.draining) }) }

// Handlers serves the stream routes.
type Handlers struct{ svc *Service }

// NewHandlers returns the stream handlers.
func NewHandlers(svc *Service) *Handlers { return &Handlers{svc: svc} }

// Wake returns a channel that receives a signal whenever the event log of
// run runID grows, the run ends, or the listener reconnects (a signal may
// stand for several), and stop, which releases it. It is for packages that
// follow a run's events outside an SSE route of this one (A2A streaming):
// they read with EventsAfter when woken, with a poll of their own as
// fallback.
func (s *Service) Wake(runID uuid.UUID) (wake <-chan struct{}, stop func()) {
	ch := s.events.Subscribe(runID)
	return ch, func() { s.events.Unsubscribe(runID, ch) }
}
