package threads

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/postgres"
)

// DeleteStrategy says what happens to a deleted thread's children.
type DeleteStrategy string

// Delete strategies; see the package documentation.
const (
	DeleteDetach  DeleteStrategy = "detach"
	DeleteReject  DeleteStrategy = "reject"
	DeleteCascade DeleteStrategy = "cascade"
)

// ParseDeleteStrategy reads the strategy query parameter ("" → detach).
func ParseDeleteStrategy(s string) (DeleteStrategy, error) {
	switch DeleteStrategy(s) {
	case "":
		return DeleteDetach, nil
	case DeleteDetach, DeleteReject, DeleteCascade:
		return DeleteStrategy(s), nil
	}
	return "", apperr.Errorf(apperr.Invalid, "Invalid delete strategy %q: must be one of detach, reject, cascade", s)
}

// Delete deletes thread id with the given strategy in one transaction and
// returns the ids of every deleted thread (the thread itself, plus its
// subtree for cascade).
func (s *Store) Delete(ctx context.Context, id uuid.UUID, strategy DeleteStrategy) ([]uuid.UUID, error) {
	return s.delete(ctx, id, strategy, false)
}

// DeleteExpired deletes thread id (its children become roots) if its ttl
// has run out and it is not busy, both checked under the row lock, so
// activity that restarted the ttl or a run that started in the meantime
// keeps it. It reports whether the thread was deleted.
func (s *Store) DeleteExpired(ctx context.Context, id uuid.UUID) (bool, error) {
	deleted, err := s.delete(ctx, id, DeleteDetach, true)
	if errors.Is(err, errNotExpired) || apperr.CodeOf(err) == apperr.NotFound {
		return false, nil
	}
	return len(deleted) > 0, err
}

var errNotExpired = errors.New("thread not expired")

func (s *Store) delete(ctx context.Context, id uuid.UUID, strategy DeleteStrategy, expiredOnly bool) ([]uuid.UUID, error) {
	var deleted []uuid.UUID
	err := postgres.WithTx(ctx, s.db, func(tx pgx.Tx) error {
		var err error
		deleted, err = deleteTx(ctx, tx, id, strategy, expiredOnly)
		if err != nil {
			return err
		}
		for _, h := range s.deleteHooks {
			if err := h(ctx, tx, deleted); err != nil {
				return err
			}
		}
		// A child in another tenant (only rows written around the API can
		// make one) is detached, never deleted nor read: the foreign key
		// needs it gone from under the deleted threads, and it is not this
		// tenant's to delete.
		if _, err := tx.Exec(ctx, `UPDATE threads SET parent_thread_id = NULL, updated_at = now()
			WHERE parent_thread_id = ANY($1) AND tenant_id <> $2`, deleted, auth.Tenant(ctx)); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM threads WHERE thread_id = ANY($1) AND tenant_id = $2`, deleted, auth.Tenant(ctx))
		return err
	})
	return deleted, err
}

// deleteTx locks what the strategy touches, applies the strategy to the
// children and returns the ids to delete.
func deleteTx(ctx context.Context, tx pgx.Tx, id uuid.UUID, strategy DeleteStrategy, expiredOnly bool) ([]uuid.UUID, error) {
	var expired bool
	err := tx.QueryRow(ctx, `SELECT coalesce(expires_at <= now() AND status <> 'busy', false)
		FROM threads WHERE thread_id = $1 AND tenant_id = $2 FOR UPDATE`, id, auth.Tenant(ctx)).Scan(&expired)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, err
	}
	if expiredOnly && !expired {
		return nil, errNotExpired
	}
	// Holding the row lock, no new child can appear under id: creating or
	// moving a child locks its new parent FOR SHARE first.
	switch strategy {
	case DeleteReject:
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM threads WHERE parent_thread_id = $1 AND tenant_id = $2`, id, auth.Tenant(ctx)).Scan(&n); err != nil {
			return nil, err
		}
		if n > 0 {
			return nil, apperr.Errorf(apperr.Conflict,
				"Thread %s has %d child thread(s); delete or move them first, or use strategy=detach or strategy=cascade", id, n)
		}
	case DeleteDetach:
		if _, err := tx.Exec(ctx, `UPDATE threads SET parent_thread_id = NULL, updated_at = now()
			WHERE parent_thread_id = $1 AND tenant_id = $2`, id, auth.Tenant(ctx)); err != nil {
			return nil, err
		}
	case DeleteCascade:
		return lockSubtree(ctx, tx, id)
	}
	return []uuid.UUID{id}, nil
}

// lockSubtree locks every descendant of root FOR UPDATE and returns the
// subtree, deepest first. It re-reads the subtree after each locking round
// until it stops changing: a child committed between the read and the lock
// is found by the next round, and once a node is locked no child can be
// added under it.
func lockSubtree(ctx context.Context, tx pgx.Tx, root uuid.UUID) ([]uuid.UUID, error) {
	locked := map[uuid.UUID]bool{root: true}
	for {
		rows, err := tx.Query(ctx, `
			WITH RECURSIVE sub(thread_id, depth) AS (
				SELECT thread_id, 1 FROM threads WHERE parent_thread_id = $1 AND tenant_id = $3
				UNION ALL
				SELECT t.thread_id, s.depth + 1 FROM threads t JOIN sub s ON t.parent_thread_id = s.thread_id
				WHERE s.depth < $2 AND t.tenant_id = $3
			)
			SELECT thread_id FROM sub ORDER BY depth DESC`, root, maxDepth, auth.Tenant(ctx))
		if err != nil {
			return nil, err
		}
		subtree, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		if err != nil {
			return nil, err
		}
		var fresh []uuid.UUID
		for _, t := range subtree {
			if !locked[t] {
				fresh = append(fresh, t)
			}
		}
		if len(fresh) == 0 {
			return append(subtree, root), nil
		}
		if _, err := tx.Exec(ctx, `SELECT 1 FROM threads WHERE thread_id = ANY($1) AND tenant_id = $2 ORDER BY thread_id FOR UPDATE`,
			fresh, auth.Tenant(ctx)); err != nil {
			return nil, err
		}
		for _, t := range fresh {
			locked[t] = true
		}
	}
}
