package runs

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/assistants"
	"github.com/weftdev/weft/internal/dispatch"
	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/threads"
)

// Config tunes runs and their dispatch.
type Config struct {
	// Workers is the size of the in-process worker pool (0: none; runs
	// then wait for external workers).
	Workers int
	// Lease is how long a claim lasts without a heartbeat or commit.
	Lease time.Duration
	// ReapInterval is how often this replica looks for expired leases.
	ReapInterval time.Duration
	// PollInterval is the fallback claim poll when no notification came.
	PollInterval time.Duration
	// MaxAttempts is how many claims a run gets before it is dead-lettered.
	MaxAttempts int
	// TempRetention is how long a stateless run's temporary thread is kept
	// after the run ended when nobody waited for it.
	TempRetention time.Duration
	// WorkerID names this process's workers in claims ("" → generated).
	WorkerID string
	// StreamHeartbeat is how often an idle stream sends a comment line
	// (default 5 s, the Agent Server's cadence).
	StreamHeartbeat time.Duration
	// SelfURL is this server's own base URL ("http://127.0.0.1:8123"): a
	// webhook that is a path ("/hooks/done") is POSTed there.
	SelfURL string
	// WebhookAllowPrivate lets webhooks reach loopback, private,
	// link-local, unspecified and multicast addresses (default false: such
	// a delivery fails at once; a path on this server is always allowed).
	WebhookAllowPrivate bool
	// WebhookBackoff is the delay after a webhook's first failed attempt,
	// doubled after each further one (with jitter, capped at 5 min);
	// default 1 s.
	WebhookBackoff time.Duration
	// WebhookTimeout limits one webhook POST (default 10 s).
	WebhookTimeout time.Duration
}

func (c *Config) defaults() {
	if c.Lease <= 0 {
		c.Lease = 30 * time.Second
	}
	if c.ReapInterval <= 0 {
		c.ReapInterval = min(c.Lease/2, 5*time.Second)
	}
	if c.PollInterval <= 0 {
		c.PollInterval = time.Second
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = dispatch.DefaultMaxAttempts
	}
	if c.StreamHeartbeat <= 0 {
		c.StreamHeartbeat = 5 * time.Second
	}
	if c.WebhookBackoff <= 0 {
		c.WebhookBackoff = time.Second
	}
	if c.WebhookTimeout <= 0 {
		c.WebhookTimeout = 10 * time.Second
	}
	if c.TempRetention <= 0 {
		c.TempRetention = time.Minute
	}
	if c.WorkerID == "" {
		c.WorkerID = "weft-" + uuid.NewString()[:8]
	}
}

// Service runs graphs: run records and their lifecycle, the commit
// coordinator, the reaper and the in-process worker pool.
type Service struct {
	db         *pgxpool.Pool
	graphs     *graph.Registry
	assistants *assistants.Store
	threads    *threads.Store
	log        *slog.Logger
	cfg        Config

	ends   *hub // run id → waiters of its end
	events *hub // run id → streams waiting for its next events
	// draining is closed when the server shuts down: streams end.
	draining     chan struct{}
	drainingOnce sync.Once
	wake         chan struct{}
	cancels      sync.Map // dispatch id → context.CancelCauseFunc of its in-process execution
	// claims remembers the run, thread and graph of dispatches claimed
	// through the worker API, for their commits' one-round-trip path.
	claims claimCache
	// outage logs a database outage once for all background loops (not
	// once per worker and tick); they keep polling at their usual pace and
	// resume by themselves when it ends.
	outage *postgres.Outage
}

// NewService returns a Service; Start runs its background work.
func NewService(db *pgxpool.Pool, graphs *graph.Registry, as *assistants.Store, ts *threads.Store, log *slog.Logger, cfg Config) *Service {
	cfg.defaults()
	return &Service{db: db, graphs: graphs, assistants: as, threads: ts, log: log, cfg: cfg,
		ends: newHub(), events: newHub(), draining: make(chan struct{}), wake: make(chan struct{}, max(cfg.Workers, 1)),
		outage: &postgres.Outage{Log: log, What: "run workers, reaper and webhook delivery"}}
}

