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

// MaterializeThread makes thread threadID's other checkpoints than
// (keepNS, keepID) deletable, with the writes recorded under them and the
// blobs only they name (a prune keeping one checkpoint), without a stored
// row losing its values: every event that references one of them or their
// writes is stored whole again, and so is the result of a run whose
// webhook is still to be delivered, and the input of every run stored by
// reference to a __start__ blob the kept checkpoint does not name. The
// other runs' results that reference one of them are forgotten: joining
// such a run afterwards answers as LangGraph's server answers a join after
// the run finished, with the thread's values (storing each old run's final
// values whole again would bring back the storage that grows with the
// square of the conversation). Call it in the transaction that deletes
// them, under the thread's lock (no run writing). It returns how many rows
// it rewrote.
func MaterializeThread(ctx context.Context, tx postgres.DBTX, threadID uuid.UUID, keepNS, keepID string) (int, error) {
	n, err := materializeEvents(ctx, tx, threadID, keepNS, keepID)
	if err != nil {
		return n, err
	}
	m, err := materializeResults(ctx, tx, threadID, keepNS, keepID)
	if err != nil {
		return n + m, err
	}
	i, err := materializeInputs(ctx, tx, threadID, keepNS, keepID)
	return n + m + i, err
}

// materializeInputs stores whole the input of every run of thread
// threadID that references (runs.InputRefSet) a __start__ blob other than
// the one checkpoint (keepNS, keepID) names: the only root blob of that
// channel a prune keeping it is sure to keep.
func materializeInputs(ctx context.Context, tx postgres.DBTX, threadID uuid.UUID, keepNS, keepID string) (int, error) {
	tag, err := tx.Exec(ctx, `UPDATE runs SET kwargs = weft_run_input_whole(kwargs, thread_id)
		WHERE thread_id = $1 AND kwargs ? 'input_ref' AND kwargs ->> 'input_ref' IS DISTINCT FROM
			(SELECT checkpoint -> 'channel_versions' ->> '__start__' FROM checkpoints
			 WHERE thread_id = $1::text AND checkpoint_ns = '' AND $2 = '' AND checkpoint_id = $3)`, threadID, keepNS, keepID)
	if err != nil {
		return 0, fmt.Errorf("materialize inputs: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// materializeResults forgets, or for a pending webhook stores whole, the
// results of thread threadID's runs that reference a checkpoint other
// than (keepNS, keepID).
func materializeResults(ctx context.Context, tx postgres.DBTX, threadID uuid.UUID, keepNS, keepID string) (int, error) {
	const others = `thread_id = $1 AND result_ref IS NOT NULL AND NOT (coalesce(result_ref->>'ns', '') = $2 AND result_ref->>'id' = $3)`
	tag, err := tx.Exec(ctx, `UPDATE runs SET result = NULL, result_ref = NULL
		WHERE `+others+` AND webhook_state IS DISTINCT FROM 'pending'`, threadID, keepNS, keepID)
	if err != nil {
		return 0, fmt.Errorf("materialize results: %w", err)
	}
	type row struct {
		RunID  uuid.UUID       `db:"run_id"`
		Result json.RawMessage `db:"result"`
		Ref    []byte          `db:"result_ref"`
	}
	rows, err := tx.Query(ctx, `SELECT run_id, result, result_ref FROM runs WHERE `+others, threadID, keepNS, keepID)
	if err != nil {
		return 0, fmt.Errorf("materialize results: %w", err)
	}
	pending, err := pgx.CollectRows(rows, pgx.RowToStructByName[row])
	if err != nil {
		return 0, fmt.Errorf("materialize results: %w", err)
	}
	for _, r := range pending {
		whole, err := RenderResult(ctx, tx, threadID, r.RunID, r.Result, r.Ref)
		if err != nil {
			return 0, err
		}
		if _, err := tx.Exec(ctx, `UPDATE runs SET result = $2, result_ref = NULL WHERE run_id = $1`, r.RunID, whole); err != nil {
			return 0, fmt.Errorf("materialize results: %w", err)
		}
	}
	return int(tag.RowsAffected()) + len(pending), nil
}

func materializeEvents(ctx context.Context, tx postgres.DBTX, threadID uuid.UUID, keepNS, keepID string) (int, error) {
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
		// Checkpoint and task references alike name a checkpoint by ns and id.
		rows, err := tx.Query(ctx, `SELECT run_id, seq, data, ref FROM run_events
			WHERE thread_id = $1 AND ref ? 'id' AND (run_id, seq) > ($2, $3)
			  AND NOT (coalesce(ref->>'ns', '') = $4 AND ref->>'id' = $5)
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
