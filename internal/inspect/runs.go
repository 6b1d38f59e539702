package inspect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/postgres"
)

// RunSummary is a run with what the Run object leaves out: when it started
// and finished, its error, where it forked from and how many events it
// logged. Kwargs (the input) are not included: GET
// /threads/{thread_id}/runs/{run_id} has them.
type RunSummary struct {
	RunID             uuid.UUID  `db:"run_id" json:"run_id" validate:"required" format:"uuid"`
	ThreadID          uuid.UUID  `db:"thread_id" json:"thread_id" validate:"required" format:"uuid"`
	AssistantID       uuid.UUID  `db:"assistant_id" json:"assistant_id" validate:"required" format:"uuid"`
	GraphID           string     `db:"graph_id" json:"graph_id" validate:"required"`
	Status            string     `db:"status" json:"status" validate:"required" enums:"pending,running,success,error,timeout,interrupted"`
	MultitaskStrategy string     `db:"multitask_strategy" json:"multitask_strategy" validate:"required"`
	Attempt           int        `db:"attempt" json:"attempt" validate:"required"`
	CreatedAt         httpx.Time `db:"created_at" json:"created_at" validate:"required" swaggertype:"string" format:"date-time"`
	// StartedAt is the first claim by a worker; FinishedAt the end (both
	// null until then).
	StartedAt  httpx.Time `db:"started_at" json:"started_at" validate:"required" swaggertype:"string" format:"date-time" extensions:"x-nullable"`
	FinishedAt httpx.Time `db:"finished_at" json:"finished_at" validate:"required" swaggertype:"string" format:"date-time" extensions:"x-nullable"`
	UpdatedAt  httpx.Time `db:"updated_at" json:"updated_at" validate:"required" swaggertype:"string" format:"date-time"`
	// Error is the run's error ({error, message}), null unless it failed.
	Error json.RawMessage `db:"error" json:"error" validate:"required" swaggertype:"object" extensions:"x-nullable"`
	// CheckpointID is the checkpoint the run started from when it was
	// created with one (a replay or fork); null otherwise.
	CheckpointID *string `db:"checkpoint_id" json:"checkpoint_id" validate:"required" extensions:"x-nullable"`
	// Resume tells whether the run was created with command.resume.
	Resume bool `db:"resume" json:"resume" validate:"required"`
	// Events is the sequence number of its last logged event (0: none).
	Events   int64           `db:"events" json:"events" validate:"required"`
	Metadata json.RawMessage `db:"metadata" json:"metadata" validate:"required" swaggertype:"object"`
}

const runSummaryColumns = `r.run_id, r.thread_id, r.assistant_id, r.graph_id, r.status, r.multitask_strategy, r.attempt,
       r.created_at, r.started_at, r.finished_at, r.updated_at, r.error,
       nullif(r.kwargs->>'checkpoint_id', '') AS checkpoint_id,
       coalesce(r.kwargs->'command' ? 'resume', false) AS resume,
       coalesce((SELECT max(seq) FROM run_events e WHERE e.run_id = r.run_id), 0) AS events,
       weft_run_metadata(r.metadata, r.assistant_id) AS metadata`

// RunSummaryList reads a page of the thread's runs, newest first (the order
// and index of GET /threads/{thread_id}/runs), up to limit+1 rows so the
// caller can tell whether more follow.
func RunSummaryList(ctx context.Context, db postgres.DBTX, threadID uuid.UUID, limit, offset int) ([]RunSummary, error) {
	rows, err := db.Query(ctx, `SELECT `+runSummaryColumns+` FROM runs r WHERE r.thread_id = $1 AND r.tenant_id = $4
		ORDER BY r.created_at DESC, r.run_id DESC LIMIT $2 OFFSET $3`, threadID, limit+1, offset, auth.Tenant(ctx))
	if err != nil {
		return nil, fmt.Errorf("run summaries: %w", err)
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByName[RunSummary])
	if err != nil {
		return nil, fmt.Errorf("run summaries: %w", err)
	}
	return list, nil
}

// RunSummaryGet reads one run of the thread; apperr.NotFound when the
// thread has no such run.
func RunSummaryGet(ctx context.Context, db postgres.DBTX, threadID, runID uuid.UUID) (*RunSummary, error) {
	rows, err := db.Query(ctx, `SELECT `+runSummaryColumns+` FROM runs r WHERE r.thread_id = $1 AND r.run_id = $2 AND r.tenant_id = $3`,
		threadID, runID, auth.Tenant(ctx))
	if err != nil {
		return nil, fmt.Errorf("run summary: %w", err)
	}
	s, err := pgx.CollectExactlyOneRow(rows, pgx.RowToAddrOfStructByName[RunSummary])
	if err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, apperr.Errorf(apperr.NotFound, "Run %s not found", runID)
		}
		return nil, fmt.Errorf("run summary: %w", err)
	}
	return s, nil
}

// threadExists tells whether the thread has a row in threads.
func threadExists(ctx context.Context, db postgres.DBTX, id uuid.UUID) (bool, error) {
	var ok bool
	if err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM threads WHERE thread_id = $1 AND tenant_id = $2)`,
		id, auth.Tenant(ctx)).Scan(&ok); err != nil {
		return false, fmt.Errorf("thread exists: %w", err)
	}
	return ok, nil
}
