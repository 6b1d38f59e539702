package dispatch

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/wire"
)

// State is a dispatch's state: wire.DispatchState, as the worker protocol
// carries it.
type State = wire.DispatchState

// Dispatch states; see the package documentation.
const (
	Queued     = wire.DispatchQueued
	Claimed    = wire.DispatchClaimed
	Acked      = wire.DispatchAcked
	Cancelled  = wire.DispatchCancelled
	Superseded = wire.DispatchSuperseded
	DeadLetter = wire.DispatchDeadLetter
)

// ValidState reports whether s names a dispatch state.
func ValidState(s string) bool {
	switch State(s) {
	case Queued, Claimed, Acked, Cancelled, Superseded, DeadLetter:
		return true
	}
	return false
}

// NOTIFY channels.
const (
	ChannelDispatch = "weft_dispatch" // payload: graph id of newly queued work
	ChannelCancel   = "weft_cancel"   // payload: dispatch id whose run must stop
)

// DefaultMaxAttempts is how many claims a dispatch gets before it is
// dead-lettered.
const DefaultMaxAttempts = 5

// ErrFenced is returned (as an apperr.Conflict, HTTP 409) when an operation
// presents a claim that is no longer valid.
var ErrFenced = errors.New("fenced")

// Fenced is the ErrFenced error for dispatch id.
func Fenced(id uuid.UUID) error { return fenced(id) }

func fenced(id uuid.UUID) error {
	return fmt.Errorf("%w: %w", apperr.Errorf(apperr.Conflict,
		"Dispatch %s is fenced: its lease expired or it was reclaimed, cancelled or finished; this worker must stop", id), ErrFenced)
}

// ErrClaimRace means a claim lost a race with a concurrent one on the same
// thread (the one-claimed-per-thread index refused it); the transaction is
// aborted and the claim may simply be tried again.
var ErrClaimRace = errors.New("claim race")

// Dispatch is one row of run_dispatches: wire.Dispatch, as the worker
// protocol carries it whole (a claimed run's dispatch).
type Dispatch = wire.Dispatch

// Attempt is one claim of a dispatch.
type Attempt struct {
	Attempt   int        `db:"attempt" json:"attempt" validate:"required"`
	Worker    string     `db:"worker" json:"worker" validate:"required"`
	ClaimedAt httpx.Time `db:"claimed_at" json:"claimed_at" validate:"required" swaggertype:"string" format:"date-time"`
	EndedAt   httpx.Time `db:"ended_at" json:"ended_at" validate:"required" swaggertype:"string" format:"date-time" extensions:"x-nullable"`
	Outcome   *string    `db:"outcome" json:"outcome" validate:"required" extensions:"x-nullable"`
	Error     *string    `db:"error" json:"error" validate:"required" extensions:"x-nullable"`
	// LeaseExpiresAt is the attempt's lease: while it holds the claim, the
	// dispatch's current lease; once it ended, the last lease it had.
	LeaseExpiresAt httpx.Time `db:"lease_expires_at" json:"lease_expires_at" validate:"required" swaggertype:"string" format:"date-time" extensions:"x-nullable"`
	// HeartbeatAt is the attempt's last heartbeat (null: none).
	HeartbeatAt httpx.Time `db:"heartbeat_at" json:"heartbeat_at" validate:"required" swaggertype:"string" format:"date-time" extensions:"x-nullable"`
	// Heartbeats counts the attempt's accepted heartbeats.
	Heartbeats int `db:"heartbeats" json:"heartbeats" validate:"required"`
	// FencedWrites counts the commits and nacks this attempt's claim sent
	// after it had lost the claim (lease expired, reclaimed, cancelled,
	// finished): each was refused with 409 and wrote nothing.
	FencedWrites int `db:"fenced_writes" json:"fenced_writes" validate:"required"`
	// FencedAt is when the fence last refused one (null: never).
	FencedAt httpx.Time `db:"fenced_at" json:"fenced_at" validate:"required" swaggertype:"string" format:"date-time" extensions:"x-nullable"`
}

