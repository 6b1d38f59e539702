package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/assistants"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/crypt"
	"github.com/weftdev/weft/internal/dispatch"
	"github.com/weftdev/weft/internal/eventlog"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/threads"
	"github.com/weftdev/weft/internal/webhook"
)

// NOTIFY channels of runs, sent inside the transactions that change what
// they announce.
const (
	// ChannelRunEnd announces that a run ended or was deleted (payload:
	// the run id): waits and joins re-read it.
	ChannelRunEnd = "weft_run_end"
	// ChannelRunEvent announces that a run's event log grew (payload:
	// "<run id> <thread id>"): streams of the run and of its thread read on.
	ChannelRunEvent = "weft_run_event"
)

// Config tunes run records.
type Config struct {
	// MaxAttempts is how many claims a run gets before it is dead-lettered.
	MaxAttempts int
	// PollInterval is how often a wait re-reads its run when no
	// notification came (the fallback of the run-end notification).
	PollInterval time.Duration
	// Headers says which request headers join a run's configurable.
	Headers HeaderPolicy
	// Webhooks is langgraph.json's webhooks policy (weft dev; nil: none):
	// a run's or cron's webhook it refuses is a 422.
	Webhooks *webhook.Policy
}

func (c *Config) defaults() {
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = dispatch.DefaultMaxAttempts
	}
	if c.PollInterval <= 0 {
		c.PollInterval = time.Second
	}
}

// Service keeps run records: creation (validation, multitask strategies),
// cancellation, reads, deletion, waiting for a run's end.
type Service struct {
	db         *pgxpool.Pool
	graphs     *graph.Registry
	assistants *assistants.Store
	threads    *threads.Store
	log        *slog.Logger
	cfg        Config

	ends *postgres.Hub // run id → waiters of its end
	// deletes are the deletions of temporary threads started after their
	// run's result was delivered (DeleteTemporaryLater); Wait waits for them.
	deletes sync.WaitGroup
}

// NewService returns a Service; Start subscribes it to run ends.
func NewService(db *pgxpool.Pool, graphs *graph.Registry, as *assistants.Store, ts *threads.Store, log *slog.Logger, cfg Config) *Service {
	cfg.defaults()
	return &Service{db: db, graphs: graphs, assistants: as, threads: ts, log: log, cfg: cfg, ends: postgres.NewHub()}
}

// Start wakes waits on the run-end notifications of l (which the caller
// runs), and all of them when l reconnects.
func (s *Service) Start(l *postgres.Listener) {
	l.Subscribe(ChannelRunEnd, func(p string) {
		if id, err := uuid.Parse(p); err == nil {
			s.ends.Fire(id)
		}
	})
	l.OnConnect(s.ends.FireAll)
}

// Log is the service's logger, for the packages that serve runs over HTTP.
func (s *Service) Log() *slog.Logger { return s.log }

