package server

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftdev/weft/internal/dispatch"
	"github.com/weftdev/weft/internal/metrics"
	"github.com/weftdev/weft/internal/runs"
)

// watchSnapshot gives GET /metrics?format=json (m.Snapshot) the run queue
// and this process's in-process workers (workers of them, claiming as
// workerID).
func watchSnapshot(m *metrics.Metrics, pool *pgxpool.Pool, workers int, workerID string) {
	if m == nil {
		return
	}
	m.WatchRuns(func(ctx context.Context) (metrics.QueueStats, error) {
		q, err := runs.ReadQueueStats(ctx, pool)
		return metrics.QueueStats{NPending: q.NPending, NRunning: q.NRunning, PendingRunsWaitTimeMaxSecs: q.WaitMaxSecs,
			PendingRunsWaitTimeMedSecs: q.WaitMedSecs, PendingUnblockedRunsWaitTimeMax: q.UnblockedWaitMaxSecs}, err
	})
	m.WatchWorkers(workers, func(ctx context.Context) (int64, error) {
		return dispatch.CountClaimedBy(ctx, pool, workerID)
	})
}
