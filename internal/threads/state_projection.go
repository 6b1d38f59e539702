package threads

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/crypt"
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

// ValuesRefMinBytes is the default size of JSON from which a list channel
// of the projection is stored by reference: the size from which the
// checkpoint store keeps a list once per element
// (checkpoints.CompactMinBytes), so that a long conversation's messages
// are not copied into the thread row at every turn.
const ValuesRefMinBytes = 1024

// State is a thread's projection of its latest root checkpoint, as the
// writer that computed it knows it.
type State struct {
	// Values are the checkpoint's state values (what the Thread object
	// shows); nil is JSON null (a thread without checkpoints).
	Values map[string]any
	// Blobs names, for channels of Values, the version of the blob row
	// (this thread, namespace "", channel, version) that holds exactly
	// Values[channel] in plain JSON — one the caller's transaction wrote
	// (a checkpoint put of the channel's new version) or read unchanged
	// (checkpoints.Tuple.AsStored). Only those channels may be stored by
	// reference; nil stores the values whole.
	Blobs map[string]string
	// Encoded optionally holds, for channels of Blobs, the JSON of the
	// value as the put of that blob encoded it: Stored need not encode it
	// again to see whether it is a list worth a reference.
	Encoded map[string][]byte
	// Interrupts are the pending interrupts by task, as JSON.
	Interrupts []byte
}

// StoredState is a State as the thread row stores it: "values" (sealed
// with encryption at rest), values_refs (JSON {channel: version}, nil when
// none) and interrupts (sealed).
type StoredState struct {
	Values, Refs, Interrupts []byte
}

// Stored encodes st for the thread row. Each channel of st.Blobs whose
// value is a JSON list of at least the store's ValuesRefMinBytes is left
// out of Values and named in Refs instead (weft_thread_values merges it
// back when the row is read: the same jsonb); the rest is encoded whole. A
// list holding \u0000, which jsonb refuses, stays whole (its write fails
// as it always did). With encryption at rest (ctx's keyring) nothing is
// referenced (SQL cannot open sealed blobs) and the documents are sealed.
//
// Every writer of the projection stores through Stored, and sets
// values_refs = weft_thread_values_refs(thread_id, Refs), which refuses a
// reference to a blob that does not exist.
func (s *Store) Stored(ctx context.Context, st State) (StoredState, error) {
	kr := crypt.FromContext(ctx)
	vals := st.Values
	var refs map[string]string
	if min := s.cfg.ValuesRefMinBytes; kr == nil && min > 0 && vals != nil {
		for ch, ver := range st.Blobs {
			v, ok := vals[ch]
			if !ok {
				continue
			}
			b := st.Encoded[ch]
			if b == nil {
				var err error
				if b, err = json.Marshal(v); err != nil {
					return StoredState{}, fmt.Errorf("thread values: channel %q: %w", ch, err)
				}
			}
			if len(b) < min || b[0] != '[' || bytes.Contains(b, []byte(`\u0000`)) {
				continue
			}
			if refs == nil {
				refs, vals = map[string]string{}, maps.Clone(vals)
			}
			refs[ch] = ver
			delete(vals, ch)
		}
	}
	values, err := json.Marshal(vals)
	if err != nil {
		return StoredState{}, fmt.Errorf("thread values: %w", err)
	}
	out := StoredState{Values: kr.SealJSON(values), Interrupts: kr.SealJSON(st.Interrupts)}
	if refs != nil {
		out.Refs = jsonv.Must(refs)
	}
	return out, nil
}

// SetState updates the thread's projection of its latest root checkpoint
// (values, interrupts, status, state_updated_at). Callers run it in the
// transaction that wrote the checkpoint.
func (s *Store) SetState(ctx context.Context, db postgres.DBTX, id uuid.UUID, st State, status Status) error {
	stored, err := s.Stored(ctx, st)
	if err != nil {
		return err
	}
	_, err = db.Exec(ctx, `UPDATE threads SET "values" = $2, values_refs = weft_thread_values_refs($1, $6), interrupts = $3,
		status = $4, state_updated_at = now(), updated_at = now() WHERE thread_id = $1 AND tenant_id = $5`,
		id, stored.Values, stored.Interrupts, status, auth.Tenant(ctx), stored.Refs)
	return err
}

// ValuesInline stores thread id's projection whole when it references a
// blob other than keep's (channel → version): a prune that keeps only the
// blobs of keep (the latest checkpoint) calls it first. The projection
// normally references the latest checkpoint's blobs; it does not when a
// run was writing newer checkpoints.
func (s *Store) ValuesInline(ctx context.Context, db postgres.DBTX, id uuid.UUID, keep map[string]string) error {
	if keep == nil {
		keep = map[string]string{}
	}
	_, err := db.Exec(ctx, `UPDATE threads SET "values" = weft_thread_values(thread_id, "values", values_refs), values_refs = NULL
		WHERE thread_id = $1 AND tenant_id = $2 AND values_refs IS NOT NULL AND NOT values_refs <@ $3::jsonb`,
		id, auth.Tenant(ctx), jsonv.Must(keep))
	return err
}

// CopyRow inserts a new thread to with from's metadata, hierarchy, config
// and state projection (status idle) and returns it. A projection stored
// by reference is copied as it is: the references name blobs by version,
// which checkpoints.CopyThread copies unchanged; copy the checkpoints first,
// for the row returned is read with its references rendered.
func (s *Store) CopyRow(ctx context.Context, db postgres.DBTX, from, to uuid.UUID) (*Thread, error) {
	t, err := openOne(ctx)(collectOne(db.Query(ctx, `
		INSERT INTO threads (thread_id, parent_thread_id, resource_id, metadata, config, "values", values_refs, interrupts, state_updated_at, tenant_id)
		SELECT $2, parent_thread_id, resource_id, metadata, config, "values", values_refs, interrupts, state_updated_at, tenant_id
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
