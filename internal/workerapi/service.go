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
	// descriptions are the system assistants' descriptions, by graph
	// (nil: registrations leave them as they are).
	descriptions map[string]string
}

// NewHandlers returns the worker API's handlers.
func NewHandlers(db *pgxpool.Pool, graphs *graph.Registry, as *assistants.Store, coord *coordinator.Service, rs *runs.Service, log *slog.Logger) *Handlers {
	return &Handlers{db: db, graphs: graphs, assistants: as, coord: coord, runs: rs, log: log}
}

// DescribeGraphs makes every graph registration give the graph's system
// assistant descriptions[graph id] as its description (none when the graph
// is missing), as LangGraph's server gives it langgraph.json's
// graphs.<id>.description at every start. nil (the default) leaves
// descriptions as they are. Call it before the handlers serve.
func (h *Handlers) DescribeGraphs(descriptions map[string]string) { h.descriptions = descriptions }
