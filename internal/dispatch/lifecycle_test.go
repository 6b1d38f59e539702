package dispatch_test

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/dispatch"
	"github.com/weftdev/weft/internal/postgres"
)

// backoffBase is the delay before retry number attempt without jitter:
// 250 ms doubling, at most 30 s.
func backoffBase(attempt int) time.Duration {
	d := 250 * time.Millisecond
	for i := 1; i < attempt && d < 30*time.Second; i++ {
		d *= 2
	}
	return min(d, 30*time.Second)
}

func TestBackoffDoublesToThirtySecondsWithTwentyPercentJitter(t *testing.T) {
	t.Parallel()
	wantBase := map[int]time.Duration{
		-3: 250 * time.Millisecond, 0: 250 * time.Millisecond, 1: 250 * time.Millisecond, 2: 500 * time.Millisecond,
		3: time.Second, 4: 2 * time.Second, 5: 4 * time.Second, 6: 8 * time.Second, 7: 16 * time.Second,
		8: 30 * time.Second, 9: 30 * time.Second, 50: 30 * time.Second,
	}
	for attempt, base := range wantBase {
		lo, hi := base*8/10, base*12/10
		least, most := hi, lo
		for range 1000 {
			d := dispatch.Backoff(attempt)
			if d < lo || d > hi {
				t.Fatalf("Backoff(%d) = %s, want within [%s, %s]", attempt, d, lo, hi)
			}
			least, most = min(least, d), max(most, d)
		}
		// The jitter spreads: 1000 draws cover most of the ±20% band.
		if most-least < base*3/10 {
			t.Fatalf("Backoff(%d) spans only [%s, %s] in 1000 draws", attempt, least, most)
		}
	}
}

// claimableNow reports whether a claim, in a transaction rolled back
// afterwards, takes dispatch id, and that transaction's now().
func (b *bundle) claimableNow(t *testing.T, id uuid.UUID) (bool, time.Time) {
	t.Helper()
	tx, err := b.db.Begin(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	var txNow time.Time
	if err := tx.QueryRow(b.ctx, `SELECT now()`).Scan(&txNow); err != nil {
		t.Fatal(err)
	}
	list, err := dispatch.Claim(b.ctx, tx, dispatch.ClaimParams{Worker: "probe", Limit: 100, Lease: longLease})
	if err != nil {
		t.Fatal(err)
	}
	return slices.Contains(ids(list), id), txNow
}

func TestNackBacksOffLongerEachAttemptThenDeadLetters(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const maxAttempts = 4
	d := b.enqueue(t, dispatchOpts{MaxAttempts: maxAttempts})
	var prev time.Duration
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		if attempt > 1 {
			b.makeAvailable(t, d.DispatchID)
		}
		c := b.claimOne(t, d)
		if c.Attempt != attempt {
			t.Fatalf("claim %d has attempt %d", attempt, c.Attempt)
		}
		errText := "boom " + string(rune('0'+attempt))
		state, txNow, err := b.nack(d.DispatchID, *c.ClaimToken, errText)
		if err != nil {
			t.Fatalf("nack %d: %v", attempt, err)
		}
		got := b.get(t, d.DispatchID)
		atts := b.attempts(t, d.DispatchID)
		if len(atts) != attempt {
			t.Fatalf("%d attempt rows after %d claims", len(atts), attempt)
		}
		for i, a := range atts {
			if a.Attempt != i+1 || a.Worker != "w1" || a.EndedAt.IsZero() || str(a.Outcome) != "nacked" || str(a.Error) != "boom "+string(rune('1'+i)) {
				t.Fatalf("attempt rows %s, want each ended nacked with its error", showAttempts(atts))
			}
		}
		if got.Attempt != attempt || got.ClaimToken != nil || !got.LeaseExpiresAt.IsZero() || str(got.LastError) != errText {
			t.Fatalf("after nack %d: %s", attempt, show(got))
		}

		if attempt == maxAttempts {
			if state != dispatch.DeadLetter || got.State != dispatch.DeadLetter {
				t.Fatalf("nack at the last attempt: %s, stored %s, want dead_letter", state, got.State)
			}
			within(t, "finished_at", got.FinishedAt.Time, txNow, b.now(t))
			if ok, _ := b.claimableNow(t, d.DispatchID); ok {
				t.Fatal("a dead letter was claimed")
			}
			break
		}
		if state != dispatch.Queued || got.State != dispatch.Queued || got.ClaimedBy != nil || !got.FinishedAt.IsZero() {
			t.Fatalf("nack %d: %s, stored %s, want queued with the claim cleared", attempt, state, show(got))
		}
		delay := got.AvailableAt.Sub(txNow)
		base := backoffBase(attempt)
		if delay < base*8/10 || delay > base*12/10 {
			t.Fatalf("nack %d: available %s after the nack, want %s ± 20%%", attempt, delay, base)
		}
		if delay <= prev {
			t.Fatalf("nack %d: backoff %s, not longer than the previous %s", attempt, delay, prev)
		}
		prev = delay
		// Not claimable before available_at (as of the claim's now()).
		if ok, claimNow := b.claimableNow(t, d.DispatchID); ok != !claimNow.Before(got.AvailableAt.Time) {
			t.Fatalf("claimable %v at %s, available at %s", ok, claimNow, got.AvailableAt)
		}
	}
}

