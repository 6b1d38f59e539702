package threads

import (
	"context"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/postgres"
)

// The writes of the thread row that follow its runs. Package runs (run
// creation, cancellation, retry), the commit coordinator (a run's end:
// SetRunEnded, ProjectLatest in project.go) and the cron scheduler make
// them through these functions, each in the caller's transaction or
// pipeline (a postgres.Pipeline is a DBTX whose Exec queues), so the
// thread's writes keep their place among the caller's statements.

// InsertTemporary inserts (or queues) the thread of a stateless run:
// thread id, metadata, tenant; busy from the start.
func (s *Store) InsertTemporary(ctx context.Context, db postgres.DBTX, id uuid.UUID, metadata map[string]any, tenant string) error {
	_, err := db.Exec(ctx, `INSERT INTO threads (thread_id, metadata, status, tenant_id) VALUES ($1, $2, 'busy', $3)`, id, metadata, tenant)
	return err
}

// SetRunCreated writes (or queues) what a new run runID does to its
// thread id of tenant: metadata merged with metadata (graph and
// assistant), busy, latest_run_id, active_run_id (the oldest run pending
// or running), the run's config (its assistant's merged under it; with
// pythonConfig, as the Python server keeps it: the configurable of the
// assistant and the thread, not the run's), and the ttl clock restarted
// (a new run is activity). The run's row must be written before it in the
// same transaction.
func (s *Store) SetRunCreated(ctx context.Context, db postgres.DBTX, id uuid.UUID, metadata map[string]any, runID uuid.UUID, tenant string, pythonConfig bool) error {
	_, err := db.Exec(ctx, `UPDATE threads SET metadata = metadata || $2, status = 'busy', latest_run_id = $3,
		active_run_id = `+nextActiveRun+`, updated_at = now(),
		config = coalesce((SELECT CASE WHEN NOT $5 THEN r.kwargs -> 'config'
				ELSE ((r.kwargs -> 'config') - 'configurable') || jsonb_build_object('configurable',
					coalesce((SELECT a.config -> 'configurable' FROM assistants a
						WHERE a.assistant_id = r.assistant_id AND jsonb_typeof(a.config -> 'configurable') = 'object'), '{}') ||
					CASE WHEN jsonb_typeof(threads.config -> 'configurable') = 'object' THEN threads.config -> 'configurable' ELSE '{}' END)
				END FROM runs r WHERE r.run_id = $3), config),
		expires_at = `+expiresAtSQL+` WHERE thread_id = $1 AND tenant_id = $4`, id, metadata, runID, tenant,
		pythonConfig)
	return err
}

// DispatchEpochBump increments thread id's dispatch epoch (a cancellation
// of its inflight runs supersedes their queued dispatches) and returns the
// new epoch. The caller holds the thread's row lock.
func (s *Store) DispatchEpochBump(ctx context.Context, db postgres.DBTX, id uuid.UUID) (int64, error) {
	var epoch int64
	err := db.QueryRow(ctx, `UPDATE threads SET dispatch_epoch = dispatch_epoch + 1 WHERE thread_id = $1
		RETURNING dispatch_epoch`, id).Scan(&epoch)
	return epoch, err
}

// SetBusy writes (or queues) thread id as busy again, without error: a
// dead-lettered run of it was requeued.
func (s *Store) SetBusy(ctx context.Context, db postgres.DBTX, id uuid.UUID) error {
	_, err := db.Exec(ctx, `UPDATE threads SET status = 'busy', error = NULL, updated_at = now() WHERE thread_id = $1`, id)
	return err
}

// SetCronID adds cron_id to the metadata of thread id of tenant: the new
// thread of a stateless cron's firing, found by its cron's id.
func (s *Store) SetCronID(ctx context.Context, db postgres.DBTX, id, cronID uuid.UUID, tenant string) error {
	_, err := db.Exec(ctx, `UPDATE threads SET metadata = metadata || jsonb_build_object('cron_id', $2::text)
				WHERE thread_id = $1 AND tenant_id = $3`, id, cronID, tenant)
	return err
}
