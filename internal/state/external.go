package state

import (
	"context"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/checkpoints"
)

// ExternalUpdater performs update_state on threads of graphs this server
// has no definition of: graphs external workers serve, whose reducers and
// edges live in the worker (the runs service hands the update to one).
type ExternalUpdater interface {
	// Serves reports whether graphID is a graph an external worker serves.
	Serves(ctx context.Context, graphID string) (bool, error)
	// UpdateState applies p to the thread through a worker of graphID and
	// returns the new checkpoint.
	UpdateState(ctx context.Context, threadID uuid.UUID, graphID string, p UpdateParams) (checkpoints.Config, error)
}

// SetExternalUpdater makes update_state of threads whose graph u serves go
// to u (without one, such updates are a 400, the graph being unknown).
func (s *Service) SetExternalUpdater(u ExternalUpdater) { s.external = u }

// delegated is updateTx's answer for a thread of an external graph: Update
// hands the update to the ExternalUpdater once the transaction is over. Where
// it cannot (supersteps of a new thread), it reads as the 400 it carries.
type delegated struct {
	err     *apperr.Error
	graphID string
}

func (d *delegated) Error() string { return d.err.Error() }
func (d *delegated) Unwrap() error { return d.err }

// delegate returns the delegated error for a thread of graphID when an
// external worker serves it, nil otherwise.
func (s *Service) delegate(ctx context.Context, graphID string) error {
	if s.external == nil || graphID == "" {
		return nil
	}
	ok, err := s.external.Serves(ctx, graphID)
	if err != nil || !ok {
		return err
	}
	return &delegated{graphID: graphID, err: apperr.Errorf(apperr.BadRequest,
		"Graph %q is served by an external worker: update its threads' state one update_state at a time", graphID)}
}