func TestAckEndsTheClaimAndItsAttempt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d := b.enqueue(t, dispatchOpts{})
	first := b.claimOne(t, d)
	if _, _, err := b.nack(d.DispatchID, *first.ClaimToken, "boom"); err != nil {
		t.Fatal(err)
	}
	b.makeAvailable(t, d.DispatchID)
	second := b.claimOne(t, d)
	before := b.now(t)
	if err := b.ack(d.DispatchID, *second.ClaimToken); err != nil {
		t.Fatalf("ack: %v", err)
	}
	after := b.now(t)
	got := b.get(t, d.DispatchID)
	if got.State != dispatch.Acked || got.ClaimToken != nil || !got.LeaseExpiresAt.IsZero() || got.Attempt != 2 ||
		str(got.ClaimedBy) != "w1" || !got.ClaimedAt.Equal(second.ClaimedAt.Time) || str(got.LastError) != "boom" {
		t.Fatalf("acked %s, want acked, claim cleared, attempt 2, the last worker and the earlier error kept", show(got))
	}
	within(t, "finished_at", got.FinishedAt.Time, before, after)
	atts := b.attempts(t, d.DispatchID)
	if len(atts) != 2 || str(atts[0].Outcome) != "nacked" || str(atts[0].Error) != "boom" ||
		str(atts[1].Outcome) != "acked" || atts[1].Error != nil {
		t.Fatalf("attempts %s", showAttempts(atts))
	}
	within(t, "ended_at", atts[1].EndedAt.Time, before, after)
	if ok, _ := b.claimableNow(t, d.DispatchID); ok {
		t.Fatal("an acked dispatch was claimed")
	}

	// End with an error records it on the dispatch and the attempt.
	e := b.enqueue(t, dispatchOpts{})
	b.claimOne(t, e)
	if err := dispatch.End(b.ctx, b.db, e.DispatchID, dispatch.DeadLetter, "failed", "oops"); err != nil {
		t.Fatal(err)
	}
	ge := b.get(t, e.DispatchID)
	atts = b.attempts(t, e.DispatchID)
	if ge.State != dispatch.DeadLetter || str(ge.LastError) != "oops" || len(atts) != 1 || str(atts[0].Outcome) != "failed" || str(atts[0].Error) != "oops" {
		t.Fatalf("ended %s %s", show(ge), showAttempts(atts))
	}
}

