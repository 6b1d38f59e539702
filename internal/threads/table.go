package threads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/crypt"
	"github.com/weftdev/weft/internal/postgres"
)

// DeleteHook removes what other packages keep for threads that are being
// deleted (checkpoints, runs, ...). It runs inside the deleting transaction,
// after the thread rows are locked and before they are deleted.
type DeleteHook func(ctx context.Context, tx pgx.Tx, threadIDs []uuid.UUID) error

// Config tunes a Store.
type Config struct {
	// ValuesRefMinBytes is the size of JSON from which a list channel of a
	// thread's projection is stored by reference to its checkpoint blob
	// (see Stored): 0 means ValuesRefMinBytes, < 0 stores every projection
	// whole.
	ValuesRefMinBytes int
	// DefaultTTL is the ttl of a thread created without one (unset: such
	// threads never expire): langgraph.json's checkpointer.ttl.default_ttl.
	DefaultTTL TTLRequest
}

// NewTTL is the TTLRequest of minutes and strategy (TTLDelete or
// TTLKeepLatest), for Config.DefaultTTL.
func NewTTL(minutes float64, strategy string) TTLRequest {
	return TTLRequest{Set: true, Minutes: minutes, Strategy: strategy}
}

// Store reads and writes threads. Exported methods open their own
// transaction; the lower-case helpers take a DBTX so they compose.
type Store struct {
	db          *pgxpool.Pool
	cfg         Config
	deleteHooks []DeleteHook
}

// NewStore returns a Store on db.
func NewStore(db *pgxpool.Pool, cfg Config) *Store {
	if cfg.ValuesRefMinBytes == 0 {
		cfg.ValuesRefMinBytes = ValuesRefMinBytes
	}
	return &Store{db: db, cfg: cfg}
}

// OnDelete registers a hook run for every thread delete (all strategies).
func (s *Store) OnDelete(h DeleteHook) { s.deleteHooks = append(s.deleteHooks, h) }

// CreateParams are the inputs of Create.
type CreateParams struct {
	ThreadID       uuid.UUID // uuid.Nil → generated (UUIDv7)
	Metadata       map[string]any
	IfExists       string // "raise" (default) or "do_nothing"
	ParentThreadID *uuid.UUID
	ResourceID     *string
	TTL            TTLRequest // unset: the thread never expires
	// Init, when set, runs in the creating transaction right after the
	// insert (not for an existing thread returned by do_nothing); its error
	// undoes the creation. The thread is read again afterwards.
	Init func(ctx context.Context, tx pgx.Tx, id uuid.UUID) error
}

func notFound(id uuid.UUID) error {
	return apperr.Errorf(apperr.NotFound, "Thread with ID %s not found", id)
}

func scanThread(row pgx.CollectableRow) (Thread, error) {
	return pgx.RowToStructByName[Thread](row)
}

