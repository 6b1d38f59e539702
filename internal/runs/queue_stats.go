package runs

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/postgres"
)

// QueueStats are the runs pending and running, of every tenant, and how
// long the pending ones have waited (seconds since creation; nil when none
// is pending). Unblocked runs are pending runs whose thread has no running
// run (what a free worker could start now), created before now (a delayed
// run is not waiting yet).
type QueueStats struct {
	NPending             int64    `db:"n_pending"`
	NRunning             int64    `db:"n_running"`
	WaitMaxSecs          *float64 `db:"wait_max"`
	WaitMedSecs          *float64 `db:"wait_med"`
	UnblockedWaitMaxSecs *float64 `db:"unblocked_wait_max"`
}

// queueStatsSQL reads the in-flight runs through runs_inflight_idx.
const queueStatsSQL = `
SELECT count(*) FILTER (WHERE status = 'pending') AS n_pending,
       count(*) FILTER (WHERE status = 'running') AS n_running,
       max(extract(epoch FROM now() - created_at)::float8) FILTER (WHERE status = 'pending') AS wait_max,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM now() - created_at)::float8)
           FILTER (WHERE status = 'pending') AS wait_med,
       max(extract(epoch FROM now() - created_at)::float8) FILTER (WHERE status = 'pending' AND created_at < now()
           AND NOT EXISTS (SELECT 1 FROM runs b WHERE b.thread_id = r.thread_id AND b.status = 'running')) AS unblocked_wait_max
FROM runs r
WHERE status IN ('pending', 'running')`

// ReadQueueStats reads the queue in one query (GET /metrics?format=json).
func ReadQueueStats(ctx context.Context, db postgres.DBTX) (QueueStats, error) {
	rows, err := db.Query(ctx, queueStatsSQL)
	if err != nil {
		return QueueStats{}, fmt.Errorf("run queue stats: %w", err)
	}
	q, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[QueueStats])
	if err != nil {
		return QueueStats{}, fmt.Errorf("run queue stats: %w", err)
	}
	return q, nil
}
