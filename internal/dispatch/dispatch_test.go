package dispatch_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/dispatch"
	"github.com/weftdev/weft/internal/postgres"
)

// listen returns a connection of its own that LISTENs on channel.
func (b *bundle) listen(t *testing.T, channel string) *pgx.Conn {
	t.Helper()
	c, err := b.db.Acquire(b.ctx)
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	conn := c.Hijack()
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	if _, err := conn.Exec(b.ctx, `LISTEN `+channel); err != nil {
		t.Fatalf("listen: %v", err)
	}
	return conn
}

// notification waits up to wait for a notification on conn; nil when none
// came.
func notification(t *testing.T, conn *pgx.Conn, wait time.Duration) *pgconn.Notification {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	n, err := conn.WaitForNotification(ctx)
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return nil
	}
	if err != nil {
		t.Fatalf("wait for notification: %v", err)
	}
	return n
}

func TestEnqueueStoresAQueuedDispatchAndNotifiesOnCommit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	listener := b.listen(t, dispatch.ChannelDispatch)

	runID, threadID := b.run(t, runOpts{GraphID: "alpha"})
	before := b.now(t)
	tx, err := b.db.Begin(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	id, err := dispatch.Enqueue(b.ctx, tx, dispatch.EnqueueParams{RunID: runID, ThreadID: threadID, GraphID: "alpha", Epoch: 7})
	if err != nil {
		t.Fatalf("enqueue: %v", err)
	}
	if _, err := dispatch.Get(b.ctx, b.db, id); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("get before commit: %v, want not found", err)
	}
	if n := notification(t, listener, 200*time.Millisecond); n != nil {
		t.Fatalf("notification %q before the commit", n.Payload)
	}
	if err := tx.Commit(b.ctx); err != nil {
		t.Fatal(err)
	}
	after := b.now(t)
	n := notification(t, listener, 5*time.Second)
	if n == nil || n.Channel != dispatch.ChannelDispatch || n.Payload != "alpha" {
		t.Fatalf("notification %+v, want %s with the graph id alpha", n, dispatch.ChannelDispatch)
	}

	d := b.get(t, id)
	if d.RunID != runID || d.ThreadID != threadID || d.GraphID != "alpha" || d.State != dispatch.Queued ||
		d.Priority != 128 || d.Attempt != 0 || d.MaxAttempts != dispatch.DefaultMaxAttempts || d.Epoch != 7 {
		t.Fatalf("enqueued %s", show(d))
	}
	if d.ClaimToken != nil || d.ClaimedBy != nil || !d.ClaimedAt.IsZero() || !d.LeaseExpiresAt.IsZero() ||
		d.CancelAction != nil || d.LastError != nil || !d.FinishedAt.IsZero() {
		t.Fatalf("a queued dispatch carries claim or end fields: %s", show(d))
	}
	within(t, "available_at", d.AvailableAt.Time, before, after)
	within(t, "created_at", d.CreatedAt.Time, before, after)
	if got := b.attempts(t, id); len(got) != 0 {
		t.Fatalf("attempts of an unclaimed dispatch: %s", showAttempts(got))
	}

	// A rolled-back enqueue leaves no row and sends nothing.
	run2, _ := b.run(t, runOpts{Thread: threadID, GraphID: "beta"})
	tx2, err := b.db.Begin(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	id2, err := dispatch.Enqueue(b.ctx, tx2, dispatch.EnqueueParams{RunID: run2, ThreadID: threadID, GraphID: "beta"})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx2.Rollback(b.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := dispatch.Get(b.ctx, b.db, id2); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("get after rollback: %v, want not found", err)
	}
	if n := notification(t, listener, 200*time.Millisecond); n != nil {
		t.Fatalf("notification %q of a rolled-back enqueue", n.Payload)
	}
}