func collectOne(rows pgx.Rows, err error) (*Thread, error) {
	if err != nil {
		return nil, err
	}
	t, err := pgx.CollectExactlyOneRow(rows, scanThread)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// openOne decrypts what collectOne read: openOne(ctx)(collectOne(…)).
func openOne(ctx context.Context) func(*Thread, error) (*Thread, error) {
	return func(t *Thread, err error) (*Thread, error) {
		if err != nil {
			return nil, err
		}
		return t, t.open(ctx)
	}
}

// open decrypts the thread's state projection (values, interrupts) when it
// was stored encrypted (package crypt; plaintext rows pass through).
func (t *Thread) open(ctx context.Context) error {
	kr := crypt.FromContext(ctx)
	var err error
	if t.Values, err = kr.OpenJSON(t.Values); err != nil {
		return fmt.Errorf("thread %s values: %w", t.ThreadID, err)
	}
	if t.Interrupts, err = kr.OpenJSON(t.Interrupts); err != nil {
		return fmt.Errorf("thread %s interrupts: %w", t.ThreadID, err)
	}
	return nil
}

// openingEmit wraps a page's emit so that each thread is decrypted first.
func openingEmit(ctx context.Context, emit func(*Thread) (bool, error)) func(*Thread) (bool, error) {
	return func(t *Thread) (bool, error) {
		if err := t.open(ctx); err != nil {
			return false, err
		}
		return emit(t)
	}
}

// InsertDefault is the INSERT of a thread another request creates on the
// way (a run's or a cron's if_not_exists "create"), with InsertDefaultArgs:
// thread_id $1, metadata $2, tenant $3, and the default ttl ($4 minutes,
// $5 strategy, both NULL for none); nothing when the id exists.
const InsertDefault = `INSERT INTO threads (thread_id, metadata, tenant_id, ttl_minutes, ttl_strategy, expires_at)
	VALUES ($1, $2, $3, $4::float8, $5, now() + make_interval(secs => $4::float8 * 60)) ON CONFLICT (thread_id) DO NOTHING`

// InsertDefaultArgs are InsertDefault's arguments: thread id, metadata and
// tenant, then the configured default ttl of a thread created without one
// (none on a nil Store).
func (s *Store) InsertDefaultArgs(id uuid.UUID, metadata map[string]any, tenant string) []any {
	if s == nil || !s.cfg.DefaultTTL.Set {
		return []any{id, metadata, tenant, nil, nil}
	}
	return []any{id, metadata, tenant, s.cfg.DefaultTTL.Minutes, s.cfg.DefaultTTL.Strategy}
}

// threadInsert inserts one thread; no row comes back when the id exists.
const threadInsert = `
	INSERT INTO threads (thread_id, metadata, parent_thread_id, resource_id, ttl_minutes, ttl_strategy, expires_at, tenant_id)
	VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $5::float8 * 60), $7)
	ON CONFLICT (thread_id) DO NOTHING
	RETURNING ` + threadColumns

// Create inserts a thread. With IfExists "do_nothing" an existing thread of
// the same id is returned unchanged; otherwise it is a 409. A parent that
// does not exist is a 422; the parent row is locked FOR SHARE so it cannot
// be deleted (or gain a deleted ancestor) before this transaction commits.
//
// A root thread without Init is one INSERT … ON CONFLICT DO NOTHING
// RETURNING, atomic on its own: no BEGIN/COMMIT round trips. A transaction
// is opened only when a parent must be locked or Init must run with the
// insert.
func (s *Store) Create(ctx context.Context, p CreateParams) (*Thread, error) {
	if p.ThreadID == uuid.Nil {
		p.ThreadID = uuid.Must(uuid.NewV7())
	}
	if p.Metadata == nil {
		p.Metadata = map[string]any{}
	}
	p.ResourceID = normalizeText(p.ResourceID)
	if !p.TTL.Set {
		p.TTL = s.cfg.DefaultTTL
	}
	if p.ParentThreadID == nil && p.Init == nil {
		t, _, err := create(ctx, s.db, p)
		return t, err
	}
	var out *Thread
	var later *InitAfterCommit
	err := postgres.WithTx(ctx, s.db, func(tx pgx.Tx) error {
		if p.ParentThreadID != nil {
			if err := lockParent(ctx, tx, p.ThreadID, *p.ParentThreadID); err != nil {
				return err
			}
		}
		t, existed, err := create(ctx, tx, p)
		if err != nil || existed || p.Init == nil {
			out = t
			return err
		}
		if err := p.Init(ctx, tx, t.ThreadID); err != nil {
			if errors.As(err, &later) {
				out = t // created; Init continues once this commits
				return nil
			}
			return err
		}
		out, err = get(ctx, tx, t.ThreadID)
		return err
	})
	if err != nil || later == nil {
		return out, err
	}
	if err := later.Run(ctx, out.ThreadID); err != nil {
		// Undo the creation: the thread was made for the work that failed.
		if _, derr := s.Delete(context.WithoutCancel(ctx), out.ThreadID, DeleteDetach); derr != nil && apperr.CodeOf(derr) != apperr.NotFound {
			return nil, errors.Join(err, fmt.Errorf("delete thread %s after its init failed: %w", out.ThreadID, derr))
		}
		return nil, err
	}
	return s.Get(ctx, out.ThreadID)
}

// InitAfterCommit is what a CreateParams.Init returns for work that
// cannot run inside the creating transaction (a worker applies it through
// the thread's own API): Create commits the thread, then calls Run; Run's
// error deletes the thread again and is Create's error.
type InitAfterCommit struct {
	Run func(ctx context.Context, id uuid.UUID) error
}

func (*InitAfterCommit) Error() string { return "thread init continues after its creation commits" }

// create runs threadInsert for p (normalised by Create). An existing
// thread of the same id is returned unchanged with existed set for IfExists
// "do_nothing", and is a 409 otherwise.
func create(ctx context.Context, db postgres.DBTX, p CreateParams) (t *Thread, existed bool, err error) {
	// pgtype.UUID goes straight to the wire; a uuid.UUID would go through
	// its driver.Valuer (format to a string, then parse it back).
	id, parent := pgtype.UUID{Bytes: p.ThreadID, Valid: true}, pgtype.UUID{}
	if p.ParentThreadID != nil {
		parent = pgtype.UUID{Bytes: *p.ParentThreadID, Valid: true}
	}
	ttlMinutes, ttlStrategy := p.TTL.ttlArgs()
	t, err = openOne(ctx)(collectOne(db.Query(ctx, threadInsert, id, p.Metadata, parent, p.ResourceID, ttlMinutes, ttlStrategy, auth.Tenant(ctx))))
	if errors.Is(err, pgx.ErrNoRows) {
		// The id is taken, in this tenant or another: ids are global. Only
		// this tenant's thread is returned; another tenant's is the same
		// 409 whatever if_exists says, and nothing of it is read.
		if p.IfExists == "do_nothing" {
			t, err = get(ctx, db, p.ThreadID)
			if apperr.CodeOf(err) != apperr.NotFound {
				return t, true, err
			}
		}
		return nil, true, apperr.Errorf(apperr.Conflict, "Thread %s already exists", p.ThreadID)
	}
	if err != nil {
		return nil, false, mapWriteErr(err)
	}
	return t, false, nil
}

// mapWriteErr turns constraint violations that a race can still produce
// into client errors.
func mapWriteErr(err error) error {
	if postgres.IsForeignKeyViolation(err) {
		return apperr.Errorf(apperr.Invalid, "Parent thread does not exist")
	}
	return err
}

// Get returns one thread.
func (s *Store) Get(ctx context.Context, id uuid.UUID) (*Thread, error) {
	return get(ctx, s.db, id)
}

func get(ctx context.Context, db postgres.DBTX, id uuid.UUID) (*Thread, error) {
	t, err := openOne(ctx)(collectOne(db.Query(ctx, threadGetSQL, id, auth.Tenant(ctx))))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound(id)
	}
	return t, err
}

