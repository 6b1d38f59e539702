package eventlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/postgres"
)

// EncodeResult returns the stored form of a run's result (its final
// values) ended in a commit that wrote cps: like a values event, a
// reference to the checkpoint whose channels it repeats, or whole.
func EncodeResult(result any, cps []Checkpoint, opt Options) (Row, error) {
	rows, err := Encode([]Event{{Name: "values", Data: result}}, cps, nil, opt)
	if err != nil {
		return Row{}, err
	}
	return rows[0], nil
}

// RenderResult returns the whole result of run runID of thread threadID
// from its stored form, as compact JSON: data as stored, whole when ref is
// nil, else the rest of the result with ref naming the checkpoint values
// that fill it (as the checkpoint store encoded them: a long conversation
// is copied, not decoded and encoded again). The same stored form renders
// the same bytes every time; a result stored whole and one stored as a
// reference hold the same JSON, their objects' members not necessarily in
// the same order (jsonb's, the encoder's). When the checkpoint is gone (a
// prune stored the result whole again meanwhile) the run's row is read
// again.
func RenderResult(ctx context.Context, db postgres.DBTX, threadID, runID uuid.UUID, data json.RawMessage, ref []byte) (json.RawMessage, error) {
	if ref == nil {
		return jsonv.Compact(data), nil
	}
	var r Ref
	if err := json.Unmarshal(ref, &r); err != nil {
		return nil, fmt.Errorf("run %s result: bad ref: %w", runID, err)
	}
	vals, err := checkpointValues(ctx, db, threadID, r)
	if err != nil {
		return nil, fmt.Errorf("run %s result: %w", runID, err)
	}
	if vals == nil {
		err := db.QueryRow(ctx, `SELECT result, result_ref FROM runs WHERE run_id = $1`, runID).Scan(&data, &ref)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, apperr.Errorf(apperr.NotFound, "Run %s not found", runID)
		}
		if err != nil {
			return nil, fmt.Errorf("run %s result: %w", runID, err)
		}
		if ref != nil {
			return nil, fmt.Errorf("run %s result references a checkpoint that does not exist", runID)
		}
		return jsonv.Compact(data), nil
	}
	doc, err := merge(jsonv.Compact(data), r, vals)
	if err != nil {
		return nil, fmt.Errorf("run %s result: %w", runID, err)
	}
	return json.RawMessage(doc), nil
}
