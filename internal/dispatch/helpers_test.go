package dispatch_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/dispatch"
	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/postgres/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// longLease is the lease of claims that must not expire during a test.
const longLease = time.Minute

// bundle is what a test needs: a fresh migrated database of its own.
type bundle struct {
	ctx context.Context
	db  *pgxpool.Pool
}

func setup(t *testing.T) *bundle {
	t.Helper()
	return &bundle{ctx: t.Context(), db: pgtest.Pool(t)}
}

// threadOpts describe a threads row.
type threadOpts struct {
	Epoch int64 // dispatch_epoch
}

func (b *bundle) thread(t *testing.T, o threadOpts) uuid.UUID {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	if _, err := b.db.Exec(b.ctx, `INSERT INTO threads (thread_id, dispatch_epoch) VALUES ($1, $2)`, id, o.Epoch); err != nil {
		t.Fatalf("insert thread: %v", err)
	}
	return id
}

// runOpts describe a runs row.
type runOpts struct {
	Thread  uuid.UUID // uuid.Nil: a new thread
	GraphID string    // "": "agent"
}

func (b *bundle) run(t *testing.T, o runOpts) (runID, threadID uuid.UUID) {
	t.Helper()
	if o.Thread == uuid.Nil {
		o.Thread = b.thread(t, threadOpts{})
	}
	if o.GraphID == "" {
		o.GraphID = "agent"
	}
	runID = uuid.Must(uuid.NewV7())
	if _, err := b.db.Exec(b.ctx, `INSERT INTO runs (run_id, thread_id, assistant_id, graph_id) VALUES ($1, $2, $3, $4)`,
		runID, o.Thread, uuid.New(), o.GraphID); err != nil {
		t.Fatalf("insert run: %v", err)
	}
	return runID, o.Thread
}

// dispatchOpts describe a dispatch, enqueued with Enqueue (on a new
// run, and a new thread unless Thread is set) and then adjusted with SQL
// where the enqueue has no parameter for it.
type dispatchOpts struct {
	Thread        uuid.UUID // uuid.Nil: a new thread
	Run           uuid.UUID // uuid.Nil: a new run on Thread
	GraphID       string    // "": "agent"
	Epoch         int64
	EpochOfThread bool
	Delay         time.Duration
	MaxAttempts   int
	Priority      *int       // nil: the column default (128)
	AvailableAt   *time.Time // nil: as enqueued
}

func (b *bundle) enqueue(t *testing.T, o dispatchOpts) *dispatch.Dispatch {
	t.Helper()
	if o.GraphID == "" {
		o.GraphID = "agent"
	}
	if o.Run == uuid.Nil {
		o.Run, o.Thread = b.run(t, runOpts{Thread: o.Thread, GraphID: o.GraphID})
	} else if o.Thread == uuid.Nil {
		t.Fatal("enqueue: Run given without Thread")
	}
	id, err := dispatch.Enqueue(b.ctx, b.db, dispatch.EnqueueParams{
		RunID: o.Run, ThreadID: o.Thread, GraphID: o.GraphID, Epoch: o.Epoch, EpochOfThread: o.EpochOfThread,
		Delay: o.Delay, MaxAttempts: o.MaxAttempts,
	})
	if err != nil {
		t.Fatalf("enqueue: %v", err)
	}
	if o.Priority != nil {
		b.exec(t, `UPDATE run_dispatches SET priority = $2 WHERE dispatch_id = $1`, id, *o.Priority)
	}
	if o.AvailableAt != nil {
		b.exec(t, `UPDATE run_dispatches SET available_at = $2 WHERE dispatch_id = $1`, id, *o.AvailableAt)
	}
	return b.get(t, id)
}