// PatchParams are the inputs of Patch; nil / unset fields stay unchanged.
type PatchParams struct {
	Metadata map[string]any // merged (shallow) into the existing metadata
	// SetParent tells whether ParentThreadID is given; ParentThreadID nil
	// then makes the thread a root.
	SetParent      bool
	ParentThreadID *uuid.UUID
	SetResource    bool
	ResourceID     *string
	// TTL replaces the thread's ttl when set. Any patch restarts the ttl
	// clock (a patch is activity on the thread).
	TTL TTLRequest
}

// Patch merges metadata and may move the thread under another parent (or
// make it a root). A new parent is validated like on Create, plus the cycle
// check: the new parent must not be the thread itself or a descendant of it.
func (s *Store) Patch(ctx context.Context, id uuid.UUID, p PatchParams) (*Thread, error) {
	var out *Thread
	err := postgres.WithTx(ctx, s.db, func(tx pgx.Tx) error {
		var exists bool
		err := tx.QueryRow(ctx, `SELECT true FROM threads WHERE thread_id = $1 AND tenant_id = $2 FOR UPDATE`,
			id, auth.Tenant(ctx)).Scan(&exists)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound(id)
		}
		if err != nil {
			return err
		}
		if p.SetParent && p.ParentThreadID != nil {
			if err := checkAncestry(ctx, tx, id, *p.ParentThreadID); err != nil {
				return err
			}
		}
		ttlMinutes, ttlStrategy := p.TTL.ttlArgs()
		meta := p.Metadata
		if meta == nil {
			meta = map[string]any{}
		}
		t, err := openOne(ctx)(collectOne(tx.Query(ctx, `
			UPDATE threads SET
				metadata = metadata || $2,
				parent_thread_id = CASE WHEN $3 THEN $4 ELSE parent_thread_id END,
				resource_id = CASE WHEN $5 THEN $6 ELSE resource_id END,
				ttl_minutes = coalesce($7, ttl_minutes),
				ttl_strategy = coalesce($8, ttl_strategy),
				expires_at = now() + make_interval(secs => coalesce($7, ttl_minutes) * 60),
				updated_at = now()
			WHERE thread_id = $1 AND tenant_id = $9
			RETURNING `+threadColumns,
			id, meta, p.SetParent, p.ParentThreadID, p.SetResource, normalizeText(p.ResourceID), ttlMinutes, ttlStrategy, auth.Tenant(ctx))))
		if err != nil {
			return mapWriteErr(err)
		}
		out = t
		return nil
	})
	return out, err
}

