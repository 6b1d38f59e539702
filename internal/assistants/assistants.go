package assistants

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/postgres"
)

// Namespace is the uuid5 namespace of system assistant ids.
var Namespace = uuid.MustParse("6ba7b821-9dad-11d1-80b4-00c04fd430c8")

// SystemID is the id of graphID's system assistant: uuid5(Namespace,
// graphID), as the official server computes it. Anyone can compute the id of
// a graph that is not registered yet, so no client may choose a version-5 id
// (CheckClientID): only registration creates assistants at such ids.
func SystemID(graphID string) uuid.UUID { return uuid.NewSHA1(Namespace, []byte(graphID)) }

// CheckClientID refuses an assistant id a client chose in the system
// namespace. Ids are not reversible to a graph name, so every version-5 id is
// reserved: a client picking the system id of a graph a worker registers
// later would otherwise own that graph's system assistant for every tenant.
func CheckClientID(id uuid.UUID) error {
	if id.Version() == 5 {
		return apperr.Errorf(apperr.Invalid,
			"Invalid assistant_id %s: version-5 UUIDs are reserved for graphs' system assistants (uuid5 of the graph id); omit assistant_id or use a random (version 4) UUID", id)
	}
	return nil
}

// Assistant is the Assistant object of the API (reference §3.1).
type Assistant struct {
	AssistantID uuid.UUID       `db:"assistant_id" json:"assistant_id" validate:"required" format:"uuid"`
	GraphID     string          `db:"graph_id" json:"graph_id" validate:"required"`
	Name        string          `db:"name" json:"name" validate:"required"`
	Description *string         `db:"description" json:"description" validate:"required" extensions:"x-nullable"`
	Config      json.RawMessage `db:"config" json:"config" validate:"required" swaggertype:"object"`
	Context     json.RawMessage `db:"context" json:"context" validate:"required" swaggertype:"object"`
	Metadata    json.RawMessage `db:"metadata" json:"metadata" validate:"required" swaggertype:"object"`
	Version     int             `db:"version" json:"version" validate:"required"`
	CreatedAt   httpx.Time      `db:"created_at" json:"created_at" validate:"required" swaggertype:"string" format:"date-time"`
	UpdatedAt   httpx.Time      `db:"updated_at" json:"updated_at" validate:"required" swaggertype:"string" format:"date-time"`
	// TenantID owns the assistant; Shared marks a system assistant, which
	// every tenant reads and runs and only its owner (the default tenant)
	// changes.
	TenantID string `db:"tenant_id" json:"-"`
	Shared   bool   `db:"shared" json:"-"`
}

const columns = `assistant_id, graph_id, name, description, config, context, metadata, version, created_at, updated_at,
	tenant_id, shared`

// Version is one version of an assistant (POST /assistants/{id}/versions):
// the Assistant fields without updated_at.
type Version struct {
	AssistantID uuid.UUID       `db:"assistant_id" json:"assistant_id" validate:"required" format:"uuid"`
	Version     int             `db:"version" json:"version" validate:"required"`
	GraphID     string          `db:"graph_id" json:"graph_id" validate:"required"`
	Name        string          `db:"name" json:"name" validate:"required"`
	Description *string         `db:"description" json:"description" validate:"required" extensions:"x-nullable"`
	Config      json.RawMessage `db:"config" json:"config" validate:"required" swaggertype:"object"`
	Context     json.RawMessage `db:"context" json:"context" validate:"required" swaggertype:"object"`
	Metadata    json.RawMessage `db:"metadata" json:"metadata" validate:"required" swaggertype:"object"`
	CreatedAt   httpx.Time      `db:"created_at" json:"created_at" validate:"required" swaggertype:"string" format:"date-time"`
}

const versionColumns = `assistant_id, version, graph_id, name, description, config, context, metadata, created_at`

// versionInsert records the assistant rows returned by the CTE named src
// as versions; it is spliced into a WITH clause.
const versionInsert = `INSERT INTO assistant_versions (assistant_id, version, graph_id, config, context, metadata, name, description, created_at)
	SELECT assistant_id, version, graph_id, config, context, metadata, name, description, updated_at FROM `

// Store reads and writes assistants.
type Store struct {
	db *pgxpool.Pool
	// graphOf caches the graph of assistants already resolved, sparing
	// runs a query. A run's INSERT checks the cached graph against the
	// row (see package runs), and Forget drops a stale entry.
	graphOf sync.Map // graphKey → string
	// standIns caches worker graphs' stand-ins (WorkerGraphCached).
	standIns sync.Map // graph id → standIn
}

// standIn is a worker graph's stand-in and when it was read.
type standIn struct {
	g  *graph.Graph
	at time.Time
}

// StandInTTL is how long WorkerGraphCached reuses a stand-in it read: a
// worker that registers its graph anew through another server is seen
// within it (through this one, at once).
const StandInTTL = 5 * time.Second