const columns = `dispatch_id, run_id, thread_id, graph_id, state, priority, available_at, attempt, max_attempts,
	epoch, claim_token, claimed_by, claimed_at, lease_expires_at, cancel_action, last_error, created_at, updated_at, finished_at`

func collect(rows pgx.Rows, err error) ([]Dispatch, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByName[Dispatch])
}

// EnqueueParams describe a new dispatch.
type EnqueueParams struct {
	RunID, ThreadID uuid.UUID
	GraphID         string
	Epoch           int64
	// EpochOfThread takes the epoch from the thread row instead (for a
	// caller that sends the enqueue without reading the thread first).
	EpochOfThread bool
	Delay         time.Duration // available after this long (after_seconds)
	MaxAttempts   int           // 0 → DefaultMaxAttempts
}

// Enqueue inserts a queued dispatch and notifies workers when the
// transaction commits.
func Enqueue(ctx context.Context, db postgres.DBTX, p EnqueueParams) (uuid.UUID, error) {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	id := uuid.Must(uuid.NewV7())
	var epoch *int64
	if !p.EpochOfThread {
		epoch = &p.Epoch
	}
	_, err := db.Exec(ctx, `
		WITH d AS (
			INSERT INTO run_dispatches (dispatch_id, run_id, thread_id, graph_id, epoch, max_attempts, available_at)
			VALUES ($1, $2, $3, $4, coalesce($5, (SELECT dispatch_epoch FROM threads WHERE thread_id = $3)), $6,
				clock_timestamp() + $7::interval)
		)
		SELECT pg_notify('`+ChannelDispatch+`', $4)`,
		id, p.RunID, p.ThreadID, p.GraphID, epoch, p.MaxAttempts, p.Delay)
	if err != nil {
		return uuid.Nil, fmt.Errorf("dispatch enqueue: %w", err)
	}
	return id, nil
}

// ClaimParams select what a worker claims.
type ClaimParams struct {
	Worker   string
	GraphIDs []string // nil: any graph
	Limit    int
	Lease    time.Duration
}

const dispatchClaimSQL = `
WITH picked AS (
    SELECT d.dispatch_id FROM run_dispatches d
    WHERE d.state = 'queued' AND d.available_at <= now()
      AND ($2::text[] IS NULL OR d.graph_id = ANY($2))
      AND NOT EXISTS (SELECT 1 FROM run_dispatches o
                      WHERE o.thread_id = d.thread_id AND o.state IN ('queued', 'claimed') AND o.seq < d.seq)
      -- A thread with a claimed dispatch is busy, even with a younger one (a
      -- retried dead letter is older than the run that went on meanwhile):
      -- picking it would fail the whole claim on the one-claim index.
      AND NOT EXISTS (SELECT 1 FROM run_dispatches c WHERE c.thread_id = d.thread_id AND c.state = 'claimed')
    ORDER BY d.priority, d.available_at, d.seq
    LIMIT $1
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE run_dispatches d SET state = 'claimed', claim_token = gen_random_uuid(), claimed_by = $3,
        claimed_at = clock_timestamp(), lease_expires_at = clock_timestamp() + $4::interval,
        attempt = d.attempt + 1, updated_at = now()
    FROM picked WHERE d.dispatch_id = picked.dispatch_id
    RETURNING d.*
), attempts AS (
    INSERT INTO run_dispatch_attempts (dispatch_id, attempt, worker, claimed_at, claim_token, lease_expires_at)
    SELECT dispatch_id, attempt, claimed_by, claimed_at, claim_token, lease_expires_at FROM claimed
)
SELECT ` + columns + ` FROM claimed`

func (p ClaimParams) args() []any {
	var graphs any
	if p.GraphIDs != nil {
		graphs = p.GraphIDs
	}
	return []any{max(p.Limit, 1), graphs, p.Worker, p.Lease}
}

func claimErr(err error) error {
	if postgres.IsUniqueViolation(err) {
		return fmt.Errorf("%w: %w", ErrClaimRace, err)
	}
	return fmt.Errorf("dispatch claim: %w", err)
}