func TestEnqueueParameters(t *testing.T) {
	t.Parallel()
	b := setup(t)
	th := b.thread(t, threadOpts{Epoch: 9})

	fromThread := b.enqueue(t, dispatchOpts{Thread: th, EpochOfThread: true, Epoch: 2})
	if fromThread.Epoch != 9 {
		t.Fatalf("EpochOfThread: epoch %d, want the thread's 9", fromThread.Epoch)
	}
	explicit := b.enqueue(t, dispatchOpts{Thread: th, Epoch: 2})
	if explicit.Epoch != 2 {
		t.Fatalf("explicit epoch %d, want 2", explicit.Epoch)
	}
	if three := b.enqueue(t, dispatchOpts{MaxAttempts: 3}); three.MaxAttempts != 3 {
		t.Fatalf("max_attempts %d, want 3", three.MaxAttempts)
	}
	if neg := b.enqueue(t, dispatchOpts{MaxAttempts: -1}); neg.MaxAttempts != dispatch.DefaultMaxAttempts {
		t.Fatalf("max_attempts %d for -1, want the default %d", neg.MaxAttempts, dispatch.DefaultMaxAttempts)
	}

	before := b.now(t)
	delayed := b.enqueue(t, dispatchOpts{Delay: time.Hour})
	after := b.now(t)
	within(t, "available_at of a 1h delay", delayed.AvailableAt.Time, before.Add(time.Hour), after.Add(time.Hour))

	// The epoch of a thread that does not exist is no epoch: refused.
	runID, _ := b.run(t, runOpts{})
	if _, err := dispatch.Enqueue(b.ctx, b.db, dispatch.EnqueueParams{
		RunID: runID, ThreadID: uuid.New(), GraphID: "agent", EpochOfThread: true,
	}); err == nil {
		t.Fatal("EpochOfThread on a missing thread was accepted")
	}
}

// checkClaimed asserts the claim fields of a dispatch claimed by worker
// between before and after with lease, on its attempt-th claim.
func (b *bundle) checkClaimed(t *testing.T, d *dispatch.Dispatch, worker string, attempt int, lease time.Duration, before, after time.Time) {
	t.Helper()
	if d.State != dispatch.Claimed || d.ClaimToken == nil || *d.ClaimToken == uuid.Nil || str(d.ClaimedBy) != worker || d.Attempt != attempt {
		t.Fatalf("claimed %s, want state claimed with a token, claimed_by %s, attempt %d", show(d), worker, attempt)
	}
	within(t, "claimed_at", d.ClaimedAt.Time, before, after)
	within(t, "lease_expires_at", d.LeaseExpiresAt.Time, d.ClaimedAt.Add(lease), after.Add(lease))
	stored := b.get(t, d.DispatchID)
	if !reflect.DeepEqual(d, stored) {
		t.Fatalf("claim returned %s, the row is %s", show(d), show(stored))
	}
	atts := b.attempts(t, d.DispatchID)
	if len(atts) != attempt {
		t.Fatalf("%d attempt rows, want %d", len(atts), attempt)
	}
	last := atts[attempt-1]
	if last.Attempt != attempt || last.Worker != worker || !last.ClaimedAt.Equal(d.ClaimedAt.Time) ||
		!last.EndedAt.IsZero() || last.Outcome != nil || last.Error != nil {
		t.Fatalf("attempt row %s, want attempt %d of %s claimed at %s, open", showAttempts([]dispatch.Attempt{last}), attempt, worker, d.ClaimedAt)
	}
}

