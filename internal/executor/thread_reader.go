package executor

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/messagelog"
)

// threadReader is graph.ThreadReader on the database, for nodes of the
// in-process pool: it finds the seq of a window's first element in the
// thread's element log (by its hash; its position when the list is short
// and so numbered by position) and the widest summary ending before it.
type threadReader struct {
	db     *pgxpool.Pool
	thread string
}

func (r threadReader) SummaryBefore(ctx context.Context, channel string, first any, pos int) (*graph.Summary, error) {
	seq, ok, err := messagelog.ElementSeqOf(ctx, r.db, r.thread, first)
	if err != nil {
		return nil, err
	}
	if !ok {
		seq = int64(pos)
	}
	s, err := messagelog.SummaryBefore(ctx, r.db, r.thread, channel, seq)
	if err != nil || s == nil {
		return nil, err
	}
	var v any
	if err := jsonv.Decode(s.Summary, &v); err != nil {
		return nil, err
	}
	return &graph.Summary{FromSeq: s.FromSeq, ToSeq: s.ToSeq, Value: v}, nil
}
