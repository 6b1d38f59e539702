package workerapi

import (
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/assistants"
	"github.com/weftdev/weft/internal/coordinator"
	"github.com/weftdev/weft/internal/runs"
)

// Handlers serves the worker API, and hands update_state of worker graphs
// to workers (state.ExternalUpdater).
type Handlers struct {
	db         *pgxpool.Pool
	graphs     *graph.Registry
	assistants *assistants.Store
	coord      *coordinator.Service
	runs       *runs.Service
	log        *slog.Logger
}

// NewHandlers returns the worker API's handlers.
func NewHandlers(db *pgxpool.Pool, graphs *graph.Registry, as *assistants.Store, coord *coordinator.Service, rs *runs.Service, log *slog.Logger) *Handlers {
	return &Handlers{db: db, graphs: graphs, assistants: as, coord: coord, runs: rs, log: log}
}