// Start subscribes to l (which the caller runs) and starts the reaper and
// the in-process workers; they stop when ctx is cancelled, and Start's
// returned wait function blocks until they have.
func (s *Service) Start(ctx context.Context, l *postgres.Listener) (wait func()) {
	l.Subscribe(dispatch.ChannelDispatch, func(string) { s.wakeWorkers(1) })
	l.Subscribe(dispatch.ChannelCancel, func(p string) {
		if id, err := uuid.Parse(p); err == nil {
			if c, ok := s.cancels.Load(id); ok {
				c.(context.CancelCauseFunc)(errCancelRequested)
			}
		}
	})
	l.Subscribe(channelRunEnd, func(p string) {
		if id, err := uuid.Parse(p); err == nil {
			s.ends.fire(id)
			s.events.fire(id)
		}
	})
	l.Subscribe(channelRunEvent, func(p string) {
		for _, f := range strings.Fields(p) { // the run's streams and the thread's
			if id, err := uuid.Parse(f); err == nil {
				s.events.fire(id)
			}
		}
	})
	l.OnConnect(func() { s.wakeWorkers(s.cfg.Workers); s.ends.fireAll(); s.events.fireAll() })
	var wg sync.WaitGroup
	wg.Go(func() { s.reapLoop(ctx) })
	wg.Go(func() { s.webhookLoop(ctx) })
	for i := range s.cfg.Workers {
		wg.Go(func() { s.workerLoop(ctx, i) })
	}
	return wg.Wait
}

func (s *Service) wakeWorkers(n int) {
	s.events.fire(queueGrew) // long-polling external workers (ClaimWait)
	for range max(n, 1) {
		select {
		case s.wake <- struct{}{}:
		default:
			return
		}
	}
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
			s.wakeWorkers(n)
		}
	}
}

// Get returns run runID of thread threadID (uuid.Nil: any thread).
func (s *Service) Get(ctx context.Context, threadID, runID uuid.UUID) (*Run, error) {
	run, err := collectRun(s.db.Query(ctx, `SELECT `+runColumns+` FROM runs WHERE run_id = $1
		AND ($2::uuid IS NULL OR thread_id = $2)`, runID, nilUUID(threadID)))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, apperr.Errorf(apperr.NotFound, "Run %s not found", runID)
	}
	return run, err
}

func nilUUID(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}

