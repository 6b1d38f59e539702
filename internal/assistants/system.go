package assistants

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/postgres"
)

// EnsureSystemDefaults is EnsureSystem for one graph whose system assistant
// starts with the given config and context (LangGraph's server takes them
// from its LANGGRAPH_CONFIG variable: {graph id: {configurable…, context}}).
// As there, an existing system assistant is left as it is; nil maps are {}.
func (s *Store) EnsureSystemDefaults(ctx context.Context, graphID string, config, runContext map[string]any) error {
	if config == nil {
		config = map[string]any{}
	}
	if runContext == nil {
		runContext = map[string]any{}
	}
	cfg, err := json.Marshal(config)
	if err != nil {
		return fmt.Errorf("system assistant of %s: config: %w", graphID, err)
	}
	cx, err := json.Marshal(runContext)
	if err != nil {
		return fmt.Errorf("system assistant of %s: context: %w", graphID, err)
	}
	_, err = s.db.Exec(ctx, `WITH up AS (
			INSERT INTO assistants (assistant_id, graph_id, name, metadata, tenant_id, shared, config, context)
			VALUES ($1, $2, $2, '{"created_by":"system"}', '', true, $3, $4)
			ON CONFLICT (assistant_id) DO UPDATE SET shared = true
				WHERE assistants.tenant_id = '' AND NOT assistants.shared AND assistants.graph_id = EXCLUDED.graph_id
			RETURNING *, xmax = 0 AS inserted),
		ins AS (SELECT * FROM up WHERE inserted)
		`+versionInsert+`ins`, SystemID(graphID), graphID, string(cfg), string(cx))
	if err != nil {
		return fmt.Errorf("create the system assistant of %s: %w", graphID, err)
	}
	return nil
}

// PruneBuiltin removes from the catalog the graphs a server compiled in
// earlier (source builtin) that are not in keep, with their system
// assistants, so a database once served with the demo graphs lists none of
// them under a server without them (weft dev). Assistants users made of
// those graphs stay. It returns the graph ids removed.
func PruneBuiltin(ctx context.Context, db postgres.DBTX, keep []string) ([]string, error) {
	if keep == nil {
		keep = []string{}
	}
	rows, err := db.Query(ctx, `DELETE FROM graphs WHERE source = $1 AND NOT graph_id = ANY($2::text[]) RETURNING graph_id`,
		SourceBuiltin, keep)
	if err != nil {
		return nil, fmt.Errorf("prune built-in graphs: %w", err)
	}
	gone, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("prune built-in graphs: %w", err)
	}
	if len(gone) == 0 {
		return nil, nil
	}
	ids := make([]uuid.UUID, len(gone))
	for i, g := range gone {
		ids[i] = SystemID(g)
	}
	if _, err := db.Exec(ctx, `DELETE FROM assistants WHERE assistant_id = ANY($1::uuid[]) AND shared
		AND metadata->>'created_by' = 'system'`, ids); err != nil {
		return nil, fmt.Errorf("prune built-in graphs' system assistants: %w", err)
	}
	return gone, nil
}