func TestClaimOrderIsPriorityThenAvailableAtThenAge(t *testing.T) {
	t.Parallel()
	b := setup(t)
	base := b.now(t)
	at := func(d time.Duration) *time.Time { return ptr(base.Add(d)) }
	// Each on its own thread, inserted in an order unlike the claim order.
	future := b.enqueue(t, dispatchOpts{Priority: ptr(0), AvailableAt: at(time.Hour)})
	lowPriority := b.enqueue(t, dispatchOpts{Priority: ptr(200), AvailableAt: at(-10 * time.Minute)})
	tieOlder := b.enqueue(t, dispatchOpts{AvailableAt: at(-2 * time.Minute)})
	highPriority := b.enqueue(t, dispatchOpts{Priority: ptr(10), AvailableAt: at(-time.Minute)})
	tieYounger := b.enqueue(t, dispatchOpts{AvailableAt: at(-2 * time.Minute)})
	earliest := b.enqueue(t, dispatchOpts{AvailableAt: at(-3 * time.Minute)})
	delayed := b.enqueue(t, dispatchOpts{Delay: time.Hour})

	tokens := map[uuid.UUID]bool{}
	for i, want := range []*dispatch.Dispatch{highPriority, earliest, tieOlder, tieYounger, lowPriority} {
		worker := fmt.Sprintf("w%d", i)
		before := b.now(t)
		list := b.claim(t, dispatch.ClaimParams{Worker: worker, Limit: 1, Lease: 30 * time.Second})
		after := b.now(t)
		if len(list) != 1 || list[0].DispatchID != want.DispatchID {
			t.Fatalf("claim %d took %v, want %s", i, ids(list), want.DispatchID)
		}
		b.checkClaimed(t, &list[0], worker, 1, 30*time.Second, before, after)
		if tokens[*list[0].ClaimToken] {
			t.Fatalf("claim token %s given twice", *list[0].ClaimToken)
		}
		tokens[*list[0].ClaimToken] = true
	}
	if got := b.claim(t, dispatch.ClaimParams{Limit: 10}); len(got) != 0 {
		t.Fatalf("claimed %v, though only dispatches available in the future are left", ids(got))
	}
	for _, d := range []*dispatch.Dispatch{future, delayed} {
		if got := b.get(t, d.DispatchID); got.State != dispatch.Queued || got.Attempt != 0 || len(b.attempts(t, d.DispatchID)) != 0 {
			t.Fatalf("a dispatch available in the future was touched: %s", show(got))
		}
	}
}

func TestClaimIsFIFOPerThread(t *testing.T) {
	t.Parallel()
	b := setup(t)
	base := b.now(t)

	// Thread A: the younger dispatch has the better priority and was
	// available earlier, and still waits for the older one.
	a := b.thread(t, threadOpts{})
	a1 := b.enqueue(t, dispatchOpts{Thread: a, AvailableAt: ptr(base)})
	a2 := b.enqueue(t, dispatchOpts{Thread: a, Priority: ptr(0), AvailableAt: ptr(base.Add(-time.Hour))})
	// Thread B: one dispatch.
	b1 := b.enqueue(t, dispatchOpts{})
	// Thread C: the older dispatch is delayed; the younger may not overtake it.
	c := b.thread(t, threadOpts{})
	c1 := b.enqueue(t, dispatchOpts{Thread: c, Delay: time.Hour})
	c2 := b.enqueue(t, dispatchOpts{Thread: c})
	// Thread D: the older dispatch was cancelled; it blocks nothing.
	d := b.thread(t, threadOpts{})
	d1 := b.enqueue(t, dispatchOpts{Thread: d})
	if got, err := dispatch.CancelQueued(b.ctx, b.db, []uuid.UUID{d1.RunID}, false); err != nil || len(got) != 1 {
		t.Fatalf("cancel: %v %v", got, err)
	}
	d2 := b.enqueue(t, dispatchOpts{Thread: d})

	got := ids(b.claim(t, dispatch.ClaimParams{Limit: 10}))
	want := []uuid.UUID{a1.DispatchID, b1.DispatchID, d2.DispatchID}
	slices.SortFunc(got, func(x, y uuid.UUID) int { return slices.Compare(x[:], y[:]) })
	slices.SortFunc(want, func(x, y uuid.UUID) int { return slices.Compare(x[:], y[:]) })
	if !slices.Equal(got, want) {
		t.Fatalf("claimed %v, want the heads of the threads %v", got, want)
	}
	// a2 waits while a1 is claimed; c2 while c1 is queued but not available.
	if got := b.claim(t, dispatch.ClaimParams{Limit: 10}); len(got) != 0 {
		t.Fatalf("claimed %v while every thread's head is claimed or delayed", ids(got))
	}
	token := b.get(t, a1.DispatchID).ClaimToken
	if err := b.ack(a1.DispatchID, *token); err != nil {
		t.Fatalf("ack: %v", err)
	}
	b.claimOne(t, a2)
	b.makeAvailable(t, c1.DispatchID)
	b.claimOne(t, c1)
	if got := b.claim(t, dispatch.ClaimParams{Limit: 10}); len(got) != 0 {
		t.Fatalf("claimed %v; c2 must wait for the claimed c1", ids(got))
	}
	if got := b.get(t, c2.DispatchID); got.State != dispatch.Queued || got.Attempt != 0 {
		t.Fatalf("c2 %s, want untouched", show(got))
	}
}

