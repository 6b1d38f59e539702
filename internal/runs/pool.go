package runs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/dispatch"
	"github.com/weftdev/weft/internal/postgres"
)

// Claimed is a claimed dispatch and its run.
type Claimed struct {
	Dispatch dispatch.Dispatch `json:"dispatch"`
	Run      Run               `json:"run"`
	// ClaimToken is the fence to present with every later operation.
	ClaimToken uuid.UUID `json:"claim_token"`
}

// Claim claims up to limit dispatches for worker (of graphIDs; nil: any)
// and marks their runs running: two statements sent together, in one
// implicit transaction and one round trip.
func (s *Service) Claim(ctx context.Context, worker string, graphIDs []string, limit int) ([]Claimed, error) {
	var ds []dispatch.Dispatch
	var runs []Run
	b := &pgx.Batch{}
	dispatch.QueueClaim(b, dispatch.ClaimParams{Worker: worker, GraphIDs: graphIDs, Limit: limit, Lease: s.cfg.Lease}, &ds)
	// The rows this transaction claimed are the claimed ones it updated.
	b.Queue(`UPDATE runs SET status = 'running', attempt = d.attempt, started_at = coalesce(started_at, now()), updated_at = now()
		FROM run_dispatches d
		WHERE d.run_id = runs.run_id AND d.state = 'claimed' AND d.updated_at = now() AND d.claimed_by = $1
		RETURNING `+postgres.Qualify("runs", runColumns), worker).Query(func(rows pgx.Rows) error {
		var err error
		runs, err = pgx.CollectRows(rows, pgx.RowToStructByName[Run])
		return err
	})
	err := s.db.SendBatch(ctx, b).Close()
	if errors.Is(err, dispatch.ErrClaimRace) {
		return nil, nil // a concurrent claim won this thread; try again later
	}
	if err != nil {
		return nil, err
	}
	byID := map[uuid.UUID]Run{}
	for _, r := range runs {
		byID[r.RunID] = r
	}
	out := make([]Claimed, 0, len(ds))
	for _, d := range ds {
		r, ok := byID[d.RunID]
		if !ok {
			return nil, fmt.Errorf("claim: run %s of dispatch %s not updated", d.RunID, d.DispatchID)
		}
		out = append(out, Claimed{Dispatch: d, Run: r, ClaimToken: *d.ClaimToken})
	}
	return out, nil
}

// ClaimWait is Claim that waits up to wait for work to appear (long poll),
// woken by the queue's notifications.
func (s *Service) ClaimWait(ctx context.Context, worker string, graphIDs []string, limit int, wait time.Duration) ([]Claimed, error) {
	deadline := time.Now().Add(wait)
	var sub chan struct{}
	if wait > 0 {
		sub = s.events.subscribe(queueGrew)
		defer s.events.unsubscribe(queueGrew, sub)
	}
	for {
		got, err := s.Claim(ctx, worker, graphIDs, limit)
		if err != nil || len(got) > 0 || time.Now().After(deadline) {
			return got, err
		}
		t := time.NewTimer(min(time.Until(deadline), 250*time.Millisecond))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil
		case <-sub:
			t.Stop()
		case <-t.C:
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
		got, err := s.Claim(ctx, worker, graphs, 1)
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
		s.wakeWorkers(1) // there may be more work: let another worker look
		s.execute(ctx, got[0])
	}
}

// Errors that end an in-process execution early (context causes).
var (
	errCancelRequested = errors.New("run cancellation requested")
	errLeaseLost       = errors.New("lease lost")
	errShutdown        = errors.New("server shutting down")
)
