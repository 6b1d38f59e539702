package dispatch_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/dispatch"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/postgres"
)

func TestFencedAndValidState(t *testing.T) {
	t.Parallel()
	id := uuid.New()
	err := dispatch.Fenced(id)
	wantFenced(t, err, "Fenced")
	if !strings.Contains(err.Error(), id.String()) {
		t.Fatalf("Fenced(%s) = %q, does not name the dispatch", id, err)
	}
	for _, s := range []dispatch.State{dispatch.Queued, dispatch.Claimed, dispatch.Acked, dispatch.Cancelled, dispatch.Superseded, dispatch.DeadLetter} {
		if !dispatch.ValidState(string(s)) {
			t.Fatalf("ValidState(%q) = false", s)
		}
	}
	for _, s := range []string{"", "Queued", "running", "dead-letter"} {
		if dispatch.ValidState(s) {
			t.Fatalf("ValidState(%q) = true", s)
		}
	}
}

func TestCheckFence(t *testing.T) {
	t.Parallel()
	token := uuid.New()
	valid := func() *dispatch.Dispatch {
		return &dispatch.Dispatch{DispatchID: uuid.New(), State: dispatch.Claimed, ClaimToken: ptr(token),
			LeaseExpiresAt: httpx.Time{Time: time.Now().Add(time.Minute)}}
	}
	if err := dispatch.CheckFence(valid(), token); err != nil {
		t.Fatalf("a valid claim: %v", err)
	}
	for name, change := range map[string]func(d *dispatch.Dispatch){
		"wrong token":   func(d *dispatch.Dispatch) { d.ClaimToken = ptr(uuid.New()) },
		"no token":      func(d *dispatch.Dispatch) { d.ClaimToken = nil },
		"lease expired": func(d *dispatch.Dispatch) { d.LeaseExpiresAt = httpx.Time{Time: time.Now().Add(-time.Millisecond)} },
		"no lease":      func(d *dispatch.Dispatch) { d.LeaseExpiresAt = httpx.Time{} },
		"queued":        func(d *dispatch.Dispatch) { d.State = dispatch.Queued },
		"acked":         func(d *dispatch.Dispatch) { d.State = dispatch.Acked },
		"dead letter":   func(d *dispatch.Dispatch) { d.State = dispatch.DeadLetter },
	} {
		d := valid()
		change(d)
		err := dispatch.CheckFence(d, token)
		wantFenced(t, err, name)
		if !strings.Contains(err.Error(), d.DispatchID.String()) {
			t.Fatalf("%s: %q does not name the dispatch", name, err)
		}
	}
}

// A valid claim passes every fence: the heartbeat extends its lease, the
// fence returns it locked, weft_fence accepts it, and the ack ends it.
func TestFenceAcceptsTheValidClaim(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d := b.enqueue(t, dispatchOpts{})
	c := b.claimOne(t, d)
	token := *c.ClaimToken

	before := b.now(t)
	exp, cancel, err := dispatch.RenewLease(b.ctx, b.db, d.DispatchID, token, 2*time.Minute)
	after := b.now(t)
	if err != nil || cancel != "" {
		t.Fatalf("renew: %q %v", cancel, err)
	}
	within(t, "renewed expiry", exp, before.Add(2*time.Minute), after.Add(2*time.Minute))
	if !exp.After(c.LeaseExpiresAt.Time) {
		t.Fatalf("renewed expiry %s is not after the claim's %s", exp, c.LeaseExpiresAt)
	}
	renewed := b.get(t, d.DispatchID)
	if !renewed.LeaseExpiresAt.Equal(exp) || renewed.State != dispatch.Claimed || *renewed.ClaimToken != token || renewed.Attempt != 1 {
		t.Fatalf("after renew %s, want the lease %s and the same claim", show(renewed), exp)
	}

	var fenced *dispatch.Dispatch
	err = postgres.WithTx(b.ctx, b.db, func(tx pgx.Tx) error {
		var err error
		fenced, err = dispatch.Fence(b.ctx, tx, d.DispatchID, token)
		return err
	})
	if err != nil || !reflect.DeepEqual(fenced, renewed) {
		t.Fatalf("fence: %v, returned %v, want %s", err, fenced, show(renewed))
	}
	var weftCancel string
	if err := b.db.QueryRow(b.ctx, `SELECT weft_fence($1, $2, true)`, d.DispatchID, token).Scan(&weftCancel); err != nil || weftCancel != "" {
		t.Fatalf("weft_fence: %q %v", weftCancel, err)
	}
	if err := b.ack(d.DispatchID, token); err != nil {
		t.Fatalf("ack: %v", err)
	}
}

