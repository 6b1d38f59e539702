package crons

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/postgres"
)

// The crons table's statements. "now" is an argument everywhere it
// decides something ($1 here, nil: the database's now()), so that tests
// move a clock instead of waiting for minutes to pass.

// nowSQL is the current time in a statement whose first argument is the
// clock's reading (nil: now()).
const nowSQL = `coalesce($1::timestamptz, now())`

// cronNow reads the time the scheduling decisions of a transaction use:
// the clock's, or the database's (the same on every replica).
func cronNow(ctx context.Context, db postgres.DBTX, clock *time.Time) (time.Time, error) {
	var now time.Time
	err := db.QueryRow(ctx, `SELECT `+nowSQL, clock).Scan(&now)
	return now.UTC(), err
}

// insertParams are the columns of a new cron.
type insertParams struct {
	CronID         uuid.UUID
	AssistantID    uuid.UUID
	ThreadID       *uuid.UUID
	Schedule       string
	Timezone       string
	EndTime        *time.Time
	Enabled        bool
	OnRunCompleted *string
	Payload        Payload
	Metadata       map[string]any
	NextRunDate    *time.Time
}

// CronInsert inserts a cron and returns it.
func CronInsert(ctx context.Context, db postgres.DBTX, p insertParams) (*Cron, error) {
	// A thread must be the tenant's own: another tenant's is a 404, like a
	// missing one (the foreign key alone would accept it).
	rows, err := db.Query(ctx, `INSERT INTO crons (cron_id, assistant_id, thread_id, schedule, timezone, end_time,
			enabled, on_run_completed, payload, metadata, next_run_date, tenant_id)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12
		WHERE $3::uuid IS NULL OR EXISTS (SELECT 1 FROM threads WHERE thread_id = $3 AND tenant_id = $12)
		RETURNING `+Columns,
		p.CronID, p.AssistantID, p.ThreadID, p.Schedule, p.Timezone, p.EndTime, p.Enabled, p.OnRunCompleted,
		p.Payload, jsonObject(p.Metadata), p.NextRunDate, auth.Tenant(ctx))
	c, err := collectCron(rows, err)
	if errors.Is(err, pgx.ErrNoRows) && p.ThreadID != nil {
		return nil, apperr.Errorf(apperr.NotFound, "Thread with ID %s not found", *p.ThreadID)
	}
	return c, err
}

// CronGet reads a cron; forUpdate locks its row for the caller's
// transaction (waiting for a firing in progress to commit).
func CronGet(ctx context.Context, db postgres.DBTX, id uuid.UUID, forUpdate bool) (*Cron, error) {
	q := `SELECT ` + Columns + ` FROM crons WHERE cron_id = $1 AND tenant_id = $2`
	if forUpdate {
		q += ` FOR UPDATE`
	}
	c, err := collectCron(db.Query(ctx, q, id, auth.Tenant(ctx)))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, apperr.Errorf(apperr.NotFound, "Cron %s not found", id)
	}
	return c, err
}

// CronUpdate writes every changeable column of c and returns the row.
func CronUpdate(ctx context.Context, db postgres.DBTX, c *Cron) (*Cron, error) {
	return collectCron(db.Query(ctx, `UPDATE crons SET schedule = $2, timezone = $3, end_time = $4, enabled = $5,
			on_run_completed = $6, payload = $7, metadata = $8, next_run_date = $9, updated_at = now()
		WHERE cron_id = $1 AND tenant_id = $10 RETURNING `+Columns,
		c.CronID, c.Schedule, c.Timezone, nullTime(c.EndTime.Time), c.Enabled, c.OnRunCompleted, c.Payload,
		c.Metadata, nullTime(c.NextRunDate.Time), auth.Tenant(ctx)))
}

// CronDelete deletes a cron; it waits for a firing of it in progress.
func CronDelete(ctx context.Context, db postgres.DBTX, id uuid.UUID) error {
	tag, err := db.Exec(ctx, `DELETE FROM crons WHERE cron_id = $1 AND tenant_id = $2`, id, auth.Tenant(ctx))
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return apperr.Errorf(apperr.NotFound, "Cron %s not found", id)
	}
	return nil
}

// CronClaimDue locks up to limit enabled crons due at now, oldest
// tick first, skipping the ones another replica has locked. The caller's
// transaction fires each and moves its next_run_date past now before it
// commits; a replica that locked a row before that commit re-reads it
// (READ COMMITTED re-checks the WHERE clause on the new row version) and
// drops it, so a tick is fired once.
func CronClaimDue(ctx context.Context, tx pgx.Tx, now time.Time, limit int) ([]Cron, error) {
	rows, err := tx.Query(ctx, `SELECT `+Columns+` FROM crons
		WHERE enabled AND next_run_date <= $1 AND (end_time IS NULL OR next_run_date <= end_time)
		ORDER BY next_run_date, cron_id
		LIMIT $2 FOR UPDATE SKIP LOCKED`, now, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByName[Cron])
}

// CronAdvance sets a fired cron's next tick (nil: it never fires again).
func CronAdvance(ctx context.Context, tx pgx.Tx, id uuid.UUID, next *time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE crons SET next_run_date = $2 WHERE cron_id = $1`, id, next)
	return err
}

// Filter selects crons for search and count. Zero fields do not filter.
type Filter struct {
	AssistantID *uuid.UUID
	ThreadID    *uuid.UUID
	Enabled     *bool
	Metadata    map[string]any // JSONB containment
}

// SearchParams are Filter plus paging and ordering.
type SearchParams struct {
	Filter
	Limit     int
	Offset    int
	SortBy    string // one of sorts.By (default created_at)
	SortOrder string // asc|desc (default desc)
}

func (f *Filter) where(ctx context.Context) *postgres.Where {
	var w postgres.Where
	w.Add("tenant_id = $%d", auth.Tenant(ctx))
	if f.AssistantID != nil {
		w.Add("assistant_id = $%d", *f.AssistantID)
	}
	if f.ThreadID != nil {
		w.Add("thread_id = $%d", *f.ThreadID)
	}
	if f.Enabled != nil {
		w.Add("enabled = $%d", *f.Enabled)
	}
	if f.Metadata != nil {
		w.Add("metadata @> $%d", jsonObject(f.Metadata))
	}
	return &w
}

// CronSearch passes the crons of one page to emit, in order. n is how
// many were emitted, more whether further matches follow.
func CronSearch(ctx context.Context, db postgres.DBTX, p SearchParams, emit func(*Cron) (stop bool, err error)) (n int, more bool, err error) {
	// NULLs (thread_id of stateless crons, end_time, next_run_date) sort
	// last in either direction; cron_id breaks ties.
	q, args := p.where(ctx).Page(Columns, "crons", postgres.OrderBy(p.SortBy, p.SortOrder, "cron_id", true), p.Limit, p.Offset)
	rows, err := db.Query(ctx, q, args...)
	if err != nil {
		return 0, false, err
	}
	return postgres.EmitPage(rows, p.Limit, emit)
}

// CronCount counts the crons f matches.
func CronCount(ctx context.Context, db postgres.DBTX, f Filter) (int64, error) {
	return f.where(ctx).Count(ctx, db, "crons")
}

func collectCron(rows pgx.Rows, err error) (*Cron, error) {
	if err != nil {
		return nil, err
	}
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Cron])
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// jsonObject is m as a jsonb argument ({} for nil).
func jsonObject(m map[string]any) json.RawMessage {
	if m == nil {
		return json.RawMessage(`{}`)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}

// nullTime is t as an argument: NULL for the zero time.
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
