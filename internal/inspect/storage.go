package inspect

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/postgres"
)

// TableUsage is the rows a thread has in one table and their bytes.
type TableUsage struct {
	Rows  int64 `json:"rows" validate:"required"`
	Bytes int64 `json:"bytes" validate:"required"`
}

// ThreadStorage is what one thread occupies, and how many children and
// runs it has.
type ThreadStorage struct {
	ThreadID    uuid.UUID  `json:"thread_id" validate:"required" format:"uuid"`
	Checkpoints TableUsage `json:"checkpoints" validate:"required"`
	Blobs       TableUsage `json:"blobs" validate:"required"`
	Writes      TableUsage `json:"writes" validate:"required"`
	RunEvents   TableUsage `json:"run_events" validate:"required"`
	// TotalBytes is the sum of the four tables' bytes.
	TotalBytes int64 `json:"total_bytes" validate:"required"`
	// Children counts the thread's direct children; Runs its runs.
	Children int64 `json:"children" validate:"required"`
	Runs     int64 `json:"runs" validate:"required"`
}

// threadStorageListSQL sums each thread's rows of the four tables (each an
// index range on thread_id) and counts its children and runs (indexed).
// Threads that do not exist, or are another tenant's, are left out.
const threadStorageListSQL = `
SELECT t.thread_id,
       c.n AS c_rows, c.b AS c_bytes, bl.n AS b_rows, bl.b AS b_bytes,
       w.n AS w_rows, w.b AS w_bytes, e.n AS e_rows, e.b AS e_bytes,
       (SELECT count(*) FROM threads ch WHERE ch.parent_thread_id = t.thread_id) AS children,
       (SELECT count(*) FROM runs r WHERE r.thread_id = t.thread_id) AS runs
FROM threads t
JOIN unnest($1::uuid[]) WITH ORDINALITY AS ids(id, ord) ON ids.id = t.thread_id AND t.tenant_id = $2,
LATERAL (SELECT count(*) AS n, coalesce(sum(pg_column_size(checkpoint) + pg_column_size(metadata)), 0)::bigint AS b
         FROM checkpoints WHERE thread_id = t.thread_id::text) c,
LATERAL (SELECT count(*) AS n, coalesce(sum(pg_column_size(blob)), 0)::bigint AS b
         FROM checkpoint_blobs WHERE thread_id = t.thread_id::text) bl,
LATERAL (SELECT count(*) AS n, coalesce(sum(pg_column_size(blob)), 0)::bigint AS b
         FROM checkpoint_writes WHERE thread_id = t.thread_id::text) w,
LATERAL (SELECT count(*) AS n, coalesce(sum(pg_column_size(data) + coalesce(pg_column_size(ref), 0)), 0)::bigint AS b
         FROM run_events WHERE thread_id = t.thread_id) e
ORDER BY ids.ord`

// ThreadStorageList measures the given threads, in the order given;
// unknown ids are left out. The cost is linear in the threads' rows (every
// row of the four tables is read to sum its size), so callers pass a page
// of threads, never all of them.
func ThreadStorageList(ctx context.Context, db postgres.DBTX, ids []uuid.UUID) ([]ThreadStorage, error) {
	rows, err := db.Query(ctx, threadStorageListSQL, ids, auth.Tenant(ctx))
	if err != nil {
		return nil, fmt.Errorf("thread storage: %w", err)
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByName[storageRow])
	if err != nil {
		return nil, fmt.Errorf("thread storage: %w", err)
	}
	out := make([]ThreadStorage, len(list))
	for i, r := range list {
		out[i] = ThreadStorage{ThreadID: r.ThreadID,
			Checkpoints: TableUsage{r.CRows, r.CBytes}, Blobs: TableUsage{r.BRows, r.BBytes},
			Writes: TableUsage{r.WRows, r.WBytes}, RunEvents: TableUsage{r.ERows, r.EBytes},
			TotalBytes: r.CBytes + r.BBytes + r.WBytes + r.EBytes, Children: r.Children, Runs: r.Runs}
	}
	return out, nil
}

type storageRow struct {
	ThreadID uuid.UUID `db:"thread_id"`
	CRows    int64     `db:"c_rows"`
	CBytes   int64     `db:"c_bytes"`
	BRows    int64     `db:"b_rows"`
	BBytes   int64     `db:"b_bytes"`
	WRows    int64     `db:"w_rows"`
	WBytes   int64     `db:"w_bytes"`
	ERows    int64     `db:"e_rows"`
	EBytes   int64     `db:"e_bytes"`
	Children int64     `db:"children"`
	Runs     int64     `db:"runs"`
}