func (b *bundle) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := b.db.Exec(b.ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func (b *bundle) get(t *testing.T, id uuid.UUID) *dispatch.Dispatch {
	t.Helper()
	d, err := dispatch.Get(b.ctx, b.db, id)
	if err != nil {
		t.Fatalf("get %s: %v", id, err)
	}
	return d
}

func (b *bundle) attempts(t *testing.T, id uuid.UUID) []dispatch.Attempt {
	t.Helper()
	list, err := dispatch.Attempts(b.ctx, b.db, id)
	if err != nil {
		t.Fatalf("attempts %s: %v", id, err)
	}
	return list
}

// now is the database clock (clock_timestamp()), which every timestamp the
// package writes comes from.
func (b *bundle) now(t *testing.T) time.Time {
	t.Helper()
	var now time.Time
	if err := b.db.QueryRow(b.ctx, `SELECT clock_timestamp()`).Scan(&now); err != nil {
		t.Fatalf("clock: %v", err)
	}
	return now
}

// claim claims with p; Worker defaults to "w1", Lease to longLease, Limit
// (as in Claim) to 1.
func (b *bundle) claim(t *testing.T, p dispatch.ClaimParams) []dispatch.Dispatch {
	t.Helper()
	if p.Worker == "" {
		p.Worker = "w1"
	}
	if p.Lease == 0 {
		p.Lease = longLease
	}
	list, err := dispatch.Claim(b.ctx, b.db, p)
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	return list
}

// claimOne claims one dispatch of want's graph, which must be want.
func (b *bundle) claimOne(t *testing.T, want *dispatch.Dispatch) *dispatch.Dispatch {
	t.Helper()
	list := b.claim(t, dispatch.ClaimParams{GraphIDs: []string{want.GraphID}, Limit: 1})
	if len(list) != 1 || list[0].DispatchID != want.DispatchID {
		t.Fatalf("claimed %v, want only %s", ids(list), want.DispatchID)
	}
	return &list[0]
}

// ack is how a consumer acknowledges a claim: the fence and the end in one
// transaction.
func (b *bundle) ack(id, token uuid.UUID) error {
	return postgres.WithTx(b.ctx, b.db, func(tx pgx.Tx) error {
		if _, err := dispatch.Fence(b.ctx, tx, id, token); err != nil {
			return err
		}
		return dispatch.End(b.ctx, tx, id, dispatch.Acked, "acked", "")
	})
}

// nack is how a consumer gives a claim back: the fence and the requeue in
// one transaction. txNow is the transaction's now(), which the requeue's
// available_at is computed from.
func (b *bundle) nack(id, token uuid.UUID, errText string) (state dispatch.State, txNow time.Time, err error) {
	err = postgres.WithTx(b.ctx, b.db, func(tx pgx.Tx) error {
		if err := tx.QueryRow(b.ctx, `SELECT now()`).Scan(&txNow); err != nil {
			return err
		}
		d, err := dispatch.Fence(b.ctx, tx, id, token)
		if err != nil {
			return err
		}
		state, err = dispatch.Requeue(b.ctx, tx, d, "nacked", errText)
		return err
	})
	return state, txNow, err
}

// reap is how a reaper handles expired leases: lock them and requeue each
// (or dead-letter it at its last attempt). It returns the states by
// dispatch and the transaction's now().
func (b *bundle) reap(t *testing.T, limit int) (map[uuid.UUID]dispatch.State, time.Time) {
	t.Helper()
	out := map[uuid.UUID]dispatch.State{}
	var txNow time.Time
	err := postgres.WithTx(b.ctx, b.db, func(tx pgx.Tx) error {
		clear(out)
		if err := tx.QueryRow(b.ctx, `SELECT now()`).Scan(&txNow); err != nil {
			return err
		}
		expired, err := dispatch.Expired(b.ctx, tx, limit)
		if err != nil {
			return err
		}
		for i := range expired {
			s, err := dispatch.Requeue(b.ctx, tx, &expired[i], "lease_expired", "lease expired")
			if err != nil {
				return err
			}
			out[expired[i].DispatchID] = s
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reap: %v", err)
	}
	return out, txNow
}

// expireLease moves a claim's lease expiry ago into the past, as if its
// worker had stopped renewing it.
func (b *bundle) expireLease(t *testing.T, id uuid.UUID, ago time.Duration) {
	t.Helper()
	b.exec(t, `UPDATE run_dispatches SET lease_expires_at = clock_timestamp() - $2::interval WHERE dispatch_id = $1`, id, ago)
}

// makeAvailable moves a queued dispatch's available_at into the past (a
// backoff that has elapsed).
func (b *bundle) makeAvailable(t *testing.T, id uuid.UUID) {
	t.Helper()
	b.exec(t, `UPDATE run_dispatches SET available_at = now() - interval '1 hour' WHERE dispatch_id = $1`, id)
}

// snapshot is everything the package stores about a dispatch.
type snapshot struct {
	D        *dispatch.Dispatch
	Attempts []dispatch.Attempt
}

func (b *bundle) snapshot(t *testing.T, id uuid.UUID) snapshot {
	t.Helper()
	return snapshot{b.get(t, id), b.attempts(t, id)}
}

func (b *bundle) unchanged(t *testing.T, before snapshot, what string) {
	t.Helper()
	after := b.snapshot(t, before.D.DispatchID)
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("%s changed the dispatch:\nbefore %s %s\nafter  %s %s", what, show(before.D), showAttempts(before.Attempts),
			show(after.D), showAttempts(after.Attempts))
	}
}

func ids(list []dispatch.Dispatch) []uuid.UUID {
	out := make([]uuid.UUID, len(list))
	for i, d := range list {
		out[i] = d.DispatchID
	}
	return out
}

func wantFenced(t *testing.T, err error, what string) {
	t.Helper()
	if !errors.Is(err, dispatch.ErrFenced) {
		t.Fatalf("%s: %v, want ErrFenced", what, err)
	}
	if apperr.CodeOf(err) != apperr.Conflict {
		t.Fatalf("%s: code %q, want conflict", what, apperr.CodeOf(err))
	}
}

func wantCode(t *testing.T, err error, code apperr.Code, what string) {
	t.Helper()
	if apperr.CodeOf(err) != code {
		t.Fatalf("%s: %v (code %q), want code %q", what, err, apperr.CodeOf(err), code)
	}
}

// within fails unless lo <= got <= hi.
func within(t *testing.T, what string, got, lo, hi time.Time) {
	t.Helper()
	if got.Before(lo) || got.After(hi) {
		t.Fatalf("%s = %s, want within [%s, %s]", what, got.Format(time.RFC3339Nano), lo.Format(time.RFC3339Nano), hi.Format(time.RFC3339Nano))
	}
}

func ptr[T any](v T) *T { return &v }

func str(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// show formats a dispatch with its pointer fields dereferenced.
func show(d *dispatch.Dispatch) string {
	token := "<nil>"
	if d.ClaimToken != nil {
		token = d.ClaimToken.String()
	}
	return fmt.Sprintf("{id %s run %s thread %s graph %s state %s priority %d available %s attempt %d/%d epoch %d token %s by %s claimed %s lease %s cancel %s error %s created %s updated %s finished %s}",
		d.DispatchID, d.RunID, d.ThreadID, d.GraphID, d.State, d.Priority, d.AvailableAt, d.Attempt, d.MaxAttempts, d.Epoch,
		token, str(d.ClaimedBy), d.ClaimedAt, d.LeaseExpiresAt, str(d.CancelAction), str(d.LastError), d.CreatedAt, d.UpdatedAt, d.FinishedAt)
}

func showAttempts(list []dispatch.Attempt) string {
	var sb strings.Builder
	for _, a := range list {
		fmt.Fprintf(&sb, "{%d %s claimed %s ended %s outcome %s error %s}", a.Attempt, a.Worker, a.ClaimedAt, a.EndedAt, str(a.Outcome), str(a.Error))
	}
	return "[" + sb.String() + "]"
}
