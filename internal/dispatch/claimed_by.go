package dispatch

import (
	"context"
	"fmt"

	"github.com/weftdev/weft/internal/postgres"
)

// CountClaimedBy is how many dispatches worker holds claimed now: the
// runs a process's in-process workers execute (GET /metrics?format=json).
// It reads the claimed dispatches only (run_dispatches_lease_idx).
func CountClaimedBy(ctx context.Context, db postgres.DBTX, worker string) (int64, error) {
	var n int64
	err := db.QueryRow(ctx, `SELECT count(*) FROM run_dispatches
		WHERE state = 'claimed' AND lease_expires_at IS NOT NULL AND claimed_by = $1`, worker).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("dispatches claimed by %s: %w", worker, err)
	}
	return n, nil
}