// Fence holds the dispatch's row lock for the rest of its
// transaction: a concurrent fence waits for it.
func TestFenceLocksTheDispatch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d := b.enqueue(t, dispatchOpts{})
	token := *b.claimOne(t, d).ClaimToken
	tx, err := b.db.Begin(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := dispatch.Fence(b.ctx, tx, d.DispatchID, token); err != nil {
		t.Fatalf("fence: %v", err)
	}
	_, err = b.db.Exec(b.ctx, `SELECT 1 FROM run_dispatches WHERE dispatch_id = $1 FOR UPDATE NOWAIT`, d.DispatchID)
	if postgres.SQLState(err) != "55P03" {
		t.Fatalf("lock of a fenced dispatch from another transaction: %v, want lock_not_available", err)
	}
}

// Every operation that presents a claim that is no longer valid is refused
// with ErrFenced (weft_fence with SQLSTATE WF409) and changes nothing.
func TestFenceRefusesAnInvalidClaimAndChangesNothing(t *testing.T) {
	t.Parallel()
	// Each case makes a dispatch (of graph g) and returns the claim a worker
	// presents.
	cases := map[string]func(t *testing.T, b *bundle, graph string) (id, token uuid.UUID){
		"wrong token": func(t *testing.T, b *bundle, g string) (uuid.UUID, uuid.UUID) {
			d := b.enqueue(t, dispatchOpts{GraphID: g})
			b.claimOne(t, d)
			return d.DispatchID, uuid.New()
		},
		"lease expired, not yet reaped": func(t *testing.T, b *bundle, g string) (uuid.UUID, uuid.UUID) {
			d := b.enqueue(t, dispatchOpts{GraphID: g})
			c := b.claimOne(t, d)
			b.expireLease(t, d.DispatchID, time.Second)
			if got := b.get(t, d.DispatchID); got.State != dispatch.Claimed {
				t.Fatalf("state %s, want still claimed", got.State)
			}
			return d.DispatchID, *c.ClaimToken
		},
		"requeued by a nack": func(t *testing.T, b *bundle, g string) (uuid.UUID, uuid.UUID) {
			d := b.enqueue(t, dispatchOpts{GraphID: g})
			c := b.claimOne(t, d)
			if _, _, err := b.nack(d.DispatchID, *c.ClaimToken, "boom"); err != nil {
				t.Fatal(err)
			}
			return d.DispatchID, *c.ClaimToken
		},
		"reclaimed by another worker": func(t *testing.T, b *bundle, g string) (uuid.UUID, uuid.UUID) {
			d := b.enqueue(t, dispatchOpts{GraphID: g})
			c := b.claimOne(t, d)
			if _, _, err := b.nack(d.DispatchID, *c.ClaimToken, "boom"); err != nil {
				t.Fatal(err)
			}
			b.makeAvailable(t, d.DispatchID)
			again := b.claimOne(t, d)
			if *again.ClaimToken == *c.ClaimToken {
				t.Fatal("a new claim has the old token")
			}
			return d.DispatchID, *c.ClaimToken
		},
		"reaped": func(t *testing.T, b *bundle, g string) (uuid.UUID, uuid.UUID) {
			d := b.enqueue(t, dispatchOpts{GraphID: g})
			c := b.claimOne(t, d)
			b.expireLease(t, d.DispatchID, time.Second)
			if got, _ := b.reap(t, 10); got[d.DispatchID] != dispatch.Queued {
				t.Fatalf("reaped %v", got)
			}
			return d.DispatchID, *c.ClaimToken
		},
		"acked": func(t *testing.T, b *bundle, g string) (uuid.UUID, uuid.UUID) {
			d := b.enqueue(t, dispatchOpts{GraphID: g})
			c := b.claimOne(t, d)
			if err := b.ack(d.DispatchID, *c.ClaimToken); err != nil {
				t.Fatal(err)
			}
			return d.DispatchID, *c.ClaimToken
		},
		"cancelled while claimed": func(t *testing.T, b *bundle, g string) (uuid.UUID, uuid.UUID) {
			d := b.enqueue(t, dispatchOpts{GraphID: g})
			c := b.claimOne(t, d)
			if err := dispatch.End(b.ctx, b.db, d.DispatchID, dispatch.Cancelled, "cancelled", ""); err != nil {
				t.Fatal(err)
			}
			return d.DispatchID, *c.ClaimToken
		},
		"dead-lettered": func(t *testing.T, b *bundle, g string) (uuid.UUID, uuid.UUID) {
			d := b.enqueue(t, dispatchOpts{GraphID: g, MaxAttempts: 1})
			c := b.claimOne(t, d)
			if s, _, err := b.nack(d.DispatchID, *c.ClaimToken, "boom"); err != nil || s != dispatch.DeadLetter {
				t.Fatalf("nack: %s %v", s, err)
			}
			return d.DispatchID, *c.ClaimToken
		},
		"never claimed": func(t *testing.T, b *bundle, g string) (uuid.UUID, uuid.UUID) {
			return b.enqueue(t, dispatchOpts{GraphID: g}).DispatchID, uuid.New()
		},
		"unknown dispatch": func(t *testing.T, b *bundle, g string) (uuid.UUID, uuid.UUID) {
			return uuid.New(), uuid.New()
		},
	}
	// The cases share a database, one after the other, each on a graph of
	// its own.
	b := setup(t)
	for name, prepare := range cases {
		t.Run(name, func(t *testing.T) {
			id, token := prepare(t, b, name)
			var before snapshot
			exists := name != "unknown dispatch"
			if exists {
				before = b.snapshot(t, id)
			}

			_, _, err := dispatch.RenewLease(b.ctx, b.db, id, token, time.Minute)
			wantFenced(t, err, "heartbeat")
			err = postgres.WithTx(b.ctx, b.db, func(tx pgx.Tx) error {
				_, err := dispatch.Fence(b.ctx, tx, id, token)
				return err
			})
			wantFenced(t, err, "fence")
			wantFenced(t, b.ack(id, token), "ack")
			_, _, err = b.nack(id, token, "late")
			wantFenced(t, err, "nack")
			for _, exclusive := range []bool{false, true} {
				var cancel string
				err = b.db.QueryRow(b.ctx, `SELECT weft_fence($1, $2, $3)`, id, token, exclusive).Scan(&cancel)
				if postgres.SQLState(err) != postgres.CodeFenced {
					t.Fatalf("weft_fence (exclusive %v): %v, want SQLSTATE %s", exclusive, err, postgres.CodeFenced)
				}
			}

			if exists {
				b.unchanged(t, before, "a fenced operation")
			} else if _, err := dispatch.Get(b.ctx, b.db, id); apperr.CodeOf(err) != apperr.NotFound {
				t.Fatalf("unknown dispatch: %v", err)
			}
		})
	}
}