// Claim claims up to p.Limit available dispatches (oldest first,
// FIFO per thread, never a second claimed dispatch on a thread) with a fresh
// claim token and a lease of p.Lease, in one statement. A lost race is an
// ErrClaimRace error.
func Claim(ctx context.Context, db postgres.DBTX, p ClaimParams) ([]Dispatch, error) {
	list, err := collect(db.Query(ctx, dispatchClaimSQL, p.args()...))
	if err != nil {
		return nil, claimErr(err)
	}
	return list, nil
}

// QueueClaim queues Claim's statement on b (to send it with other
// statements in one round trip); the claimed dispatches go to *out.
func QueueClaim(b *pgx.Batch, p ClaimParams, out *[]Dispatch) {
	b.Queue(dispatchClaimSQL, p.args()...).Query(func(rows pgx.Rows) error {
		list, err := pgx.CollectRows(rows, pgx.RowToStructByName[Dispatch])
		if err != nil {
			return claimErr(err)
		}
		*out = list
		return nil
	})
}

// Fence locks dispatch id for the rest of the transaction and
// checks the claim: it must be claimed with token and its lease must not
// have expired. Anything else is ErrFenced (409).
func Fence(ctx context.Context, tx pgx.Tx, id, token uuid.UUID) (*Dispatch, error) {
	list, err := collect(tx.Query(ctx, `SELECT `+columns+` FROM run_dispatches WHERE dispatch_id = $1 FOR UPDATE`, id))
	if err != nil {
		return nil, fmt.Errorf("dispatch fence: %w", err)
	}
	if len(list) == 0 {
		return nil, fenced(id)
	}
	d := &list[0]
	return d, CheckFence(d, token)
}

// CheckFence reports ErrFenced unless d (read under its row lock) is
// claimed with token and its lease has not expired.
func CheckFence(d *Dispatch, token uuid.UUID) error {
	if d.State != Claimed || d.ClaimToken == nil || *d.ClaimToken != token || !d.LeaseExpiresAt.After(time.Now()) {
		return fenced(d.DispatchID)
	}
	return nil
}

// ColumnsOf is the column list of Dispatch, qualified by alias.
func ColumnsOf(alias string) string { return postgres.Qualify(alias, columns) }

// RenewLease extends a valid claim's lease to lease from now and
// returns the new expiry and the cancellation requested for its run ("" when
// none). An invalid claim is ErrFenced.
func RenewLease(ctx context.Context, db postgres.DBTX, id, token uuid.UUID, lease time.Duration) (time.Time, string, error) {
	var exp time.Time
	var cancel *string
	err := db.QueryRow(ctx, `
		WITH d AS (
			UPDATE run_dispatches SET lease_expires_at = clock_timestamp() + $3::interval, updated_at = now()
			WHERE dispatch_id = $1 AND claim_token = $2 AND state = 'claimed' AND lease_expires_at > clock_timestamp()
			RETURNING dispatch_id, attempt, lease_expires_at, cancel_action
		), a AS (
			UPDATE run_dispatch_attempts a SET heartbeat_at = clock_timestamp(), heartbeats = a.heartbeats + 1,
				lease_expires_at = d.lease_expires_at
			FROM d WHERE a.dispatch_id = d.dispatch_id AND a.attempt = d.attempt
		)
		SELECT lease_expires_at, cancel_action FROM d`, id, token, lease).Scan(&exp, &cancel)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, "", fenced(id)
	}
	if err != nil {
		return time.Time{}, "", fmt.Errorf("dispatch renew lease: %w", err)
	}
	if cancel == nil {
		return exp, "", nil
	}
	return exp, *cancel, nil
}

// leaseBefore reads, in a statement whose CTE clears the dispatch's lease
// ($1 the dispatch id), the lease it had: every part of one statement sees
// the snapshot taken before it, so the ending attempt keeps its last lease.
const leaseBefore = `(SELECT lease_expires_at FROM run_dispatches WHERE dispatch_id = $1)`