// lockParent checks that parent exists and is not child itself, and locks
// it FOR SHARE until the transaction ends. A new thread has no descendants,
// so it cannot close a cycle: its ancestors need no lock.
func lockParent(ctx context.Context, tx pgx.Tx, child, parent uuid.UUID) error {
	if parent == child {
		return apperr.Errorf(apperr.Invalid, "Thread %s cannot be its own parent", child)
	}
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM threads WHERE thread_id = $1 AND tenant_id = $2 FOR SHARE`,
		parent, auth.Tenant(ctx)).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return apperr.Errorf(apperr.Invalid, "Parent thread %s not found", parent)
	}
	return err
}

// maxDepth bounds the ancestor walk; a deeper hierarchy is refused.
const maxDepth = 1000

// checkAncestry validates that parent may become the parent of child: not
// child itself, exists, and child is not among parent's ancestors. Every
// ancestor row is locked FOR SHARE for the rest of the transaction.
func checkAncestry(ctx context.Context, tx pgx.Tx, child, parent uuid.UUID) error {
	if parent == child {
		return apperr.Errorf(apperr.Invalid, "Thread %s cannot be its own parent", child)
	}
	cur := parent
	for depth := 0; ; depth++ {
		if depth >= maxDepth {
			return apperr.Errorf(apperr.Invalid, "Thread hierarchy under %s is deeper than %d levels", parent, maxDepth)
		}
		var next *uuid.UUID
		err := tx.QueryRow(ctx, `SELECT parent_thread_id FROM threads WHERE thread_id = $1 AND tenant_id = $2 FOR SHARE`,
			cur, auth.Tenant(ctx)).Scan(&next)
		if errors.Is(err, pgx.ErrNoRows) {
			// Only the first step can miss: the foreign key keeps every
			// other ancestor in place.
			return apperr.Errorf(apperr.Invalid, "Parent thread %s not found", cur)
		}
		if err != nil {
			return fmt.Errorf("read ancestor %s: %w", cur, err)
		}
		if next == nil {
			return nil
		}
		if *next == child {
			return apperr.Errorf(apperr.Invalid,
				"Cannot make %s the parent of %s: %s is a descendant of %s (that would create a cycle)",
				parent, child, parent, child)
		}
		cur = *next
	}
}

// Children lists the direct children of id, oldest first.
// Rows are read one at a time and handed to emit until it says stop; it
// returns how many were emitted and whether more rows follow.
func (s *Store) Children(ctx context.Context, id uuid.UUID, limit, offset int, emit func(*Thread) (stop bool, err error)) (int, bool, error) {
	if _, err := get(ctx, s.db, id); err != nil {
		return 0, false, err
	}
	rows, err := s.db.Query(ctx, `SELECT `+threadColumns+` FROM threads WHERE parent_thread_id = $1 AND tenant_id = $4
		ORDER BY created_at, thread_id LIMIT $2 OFFSET $3`, id, limit+1, offset, auth.Tenant(ctx))
	if err != nil {
		return 0, false, err
	}
	return postgres.EmitPage(rows, limit, openingEmit(ctx, emit))
}

// jsonObject is a helper for metadata filters: nil stays SQL NULL.
func jsonObject(m map[string]any) any {
	if m == nil {
		return nil
	}
	b, _ := json.Marshal(m)
	return string(b)
}
