package coordinator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/dispatch"
	"github.com/weftdev/weft/internal/metrics"
	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/runs"
	"github.com/weftdev/weft/internal/threads"
	"github.com/weftdev/weft/internal/wire"
)

// Heartbeat renews a claim's lease and returns the new expiry and the
// cancellation requested for its run.
func (s *Service) Heartbeat(ctx context.Context, dispatchID, token uuid.UUID) (time.Time, string, error) {
	exp, cancel, err := dispatch.RenewLease(ctx, s.db, dispatchID, token, s.cfg.Lease)
	if errors.Is(err, dispatch.ErrFenced) {
		s.cfg.Metrics.Fenced(metrics.OpHeartbeat)
	}
	return exp, cancel, err
}

// recordFenced counts a refused commit or nack on the attempt whose claim
// token it presented (the attempts view shows it). The refusal stands
// whether or not the count is stored: a failure is logged, not returned.
func (s *Service) recordFenced(ctx context.Context, dispatchID, token uuid.UUID) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := dispatch.RecordFenced(ctx, s.db, dispatchID, token); err != nil {
		s.log.Warn("counting a fenced call", "dispatch_id", dispatchID, "error", err)
	}
}

// Nack gives a claimed dispatch back after a failure that a retry may cure:
// it is queued again after a backoff (its run pending again), or
// dead-lettered at its last attempt (its run error).
func (s *Service) Nack(ctx context.Context, dispatchID, token uuid.UUID, errText string) (dispatch.State, error) {
	var state dispatch.State
	var ended *runEnd
	err := postgres.WithTx(ctx, s.db, func(tx pgx.Tx) error {
		var threadID uuid.UUID
		err := tx.QueryRow(ctx, `SELECT thread_id FROM run_dispatches WHERE dispatch_id = $1`, dispatchID).Scan(&threadID)
		if err == nil {
			_, err = tx.Exec(ctx, `SELECT 1 FROM threads WHERE thread_id = $1 FOR UPDATE`, threadID)
		}
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		d, err := dispatch.Fence(ctx, tx, dispatchID, token)
		if err != nil {
			return err
		}
		state, ended, err = s.requeue(ctx, tx, d, "nacked", errText)
		return err
	})
	switch {
	case errors.Is(err, dispatch.ErrFenced):
		s.cfg.Metrics.Fenced(metrics.OpNack)
		s.recordFenced(ctx, dispatchID, token)
	case err == nil:
		s.countRequeue(state, ended)
	}
	return state, err
}

// countRequeue counts what a committed requeue did: a dead letter, a run
// ended.
func (s *Service) countRequeue(state dispatch.State, ended *runEnd) {
	if state == dispatch.DeadLetter {
		s.cfg.Metrics.DeadLettered()
	}
	if ended != nil {
		s.cfg.Metrics.RunEnded(ended.outcome, ended.seconds)
	}
}

// requeue ends the attempt of claimed dispatch d (locked; thread locked)
// and queues it again, or dead-letters it (run error) at its last attempt.
// A dispatch whose run was asked to stop ends as cancelled instead. It
// returns the dispatch's new state and, when its run ended, how.
func (s *Service) requeue(ctx context.Context, tx pgx.Tx, d *dispatch.Dispatch, outcome, errText string) (dispatch.State, *runEnd, error) {
	if d.CancelAction != nil {
		ended, err := s.endRun(ctx, tx, d, wire.End{Status: runs.StatusInterrupted}, nil, *d.CancelAction, dispatch.Cancelled, outcome, errText)
		return dispatch.Cancelled, ended, err
	}
	if d.Attempt >= d.MaxAttempts {
		msg := fmt.Sprintf("Run dead-lettered after %d attempts: %s", d.Attempt, errText)
		end := wire.End{Status: runs.StatusError, Error: map[string]any{"error": "DeadLetter", "message": msg}}
		ended, err := s.endRun(ctx, tx, d, end, nil, "", dispatch.DeadLetter, outcome, errText)
		return dispatch.DeadLetter, ended, err
	}
	state, err := dispatch.Requeue(ctx, tx, d, outcome, errText)
	if err != nil {
		return "", nil, err
	}
	_, err = tx.Exec(ctx, `UPDATE runs SET status = 'pending', updated_at = now() WHERE run_id = $1`, d.RunID)
	return state, nil, err
}

// Reap handles claims whose lease expired (their worker died or hung):
// each is requeued with backoff, dead-lettered at its last attempt, or, when
// its run was being cancelled, ended as cancelled. Safe on every replica at
// once (SKIP LOCKED). It also deletes the temporary threads of stateless
// runs that ended more than TempRetention ago. It returns how many claims
// it handled.
func (s *Service) Reap(ctx context.Context) (int, error) {
	n := 0
	type requeued struct {
		state dispatch.State
		ended *runEnd
	}
	var done []requeued
	err := postgres.WithTx(ctx, s.db, func(tx pgx.Tx) error {
		n, done = 0, done[:0]
		expired, err := dispatch.Expired(ctx, tx, 100)
		if err != nil {
			return err
		}
		for i := range expired {
			d := &expired[i]
			if _, err := tx.Exec(ctx, `SELECT 1 FROM threads WHERE thread_id = $1 FOR UPDATE`, d.ThreadID); err != nil {
				return err
			}
			state, ended, err := s.requeue(ctx, tx, d, "lease_expired", "lease expired (worker "+deref(d.ClaimedBy)+" stopped renewing it)")
			if err != nil {
				return err
			}
			done = append(done, requeued{state, ended})
			n++
		}
		return nil
	})
	if err != nil {
		return n, err
	}
	s.cfg.Metrics.LeasesExpired(n)
	for _, r := range done {
		s.countRequeue(r.state, r.ended)
	}
	return n, s.sweepTemporary(ctx, s.cfg.TempRetention)
}

// sweepTemporary deletes the temporary threads (with their checkpoints) of
// stateless runs that ended more than olderThan ago.
func (s *Service) sweepTemporary(ctx context.Context, olderThan time.Duration) error {
	// A thread whose run still has a webhook to deliver waits for it.
	rows, err := s.db.Query(ctx, `SELECT DISTINCT r.thread_id, r.tenant_id FROM runs r
		WHERE r.temporary AND r.finished_at < now() - $1::interval
		  AND NOT EXISTS (SELECT 1 FROM runs p WHERE p.thread_id = r.thread_id AND p.webhook_state = 'pending')
		LIMIT 100`, olderThan)
	if err != nil {
		return err
	}
	type temp struct {
		ThreadID uuid.UUID `db:"thread_id"`
		TenantID string    `db:"tenant_id"`
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByName[temp])
	if err != nil {
		return err
	}
	for _, t := range list {
		// The sweep serves every tenant: each thread is deleted as its own.
		if _, err := s.threads.Delete(auth.WithTenant(ctx, t.TenantID), t.ThreadID, threads.DeleteDetach); err != nil && apperr.CodeOf(err) != apperr.NotFound {
			return err
		}
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