// Bumping a thread's epoch (as package runs does, in the same
// transaction) supersedes the queued dispatches of its runs; a claimed one
// and other threads are left alone, and later enqueues take the new epoch.
func TestEpochBumpSupersedesTheThreadsQueuedDispatches(t *testing.T) {
	t.Parallel()
	b := setup(t)
	th := b.thread(t, threadOpts{Epoch: 3})
	running := b.enqueue(t, dispatchOpts{Thread: th, EpochOfThread: true})
	q1 := b.enqueue(t, dispatchOpts{Thread: th, EpochOfThread: true})
	q2 := b.enqueue(t, dispatchOpts{Thread: th, EpochOfThread: true})
	c := b.claimOne(t, running)
	elsewhereClaimed := b.enqueue(t, dispatchOpts{})
	elsewhereQueued := b.enqueue(t, dispatchOpts{})
	b.claimOne(t, elsewhereClaimed)
	for _, d := range []*dispatch.Dispatch{running, q1, q2} {
		if d.Epoch != 3 {
			t.Fatalf("epoch %d, want the thread's 3", d.Epoch)
		}
	}
	keep := []snapshot{b.snapshot(t, running.DispatchID), b.snapshot(t, elsewhereClaimed.DispatchID), b.snapshot(t, elsewhereQueued.DispatchID)}

	var epoch int64
	var superseded []uuid.UUID
	before := b.now(t)
	err := postgres.WithTx(b.ctx, b.db, func(tx pgx.Tx) error {
		if err := tx.QueryRow(b.ctx, `UPDATE threads SET dispatch_epoch = dispatch_epoch + 1 WHERE thread_id = $1
			RETURNING dispatch_epoch`, th).Scan(&epoch); err != nil {
			return err
		}
		var err error
		superseded, err = dispatch.CancelQueued(b.ctx, tx, []uuid.UUID{running.RunID, q1.RunID, q2.RunID}, true)
		return err
	})
	after := b.now(t)
	if err != nil || epoch != 4 {
		t.Fatalf("bump: epoch %d, %v", epoch, err)
	}
	if len(superseded) != 2 || !slices.Contains(superseded, q1.RunID) || !slices.Contains(superseded, q2.RunID) {
		t.Fatalf("superseded runs %v, want the queued %s %s", superseded, q1.RunID, q2.RunID)
	}
	for _, d := range []*dispatch.Dispatch{q1, q2} {
		got := b.get(t, d.DispatchID)
		if got.State != dispatch.Superseded || got.Attempt != 0 || got.Epoch != 3 || got.ClaimToken != nil {
			t.Fatalf("superseded %s", show(got))
		}
		within(t, "finished_at", got.FinishedAt.Time, before, after)
		if len(b.attempts(t, d.DispatchID)) != 0 {
			t.Fatal("a superseded, never claimed dispatch has attempts")
		}
	}
	for _, s := range keep {
		b.unchanged(t, s, "the epoch bump")
	}
	if again, err := dispatch.CancelQueued(b.ctx, b.db, []uuid.UUID{q1.RunID, q2.RunID}, true); err != nil || len(again) != 0 {
		t.Fatalf("superseding again: %v %v, want nothing", again, err)
	}

	// A new run of the thread takes the new epoch; superseded dispatches
	// neither run nor block it once the claimed one ends.
	next := b.enqueue(t, dispatchOpts{Thread: th, EpochOfThread: true})
	if next.Epoch != 4 {
		t.Fatalf("epoch of the next dispatch %d, want 4", next.Epoch)
	}
	if err := b.ack(running.DispatchID, *c.ClaimToken); err != nil {
		t.Fatal(err)
	}
	list := b.claim(t, dispatch.ClaimParams{Limit: 10})
	if len(list) != 2 || !slices.Contains(ids(list), next.DispatchID) || !slices.Contains(ids(list), elsewhereQueued.DispatchID) {
		t.Fatalf("claimed %v, want %s and %s", ids(list), next.DispatchID, elsewhereQueued.DispatchID)
	}
}

