package assistants

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/postgres"
)

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

// SetSystemDescription gives the system assistant of graphID description
// (nil: none), as LangGraph's server gives a graph's system assistant the
// description its config names at every start. The assistant and its
// current version change in place (its version number stays, as on
// LangGraph's server), and only when the description differs; a system
// assistant that does not exist is left so.
func SetSystemDescription(ctx context.Context, db postgres.DBTX, graphID string, description *string) error {
	_, err := db.Exec(ctx, `WITH a AS (
			UPDATE assistants SET description = $3, updated_at = now()
			WHERE assistant_id = $1 AND graph_id = $2 AND shared AND description IS DISTINCT FROM $3
			RETURNING assistant_id, version)
		UPDATE assistant_versions v SET description = $3 FROM a WHERE v.assistant_id = a.assistant_id AND v.version = a.version`,
		SystemID(graphID), graphID, description)
	if err != nil {
		return fmt.Errorf("describe the system assistant of %s: %w", graphID, err)
	}
	return nil
}
