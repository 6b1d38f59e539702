package crons

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/runs"
)

// Start runs this replica's scheduler until ctx ends: every Interval it
// fires the due crons (FireDue), and returns a function that waits for the
// loop to stop. Every replica runs one; they share the work through row
// locks. A database outage is logged once and the loop carries on when the
// database is back.
func (s *Service) Start(ctx context.Context) (wait func()) {
	var wg sync.WaitGroup
	wg.Go(func() {
		postgres.Every(ctx, s.cfg.Interval, s.log, "cron scheduler", func(ctx context.Context) (bool, error) {
			_, more, err := s.FireDue(ctx)
			return more, err
		})
	})
	return wg.Wait
}

// FireDue fires up to Batch due crons in one transaction: it claims them
// (CronClaimDue: rows locked, the ones other replicas hold skipped),
// creates each one's run through runs.CreateTx, and moves each one's
// next_run_date to its first tick after now; all of it commits together,
// or none of it does and the ticks stay due. It returns how many crons it
// handled and whether a full batch was claimed (more may be due).
//
// A run that cannot be created for a reason that will not pass by
// retrying (a client error: the thread is busy and the strategy is
// reject, the assistant's graph no longer accepts the input, …) skips
// that tick, logged as a warning; the cron fires again at its next one.
func (s *Service) FireDue(ctx context.Context) (n int, more bool, err error) {
	err = postgres.WithTx(ctx, s.db, func(tx pgx.Tx) error {
		n, more = 0, false
		now, err := cronNow(ctx, tx, s.clock())
		if err != nil {
			return err
		}
		due, err := CronClaimDue(ctx, tx, now, s.cfg.Batch)
		if err != nil {
			return err
		}
		for i := range due {
			c := &due[i]
			if err := s.fire(ctx, tx, c); err != nil {
				return err
			}
			// Missed ticks are not fired one by one: the next tick is the
			// first one after now, whatever the due tick was (doc.go).
			var next time.Time
			if sched, err := parseSchedule(c.Schedule, c.Timezone); err == nil {
				next = sched.nextRun(now, c.EndTime.Time)
			} else {
				// Only if its zone left the time zone database: the cron
				// stops (next_run_date null) rather than fire every tick.
				s.log.Error("cron schedule no longer valid: the cron stops", "cron_id", c.CronID, "error", err)
			}
			if err := CronAdvance(ctx, tx, c.CronID, nullTime(next)); err != nil {
				return err
			}
			n++
		}
		more = len(due) == s.cfg.Batch
		return nil
	})
	return n, more, err
}

// fire creates c's run in a savepoint of tx (a stateless cron's new
// thread gets cron_id in its metadata). A client error of the run's
// creation skips the tick (nil); a database error that retrying cures
// (deadlock, serialization, outage) fails the whole transaction, so the
// tick stays due.
func (s *Service) fire(ctx context.Context, tx pgx.Tx, c *Cron) error {
	// The scheduler serves every tenant: a cron's runs are its tenant's.
	ctx = auth.WithTenant(ctx, c.TenantID)
	var threadID uuid.UUID
	if c.ThreadID != nil {
		threadID = *c.ThreadID
	}
	for attempt := 1; ; attempt++ {
		req, err := c.runRequest()
		if err != nil {
			return err
		}
		sp, err := tx.Begin(ctx)
		if err != nil {
			return err
		}
		run, err := s.runs.CreateTx(ctx, sp, threadID, req)
		if err == nil && c.ThreadID == nil {
			// A stateless firing's new thread is found by the cron's id.
			err = s.cfg.Threads.SetCronID(ctx, sp, run.ThreadID, c.CronID, c.TenantID)
		}
		if err == nil {
			if err := sp.Commit(ctx); err != nil {
				return err
			}
			s.log.Debug("cron fired", "cron_id", c.CronID, "run_id", run.RunID, "thread_id", run.ThreadID,
				"tick", c.NextRunDate.Time)
			return nil
		}
		if rbErr := sp.Rollback(context.WithoutCancel(ctx)); rbErr != nil {
			return rbErr
		}
		switch {
		case errors.Is(err, runs.ErrAssistantChanged) && attempt == 1:
			continue // resolved afresh on the second attempt
		case ctx.Err() != nil || postgres.IsRetryable(err) || postgres.IsUnavailable(err):
			return err
		case apperr.CodeOf(err) != "":
			s.log.Warn("cron tick skipped: its run was refused", "cron_id", c.CronID, "tick", c.NextRunDate.Time, "error", err)
			return nil
		default:
			s.log.Error("cron tick skipped: creating its run failed", "cron_id", c.CronID, "tick", c.NextRunDate.Time, "error", err)
			return nil
		}
	}
}
