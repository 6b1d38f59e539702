package threads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/postgres"
)

// StateRef is what the state (checkpoint) API needs to know of a thread.
type StateRef struct {
	ThreadID uuid.UUID
	Metadata map[string]any
	Status   Status
}

// GraphID is the graph the thread is bound to (metadata.graph_id), "" when none.
func (r *StateRef) GraphID() string {
	g, _ := r.Metadata["graph_id"].(string)
	return g
}

// LockForState reads thread id and, with forUpdate, locks its row until the
// transaction ends, so that state changes of one thread are serialised. A
// missing thread is a 404.
func (s *Store) LockForState(ctx context.Context, db postgres.DBTX, id uuid.UUID, forUpdate bool) (*StateRef, error) {
	q := `SELECT thread_id, metadata, status FROM threads WHERE thread_id = $1 AND tenant_id = $2`
	if forUpdate {
		q += ` FOR UPDATE`
	}
	ref := &StateRef{}
	var md []byte
	err := db.QueryRow(ctx, q, id, auth.Tenant(ctx)).Scan(&ref.ThreadID, &md, &ref.Status)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, err
	}
	// Numbers stay exact (json.Number): a value beyond float64 that
	// another writer stored must not make the thread unreadable.
	if err := jsonv.Decode(md, &ref.Metadata); err != nil {
		return nil, fmt.Errorf("thread %s metadata: %w", id, err)
	}
	return ref, nil
}

// SetState updates the thread's projection of its latest root checkpoint
// (values, interrupts, status, state_updated_at). Callers run it in the
// transaction that wrote the checkpoint.
func (s *Store) SetState(ctx context.Context, db postgres.DBTX, id uuid.UUID, values, interrupts json.RawMessage, status Status) error {
	values, interrupts = SealState(ctx, values, interrupts)
	_, err := db.Exec(ctx, `UPDATE threads SET "values" = $2, interrupts = $3, status = $4,
		state_updated_at = now(), updated_at = now() WHERE thread_id = $1 AND tenant_id = $5`,
		id, values, interrupts, status, auth.Tenant(ctx))
	return err
}

// CopyRow inserts a new thread to with from's metadata, hierarchy, config
// and state projection (status idle) and returns it.
func (s *Store) CopyRow(ctx context.Context, db postgres.DBTX, from, to uuid.UUID) (*Thread, error) {
	t, err := openOne(ctx)(collectOne(db.Query(ctx, `
		INSERT INTO threads (thread_id, parent_thread_id, resource_id, metadata, config, "values", interrupts, state_updated_at, tenant_id)
		SELECT $2, parent_thread_id, resource_id, metadata, config, "values", interrupts, state_updated_at, tenant_id
		FROM threads WHERE thread_id = $1 AND tenant_id = $3
		RETURNING `+threadColumns, from, to, auth.Tenant(ctx))))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound(from)
	}
	return t, err
}

// Pool is the store's connection pool, for callers that open their own
// transaction around several stores.
func (s *Store) Pool() postgres.TxStarter { return s.db }