func TestClaimGraphFilterAndLimit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	alpha := b.enqueue(t, dispatchOpts{GraphID: "alpha"})
	beta := b.enqueue(t, dispatchOpts{GraphID: "beta"})
	gamma := b.enqueue(t, dispatchOpts{GraphID: "gamma"})
	var more []*dispatch.Dispatch
	for range 4 {
		more = append(more, b.enqueue(t, dispatchOpts{GraphID: "delta"}))
	}

	if got := b.claim(t, dispatch.ClaimParams{GraphIDs: []string{}, Limit: 10}); len(got) != 0 {
		t.Fatalf("an empty graph list claimed %v, want nothing", ids(got))
	}
	got := b.claim(t, dispatch.ClaimParams{GraphIDs: []string{"gamma", "beta", "nope"}, Limit: 10})
	if len(got) != 2 || !slices.Contains(ids(got), beta.DispatchID) || !slices.Contains(ids(got), gamma.DispatchID) {
		t.Fatalf("graphs beta, gamma claimed %v, want %s and %s", ids(got), beta.DispatchID, gamma.DispatchID)
	}
	// nil: any graph; Limit 0 counts as 1; the oldest first.
	b.claimOne(t, alpha)
	if got := b.claim(t, dispatch.ClaimParams{Limit: 0}); len(got) != 1 || got[0].DispatchID != more[0].DispatchID {
		t.Fatalf("limit 0 claimed %v, want only %s", ids(got), more[0].DispatchID)
	}

	// QueueClaim sends the same statement in a batch.
	var out []dispatch.Dispatch
	batch := &pgx.Batch{}
	before := b.now(t)
	dispatch.QueueClaim(batch, dispatch.ClaimParams{Worker: "batcher", GraphIDs: []string{"delta"}, Limit: 2, Lease: longLease}, &out)
	if err := b.db.SendBatch(b.ctx, batch).Close(); err != nil {
		t.Fatalf("batch claim: %v", err)
	}
	after := b.now(t)
	if len(out) != 2 || !slices.Contains(ids(out), more[1].DispatchID) || !slices.Contains(ids(out), more[2].DispatchID) {
		t.Fatalf("batch claimed %v, want the two oldest left: %s %s", ids(out), more[1].DispatchID, more[2].DispatchID)
	}
	for i := range out {
		b.checkClaimed(t, &out[i], "batcher", 1, longLease, before, after)
	}
	if left := b.get(t, more[3].DispatchID); left.State != dispatch.Queued {
		t.Fatalf("beyond the limit: %s", show(left))
	}
}

// maxRaces bounds the claim races a concurrent claimer retries: a few are
// normal, an endless run of them is a broken queue, which must fail the
// test instead of hanging it.
const maxRaces = 200