// End moves a claimed dispatch to a terminal state (acked,
// cancelled, superseded or dead_letter) and closes its attempt with outcome.
// When a run queued behind it on its thread (an enqueued double text) can
// now be claimed, it sends the queue's notification for that run's graph:
// no other event would wake the claimers waiting for it.
func End(ctx context.Context, db postgres.DBTX, id uuid.UUID, state State, outcome, errText string) error {
	_, err := db.Exec(ctx, `
		WITH d AS (
			UPDATE run_dispatches SET state = $2, claim_token = NULL, lease_expires_at = NULL,
				last_error = coalesce(nullif($4, ''), last_error), finished_at = clock_timestamp(), updated_at = now()
			WHERE dispatch_id = $1
			RETURNING dispatch_id, attempt, thread_id
		)
		UPDATE run_dispatch_attempts a SET ended_at = clock_timestamp(), outcome = $3, error = nullif($4, ''),
			lease_expires_at = coalesce(`+leaseBefore+`, a.lease_expires_at)
		FROM d LEFT JOIN LATERAL (
			SELECT pg_notify('`+ChannelDispatch+`', q.graph_id) FROM run_dispatches q
			WHERE q.thread_id = d.thread_id AND q.state = 'queued' ORDER BY q.seq LIMIT 1
		) next ON true
		WHERE a.dispatch_id = d.dispatch_id AND a.attempt = d.attempt AND a.ended_at IS NULL`,
		id, state, outcome, errText)
	if err != nil {
		return fmt.Errorf("dispatch end: %w", err)
	}
	return nil
}

// Backoff is the delay before retry number attempt (1-based): 250 ms
// doubling up to 30 s, with ±20% jitter.
func Backoff(attempt int) time.Duration {
	d := 250 * time.Millisecond << min(max(attempt-1, 0), 7)
	d = min(d, 30*time.Second)
	return d + time.Duration((rand.Float64()*0.4-0.2)*float64(d))
}

// Requeue ends the current attempt of a claimed dispatch with
// outcome and errText: back to queued after a backoff, or to dead_letter
// when it has had max_attempts claims. It returns the new state.
func Requeue(ctx context.Context, db postgres.DBTX, d *Dispatch, outcome, errText string) (State, error) {
	if d.Attempt >= d.MaxAttempts {
		return DeadLetter, End(ctx, db, d.DispatchID, DeadLetter, outcome, errText)
	}
	_, err := db.Exec(ctx, `
		WITH d AS (
			UPDATE run_dispatches SET state = 'queued', claim_token = NULL, claimed_by = NULL, lease_expires_at = NULL,
				available_at = now() + $3::interval, last_error = nullif($4, ''), updated_at = now()
			WHERE dispatch_id = $1
			RETURNING dispatch_id, attempt
		)
		UPDATE run_dispatch_attempts a SET ended_at = clock_timestamp(), outcome = $2, error = nullif($4, ''),
			lease_expires_at = coalesce(`+leaseBefore+`, a.lease_expires_at)
		FROM d WHERE a.dispatch_id = d.dispatch_id AND a.attempt = d.attempt AND a.ended_at IS NULL`,
		d.DispatchID, outcome, Backoff(d.Attempt), errText)
	if err != nil {
		return "", fmt.Errorf("dispatch requeue: %w", err)
	}
	return Queued, nil
}

// Expired locks up to limit claimed dispatches whose lease has
// expired (SKIP LOCKED, so concurrent reapers split the work) for the rest
// of the transaction.
func Expired(ctx context.Context, tx pgx.Tx, limit int) ([]Dispatch, error) {
	return collect(tx.Query(ctx, `SELECT `+columns+` FROM run_dispatches
		WHERE state = 'claimed' AND lease_expires_at <= clock_timestamp()
		ORDER BY lease_expires_at LIMIT $1 FOR UPDATE SKIP LOCKED`, limit))
}

