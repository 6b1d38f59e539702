// Package assistants holds assistants: a named, configured use of a graph.
// For now it provides the system assistants, one per registered graph, whose
// id is uuid5(6ba7b821-9dad-11d1-80b4-00c04fd430c8, graph_id) as the Agent
// Server mints them (reference API §1.2), created at start; Resolve accepts
// an assistant id or a graph name wherever a run names its assistant.
package assistants

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/postgres"
)

// Namespace is the uuid5 namespace of system assistant ids.
var Namespace = uuid.MustParse("6ba7b821-9dad-11d1-80b4-00c04fd430c8")

// SystemID is the id of graphID's system assistant.
func SystemID(graphID string) uuid.UUID { return uuid.NewSHA1(Namespace, []byte(graphID)) }

// Assistant is the Assistant object of the API (reference §3.1).
type Assistant struct {
	AssistantID uuid.UUID       `db:"assistant_id" json:"assistant_id"`
	GraphID     string          `db:"graph_id" json:"graph_id"`
	Name        string          `db:"name" json:"name"`
	Description *string         `db:"description" json:"description"`
	Config      json.RawMessage `db:"config" json:"config" swaggertype:"object"`
	Context     json.RawMessage `db:"context" json:"context" swaggertype:"object"`
	Metadata    json.RawMessage `db:"metadata" json:"metadata" swaggertype:"object"`
	Version     int             `db:"version" json:"version"`
	CreatedAt   httpx.Time      `db:"created_at" json:"created_at" swaggertype:"string" format:"date-time"`
	UpdatedAt   httpx.Time      `db:"updated_at" json:"updated_at" swaggertype:"string" format:"date-time"`
}

const columns = `assistant_id, graph_id, name, description, config, context, metadata, version, created_at, updated_at`

// Store reads and writes assistants.
type Store struct {
	db *pgxpool.Pool
	// graphOf caches the graph of assistants already resolved (an
	// assistant's id and graph never change), sparing runs a query.
	graphOf sync.Map // uuid.UUID → string
}

// NewStore returns a Store.
func NewStore(db *pgxpool.Pool) *Store { return &Store{db: db} }

// Ref is what a run needs of its assistant.
type Ref struct {
	AssistantID uuid.UUID
	GraphID     string
}

// ResolveRef is Resolve for what never changes of an assistant, its id and
// graph, answered from memory after the first time.
func (s *Store) ResolveRef(ctx context.Context, ref string) (Ref, error) {
	id, err := uuid.Parse(strings.TrimSpace(ref))
	if err != nil || len(strings.TrimSpace(ref)) != 36 {
		id = SystemID(strings.TrimSpace(ref))
	}
	if g, ok := s.graphOf.Load(id); ok {
		return Ref{AssistantID: id, GraphID: g.(string)}, nil
	}
	a, err := s.Resolve(ctx, s.db, ref)
	if err != nil {
		return Ref{}, err
	}
	s.graphOf.Store(a.AssistantID, a.GraphID)
	return Ref{AssistantID: a.AssistantID, GraphID: a.GraphID}, nil
}

// EnsureSystem creates the system assistant of every graph id that has
// none (existing ones are left as they are).
func (s *Store) EnsureSystem(ctx context.Context, graphIDs []string) error {
	ids := make([]uuid.UUID, len(graphIDs))
	for i, g := range graphIDs {
		ids[i] = SystemID(g)
	}
	_, err := s.db.Exec(ctx, `INSERT INTO assistants (assistant_id, graph_id, name, metadata)
		SELECT id, g, g, '{"created_by":"system"}' FROM unnest($1::uuid[], $2::text[]) AS t(id, g)
		ON CONFLICT (assistant_id) DO NOTHING`, ids, graphIDs)
	if err != nil {
		return fmt.Errorf("create system assistants: %w", err)
	}
	return nil
}