// Two (here four) claimers on connections of their own, started together
// over many threads with several dispatches each: every thread's head is
// claimed exactly once, by one claimer, and nothing else is.
func TestConcurrentClaimersGetDisjointSetsOneDispatchPerThread(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const threads, perThread, claimers = 40, 3, 4
	heads := map[uuid.UUID]uuid.UUID{} // dispatch → thread, of each thread's oldest
	for range threads {
		th := b.thread(t, threadOpts{})
		for k := range perThread {
			d := b.enqueue(t, dispatchOpts{Thread: th})
			if k == 0 {
				heads[d.DispatchID] = th
			}
		}
	}

	got := make([][]dispatch.Dispatch, claimers)
	races := make([]int, claimers)
	errs := make(chan error, claimers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range claimers {
		conn, err := b.db.Acquire(b.ctx)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			defer conn.Release()
			<-start
			for {
				list, err := dispatch.Claim(b.ctx, conn, dispatch.ClaimParams{
					Worker: fmt.Sprintf("w%d", i), Limit: 3, Lease: longLease,
				})
				if errors.Is(err, dispatch.ErrClaimRace) {
					// A lost race is retried; one that never stops is a bug.
					if races[i]++; races[i] > maxRaces {
						errs <- fmt.Errorf("%d claim races: %w", races[i], err)
						return
					}
					continue
				}
				if err != nil {
					errs <- err
					return
				}
				if len(list) == 0 {
					return
				}
				got[i] = append(got[i], list...)
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("claimer: %v", err)
	}
	// A claimer may have stopped while another's claim was rolled back:
	// sweep what is left, then the queue must be done.
	sweep := b.claim(t, dispatch.ClaimParams{Worker: "sweep", Limit: 100})
	if again := b.claim(t, dispatch.ClaimParams{Limit: 100}); len(again) != 0 {
		t.Fatalf("claimable after the sweep: %v", ids(again))
	}

	byDispatch := map[uuid.UUID]string{}
	byThread := map[uuid.UUID]uuid.UUID{}
	record := func(worker string, list []dispatch.Dispatch) {
		for _, d := range list {
			if w, dup := byDispatch[d.DispatchID]; dup {
				t.Fatalf("dispatch %s claimed by %s and %s", d.DispatchID, w, worker)
			}
			byDispatch[d.DispatchID] = worker
			if other, dup := byThread[d.ThreadID]; dup {
				t.Fatalf("thread %s has two claims: %s and %s", d.ThreadID, other, d.DispatchID)
			}
			byThread[d.ThreadID] = d.DispatchID
			if th, ok := heads[d.DispatchID]; !ok || th != d.ThreadID {
				t.Fatalf("claimed %s, which is not the head of its thread %s", d.DispatchID, d.ThreadID)
			}
			if str(d.ClaimedBy) != worker || d.Attempt != 1 {
				t.Fatalf("claim %s, want claimed_by %s, attempt 1", show(&d), worker)
			}
		}
	}
	for i, list := range got {
		record(fmt.Sprintf("w%d", i), list)
	}
	record("sweep", sweep)
	if len(byDispatch) != threads {
		t.Fatalf("%d dispatches claimed, want one per thread: %d", len(byDispatch), threads)
	}
	var claimed, attemptRows int
	if err := b.db.QueryRow(b.ctx, `SELECT (SELECT count(*) FROM run_dispatches WHERE state = 'claimed'),
		(SELECT count(*) FROM run_dispatch_attempts)`).Scan(&claimed, &attemptRows); err != nil {
		t.Fatal(err)
	}
	if claimed != threads || attemptRows != threads {
		t.Fatalf("%d claimed rows and %d attempt rows, want %d of each", claimed, attemptRows, threads)
	}
	t.Logf("claims per claimer %d %d %d %d (sweep %d), claim races %v",
		len(got[0]), len(got[1]), len(got[2]), len(got[3]), len(sweep), races)
}

// Concurrent claimers that ack what they claim drain the queue: every
// dispatch is claimed exactly once, and each thread's dispatches are
// claimed in order, each only after the previous one ended.
func TestConcurrentClaimAndAckDrainsEachThreadInOrder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const threads, perThread, claimers = 15, 5, 4
	for range threads {
		th := b.thread(t, threadOpts{})
		for range perThread {
			b.enqueue(t, dispatchOpts{Thread: th})
		}
	}

	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	var mu sync.Mutex
	claims := map[uuid.UUID]int{}
	errs := make(chan error, claimers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range claimers {
		conn, err := b.db.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			defer conn.Release()
			<-start
			races := 0
			for ctx.Err() == nil {
				list, err := dispatch.Claim(ctx, conn, dispatch.ClaimParams{
					Worker: fmt.Sprintf("w%d", i), Limit: 2, Lease: longLease,
				})
				if errors.Is(err, dispatch.ErrClaimRace) {
					if races++; races > maxRaces {
						errs <- fmt.Errorf("%d claim races: %w", races, err)
						return
					}
					continue
				}
				if err != nil {
					errs <- err
					return
				}
				for _, d := range list {
					mu.Lock()
					claims[d.DispatchID]++
					mu.Unlock()
					if err := b.ack(d.DispatchID, *d.ClaimToken); err != nil {
						errs <- fmt.Errorf("ack %s: %w", d.DispatchID, err)
						return
					}
				}
				if len(list) == 0 {
					var open int
					if err := conn.QueryRow(ctx, `SELECT count(*) FROM run_dispatches WHERE state <> 'acked'`).Scan(&open); err != nil {
						errs <- err
						return
					}
					if open == 0 {
						return
					}
					time.Sleep(time.Millisecond)
				}
			}
			errs <- ctx.Err()
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("claimer: %v", err)
	}

	if len(claims) != threads*perThread {
		t.Fatalf("%d dispatches claimed, want %d", len(claims), threads*perThread)
	}
	for id, n := range claims {
		if n != 1 {
			t.Fatalf("dispatch %s claimed %d times", id, n)
		}
	}
	var prevThread uuid.UUID
	var prevFinished time.Time
	n := 0
	rows, err := b.db.Query(b.ctx, `SELECT d.thread_id, d.state, d.attempt, d.claimed_at, d.finished_at,
			(SELECT count(*) FROM run_dispatch_attempts a WHERE a.dispatch_id = d.dispatch_id AND a.outcome = 'acked')
		FROM run_dispatches d ORDER BY d.thread_id, d.seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var th uuid.UUID
		var state string
		var attempt, acked int
		var claimedAt, finishedAt time.Time
		if err := rows.Scan(&th, &state, &attempt, &claimedAt, &finishedAt, &acked); err != nil {
			t.Fatal(err)
		}
		n++
		if state != string(dispatch.Acked) || attempt != 1 || acked != 1 {
			t.Fatalf("dispatch of thread %s: state %s, attempt %d, %d acked attempts; want acked once on its first claim", th, state, attempt, acked)
		}
		if th == prevThread && claimedAt.Before(prevFinished) {
			t.Fatalf("thread %s: a dispatch claimed at %s, before the previous one ended at %s", th, claimedAt, prevFinished)
		}
		prevThread, prevFinished = th, finishedAt
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != threads*perThread {
		t.Fatalf("%d rows, want %d", n, threads*perThread)
	}
}

// The partial unique index on (thread_id) WHERE state = 'claimed' is the
// backstop of one claim per thread: a write that would make a second claim
// is refused, and a claim statement that runs into it is ErrClaimRace and
// claims nothing at all.
func TestOneClaimedDispatchPerThreadIsEnforcedByTheIndex(t *testing.T) {
	t.Parallel()
	b := setup(t)
	th := b.thread(t, threadOpts{})

	// A direct write of a second claim on a thread is refused.
	first := b.enqueue(t, dispatchOpts{Thread: th, MaxAttempts: 1})
	second := b.enqueue(t, dispatchOpts{Thread: th})
	b.claimOne(t, first)
	_, err := b.db.Exec(b.ctx, `UPDATE run_dispatches SET state = 'claimed', claim_token = gen_random_uuid(),
		lease_expires_at = now() + interval '1 minute' WHERE dispatch_id = $1`, second.DispatchID)
	if !postgres.IsUniqueViolation(err) {
		t.Fatalf("second claim on a thread: %v, want a unique violation", err)
	}

	// The claim path towards the same state: first is dead-lettered, second
	// (younger) is claimed, then first is retried, and is queued and older
	// than the claimed second. Claims leave first alone while second holds
	// the thread (taking it would make a second claim on the thread, and
	// fail the whole claim on the index), and take other threads' work.
	token := *b.get(t, first.DispatchID).ClaimToken
	if s, _, err := b.nack(first.DispatchID, token, "boom"); err != nil || s != dispatch.DeadLetter {
		t.Fatalf("nack at the last attempt: %s %v, want dead_letter", s, err)
	}
	claimedSecond := b.claimOne(t, second)
	if _, err := dispatch.Retry(b.ctx, b.db, first.DispatchID); err != nil {
		t.Fatalf("retry: %v", err)
	}
	other := b.enqueue(t, dispatchOpts{})
	waiting := b.snapshot(t, first.DispatchID)
	got, err := dispatch.Claim(b.ctx, b.db, dispatch.ClaimParams{Worker: "w2", Limit: 10, Lease: longLease})
	if err != nil || len(got) != 1 || got[0].DispatchID != other.DispatchID {
		t.Fatalf("claim beside a busy thread: %v %v, want only %s", ids(got), err, other.DispatchID)
	}
	var out []dispatch.Dispatch
	batch := &pgx.Batch{}
	dispatch.QueueClaim(batch, dispatch.ClaimParams{Worker: "w2", Limit: 10, Lease: longLease}, &out)
	if err := b.db.SendBatch(b.ctx, batch).Close(); err != nil || len(out) != 0 {
		t.Fatalf("batch claim with only the busy thread's dispatch left: %v %v, want nothing", ids(out), err)
	}
	b.unchanged(t, waiting, "a claim while its thread is busy")
	// Once the claimed dispatch ends, the retried one is claimed.
	if err := b.ack(second.DispatchID, *claimedSecond.ClaimToken); err != nil {
		t.Fatalf("ack: %v", err)
	}
	list := b.claim(t, dispatch.ClaimParams{Limit: 10})
	if len(list) != 1 || list[0].DispatchID != first.DispatchID {
		t.Fatalf("claimed %v, want %s", ids(list), first.DispatchID)
	}
}

// A claimer skips the dispatches another claimer's open transaction has
// locked instead of waiting for them; a claim rolled back leaves no trace.
func TestClaimSkipsDispatchesLockedByAnotherClaimer(t *testing.T) {
	t.Parallel()
	b := setup(t)
	th := b.thread(t, threadOpts{})
	first := b.enqueue(t, dispatchOpts{Thread: th})
	younger := b.enqueue(t, dispatchOpts{Thread: th})
	other := b.enqueue(t, dispatchOpts{})

	begin := func() pgx.Tx {
		t.Helper()
		tx, err := b.db.Begin(b.ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
		// A claimer that waited for a lock would fail here, not hang.
		if _, err := tx.Exec(b.ctx, `SET LOCAL lock_timeout = '5s'`); err != nil {
			t.Fatal(err)
		}
		return tx
	}
	claim := func(tx pgx.Tx, worker string) []uuid.UUID {
		t.Helper()
		list, err := dispatch.Claim(b.ctx, tx, dispatch.ClaimParams{Worker: worker, Limit: 10, Lease: longLease})
		if err != nil {
			t.Fatalf("claim by %s: %v", worker, err)
		}
		return ids(list)
	}
	tx1, tx2 := begin(), begin()
	if got := claim(tx1, "w1"); len(got) != 2 || !slices.Contains(got, first.DispatchID) || !slices.Contains(got, other.DispatchID) {
		t.Fatalf("w1 claimed %v, want %s and %s", got, first.DispatchID, other.DispatchID)
	}
	// first and other are locked by w1's open claim; younger waits for first.
	if got := claim(tx2, "w2"); len(got) != 0 {
		t.Fatalf("w2 claimed %v, want nothing", got)
	}
	if err := tx1.Rollback(b.ctx); err != nil {
		t.Fatal(err)
	}
	for _, d := range []*dispatch.Dispatch{first, younger, other} {
		if got := b.get(t, d.DispatchID); got.State != dispatch.Queued || got.Attempt != 0 || len(b.attempts(t, d.DispatchID)) != 0 {
			t.Fatalf("after a rolled-back claim: %s", show(got))
		}
	}
	if got := claim(tx2, "w2"); len(got) != 2 || !slices.Contains(got, first.DispatchID) || !slices.Contains(got, other.DispatchID) {
		t.Fatalf("w2 claimed %v after w1 rolled back, want %s and %s", got, first.DispatchID, other.DispatchID)
	}
	if err := tx2.Commit(b.ctx); err != nil {
		t.Fatal(err)
	}
	if got := b.get(t, first.DispatchID); got.State != dispatch.Claimed || str(got.ClaimedBy) != "w2" || got.Attempt != 1 {
		t.Fatalf("after w2's claim: %s", show(got))
	}
}
