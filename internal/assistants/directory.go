package assistants

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/auth"
)

// Entry is an assistant as a directory of callable agents lists it (the
// MCP endpoint's tools): who it is and what it says of itself, without its
// config.
type Entry struct {
	AssistantID uuid.UUID `db:"assistant_id"`
	GraphID     string    `db:"graph_id"`
	Name        string    `db:"name"`
	Description *string   `db:"description"`
	CreatedAt   time.Time `db:"created_at"`
}

// Directory returns up to limit assistants the caller's tenant sees (its
// own and the shared system ones), oldest first (created_at, then id): an
// order that only grows at its end as assistants are created, so names
// derived from it are stable.
func (s *Store) Directory(ctx context.Context, limit int) ([]Entry, error) {
	rows, err := s.db.Query(ctx, `SELECT assistant_id, graph_id, name, description, created_at FROM assistants
		WHERE (tenant_id = $1 OR shared) ORDER BY created_at, assistant_id LIMIT $2`, auth.Tenant(ctx), limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByName[Entry])
}

// InputSchemas returns the input JSON Schema of each of graphIDs the graph
// catalog knows and has one for (graphs are not tenant data).
func (s *Store) InputSchemas(ctx context.Context, graphIDs []string) (map[string]json.RawMessage, error) {
	rows, err := s.db.Query(ctx, `SELECT graph_id, input_schema FROM graphs
		WHERE graph_id = ANY($1) AND input_schema IS NOT NULL`, graphIDs)
	if err != nil {
		return nil, err
	}
	out := map[string]json.RawMessage{}
	var id string
	var schema json.RawMessage
	_, err = pgx.ForEachRow(rows, []any{&id, &schema}, func() error {
		out[id] = append(json.RawMessage(nil), schema...)
		return nil
	})
	return out, err
}