// CancelQueued cancels only queued dispatches.
func TestCancelQueued(t *testing.T) {
	t.Parallel()
	b := setup(t)
	queued := b.enqueue(t, dispatchOpts{GraphID: "queued"})
	claimed := b.enqueue(t, dispatchOpts{GraphID: "claimed"})
	acked := b.enqueue(t, dispatchOpts{GraphID: "acked"})
	b.claimOne(t, claimed)
	token := *b.claimOne(t, acked).ClaimToken
	if err := b.ack(acked.DispatchID, token); err != nil {
		t.Fatal(err)
	}
	keep := []snapshot{b.snapshot(t, claimed.DispatchID), b.snapshot(t, acked.DispatchID)}

	before := b.now(t)
	got, err := dispatch.CancelQueued(b.ctx, b.db, []uuid.UUID{queued.RunID, claimed.RunID, acked.RunID, uuid.New()}, false)
	after := b.now(t)
	if err != nil || len(got) != 1 || got[0] != queued.RunID {
		t.Fatalf("cancelled %v %v, want only %s", got, err, queued.RunID)
	}
	c := b.get(t, queued.DispatchID)
	if c.State != dispatch.Cancelled || c.Attempt != 0 {
		t.Fatalf("cancelled %s", show(c))
	}
	within(t, "finished_at", c.FinishedAt.Time, before, after)
	for _, s := range keep {
		b.unchanged(t, s, "cancelling")
	}
	if ok, _ := b.claimableNow(t, queued.DispatchID); ok {
		t.Fatal("a cancelled dispatch was claimed")
	}
	if none, err := dispatch.CancelQueued(b.ctx, b.db, nil, false); err != nil || len(none) != 0 {
		t.Fatalf("cancel of no runs: %v %v", none, err)
	}
}

// deadLetter makes a dispatch of graph "dead" with maxAttempts and nacks it maxAttempts
// times, with the errors "e1", "e2", ….
func (b *bundle) deadLetter(t *testing.T, maxAttempts int) *dispatch.Dispatch {
	t.Helper()
	d := b.enqueue(t, dispatchOpts{GraphID: "dead", MaxAttempts: maxAttempts})
	for i := 1; i <= maxAttempts; i++ {
		if i > 1 {
			b.makeAvailable(t, d.DispatchID)
		}
		c := b.claimOne(t, d)
		s, _, err := b.nack(d.DispatchID, *c.ClaimToken, "e"+string(rune('0'+i)))
		if err != nil || (i == maxAttempts) != (s == dispatch.DeadLetter) {
			t.Fatalf("nack %d of %d: %s %v", i, maxAttempts, s, err)
		}
	}
	return b.get(t, d.DispatchID)
}

// A dead letter's retry queues it again now with max_attempts more claims;
// attempts keep counting, so the audit keeps every one.
func TestRetryRequeuesADeadLetterWithAFreshBudget(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d := b.deadLetter(t, 2)
	if d.State != dispatch.DeadLetter || d.Attempt != 2 || d.MaxAttempts != 2 || d.FinishedAt.IsZero() {
		t.Fatalf("dead letter %s", show(d))
	}
	listener := b.listen(t, dispatch.ChannelDispatch)

	before := b.now(t)
	r, err := dispatch.Retry(b.ctx, b.db, d.DispatchID)
	after := b.now(t)
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	if r.State != dispatch.Queued || r.Attempt != 2 || r.MaxAttempts != 4 || r.ClaimToken != nil || r.ClaimedBy != nil ||
		!r.LeaseExpiresAt.IsZero() || !r.FinishedAt.IsZero() || r.CancelAction != nil || str(r.LastError) != "e2" {
		t.Fatalf("retried %s, want queued, attempt 2 of 4, claim and end cleared, last error kept", show(r))
	}
	within(t, "available_at", r.AvailableAt.Time, before, after)
	if stored := b.get(t, d.DispatchID); !reflect.DeepEqual(stored, r) {
		t.Fatalf("retry returned %s, the row is %s", show(r), show(stored))
	}
	if n := notification(t, listener, 5*time.Second); n == nil || n.Payload != d.GraphID {
		t.Fatalf("notification %v, want %s", n, d.GraphID)
	}

	// Exactly two more claims, then dead again; the audit has all four.
	for attempt := 3; attempt <= 4; attempt++ {
		if attempt > 3 {
			b.makeAvailable(t, d.DispatchID)
		}
		c := b.claimOne(t, d)
		if c.Attempt != attempt {
			t.Fatalf("claim after retry has attempt %d, want %d", c.Attempt, attempt)
		}
		s, _, err := b.nack(d.DispatchID, *c.ClaimToken, "again")
		if err != nil || (attempt == 4) != (s == dispatch.DeadLetter) {
			t.Fatalf("nack at attempt %d: %s %v", attempt, s, err)
		}
	}
	atts := b.attempts(t, d.DispatchID)
	if len(atts) != 4 {
		t.Fatalf("attempts %s, want 4", showAttempts(atts))
	}
	for i, a := range atts {
		if a.Attempt != i+1 || a.EndedAt.IsZero() {
			t.Fatalf("attempts %s", showAttempts(atts))
		}
	}
}

