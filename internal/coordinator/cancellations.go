package coordinator

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/wire"
)

// cancelRequested is the queue hub's key fired by every cancellation
// request (NOTIFY weft_cancel): it wakes CancellationsWait.
var cancelRequested = uuid.Max

// CancellationsWait returns the cancellations requested for the dispatches
// worker holds, leaving out those in known (the ones it was told of
// already). When there are none it waits up to wait for one, woken by the
// cancellation's notification, so an external worker learns of a cancel
// within milliseconds instead of at its next heartbeat.
func (s *Service) CancellationsWait(ctx context.Context, worker string, known []uuid.UUID, wait time.Duration) ([]wire.Cancellation, error) {
	deadline := time.Now().Add(wait)
	var sub chan struct{}
	if wait > 0 {
		sub = s.queue.Subscribe(cancelRequested)
		defer s.queue.Unsubscribe(cancelRequested, sub)
	}
	if known == nil {
		known = []uuid.UUID{}
	}
	for {
		rows, err := s.db.Query(ctx, `SELECT dispatch_id, cancel_action FROM run_dispatches
			WHERE state = 'claimed' AND claimed_by = $1 AND cancel_action IS NOT NULL AND NOT dispatch_id = ANY($2)`, worker, known)
		if err != nil {
			return nil, err
		}
		got, err := pgx.CollectRows(rows, pgx.RowToStructByName[wire.Cancellation])
		if err != nil || len(got) > 0 || !time.Now().Before(deadline) {
			return got, err
		}
		// The poll is a fallback for a notification missed in a reconnect.
		t := time.NewTimer(min(time.Until(deadline), time.Second))
		select {
		case <-ctx.Done():
			t.Stop()
			return []wire.Cancellation{}, nil
		case <-sub:
			t.Stop()
		case <-t.C:
		}
	}
}