// OfRun returns the newest dispatch of a run, locked FOR UPDATE.
func OfRun(ctx context.Context, tx pgx.Tx, runID uuid.UUID) (*Dispatch, error) {
	list, err := collect(tx.Query(ctx, `SELECT `+columns+` FROM run_dispatches WHERE run_id = $1
		ORDER BY seq DESC LIMIT 1 FOR UPDATE`, runID))
	if err != nil || len(list) == 0 {
		return nil, err
	}
	return &list[0], nil
}

// CancelQueued cancels the queued dispatches of runs (state
// cancelled, or superseded when supersede) and returns the run ids it
// changed.
func CancelQueued(ctx context.Context, db postgres.DBTX, runIDs []uuid.UUID, supersede bool) ([]uuid.UUID, error) {
	state := Cancelled
	if supersede {
		state = Superseded
	}
	rows, err := db.Query(ctx, `UPDATE run_dispatches SET state = $2, finished_at = now(), updated_at = now()
		WHERE run_id = ANY($1) AND state = 'queued' RETURNING run_id`, runIDs, state)
	if err != nil {
		return nil, fmt.Errorf("dispatch cancel: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
}

// RequestCancel asks the worker holding run's claimed dispatch to
// stop (action interrupt or rollback) and notifies it. It reports whether
// a claimed dispatch was found.
func RequestCancel(ctx context.Context, db postgres.DBTX, runID uuid.UUID, action string) (bool, error) {
	var id uuid.UUID
	err := db.QueryRow(ctx, `
		WITH d AS (
			UPDATE run_dispatches SET cancel_action = CASE WHEN cancel_action = 'rollback' THEN cancel_action ELSE $2 END,
				updated_at = now()
			WHERE run_id = $1 AND state = 'claimed'
			RETURNING dispatch_id
		)
		SELECT dispatch_id FROM d, pg_notify('`+ChannelCancel+`', d.dispatch_id::text) n`, runID, action).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("dispatch request cancel: %w", err)
	}
	return true, nil
}

// Retry puts a dead-lettered dispatch back in the queue with a fresh
// attempt budget (max_attempts more claims; attempts keep counting, so the
// audit keeps every one) and returns it; any other state is a 409.
//
// It serves the admin's queue, across tenants (POST /dispatches/{id}/retry
// needs the admin scope).
func Retry(ctx context.Context, db postgres.DBTX, id uuid.UUID) (*Dispatch, error) {
	list, err := collect(db.Query(ctx, `
		WITH d AS (
			UPDATE run_dispatches SET state = 'queued', max_attempts = attempt + max_attempts, available_at = now(), finished_at = NULL,
				cancel_action = NULL, claimed_by = NULL, updated_at = now()
			WHERE dispatch_id = $1 AND state = 'dead_letter'
			RETURNING *
		)
		SELECT `+columns+` FROM d, pg_notify('`+ChannelDispatch+`', d.graph_id) n`, id))
	if err != nil {
		return nil, fmt.Errorf("dispatch retry: %w", err)
	}
	if len(list) == 0 {
		var state State
		err := db.QueryRow(ctx, `SELECT state FROM run_dispatches WHERE dispatch_id = $1`, id).Scan(&state)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, apperr.Errorf(apperr.NotFound, "Dispatch %s not found", id)
		}
		if err != nil {
			return nil, err
		}
		return nil, apperr.Errorf(apperr.Conflict, "Dispatch %s is %s: only a dead_letter dispatch can be retried", id, state)
	}
	return &list[0], nil
}

// Get returns one dispatch.
func Get(ctx context.Context, db postgres.DBTX, id uuid.UUID) (*Dispatch, error) {
	list, err := collect(db.Query(ctx, `SELECT `+columns+` FROM run_dispatches WHERE dispatch_id = $1`, id))
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, apperr.Errorf(apperr.NotFound, "Dispatch %s not found", id)
	}
	return &list[0], nil
}

// ListParams filter List.
type ListParams struct {
	// Tenant, when set, lists only the dispatches of its runs (a run's
	// dispatches, read by its tenant); nil lists every tenant's (the
	// admin's queue, GET /dispatches).
	Tenant  *string
	State   string
	GraphID string
	RunID   *uuid.UUID
	Limit   int
	Offset  int
}