// A heartbeat reports the cancellation requested for its run; rollback
// wins over interrupt; the request is sent on weft_cancel.
func TestHeartbeatReportsTheRequestedCancellation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	listener := b.listen(t, dispatch.ChannelCancel)
	d := b.enqueue(t, dispatchOpts{})
	queued := b.enqueue(t, dispatchOpts{})
	token := *b.claimOne(t, d).ClaimToken

	// No claimed dispatch: nothing to ask, nothing changed or sent.
	snap := b.snapshot(t, queued.DispatchID)
	for _, run := range []uuid.UUID{queued.RunID, uuid.New()} {
		if ok, err := dispatch.RequestCancel(b.ctx, b.db, run, "interrupt"); ok || err != nil {
			t.Fatalf("request cancel of a run without a claimed dispatch: %v %v, want false", ok, err)
		}
	}
	b.unchanged(t, snap, "a cancel request for a queued dispatch")
	if n := notification(t, listener, 200*time.Millisecond); n != nil {
		t.Fatalf("notification %q without a claimed dispatch", n.Payload)
	}

	renew := func(want string) {
		t.Helper()
		_, cancel, err := dispatch.RenewLease(b.ctx, b.db, d.DispatchID, token, time.Minute)
		if err != nil || cancel != want {
			t.Fatalf("renew: %q %v, want cancellation %q", cancel, err, want)
		}
		if got := b.get(t, d.DispatchID); str(got.CancelAction) != want || got.State != dispatch.Claimed {
			t.Fatalf("stored %s, want claimed with cancel_action %s", show(got), want)
		}
	}
	request := func(action string) {
		t.Helper()
		if ok, err := dispatch.RequestCancel(b.ctx, b.db, d.RunID, action); !ok || err != nil {
			t.Fatalf("request cancel %s: %v %v", action, ok, err)
		}
		n := notification(t, listener, 5*time.Second)
		if n == nil || n.Payload != d.DispatchID.String() {
			t.Fatalf("notification %v, want the dispatch id %s on %s", n, d.DispatchID, dispatch.ChannelCancel)
		}
	}
	request("interrupt")
	renew("interrupt")
	request("rollback")
	renew("rollback")
	request("interrupt")
	renew("rollback")

	// weft_fence returns the cancellation, and refuses an exclusive write
	// while one is pending.
	var cancel string
	if err := b.db.QueryRow(b.ctx, `SELECT weft_fence($1, $2, false)`, d.DispatchID, token).Scan(&cancel); err != nil || cancel != "rollback" {
		t.Fatalf("weft_fence: %q %v, want rollback", cancel, err)
	}
	err := b.db.QueryRow(b.ctx, `SELECT weft_fence($1, $2, true)`, d.DispatchID, token).Scan(&cancel)
	if postgres.SQLState(err) != postgres.CodeCancelPending {
		t.Fatalf("exclusive weft_fence with a cancellation pending: %v, want SQLSTATE %s", err, postgres.CodeCancelPending)
	}
}