// List calls fn with a thread's runs, newest first, one row at a time (so
// a page never holds more than the caller keeps), until fn returns false.
func (s *Service) List(ctx context.Context, threadID uuid.UUID, status string, limit, offset int, fn func(*Run) (bool, error)) error {
	var exists bool
	if err := s.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM threads WHERE thread_id = $1)`, threadID).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		return apperr.Errorf(apperr.NotFound, "Thread %s not found", threadID)
	}
	rows, err := s.db.Query(ctx, `SELECT `+runColumns+` FROM runs WHERE thread_id = $1 AND ($2 = '' OR status = $2)
		ORDER BY created_at DESC, run_id DESC LIMIT $3 OFFSET $4`, threadID, status, limit, offset)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		run, err := pgx.RowToStructByName[Run](rows)
		if err != nil {
			return err
		}
		if more, err := fn(&run); err != nil || !more {
			return err
		}
	}
	return rows.Err()
}

// Delete deletes a finished run (its events and dispatch history go with
// it; the checkpoints it wrote stay in the thread's history). 409 while it
// is pending or running.
func (s *Service) Delete(ctx context.Context, threadID, runID uuid.UUID) error {
	var status Status
	err := s.db.QueryRow(ctx, `
		WITH r AS (SELECT status FROM runs WHERE run_id = $1 AND thread_id = $2),
		     d AS (DELETE FROM runs WHERE run_id = $1 AND thread_id = $2 AND status NOT IN ('pending', 'running'))
		SELECT status FROM r`, runID, threadID).Scan(&status)
	if errors.Is(err, pgx.ErrNoRows) {
		return apperr.Errorf(apperr.NotFound, "Run %s not found in thread %s", runID, threadID)
	}
	if err != nil {
		return err
	}
	if status == StatusPending || status == StatusRunning {
		return apperr.Errorf(apperr.Conflict, "Run %s is %s: cancel it first", runID, status)
	}
	return nil
}

// Cancel cancels a run with action (interrupt or rollback). A pending run
// ends at once (interrupted, or deleted on rollback); a running one is
// told to stop at its next step boundary. Cancelling a finished run does
// nothing. It reports whether the run was running (still ending).
func (s *Service) Cancel(ctx context.Context, threadID, runID uuid.UUID, action string) (bool, error) {
	running := false
	err := postgres.WithTx(ctx, s.db, func(tx pgx.Tx) error {
		running = false
		if _, err := tx.Exec(ctx, `SELECT 1 FROM threads WHERE thread_id = $1 FOR UPDATE`, threadID); err != nil {
			return err
		}
		var status Status
		var graphID string
		err := tx.QueryRow(ctx, `SELECT status, graph_id FROM runs WHERE run_id = $1 AND thread_id = $2 FOR UPDATE`,
			runID, threadID).Scan(&status, &graphID)
		if errors.Is(err, pgx.ErrNoRows) {
			return apperr.Errorf(apperr.NotFound, "Run %s not found in thread %s", runID, threadID)
		}
		if err != nil {
			return err
		}
		switch status {
		case StatusPending:
			ids, err := dispatch.DispatchCancelQueued(ctx, tx, []uuid.UUID{runID}, false)
			if err != nil {
				return err
			}
			if len(ids) == 0 {
				// Claimed a moment ago: stop it like a running one.
				running, err = dispatch.DispatchRequestCancel(ctx, tx, runID, action)
				return err
			}
			if err := s.endQueuedRuns(ctx, tx, ids, action); err != nil {
				return err
			}
			return s.projectThread(ctx, tx, threadID, graphID, nil)
		case StatusRunning:
			running, err = dispatch.DispatchRequestCancel(ctx, tx, runID, action)
			return err
		}
		return nil
	})
	return running, err
}

// CancelMany cancels runs by id (on one thread) or every run with a status
// ("pending", "running" or "all"), and returns how many it found.
func (s *Service) CancelMany(ctx context.Context, threadID uuid.UUID, runIDs []uuid.UUID, status, action string) (int, error) {
	type ref struct {
		ThreadID uuid.UUID `db:"thread_id"`
		RunID    uuid.UUID `db:"run_id"`
	}
	rows, err := s.db.Query(ctx, `SELECT thread_id, run_id FROM runs
		WHERE (cardinality($1::uuid[]) = 0 OR (run_id = ANY($1) AND thread_id = $2))
		  AND ($3 = '' OR ($3 = 'all' AND status IN ('pending', 'running')) OR status = $3)
		  AND status IN ('pending', 'running')`, runIDs, threadID, status)
	if err != nil {
		return 0, err
	}
	refs, err := pgx.CollectRows(rows, pgx.RowToStructByName[ref])
	if err != nil {
		return 0, err
	}
	for _, r := range refs {
		if _, err := s.Cancel(ctx, r.ThreadID, r.RunID, action); err != nil && apperr.CodeOf(err) != apperr.NotFound {
			return 0, err
		}
	}
	return len(refs), nil
}

// Join waits until the run ends (or ctx is done) and returns it. A run
// deleted by a rollback is a 404. While the database is unavailable it
// keeps polling (the run resumes, or is requeued, once it is back): a
// waiting client has its 200 already and would otherwise get an error for
// a run that still finishes.
func (s *Service) Join(ctx context.Context, threadID, runID uuid.UUID) (*Run, error) {
	ch := s.ends.subscribe(runID)
	defer s.ends.unsubscribe(runID, ch)
	poll := time.NewTicker(s.cfg.PollInterval)
	defer poll.Stop()
	for {
		run, err := s.Get(ctx, threadID, runID)
		if err != nil && !postgres.IsUnavailable(err) || err == nil && run.finished() {
			return run, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ch:
		case <-poll.C:
		}
	}
}

// Result is the body of wait and join (reference §7.1): the run's final
// values, {"__error__": …} for a failed run, or the thread's values when
// the run recorded none.
func (s *Service) Result(ctx context.Context, run *Run) (json.RawMessage, error) {
	if len(run.Result) > 0 {
		return run.Result, nil
	}
	var status string
	var values, thErr json.RawMessage
	err := s.db.QueryRow(ctx, `SELECT status, "values", error FROM threads WHERE thread_id = $1`, run.ThreadID).
		Scan(&status, &values, &thErr)
	if errors.Is(err, pgx.ErrNoRows) {
		return json.RawMessage(`{}`), nil
	}
	if err != nil {
		return nil, err
	}
	if status == "error" && len(thErr) > 0 {
		return mustJSON(map[string]any{"__error__": thErr}), nil
	}
	if len(values) == 0 || string(values) == "null" {
		return json.RawMessage(`{}`), nil
	}
	return values, nil
}

// hub lets goroutines wait for a run's end notification.
type hub struct {
	mu   sync.Mutex
	subs map[uuid.UUID]map[chan struct{}]bool
}

func newHub() *hub { return &hub{subs: map[uuid.UUID]map[chan struct{}]bool{}} }

func (h *hub) subscribe(id uuid.UUID) chan struct{} {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs[id] == nil {
		h.subs[id] = map[chan struct{}]bool{}
	}
	h.subs[id][ch] = true
	return ch
}

func (h *hub) unsubscribe(id uuid.UUID, ch chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs[id], ch)
	if len(h.subs[id]) == 0 {
		delete(h.subs, id)
	}
}

func (h *hub) fire(id uuid.UUID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[id] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (h *hub) fireAll() {
	h.mu.Lock()
	ids := make([]uuid.UUID, 0, len(h.subs))
	for id := range h.subs {
		ids = append(ids, id)
	}
	h.mu.Unlock()
	for _, id := range ids {
		h.fire(id)
	}
}

// Retry requeues a dead-lettered dispatch; its run becomes pending and its
// thread busy again.
func (s *Service) Retry(ctx context.Context, id uuid.UUID) (*dispatch.Dispatch, error) {
	var d *dispatch.Dispatch
	err := postgres.WithTx(ctx, s.db, func(tx pgx.Tx) error {
		var err error
		if d, err = dispatch.DispatchRetry(ctx, tx, id); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `WITH r AS (
				UPDATE runs SET status = 'pending', error = NULL, result = NULL, finished_at = NULL, updated_at = now()
				WHERE run_id = $1
			)
			UPDATE threads SET status = 'busy', error = NULL, updated_at = now() WHERE thread_id = $2`, d.RunID, d.ThreadID)
		return err
	})
	return d, err
}

// NotifyChannels are the channels a Listener must hold for Start.
func NotifyChannels() []string {
	return []string{dispatch.ChannelDispatch, dispatch.ChannelCancel, channelRunEnd, channelRunEvent}
}

// StopThreads tells the workers of the runs executing on threads that are
// being deleted to stop (their dispatches go with the thread, so any later
// commit of theirs is fenced). It runs in the deleting transaction.
func StopThreads(ctx context.Context, tx pgx.Tx, threadIDs []uuid.UUID) error {
	_, err := tx.Exec(ctx, `SELECT pg_notify('`+dispatch.ChannelCancel+`', dispatch_id::text)
		FROM run_dispatches WHERE thread_id = ANY($1) AND state = 'claimed'`, threadIDs)
	return err
}

// BeginShutdown ends every open stream of this process (their clients
// resume on another replica, or this one once it is back, with
// Last-Event-ID); runs and waits are not affected.
func (s *Service) BeginShutdown() { s.drainingOnce.Do(func() { close(s.draining) }) }