// WorkerGraphCached is WorkerGraph through a cache of the stand-ins read
// in the last StandInTTL: run creation validates every run of a worker
// graph against its stand-in, which would otherwise cost each run a query.
// A graph that is not a worker's is not cached.
func (s *Store) WorkerGraphCached(ctx context.Context, graphID string) (*graph.Graph, bool, error) {
	if v, ok := s.standIns.Load(graphID); ok && time.Since(v.(standIn).at) < StandInTTL {
		return v.(standIn).g, true, nil
	}
	g, ok, err := WorkerGraph(ctx, s.db, graphID)
	if err == nil && ok {
		s.standIns.Store(graphID, standIn{g: g, at: time.Now()})
	}
	return g, ok, err
}

// ForgetWorkerGraph drops graphID's cached stand-in (its worker registered
// it again).
func (s *Store) ForgetWorkerGraph(graphID string) { s.standIns.Delete(graphID) }

// NewStore returns a Store.
func NewStore(db *pgxpool.Pool) *Store { return &Store{db: db} }

// Ref is what a run needs of its assistant.
type Ref struct {
	AssistantID uuid.UUID
	GraphID     string
}

// refID is the assistant id ref names: itself when it is a UUID, else the
// system assistant of the graph called ref.
func refID(ref string) (id uuid.UUID, isUUID bool) {
	ref = strings.TrimSpace(ref)
	id, err := uuid.Parse(ref)
	if err == nil && len(ref) == 36 {
		return id, true
	}
	return SystemID(ref), false
}

// ResolveRef is Resolve for an assistant's id and graph, answered from
// memory after the first time. The graph may have changed since (PATCH) and
// the assistant may be gone: a caller that finds so drops the entry with
// Forget and asks again.
func (s *Store) ResolveRef(ctx context.Context, ref string) (Ref, error) {
	id, _ := refID(ref)
	key := graphKey{tenant: auth.Tenant(ctx), id: id}
	if g, ok := s.graphOf.Load(key); ok {
		return Ref{AssistantID: id, GraphID: g.(string)}, nil
	}
	a, err := s.Resolve(ctx, s.db, ref)
	if err != nil {
		return Ref{}, err
	}
	s.graphOf.Store(graphKey{tenant: key.tenant, id: a.AssistantID}, a.GraphID)
	return Ref{AssistantID: a.AssistantID, GraphID: a.GraphID}, nil
}

// Forget drops what ResolveRef remembers of assistant id.
func (s *Store) Forget(id uuid.UUID) {
	s.graphOf.Range(func(k, _ any) bool {
		if k.(graphKey).id == id {
			s.graphOf.Delete(k)
		}
		return true
	})
}

// graphKey is what the graph cache is keyed by: an assistant as one tenant
// sees it (another tenant may not see it at all).
type graphKey struct {
	tenant string
	id     uuid.UUID
}

// EnsureSystem creates the system assistant (and its version 1) of every
// graph id that has none; existing ones are left as they are. A graph whose
// system id is held by any other assistant (one a tenant created at that id
// before version-5 ids were refused, or of another graph) is a 409 naming
// them, and nothing is created.
func (s *Store) EnsureSystem(ctx context.Context, graphIDs []string) error {
	return EnsureSystem(ctx, s.db, graphIDs, nil)
}

// SystemDefaults is the config and context a new system assistant starts
// with (LangGraph's server takes them from its LANGGRAPH_CONFIG variable);
// nil maps are {}.
type SystemDefaults struct {
	Config, Context map[string]any
}

// EnsureSystem is Store.EnsureSystem on db (a transaction that also
// stores the graph, so that no reader sees one without the other), new
// system assistants starting with defaults[graph id]. As on LangGraph's
// server, an existing system assistant keeps its config and context.
func EnsureSystem(ctx context.Context, db postgres.DBTX, graphIDs []string, defaults map[string]SystemDefaults) error {
	ids := make([]uuid.UUID, len(graphIDs))
	for i, g := range graphIDs {
		ids[i] = SystemID(g)
	}
	held, err := systemIDsHeld(ctx, db, ids, graphIDs)
	if err != nil {
		return err
	}
	for g := range held {
		i := slices.Index(graphIDs, g)
		graphIDs, ids = slices.Delete(slices.Clone(graphIDs), i, i+1), slices.Delete(slices.Clone(ids), i, i+1)
	}
	configs, contexts := make([]string, len(graphIDs)), make([]string, len(graphIDs))
	for i, g := range graphIDs {
		d := defaults[g]
		if configs[i], err = jsonObject(d.Config); err == nil {
			contexts[i], err = jsonObject(d.Context)
		}
		if err != nil {
			return fmt.Errorf("system assistant of %s: %w", g, err)
		}
	}
	// Shared by every tenant, owned by the default one. One made before
	// tenants existed is marked shared here (its version 1 exists).
	_, err = db.Exec(ctx, `WITH up AS (
			INSERT INTO assistants (assistant_id, graph_id, name, metadata, tenant_id, shared, config, context)
			SELECT id, g, g, '{"created_by":"system"}', '', true, c::jsonb, x::jsonb
			FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) AS t(id, g, c, x)
			ON CONFLICT (assistant_id) DO UPDATE SET shared = true
				WHERE assistants.tenant_id = '' AND NOT assistants.shared AND assistants.graph_id = EXCLUDED.graph_id
			RETURNING *, xmax = 0 AS inserted),
		ins AS (SELECT * FROM up WHERE inserted)
		`+versionInsert+`ins`, ids, graphIDs, configs, contexts)
	if err != nil {
		return fmt.Errorf("create system assistants: %w", err)
	}
	if len(held) > 0 {
		msgs := slices.Sorted(maps.Values(held))
		return apperr.Errorf(apperr.Conflict, "Cannot create system assistants: %s", strings.Join(msgs, "; "))
	}
	return nil
}