func TestRetryRefusesAnythingButADeadLetter(t *testing.T) {
	t.Parallel()
	b := setup(t)
	queued := b.enqueue(t, dispatchOpts{GraphID: "queued"})
	claimed := b.enqueue(t, dispatchOpts{GraphID: "claimed"})
	b.claimOne(t, claimed)
	acked := b.enqueue(t, dispatchOpts{GraphID: "acked"})
	if err := b.ack(acked.DispatchID, *b.claimOne(t, acked).ClaimToken); err != nil {
		t.Fatal(err)
	}
	cancelled := b.enqueue(t, dispatchOpts{})
	superseded := b.enqueue(t, dispatchOpts{})
	if _, err := dispatch.CancelQueued(b.ctx, b.db, []uuid.UUID{cancelled.RunID}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := dispatch.CancelQueued(b.ctx, b.db, []uuid.UUID{superseded.RunID}, true); err != nil {
		t.Fatal(err)
	}
	retried := b.deadLetter(t, 1)
	if _, err := dispatch.Retry(b.ctx, b.db, retried.DispatchID); err != nil {
		t.Fatal(err)
	}

	for _, d := range []*dispatch.Dispatch{queued, claimed, acked, cancelled, superseded, retried} {
		before := b.snapshot(t, d.DispatchID)
		r, err := dispatch.Retry(b.ctx, b.db, d.DispatchID)
		wantCode(t, err, apperr.Conflict, "retry of a "+string(before.D.State)+" dispatch")
		if r != nil || !strings.Contains(err.Error(), string(before.D.State)) {
			t.Fatalf("retry of a %s dispatch: %v, %q does not name its state", before.D.State, r, err)
		}
		b.unchanged(t, before, "a refused retry")
	}
	_, err := dispatch.Retry(b.ctx, b.db, uuid.New())
	wantCode(t, err, apperr.NotFound, "retry of an unknown dispatch")
}

func TestReadsGetListAttemptsDispatchOfRunColumnsOf(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if _, err := dispatch.Get(b.ctx, b.db, uuid.New()); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("get of an unknown dispatch: %v, want not found", err)
	}

	// Touched (updated_at) in this order: a, r1, r2, bb, c.
	a := b.enqueue(t, dispatchOpts{GraphID: "alpha"})
	bb := b.enqueue(t, dispatchOpts{GraphID: "beta"})
	c := b.enqueue(t, dispatchOpts{GraphID: "alpha", Priority: ptr(0)})
	r1 := b.enqueue(t, dispatchOpts{GraphID: "delta"})
	if _, err := dispatch.CancelQueued(b.ctx, b.db, []uuid.UUID{r1.RunID}, false); err != nil {
		t.Fatal(err)
	}
	r2 := b.enqueue(t, dispatchOpts{GraphID: "delta", Run: r1.RunID, Thread: r1.ThreadID})
	b.claim(t, dispatch.ClaimParams{GraphIDs: []string{"beta"}})
	cc := b.claim(t, dispatch.ClaimParams{GraphIDs: []string{"alpha"}})
	if len(cc) != 1 || cc[0].DispatchID != c.DispatchID {
		t.Fatalf("claimed %v, want the priority-0 alpha %s", ids(cc), c.DispatchID)
	}
	if err := b.ack(c.DispatchID, *cc[0].ClaimToken); err != nil {
		t.Fatal(err)
	}

	run := r1.RunID
	for name, tc := range map[string]struct {
		p    dispatch.ListParams
		want []*dispatch.Dispatch
	}{
		"all, newest first":     {dispatch.ListParams{Limit: 100}, []*dispatch.Dispatch{c, bb, r2, r1, a}},
		"page":                  {dispatch.ListParams{Limit: 2, Offset: 1}, []*dispatch.Dispatch{bb, r2}},
		"state":                 {dispatch.ListParams{State: "queued", Limit: 100}, []*dispatch.Dispatch{r2, a}},
		"graph":                 {dispatch.ListParams{GraphID: "alpha", Limit: 100}, []*dispatch.Dispatch{c, a}},
		"state and graph":       {dispatch.ListParams{State: "claimed", GraphID: "alpha", Limit: 100}, nil},
		"one run, oldest first": {dispatch.ListParams{RunID: &run, Limit: 100}, []*dispatch.Dispatch{r1, r2}},
	} {
		list, err := dispatch.List(b.ctx, b.db, tc.p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := make([]uuid.UUID, len(tc.want))
		for i, d := range tc.want {
			want[i] = d.DispatchID
		}
		if !slices.Equal(ids(list), want) {
			t.Fatalf("%s: %v, want %v", name, ids(list), want)
		}
		for i := range list {
			if g := b.get(t, list[i].DispatchID); !reflect.DeepEqual(g, &list[i]) {
				t.Fatalf("%s: listed %s, the row is %s", name, show(&list[i]), show(g))
			}
		}
	}

	// OfRun: the run's newest dispatch, locked.
	tx, err := b.db.Begin(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	of, err := dispatch.OfRun(b.ctx, tx, run)
	if err != nil || of == nil || of.DispatchID != r2.DispatchID {
		t.Fatalf("dispatch of run: %v %v, want %s", of, err, r2.DispatchID)
	}
	_, err = b.db.Exec(b.ctx, `SELECT 1 FROM run_dispatches WHERE dispatch_id = $1 FOR UPDATE NOWAIT`, r2.DispatchID)
	if postgres.SQLState(err) != "55P03" {
		t.Fatalf("lock of the run's dispatch from another transaction: %v, want lock_not_available", err)
	}
	if none, err := dispatch.OfRun(b.ctx, tx, uuid.New()); none != nil || err != nil {
		t.Fatalf("dispatch of an unknown run: %v %v, want nil, nil", none, err)
	}

	// ColumnsOf qualifies the columns for a join with tables that share
	// their names.
	rows, err := b.db.Query(b.ctx, `SELECT `+dispatch.ColumnsOf("d")+` FROM run_dispatches d
		JOIN runs r ON r.run_id = d.run_id WHERE d.dispatch_id = $1`, a.DispatchID)
	if err != nil {
		t.Fatal(err)
	}
	joined, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[dispatch.Dispatch])
	if err != nil || !reflect.DeepEqual(&joined, b.get(t, a.DispatchID)) {
		t.Fatalf("ColumnsOf: %v %s", err, show(&joined))
	}

	// Attempts: oldest first, each with its worker and end.
	if got := b.attempts(t, a.DispatchID); len(got) != 0 {
		t.Fatalf("attempts of a queued dispatch: %s", showAttempts(got))
	}
	if got := b.attempts(t, uuid.New()); len(got) != 0 {
		t.Fatalf("attempts of an unknown dispatch: %s", showAttempts(got))
	}
	atts := b.attempts(t, c.DispatchID)
	if len(atts) != 1 || atts[0].Worker != "w1" || !atts[0].ClaimedAt.Equal(cc[0].ClaimedAt.Time) || str(atts[0].Outcome) != "acked" {
		t.Fatalf("attempts %s", showAttempts(atts))
	}
}