// Resolve finds the assistant named by ref: an assistant id, or a
// registered graph name (its system assistant). An unknown UUID is a 404;
// anything else unknown is a 422 listing the graphs.
func (s *Store) Resolve(ctx context.Context, db postgres.DBTX, ref string) (*Assistant, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, apperr.Errorf(apperr.Invalid, "assistant_id is required")
	}
	id, err := uuid.Parse(ref)
	isUUID := err == nil && len(ref) == 36
	if !isUUID {
		id = SystemID(ref)
	}
	rows, err := db.Query(ctx, `SELECT `+columns+` FROM assistants WHERE assistant_id = $1`, id)
	if err != nil {
		return nil, err
	}
	a, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Assistant])
	if errors.Is(err, pgx.ErrNoRows) {
		if isUUID {
			return nil, apperr.Errorf(apperr.NotFound, "Assistant %s not found", ref)
		}
		graphs, _ := s.graphIDs(ctx, db)
		return nil, apperr.Errorf(apperr.Invalid,
			"Invalid assistant: %q. Must be either a valid assistant UUID or one of the registered graphs: %s",
			ref, strings.Join(graphs, ", "))
	}
	if err != nil {
		return nil, err
	}
	return &a, nil
}

func (s *Store) graphIDs(ctx context.Context, db postgres.DBTX) ([]string, error) {
	rows, err := db.Query(ctx, `SELECT DISTINCT graph_id FROM assistants ORDER BY graph_id`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// SearchRequest is the body of POST /assistants/search.
type SearchRequest struct {
	GraphID  string         `json:"graph_id"`
	Name     string         `json:"name"`
	Metadata map[string]any `json:"metadata"`
	Limit    *int           `json:"limit"`
	Offset   int            `json:"offset"`
}

// Handlers serves the assistant routes.
type Handlers struct{ store *Store }

// NewHandlers returns the assistant handlers.
func NewHandlers(s *Store) *Handlers { return &Handlers{store: s} }

// Get godoc
//
//	@Summary		Get an assistant
//	@Description	An assistant by id, or a graph's system assistant by graph name.
//	@Tags			assistants
//	@Produce		json
//	@Param			assistant_id	path		string	true	"Assistant ID or graph name"
//	@Success		200				{object}	Assistant
//	@Failure		404				{object}	httpx.ErrorBody
//	@Failure		422				{object}	httpx.ErrorBody
//	@Router			/assistants/{assistant_id} [get]
func (h *Handlers) Get(w http.ResponseWriter, r *http.Request) error {
	a, err := h.store.Resolve(r.Context(), h.store.db, httpx.PathParam(r, "assistant_id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, a)
	return nil
}

// Search godoc
//
//	@Summary		Search assistants
//	@Description	Filters by graph_id, name (substring) and metadata containment; newest first.
//	@Tags			assistants
//	@Accept			json
//	@Produce		json
//	@Param			body	body		SearchRequest	false	"Filters"
//	@Success		200		{array}		Assistant
//	@Failure		422		{object}	httpx.ErrorBody
//	@Router			/assistants/search [post]
func (h *Handlers) Search(w http.ResponseWriter, r *http.Request) error {
	var req SearchRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	limit := 10
	if req.Limit != nil {
		limit = *req.Limit
	}
	if limit < 1 || limit > 1000 || req.Offset < 0 {
		return apperr.Errorf(apperr.Invalid, "Invalid limit/offset: limit must be 1..1000 and offset >= 0")
	}
	var md any
	if req.Metadata != nil {
		md = req.Metadata
	}
	rows, err := h.store.db.Query(r.Context(), `SELECT `+columns+` FROM assistants
		WHERE ($1 = '' OR graph_id = $1) AND ($2 = '' OR name ILIKE '%' || $2 || '%') AND ($3::jsonb IS NULL OR metadata @> $3)
		ORDER BY created_at DESC, assistant_id LIMIT $4 OFFSET $5`, req.GraphID, req.Name, md, limit+1, req.Offset)
	if err != nil {
		return err
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByName[Assistant])
	if err != nil {
		return err
	}
	more := len(list) > limit
	if more {
		list = list[:limit]
	}
	httpx.SetPagination(w, req.Offset, limit, len(list), more)
	httpx.WriteJSON(w, http.StatusOK, list)
	return nil
}
