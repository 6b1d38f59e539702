package messagelog

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/checkpoints/serde"
	"github.com/weftdev/weft/internal/postgres"
)

// Reads of the thread's element log by seq (thread_elements, migration
// 014): the elements of compact lists, each stored once per thread under a
// seq that stays its own for the element's whole life. Package
// checkpoints writes the log (and reads it whole to rebuild a list); this
// package only reads it, by seq.

// elementsBySeqSQL reads the elements with the given seqs.
const elementsBySeqSQL = `
SELECT seq, data, run_id, step FROM thread_elements
WHERE thread_id = $1 AND seq = ANY($2::bigint[])`

type elementRow struct {
	Seq   int64   `db:"seq"`
	Data  []byte  `db:"data"`
	RunID *string `db:"run_id"`
	Step  *int    `db:"step"`
}

// elementsBySeq reads the thread's elements with seqs, in the order of
// seqs (one indexed query), each with the run and step of the checkpoint
// that first held it. A seq the log does not hold is a
// checkpoints.ErrElementMissing error: never silently fewer elements.
func elementsBySeq(ctx context.Context, db postgres.DBTX, threadID string, seqs []int64) ([]ListRecord, error) {
	rows, err := db.Query(ctx, elementsBySeqSQL, threadID, seqs)
	if err != nil {
		return nil, fmt.Errorf("list records: %w", err)
	}
	found, err := pgx.CollectRows(rows, pgx.RowToStructByName[elementRow])
	if err != nil {
		return nil, fmt.Errorf("list records: %w", err)
	}
	bySeq := make(map[int64]*elementRow, len(found))
	for i := range found {
		bySeq[found[i].Seq] = &found[i]
	}
	out := make([]ListRecord, 0, len(seqs))
	for _, s := range seqs {
		e, ok := bySeq[s]
		if !ok {
			return nil, fmt.Errorf("thread %s: %w: seq %d", threadID, checkpoints.ErrElementMissing, s)
		}
		val, err := elementJSON(e.Data)
		if err != nil {
			return nil, fmt.Errorf("thread %s seq %d: %w", threadID, s, err)
		}
		out = append(out, ListRecord{Seq: s, Value: val, RunID: e.RunID, Step: e.Step})
	}
	return out, nil
}

// elementJSON is an element as a whole-list read shows it: LangChain
// envelopes rewritten (serde.NormalizeLC), anything else as stored.
func elementJSON(data []byte) (json.RawMessage, error) {
	if !bytes.Contains(data, serde.LCMarker) {
		return json.RawMessage(data), nil
	}
	v, err := serde.Decode(serde.TypeJSON, data)
	if err != nil {
		return nil, err
	}
	return json.Marshal(serde.NormalizeLC(v))
}

// ElementSeqsLast is the greatest seq the thread's element log has handed
// out (0 when none): seqs above it name no element yet.
func ElementSeqsLast(ctx context.Context, db postgres.DBTX, threadID string) (int64, error) {
	var last int64
	err := db.QueryRow(ctx, `SELECT coalesce((SELECT last FROM thread_element_seqs WHERE thread_id = $1), 0)`, threadID).Scan(&last)
	if err != nil {
		return 0, fmt.Errorf("element seqs: %w", err)
	}
	return last, nil
}

// ElementSeqOf is the seq of value in the thread's element log (the
// newest when it was stored more than once), found by its hash; ok is
// false when the log does not hold it (a list under CompactMinBytes, an
// element not committed yet).
func ElementSeqOf(ctx context.Context, db postgres.DBTX, threadID string, value any) (seq int64, ok bool, err error) {
	typ, data, err := serde.Encode(value)
	if err != nil || typ != serde.TypeJSON {
		return 0, false, err
	}
	h := sha256.Sum256(data)
	var s *int64
	if err := db.QueryRow(ctx, `SELECT max(seq) FROM thread_elements WHERE thread_id = $1 AND hash = $2`, threadID, h[:]).Scan(&s); err != nil {
		return 0, false, fmt.Errorf("element seq: %w", err)
	}
	if s == nil {
		return 0, false, nil
	}
	return *s, true, nil
}
