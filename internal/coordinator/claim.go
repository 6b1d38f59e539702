package coordinator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/weftdev/weft/internal/dispatch"
	"github.com/weftdev/weft/internal/runs"
	"github.com/weftdev/weft/internal/wire"
)

// claimedRun is a run as the claim's update returns it.
type claimedRun struct {
	runs.Run
	ThreadEmpty bool `db:"thread_empty"`
}

// Claim claims up to limit dispatches for worker (of graphIDs; nil: any)
// and marks their runs running (and learns which of their threads are
// new): two statements sent together, in one implicit transaction and one
// round trip.
func (s *Service) Claim(ctx context.Context, worker string, graphIDs []string, limit int) ([]wire.Claimed, error) {
	var ds []dispatch.Dispatch
	var rs []claimedRun
	b := &pgx.Batch{}
	dispatch.QueueClaim(b, dispatch.ClaimParams{Worker: worker, GraphIDs: graphIDs, Limit: limit, Lease: s.cfg.Lease}, &ds)
	// The rows this transaction claimed are the claimed ones it updated.
	b.Queue(`UPDATE runs SET status = 'running', attempt = d.attempt, started_at = coalesce(started_at, now()), updated_at = now()
		FROM run_dispatches d
		WHERE d.run_id = runs.run_id AND d.state = 'claimed' AND d.updated_at = now() AND d.claimed_by = $1
		RETURNING `+runs.ColumnsOf("runs")+`,
			NOT EXISTS (SELECT 1 FROM checkpoints c WHERE c.thread_id = runs.thread_id::text) AS thread_empty`, worker).
		Query(func(rows pgx.Rows) error {
			var err error
			rs, err = pgx.CollectRows(rows, pgx.RowToStructByName[claimedRun])
			return err
		})
	err := s.db.SendBatch(ctx, b).Close()
	if errors.Is(err, dispatch.ErrClaimRace) {
		return nil, nil // a concurrent claim won this thread; try again later
	}
	if err != nil {
		return nil, err
	}
	byID := map[uuid.UUID]claimedRun{}
	for _, r := range rs {
		byID[r.RunID] = r
	}
	out := make([]wire.Claimed, 0, len(ds))
	for _, d := range ds {
		r, ok := byID[d.RunID]
		if !ok {
			return nil, fmt.Errorf("claim: run %s of dispatch %s not updated", d.RunID, d.DispatchID)
		}
		if err := runs.Open(ctx, &r.Run); err != nil {
			return nil, err
		}
		out = append(out, wire.Claimed{Dispatch: d, Run: r.Run, ClaimToken: *d.ClaimToken, ThreadEmpty: r.ThreadEmpty,
			Traceparent: deref(r.Traceparent)})
		s.cfg.Metrics.Claimed(d.ClaimedAt.Sub(later(d.AvailableAt.Time, d.CreatedAt.Time)))
	}
	return out, nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// ClaimWait is Claim for external workers: it waits up to wait for work to
// appear (long poll), woken by the queue's notifications, and remembers
// what it claimed for the commits' one-round-trip path.
//
// A worker polls again as soon as it has started what it claimed, and the
// queue is then usually empty: a long poll that follows a claim which left
// nothing to take (fewer than limit runs), with no queue notification
// since, waits without claiming first. Work that becomes claimable without
// a notification (a run's delay passing, its thread freed) is found by the
// wait's periodic claim, as before.
func (s *Service) ClaimWait(ctx context.Context, worker string, graphIDs []string, limit int, wait time.Duration) ([]wire.Claimed, error) {
	deadline := time.Now().Add(wait)
	var sub chan struct{}
	key := drainedKey(worker, graphIDs)
	skip := false
	if wait > 0 {
		keys := []uuid.UUID{queueGrew}
		if graphIDs != nil {
			keys = keys[:0]
			for _, g := range graphIDs {
				keys = append(keys, graphKey(g))
			}
		}
		sub = s.queue.SubscribeAll(keys)
		defer s.queue.UnsubscribeAll(keys, sub)
		// Subscribed before the check: a notification after it wakes the wait.
		skip = s.drained.unchanged(key)
	}
	for {
		var got []wire.Claimed
		var err error
		if !skip {
			gen := s.drained.generation()
			got, err = s.Claim(ctx, worker, graphIDs, limit)
			for i := range got {
				s.claims.put(&got[i].Dispatch)
			}
			if err == nil && len(got) < limit {
				s.drained.record(key, gen)
			}
		}
		skip = false
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

// drainedClaims remembers, per worker and graph filter, the queue's
// notification count as of the last claim that left nothing to take
// (ClaimWait). Its zero value is ready.
type drainedClaims struct {
	gen atomic.Uint64 // queue notifications so far
	mu  sync.Mutex
	m   map[string]uint64
}

// drainedMax bounds the memory: past it, every worker claims once more.
const drainedMax = 1 << 12

// signal counts a queue notification (work may have been queued).
func (d *drainedClaims) signal() { d.gen.Add(1) }

// generation is the count of notifications so far; read it before a claim.
func (d *drainedClaims) generation() uint64 { return d.gen.Load() }

// record notes that a claim for key, begun at generation gen, left
// nothing to take.
func (d *drainedClaims) record(key string, gen uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.m == nil || len(d.m) >= drainedMax {
		d.m = map[string]uint64{}
	}
	d.m[key] = gen
}

// unchanged reports whether key's last claim left nothing to take and no
// notification came since it began; it forgets the record either way, so
// only the poll right after such a claim skips its own.
func (d *drainedClaims) unchanged(key string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	gen, ok := d.m[key]
	delete(d.m, key)
	return ok && gen == d.gen.Load()
}

// drainedKey identifies a claimer: its worker id and graph filter.
func drainedKey(worker string, graphIDs []string) string {
	if graphIDs == nil {
		return worker + "\x00*"
	}
	return worker + "\x00" + strings.Join(graphIDs, "\x00")
}
