package threads

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/postgres"
)

// sweepBatch bounds the threads one sweep handles; a sweep that filled it
// runs again at once.
const sweepBatch = 100

// PruneToLatest is keep_latest's pruning of thread id's history to its
// latest checkpoint, in tx, which holds the thread's row lock (the ttl
// was checked under it): what other packages keep of the pruned
// checkpoints goes or is stored whole. Package state provides it
// (state.Service.PruneToLatest: checkpoints and the event log, which
// threads does not import), wired where the sweeper starts.
type PruneToLatest func(ctx context.Context, tx pgx.Tx, id uuid.UUID) error

// SweepExpired applies the ttl strategy of up to sweepBatch threads whose
// ttl has run out and that are not busy: delete removes the thread
// (children become roots), keep_latest prunes it to its latest checkpoint
// (prune) and clears expires_at until its next activity. Each thread is
// re-checked under its row lock, so one that saw activity since it was
// selected is left alone. It returns how many threads it changed.
func (s *Store) SweepExpired(ctx context.Context, prune PruneToLatest) (int, error) {
	rows, err := s.db.Query(ctx, `SELECT thread_id, ttl_strategy, tenant_id FROM threads
		WHERE expires_at <= now() AND status <> 'busy' ORDER BY expires_at LIMIT $1`, sweepBatch)
	if err != nil {
		return 0, err
	}
	type due struct {
		ID       uuid.UUID `db:"thread_id"`
		Strategy *string   `db:"ttl_strategy"`
		Tenant   string    `db:"tenant_id"`
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByName[due])
	if err != nil {
		return 0, err
	}
	n := 0
	for _, d := range list {
		var changed bool
		// The sweeper serves every tenant: each thread is handled as its own.
		ctx := auth.WithTenant(ctx, d.Tenant)
		if d.Strategy != nil && *d.Strategy == TTLKeepLatest {
			changed, err = s.pruneExpired(ctx, d.ID, prune)
		} else {
			changed, err = s.DeleteExpired(ctx, d.ID)
		}
		if err != nil {
			return n, err
		}
		if changed {
			n++
		}
	}
	return n, nil
}

// pruneExpired is keep_latest for an expired thread.
func (s *Store) pruneExpired(ctx context.Context, id uuid.UUID, prune PruneToLatest) (bool, error) {
	changed := false
	err := postgres.WithTx(ctx, s.db, func(tx pgx.Tx) error {
		var expired bool
		err := tx.QueryRow(ctx, `SELECT coalesce(expires_at <= now() AND status <> 'busy', false)
			FROM threads WHERE thread_id = $1 AND tenant_id = $2 FOR UPDATE`, id, auth.Tenant(ctx)).Scan(&expired)
		if err == pgx.ErrNoRows || (err == nil && !expired) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := prune(ctx, tx, id); err != nil {
			return err
		}
		changed = true
		_, err = tx.Exec(ctx, `UPDATE threads SET expires_at = NULL WHERE thread_id = $1 AND tenant_id = $2`, id, auth.Tenant(ctx))
		return err
	})
	return changed, err
}

// RunTTLSweeper calls SweepExpired every interval until ctx ends (again at
// once after a full batch), logging once per database outage; prune is
// keep_latest's pruning (PruneToLatest).
func (s *Store) RunTTLSweeper(ctx context.Context, interval time.Duration, prune PruneToLatest, log *slog.Logger) {
	postgres.Every(ctx, interval, log, "thread ttl sweeper", func(ctx context.Context) (bool, error) {
		n, err := s.SweepExpired(ctx, prune)
		if n > 0 {
			log.Info("thread ttl sweeper", "threads", n)
		}
		return n == sweepBatch, err
	})
}