// An expired lease is found by Expired (oldest expiry first, up to
// the limit) and, by the reaper, requeued after a backoff with its attempt
// closed, or dead-lettered at its last attempt. A live claim is left alone.
func TestExpiredLeaseIsReapedWithBackoffThenDeadLettered(t *testing.T) {
	t.Parallel()
	b := setup(t)
	x := b.enqueue(t, dispatchOpts{MaxAttempts: 2})
	y := b.enqueue(t, dispatchOpts{})
	live := b.enqueue(t, dispatchOpts{})
	claimed := map[uuid.UUID]dispatch.Dispatch{}
	for _, d := range b.claim(t, dispatch.ClaimParams{Limit: 10}) {
		claimed[d.DispatchID] = d
	}
	if len(claimed) != 3 {
		t.Fatalf("claimed %d, want 3", len(claimed))
	}
	b.expireLease(t, x.DispatchID, 2*time.Second)
	b.expireLease(t, y.DispatchID, time.Second)
	liveSnap := b.snapshot(t, live.DispatchID)

	expired := func(limit int) []uuid.UUID {
		t.Helper()
		var out []uuid.UUID
		err := postgres.WithTx(b.ctx, b.db, func(tx pgx.Tx) error {
			list, err := dispatch.Expired(b.ctx, tx, limit)
			out = ids(list)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := expired(10); len(got) != 2 || got[0] != x.DispatchID || got[1] != y.DispatchID {
		t.Fatalf("expired %v, want [%s %s] (oldest expiry first)", got, x.DispatchID, y.DispatchID)
	}
	if got := expired(1); len(got) != 1 || got[0] != x.DispatchID {
		t.Fatalf("expired with limit 1: %v, want [%s]", got, x.DispatchID)
	}

	reaped, txNow := b.reap(t, 10)
	if len(reaped) != 2 || reaped[x.DispatchID] != dispatch.Queued || reaped[y.DispatchID] != dispatch.Queued {
		t.Fatalf("reaped %v, want x and y queued", reaped)
	}
	b.unchanged(t, liveSnap, "the reaper")
	for _, d := range []*dispatch.Dispatch{x, y} {
		got := b.get(t, d.DispatchID)
		if got.State != dispatch.Queued || got.Attempt != 1 || got.ClaimToken != nil || got.ClaimedBy != nil ||
			!got.LeaseExpiresAt.IsZero() || str(got.LastError) != "lease expired" || !got.FinishedAt.IsZero() {
			t.Fatalf("reaped %s, want queued, attempt 1, claim cleared, last_error set", show(got))
		}
		// Backoff(1): 250 ms ± 20% after the reaper's now().
		within(t, "available_at after the reaper", got.AvailableAt.Time, txNow.Add(200*time.Millisecond), txNow.Add(300*time.Millisecond))
		atts := b.attempts(t, d.DispatchID)
		if len(atts) != 1 || atts[0].EndedAt.Before(atts[0].ClaimedAt.Time) || str(atts[0].Outcome) != "lease_expired" || str(atts[0].Error) != "lease expired" {
			t.Fatalf("attempts %s, want one ended lease_expired", showAttempts(atts))
		}
	}
	if again, _ := b.reap(t, 10); len(again) != 0 {
		t.Fatalf("reaped again: %v", again)
	}

	// The next claim is attempt 2 with a new token; its expiry at
	// max_attempts dead-letters it.
	b.makeAvailable(t, x.DispatchID)
	before := b.now(t)
	c := b.claimOne(t, x)
	b.checkClaimed(t, c, "w1", 2, longLease, before, b.now(t))
	if *c.ClaimToken == *claimed[x.DispatchID].ClaimToken {
		t.Fatal("the second claim reuses the first token")
	}
	b.expireLease(t, x.DispatchID, time.Millisecond)
	reaped, txNow = b.reap(t, 10)
	if reaped[x.DispatchID] != dispatch.DeadLetter {
		t.Fatalf("reaped %v, want x dead_letter", reaped)
	}
	got := b.get(t, x.DispatchID)
	if got.State != dispatch.DeadLetter || got.Attempt != 2 || got.ClaimToken != nil || !got.LeaseExpiresAt.IsZero() ||
		str(got.LastError) != "lease expired" {
		t.Fatalf("dead-lettered %s", show(got))
	}
	within(t, "finished_at", got.FinishedAt.Time, txNow, b.now(t))
	atts := b.attempts(t, x.DispatchID)
	if len(atts) != 2 || str(atts[1].Outcome) != "lease_expired" || atts[1].EndedAt.IsZero() {
		t.Fatalf("attempts %s, want the second ended lease_expired", showAttempts(atts))
	}
	b.makeAvailable(t, y.DispatchID)
	if list := b.claim(t, dispatch.ClaimParams{Limit: 10}); len(list) != 1 || list[0].DispatchID != y.DispatchID {
		t.Fatalf("claimed %v, want only y (a dead letter is not claimable)", ids(list))
	}
}

// A lease expires by the clock alone: a claim with a 1 ms lease is soon
// fenced and found by Expired, though nothing touched it.
func TestLeaseExpiresByTheClock(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d := b.enqueue(t, dispatchOpts{})
	list := b.claim(t, dispatch.ClaimParams{Limit: 1, Lease: time.Millisecond})
	if len(list) != 1 {
		t.Fatalf("claimed %v", ids(list))
	}
	token := *list[0].ClaimToken
	deadline := time.Now().Add(5 * time.Second)
	for {
		var found []dispatch.Dispatch
		err := postgres.WithTx(b.ctx, b.db, func(tx pgx.Tx) error {
			var err error
			found, err = dispatch.Expired(b.ctx, tx, 10)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(found) == 1 && found[0].DispatchID == d.DispatchID {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a 1 ms lease not expired after 5 s: %v", ids(found))
		}
		time.Sleep(5 * time.Millisecond)
	}
	snap := b.snapshot(t, d.DispatchID)
	_, _, err := dispatch.RenewLease(b.ctx, b.db, d.DispatchID, token, time.Minute)
	wantFenced(t, err, "heartbeat after expiry")
	wantFenced(t, b.ack(d.DispatchID, token), "ack after expiry")
	b.unchanged(t, snap, "operations on an expired claim")
}

// Concurrent reapers split the expired claims (SKIP LOCKED): each is
// handed to one of them.
func TestConcurrentReapersSplitExpiredClaims(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := b.enqueue(t, dispatchOpts{})
	second := b.enqueue(t, dispatchOpts{})
	b.claim(t, dispatch.ClaimParams{Limit: 2})
	b.expireLease(t, first.DispatchID, 2*time.Second)
	b.expireLease(t, second.DispatchID, time.Second)

	begin := func() pgx.Tx {
		t.Helper()
		tx, err := b.db.Begin(b.ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
		// Without SKIP LOCKED a reaper would wait for another's locks: an
		// error, not a hang.
		if _, err := tx.Exec(b.ctx, `SET LOCAL lock_timeout = '5s'`); err != nil {
			t.Fatal(err)
		}
		return tx
	}
	expired := func(tx pgx.Tx, limit int) []uuid.UUID {
		t.Helper()
		list, err := dispatch.Expired(b.ctx, tx, limit)
		if err != nil {
			t.Fatal(err)
		}
		return ids(list)
	}
	tx1, tx2, tx3 := begin(), begin(), begin()
	if got := expired(tx1, 1); len(got) != 1 || got[0] != first.DispatchID {
		t.Fatalf("reaper 1: %v, want [%s]", got, first.DispatchID)
	}
	if got := expired(tx2, 10); len(got) != 1 || got[0] != second.DispatchID {
		t.Fatalf("reaper 2: %v, want only [%s] (the first is locked)", got, second.DispatchID)
	}
	if got := expired(tx3, 10); len(got) != 0 {
		t.Fatalf("reaper 3: %v, want nothing (both locked)", got)
	}
	if err := tx1.Rollback(b.ctx); err != nil {
		t.Fatal(err)
	}
	if got := expired(tx3, 10); len(got) != 1 || got[0] != first.DispatchID {
		t.Fatalf("reaper 3 after reaper 1 let go: %v, want [%s]", got, first.DispatchID)
	}
}