// jsonObject is m as JSON text, {} for nil.
func jsonObject(m map[string]any) (string, error) {
	if m == nil {
		return "{}", nil
	}
	b, err := json.Marshal(m)
	return string(b), err
}

// systemIDsHeld describes, by graph, each graph whose system id is taken by
// a row that is not its system assistant (a legacy unshared row of the
// default tenant for the same graph is one: EnsureSystem marks it shared).
func systemIDsHeld(ctx context.Context, db postgres.DBTX, ids []uuid.UUID, graphIDs []string) (map[string]string, error) {
	rows, err := db.Query(ctx, `SELECT t.g, a.assistant_id, a.graph_id, a.tenant_id
		FROM unnest($1::uuid[], $2::text[]) AS t(id, g) JOIN assistants a ON a.assistant_id = t.id
		WHERE a.graph_id <> t.g OR (a.tenant_id <> '' AND NOT a.shared)`, ids, graphIDs)
	if err != nil {
		return nil, fmt.Errorf("check system assistant ids: %w", err)
	}
	held := map[string]string{}
	var g, graphID, tenant string
	var id uuid.UUID
	_, err = pgx.ForEachRow(rows, []any{&g, &id, &graphID, &tenant}, func() error {
		held[g] = fmt.Sprintf("graph %q: its system assistant id %s is held by an assistant of graph %q (tenant %q); delete that assistant to register the graph",
			g, id, graphID, tenant)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("check system assistant ids: %w", err)
	}
	return held, nil
}

// Resolve finds the assistant named by ref: an assistant id, or a
// registered graph name (its system assistant). An unknown UUID, or a graph
// whose system assistant was deleted, is a 404; anything else unknown is a
// 422 listing the graphs.
func (s *Store) Resolve(ctx context.Context, db postgres.DBTX, ref string) (*Assistant, error) {
	return resolve(ctx, db, ref, "")
}

// ResolveOwned is Resolve for a change: the assistant must be the caller's
// tenant's own. A shared (system) assistant of the default tenant is a 409
// for any other tenant.
func (s *Store) ResolveOwned(ctx context.Context, db postgres.DBTX, ref string) (*Assistant, error) {
	a, err := resolve(ctx, db, ref, "")
	if err != nil {
		return nil, err
	}
	return a, owned(ctx, a)
}

// owned refuses a change of a shared assistant by a tenant that does not
// own it.
func owned(ctx context.Context, a *Assistant) error {
	if a.TenantID != auth.Tenant(ctx) {
		return apperr.Errorf(apperr.Conflict,
			"Assistant %s is the system assistant of graph %q, shared by every tenant: only the default tenant changes it (create an assistant of your own)",
			a.AssistantID, a.GraphID)
	}
	return nil
}

// resolve is Resolve with a locking clause ("FOR UPDATE") appended.
func resolve(ctx context.Context, db postgres.DBTX, ref, lock string) (*Assistant, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, apperr.Errorf(apperr.Invalid, "assistant_id is required")
	}
	id, isUUID := refID(ref)
	// A graph name means its system assistant only: never a tenant's row
	// that sits at the system id.
	rows, err := db.Query(ctx, `SELECT `+columns+` FROM assistants WHERE assistant_id = $1
		AND (tenant_id = $2 OR shared) AND ($3 OR shared) `+lock, id, auth.Tenant(ctx), isUUID)
	if err != nil {
		return nil, err
	}
	a, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Assistant])
	if errors.Is(err, pgx.ErrNoRows) {
		if isUUID {
			return nil, apperr.Errorf(apperr.NotFound, "Assistant not found: %s", ref)
		}
		graphs, err := GraphIDs(ctx, db)
		if err != nil {
			return nil, err
		}
		if slices.Contains(graphs, ref) {
			return nil, apperr.Errorf(apperr.NotFound, "Assistant %s (the system assistant of graph %q) not found: it was deleted", id, ref)
		}
		// LangGraph.js's wording; the graphs listed as LangGraph's Python server lists them.
		return nil, apperr.Errorf(apperr.Invalid,
			"No assistant found for %q. Make sure the assistant ID is for a valid assistant or a valid graph ID (the registered graphs: %s)",
			ref, strings.Join(graphs, ", "))
	}
	if err != nil {
		return nil, err
	}
	return &a, nil
}
