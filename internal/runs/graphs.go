package runs

import (
	"context"

	"github.com/google/uuid"
	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/apperr"
)

// runnableGraph is the graph a run of graphID executes: a graph compiled
// into the binary, or the stand-in of one a worker registered
// (assistants.WorkerGraph: names enough to check interrupt_before/after,
// command.goto and input keys; only the worker runs its nodes).
func (s *Service) runnableGraph(ctx context.Context, graphID string, assistantID uuid.UUID) (*graph.Graph, error) {
	if g, ok := s.graphs.Lookup(graphID); ok {
		return g, nil
	}
	g, ok, err := s.assistants.WorkerGraphCached(ctx, graphID)
	if err == nil && !ok {
		return nil, apperr.Errorf(apperr.BadRequest, "Graph %q of assistant %s is not registered on this server", graphID, assistantID)
	}
	return g, err
}