// Get returns run runID of thread threadID (uuid.Nil: any thread).
func (s *Service) Get(ctx context.Context, threadID, runID uuid.UUID) (*Run, error) {
	run, err := collectRun(s.db.Query(ctx, `SELECT `+Columns+` FROM runs WHERE run_id = $1
		AND ($2::uuid IS NULL OR thread_id = $2) AND tenant_id = $3`, runID, nilUUID(threadID), auth.Tenant(ctx)))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, apperr.Errorf(apperr.NotFound, "Run %s not found", runID)
	}
	if err != nil {
		return nil, err
	}
	return run, Open(ctx, run)
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
	tenant := auth.Tenant(ctx)
	if err := s.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM threads WHERE thread_id = $1 AND tenant_id = $2)`,
		threadID, tenant).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		return apperr.Errorf(apperr.NotFound, "Thread with ID %s not found", threadID)
	}
	rows, err := s.db.Query(ctx, `SELECT `+Columns+` FROM runs WHERE thread_id = $1 AND ($2 = '' OR status = $2)
		AND tenant_id = $5 ORDER BY created_at DESC, run_id DESC LIMIT $3 OFFSET $4`, threadID, status, limit, offset, tenant)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		run, err := pgx.RowToStructByName[Run](rows)
		if err == nil {
			err = Open(ctx, &run)
		}
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
		WITH r AS (SELECT status FROM runs WHERE run_id = $1 AND thread_id = $2 AND tenant_id = $3),
		     d AS (DELETE FROM runs WHERE run_id = $1 AND thread_id = $2 AND tenant_id = $3 AND status NOT IN ('pending', 'running'))
		SELECT status FROM r`, runID, threadID, auth.Tenant(ctx)).Scan(&status)
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
		// NO KEY UPDATE, not UPDATE: a commit of this run holds its
		// dispatch and then inserts run_events, whose foreign key checks
		// take KEY SHARE on the run and thread rows. FOR UPDATE would block
		// those checks while this transaction waits for the dispatch: a
		// deadlock (found by the chaos soak). NO KEY UPDATE still
		// serialises with every other writer of these rows.
		tenant := auth.Tenant(ctx)
		if _, err := tx.Exec(ctx, `SELECT 1 FROM threads WHERE thread_id = $1 AND tenant_id = $2 FOR NO KEY UPDATE`,
			threadID, tenant); err != nil {
			return err
		}
		var status Status
		var graphID string
		err := tx.QueryRow(ctx, `SELECT status, graph_id FROM runs WHERE run_id = $1 AND thread_id = $2 AND tenant_id = $3
			FOR NO KEY UPDATE`, runID, threadID, tenant).Scan(&status, &graphID)
		if errors.Is(err, pgx.ErrNoRows) {
			return apperr.Errorf(apperr.NotFound, "Run %s not found in thread %s", runID, threadID)
		}
		if err != nil {
			return err
		}
		switch status {
		case StatusPending:
			ids, err := dispatch.CancelQueued(ctx, tx, []uuid.UUID{runID}, false)
			if err != nil {
				return err
			}
			if len(ids) == 0 {
				// Claimed a moment ago: stop it like a running one.
				running, err = dispatch.RequestCancel(ctx, tx, runID, action)
				return err
			}
			if err := s.endQueuedRuns(ctx, tx, ids, action); err != nil {
				return err
			}
			return s.threads.ProjectLatest(ctx, tx, threadID, threads.GraphLookup{Compiled: s.graphs, Worker: assistants.WorkerGraph}, graphID, nil)
		case StatusRunning:
			running, err = dispatch.RequestCancel(ctx, tx, runID, action)
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
		  AND status IN ('pending', 'running') AND tenant_id = $4`, runIDs, threadID, status, auth.Tenant(ctx))
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
	ch := s.ends.Subscribe(runID)
	defer s.ends.Unsubscribe(runID, ch)
	poll := time.NewTicker(s.cfg.PollInterval)
	defer poll.Stop()
	// The run's status (a row's few bytes) until it has ended, then the run
	// (its functions render metadata and kwargs); after the notification of
	// its end, the run at once. A run that is gone reads as Get says.
	whole := false
	for {
		if !whole {
			var status Status
			err := s.db.QueryRow(ctx, `SELECT status FROM runs WHERE run_id = $1
				AND ($2::uuid IS NULL OR thread_id = $2) AND tenant_id = $3`, runID, nilUUID(threadID), auth.Tenant(ctx)).Scan(&status)
			switch {
			case err == nil && status != StatusPending && status != StatusRunning, errors.Is(err, pgx.ErrNoRows):
				whole = true
			case err != nil && !postgres.IsUnavailable(err):
				return nil, err
			}
		}
		if whole {
			run, err := s.Get(ctx, threadID, runID)
			if err != nil && !postgres.IsUnavailable(err) || err == nil && run.Finished() {
				return run, err
			}
		}
		whole = false
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ch:
			whole = true
		case <-poll.C:
		}
	}
}

// Result is the body of wait and join (reference §7.1), compact JSON: the
// run's final values, {"__error__": …} for a failed run, or the thread's
// values when the run recorded none.
func (s *Service) Result(ctx context.Context, run *Run) (json.RawMessage, error) {
	if len(run.Result) > 0 {
		return eventlog.RenderResult(ctx, s.db, run.ThreadID, run.RunID, run.Result, run.ResultRef)
	}
	var status string
	var values, thErr json.RawMessage
	err := s.db.QueryRow(ctx, `SELECT status, `+threads.ValuesSQL+`, error FROM threads WHERE thread_id = $1 AND tenant_id = $2`,
		run.ThreadID, run.TenantID).
		Scan(&status, &values, &thErr)
	if errors.Is(err, pgx.ErrNoRows) {
		return json.RawMessage(`{}`), nil
	}
	if err != nil {
		return nil, err
	}
	if status == "error" && len(thErr) > 0 {
		return jsonv.Must(map[string]any{"__error__": thErr}), nil
	}
	if values, err = crypt.FromContext(ctx).OpenJSON(values); err != nil {
		return nil, fmt.Errorf("thread %s values: %w", run.ThreadID, err)
	}
	if len(values) == 0 || string(values) == "null" {
		return json.RawMessage(`{}`), nil
	}
	return jsonv.Compact(values), nil
}

// Retry requeues a dead-lettered dispatch; its run becomes pending and its
// thread busy again.
func (s *Service) Retry(ctx context.Context, id uuid.UUID) (*dispatch.Dispatch, error) {
	var d *dispatch.Dispatch
	err := postgres.WithTx(ctx, s.db, func(tx pgx.Tx) error {
		var err error
		if d, err = dispatch.Retry(ctx, tx, id); err != nil {
			return err
		}
		// The thread's row, then the run's, in one round trip: the order
		// in which one statement (WITH r AS (UPDATE runs …) UPDATE
		// threads …, the unreferenced CTE running last) locked them.
		p := &postgres.Pipeline{}
		if err := s.threads.SetBusy(ctx, p, d.ThreadID); err != nil {
			return err
		}
		p.Exec(ctx, `UPDATE runs SET status = 'pending', error = NULL, result = NULL, result_ref = NULL, finished_at = NULL, updated_at = now()
				WHERE run_id = $1`, d.RunID)
		return p.Send(ctx, tx)
	})
	return d, err
}

// StopThreads tells the workers of the runs executing on threads that are
// being deleted to stop (their dispatches go with the thread, so any later
// commit of theirs is fenced). It runs in the deleting transaction.
func StopThreads(ctx context.Context, tx pgx.Tx, threadIDs []uuid.UUID) error {
	_, err := tx.Exec(ctx, `SELECT pg_notify('`+dispatch.ChannelCancel+`', dispatch_id::text)
		FROM run_dispatches WHERE thread_id = ANY($1) AND state = 'claimed'`, threadIDs)
	return err
}

// DeleteTemporaryLater deletes a finished stateless run's thread once its
// result was delivered (run as read after its end, or before: then it is
// read again), unless the run still has a webhook to deliver (the
// reaper's sweep deletes it later). It returns at once: the answer that
// delivered the result does not wait for the deletion (a transaction of
// half a dozen statements). The deletion keeps ctx's values (the tenant),
// not its end; one that fails, or is cut short by the process's end, is
// logged and left to the sweep.
func (s *Service) DeleteTemporaryLater(ctx context.Context, run *Run) {
	ctx = context.WithoutCancel(ctx)
	s.deletes.Go(func() { s.deleteTemporary(ctx, run) })
}

// Wait waits for the deletions DeleteTemporaryLater started (at shutdown,
// before the database closes).
func (s *Service) Wait() { s.deletes.Wait() }

func (s *Service) deleteTemporary(ctx context.Context, run *Run) {
	// A run read after its end needs no second read: a finished run's
	// webhook state is pending from its end until delivered.
	if !run.Finished() {
		cur, err := s.Get(ctx, uuid.Nil, run.RunID)
		if err != nil {
			return
		}
		run = cur
	}
	if !run.Finished() || run.WebhookState != nil && *run.WebhookState == "pending" {
		return
	}
	if _, err := s.threads.Delete(ctx, run.ThreadID, threads.DeleteDetach); err != nil && apperr.CodeOf(err) != apperr.NotFound {
		s.log.Warn("delete temporary thread", "thread_id", run.ThreadID, "error", err)
	}
}

// CancelOnDisconnect cancels run (interrupt) when ctx, a client's request,
// is done before the returned function is called; a no-op unless enabled
// (on_disconnect: cancel). The returned function ends the watch: gone says
// the response ended because the client went away (a failed write can tell
// before ctx does), and then the run is cancelled at once.
func (s *Service) CancelOnDisconnect(ctx context.Context, run *Run, enabled bool) (done func(gone bool)) {
	if !enabled {
		return func(bool) {}
	}
	cancel := func() {
		// The request's context is done; its values (the keyring) still apply,
		// and the run's tenant.
		ctx, stop := context.WithTimeout(auth.WithTenant(context.WithoutCancel(ctx), run.TenantID), 10*time.Second)
		defer stop()
		if _, err := s.Cancel(ctx, run.ThreadID, run.RunID, ActionInterrupt); err != nil && apperr.CodeOf(err) != apperr.NotFound {
			s.log.Warn("cancel on disconnect", "run_id", run.RunID, "error", err)
		}
	}
	after := context.AfterFunc(ctx, cancel)
	return func(gone bool) {
		if after() && gone { // not cancelled yet: ctx is not done yet
			cancel()
		}
	}
}