// List returns dispatches, newest first (oldest first for one run).
func List(ctx context.Context, db postgres.DBTX, p ListParams) ([]Dispatch, error) {
	order := "updated_at DESC, seq DESC"
	if p.RunID != nil {
		order = "seq"
	}
	return collect(db.Query(ctx, `SELECT `+columns+` FROM run_dispatches
		WHERE ($1 = '' OR state = $1) AND ($2 = '' OR graph_id = $2) AND ($3::uuid IS NULL OR run_id = $3)
		  AND ($6::text IS NULL OR EXISTS (SELECT 1 FROM runs r WHERE r.run_id = run_dispatches.run_id AND r.tenant_id = $6))
		ORDER BY `+order+` LIMIT $4 OFFSET $5`, p.State, p.GraphID, p.RunID, p.Limit, p.Offset, p.Tenant))
}

// Attempts returns every attempt of a dispatch, oldest first. The attempt
// holding the claim shows the dispatch's current lease (commits renew it
// too, without touching the attempt row).
func Attempts(ctx context.Context, db postgres.DBTX, id uuid.UUID) ([]Attempt, error) {
	rows, err := db.Query(ctx, `SELECT a.attempt, a.worker, a.claimed_at, a.ended_at, a.outcome, a.error,
			CASE WHEN a.ended_at IS NULL AND d.state = 'claimed' AND d.attempt = a.attempt
				THEN d.lease_expires_at ELSE a.lease_expires_at END AS lease_expires_at,
			a.heartbeat_at, a.heartbeats, a.fenced_writes, a.fenced_at
		FROM run_dispatch_attempts a JOIN run_dispatches d USING (dispatch_id)
		WHERE a.dispatch_id = $1 ORDER BY a.attempt`, id)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByName[Attempt])
}

// RecordFenced counts a commit or nack the fence refused on the attempt
// whose claim token it presented (a token of no attempt counts nowhere). It
// runs after the refused call's transaction, on its own.
func RecordFenced(ctx context.Context, db postgres.DBTX, id, token uuid.UUID) error {
	_, err := db.Exec(ctx, `UPDATE run_dispatch_attempts SET fenced_writes = fenced_writes + 1, fenced_at = clock_timestamp()
		WHERE dispatch_id = $1 AND claim_token = $2`, id, token)
	if err != nil {
		return fmt.Errorf("dispatch record fenced: %w", err)
	}
	return nil
}

// Depth is how many dispatches of one graph are in one state.
type Depth struct {
	State   State  `db:"state"`
	GraphID string `db:"graph_id"`
	Count   int64  `db:"count"`
}

// Depths counts the dispatches that are queued, claimed or
// dead-lettered, by state and graph, in one statement (the open
// dispatches' partial index and the state index): the queue's depth, for
// metrics. Pairs with no dispatch are absent.
func Depths(ctx context.Context, db postgres.DBTX) ([]Depth, error) {
	rows, err := db.Query(ctx, `SELECT state, graph_id, count(*) AS count FROM run_dispatches
		WHERE state IN ('queued', 'claimed', 'dead_letter') GROUP BY state, graph_id`)
	if err != nil {
		return nil, fmt.Errorf("dispatch depth: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByName[Depth])
}

// ClaimTenant returns the tenant of the run of dispatch id while it
// is claimed with token: what a worker's requests made on behalf of that run
// (its graph's store) act for. Any other dispatch, state or token is
// ErrFenced (409): a claim token is the worker's proof that it runs the run.
func ClaimTenant(ctx context.Context, db postgres.DBTX, id, token uuid.UUID) (string, error) {
	var tenant string
	err := db.QueryRow(ctx, `SELECT r.tenant_id FROM run_dispatches d JOIN runs r ON r.run_id = d.run_id
		WHERE d.dispatch_id = $1 AND d.claim_token = $2 AND d.state = 'claimed'`, id, token).Scan(&tenant)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fenced(id)
	}
	return tenant, err
}
