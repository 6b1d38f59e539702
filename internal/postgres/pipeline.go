package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Pipeline collects statements and sends them to PostgreSQL together, in
// one round trip. It is a DBTX whose Exec queues the statement (and always
// succeeds: errors come from Send), so the store functions that only Exec
// can write into it unchanged. Query and QueryRow run at once on Reader
// (the transaction the pipeline will be sent on), before the statements
// queued so far; without a Reader they fail with ErrPipelineRead (use Queue
// with a callback for results).
type Pipeline struct {
	b      pgx.Batch
	Reader DBTX
}

// ErrPipelineRead is the error of a read on a Pipeline without a Reader: a
// caller that can retry in a transaction does so.
var ErrPipelineRead = errors.New("postgres: a Pipeline only queues statements; read with Queue(...).QueryRow")

// Exec queues sql.
func (p *Pipeline) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	p.b.Queue(sql, args...)
	return pgconn.CommandTag{}, nil
}

// Query runs sql at once on Reader.
func (p *Pipeline) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if p.Reader == nil {
		return nil, ErrPipelineRead
	}
	return p.Reader.Query(ctx, sql, args...)
}

// QueryRow runs sql at once on Reader.
func (p *Pipeline) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if p.Reader == nil {
		return errRow{}
	}
	return p.Reader.QueryRow(ctx, sql, args...)
}

type errRow struct{}

func (errRow) Scan(...any) error { return ErrPipelineRead }

// Queue queues sql and returns it, to attach a result callback.
func (p *Pipeline) Queue(sql string, args ...any) *pgx.QueuedQuery { return p.b.Queue(sql, args...) }

// Len is the number of queued statements.
func (p *Pipeline) Len() int { return p.b.Len() }

// BatchSender is what sends a batch: a transaction, or a pool (whose
// batch runs as one implicit transaction: all of it or none).
type BatchSender interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// Send executes the queued statements in order in one round trip and runs
// their callbacks; the first error stops it (and dooms the transaction).
func (p *Pipeline) Send(ctx context.Context, db BatchSender) error {
	if p.b.Len() == 0 {
		return nil
	}
	return db.SendBatch(ctx, &p.b).Close()
}
