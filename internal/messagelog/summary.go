package messagelog

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/postgres"
)

// Summary is a record summarizing the elements of a thread's list channel
// with seqs FromSeq..ToSeq (inclusive; the seqs of ListView and the
// message log), supplied by a client or a graph node (seed 001's summary
// layer; migration 019). It never replaces or changes a checkpoint value.
type Summary struct {
	ID        int64           `db:"id"`
	ThreadID  string          `db:"thread_id"`
	Channel   string          `db:"channel"`
	FromSeq   int64           `db:"from_seq"`
	ToSeq     int64           `db:"to_seq"`
	Summary   json.RawMessage `db:"summary"`
	CreatedAt time.Time       `db:"created_at"`
}

// summaryColumns lists Summary's columns in its field order.
const summaryColumns = `id, thread_id, channel, from_seq, to_seq, summary, created_at`

// summaryOrder is "widest first": the greater span wins, then the later
// end, then the newer record. The first summary a query returns is the
// one that wins (SummaryBefore).
const summaryOrder = ` ORDER BY to_seq - from_seq DESC, to_seq DESC, id DESC`

// SummaryAdd stores s (its ID and CreatedAt are assigned). A summary of
// the same thread, channel and range exists already: apperr.Conflict,
// nothing changes. The range is the caller's to check (1 <= FromSeq <=
// ToSeq is enforced by the table).
func SummaryAdd(ctx context.Context, db postgres.DBTX, s Summary) (*Summary, error) {
	rows, err := db.Query(ctx, `INSERT INTO thread_summaries (thread_id, channel, from_seq, to_seq, summary)
		VALUES ($1, $2, $3, $4, $5) RETURNING `+summaryColumns, s.ThreadID, s.Channel, s.FromSeq, s.ToSeq, string(s.Summary))
	if err != nil {
		return nil, fmt.Errorf("summary add: %w", err)
	}
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Summary])
	if postgres.IsUniqueViolation(err) {
		return nil, apperr.Errorf(apperr.Conflict, "Thread %s already has a summary of %s seqs %d..%d",
			s.ThreadID, s.Channel, s.FromSeq, s.ToSeq)
	}
	if err != nil {
		return nil, fmt.Errorf("summary add: %w", err)
	}
	return &out, nil
}

// SummaryFilter selects summaries of a thread (SummaryList).
type SummaryFilter struct {
	// Channel keeps one channel's summaries ("" = every channel).
	Channel string
	// Covering keeps summaries whose range holds this seq (0 = any).
	Covering int64
	// Before keeps summaries that end before this seq (0 = any).
	Before int64
	// Limit caps the list (0 = no cap).
	Limit int
}

// SummaryList returns a thread's summaries matching f, widest first (the
// greater span, then the later end, then the newer record).
func SummaryList(ctx context.Context, db postgres.DBTX, threadID string, f SummaryFilter) ([]Summary, error) {
	q := `SELECT ` + summaryColumns + ` FROM thread_summaries WHERE thread_id = $1`
	args := []any{threadID}
	if f.Channel != "" {
		args = append(args, f.Channel)
		q += fmt.Sprintf(" AND channel = $%d", len(args))
	}
	if f.Covering > 0 {
		args = append(args, f.Covering)
		q += fmt.Sprintf(" AND from_seq <= $%d AND to_seq >= $%d", len(args), len(args))
	}
	if f.Before > 0 {
		args = append(args, f.Before)
		q += fmt.Sprintf(" AND to_seq < $%d", len(args))
	}
	q += summaryOrder
	if f.Limit > 0 {
		args = append(args, f.Limit)
		q += fmt.Sprintf(" LIMIT $%d", len(args))
	}
	rows, err := db.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("summary list: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[Summary])
	if err != nil {
		return nil, fmt.Errorf("summary list: %w", err)
	}
	return out, nil
}

// SummaryBefore is the summary that goes with a window of channel whose
// first element has seq before: the widest of the summaries that end
// before it (before 0: of all the channel's summaries); nil when there is
// none.
func SummaryBefore(ctx context.Context, db postgres.DBTX, threadID, channel string, before int64) (*Summary, error) {
	list, err := SummaryList(ctx, db, threadID, SummaryFilter{Channel: channel, Before: before, Limit: 1})
	if err != nil || len(list) == 0 {
		return nil, err
	}
	return &list[0], nil
}

// SummaryDelete deletes summary id of a thread; a missing one is an
// apperr.NotFound error.
func SummaryDelete(ctx context.Context, db postgres.DBTX, threadID string, id int64) error {
	tag, err := db.Exec(ctx, `DELETE FROM thread_summaries WHERE thread_id = $1 AND id = $2`, threadID, id)
	if err != nil {
		return fmt.Errorf("summary delete: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return apperr.Errorf(apperr.NotFound, "Summary %d not found in thread %s", id, threadID)
	}
	return nil
}
