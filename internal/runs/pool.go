package runs

import (
	"context"
	"errors"
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
// and marks their runs running, in one transaction.
func (s *Service) Claim(ctx context.Context, worker string, graphIDs []string, limit int) ([]Claimed, error) {
	var out []Claimed
	err := postgres.WithTx(ctx, s.db, func(tx pgx.Tx) error {
		out = out[:0]
		ds, err := dispatch.DispatchClaim(ctx, tx, dispatch.ClaimParams{Worker: worker, GraphIDs: graphIDs, Limit: limit, Lease: s.cfg.Lease})
		if err != nil || len(ds) == 0 {
			return err
		}
		ids, attempts := make([]uuid.UUID, len(ds)), make([]int32, len(ds))
		for i, d := range ds {
			ids[i], attempts[i] = d.RunID, int32(d.Attempt)
		}
		rows, err := tx.Query(ctx, `
			WITH r AS (
				UPDATE runs SET status = 'running', attempt = a.attempt, started_at = coalesce(started_at, now()), updated_at = now()
				FROM unnest($1::uuid[], $2::int[]) AS a(run_id, attempt)
				WHERE runs.run_id = a.run_id
				RETURNING runs.*
			), t AS (
				UPDATE threads SET active_run_id = r.run_id FROM r WHERE threads.thread_id = r.thread_id
			)
			SELECT `+runColumns+` FROM r`, ids, attempts)
		if err != nil {
			return err
		}
		list, err := pgx.CollectRows(rows, pgx.RowToStructByName[Run])
		if err != nil {
			return err
		}
		byID := map[uuid.UUID]Run{}
		for _, r := range list {
			byID[r.RunID] = r
		}
		for _, d := range ds {
			out = append(out, Claimed{Dispatch: d, Run: byID[d.RunID], ClaimToken: *d.ClaimToken})
		}
		return nil
	})
	if errors.Is(err, dispatch.ErrClaimRace) {
		return nil, nil // a concurrent claim won this thread; try again later
	}
	return out, err
}

// ClaimWait is Claim that waits up to wait for work to appear (long poll),
// woken by the queue's notifications.
func (s *Service) ClaimWait(ctx context.Context, worker string, graphIDs []string, limit int, wait time.Duration) ([]Claimed, error) {
	deadline := time.Now().Add(wait)
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
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("claim failed", "worker", worker, "error", err)
			}
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
