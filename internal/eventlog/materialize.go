package eventlog

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/postgres"
)

// materializeBatch is how many events MaterializeThread renders at a time.
const materializeBatch = 64

// MaterializeThread stores whole again every event of thread threadID
// that references a checkpoint other than (keepNS, keepID), so that the
// thread's other checkpoints can be deleted (a prune keeping one
// checkpoint) without an event losing its values. Call it in the
// transaction that deletes them, under the thread's lock (no run writing).
// It returns how many events it rewrote.
func MaterializeThread(ctx context.Context, tx postgres.DBTX, threadID uuid.UUID, keepNS, keepID string) (int, error) {
	type row struct {
		RunID uuid.UUID       `db:"run_id"`
		Seq   int64           `db:"seq"`
		Data  json.RawMessage `db:"data"`
		Ref   []byte          `db:"ref"`
	}
	r := NewRenderer(-1)
	total := 0
	var afterRun uuid.UUID
	var afterSeq int64
	for {
		rows, err := tx.Query(ctx, `SELECT run_id, seq, data, ref FROM run_events
			WHERE thread_id = $1 AND ref IS NOT NULL AND (run_id, seq) > ($2, $3)
			  AND NOT (ref->>'ns' = $4 AND ref->>'id' = $5)
			ORDER BY run_id, seq LIMIT $6`, threadID, afterRun, afterSeq, keepNS, keepID, materializeBatch)
		if err != nil {
			return total, fmt.Errorf("materialize events: %w", err)
		}
		page, err := pgx.CollectRows(rows, pgx.RowToStructByName[row])
		if err != nil {
			return total, fmt.Errorf("materialize events: %w", err)
		}
		if len(page) == 0 {
			return total, nil
		}
		items := make([]Item, len(page))
		for i := range page {
			items[i] = Item{RunID: page[i].RunID, Seq: page[i].Seq, Data: &page[i].Data, Ref: &page[i].Ref}
		}
		if err := r.Render(ctx, tx, threadID, items); err != nil {
			return total, err
		}
		runIDs, seqs, datas := make([]uuid.UUID, len(page)), make([]int64, len(page)), make([]string, len(page))
		for i, p := range page {
			runIDs[i], seqs[i], datas[i] = p.RunID, p.Seq, string(p.Data)
		}
		if _, err := tx.Exec(ctx, `UPDATE run_events e SET data = u.data::jsonb, ref = NULL
			FROM unnest($1::uuid[], $2::bigint[], $3::text[]) AS u(run_id, seq, data)
			WHERE e.run_id = u.run_id AND e.seq = u.seq`, runIDs, seqs, datas); err != nil {
			return total, fmt.Errorf("materialize events: %w", err)
		}
		total += len(page)
		last := page[len(page)-1]
		afterRun, afterSeq = last.RunID, last.Seq
	}
}
