package state

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/eventlog"
)

// PruneToLatest is the keep_latest ttl strategy's pruning of thread id, in
// tx (thread row locked, its ttl checked by the sweeper:
// threads.Store.RunTTLSweeper, which takes it as its
// threads.PruneToLatest): the history goes up to its latest checkpoint.
// Events that reference the checkpoints going away are stored whole first,
// and so is the thread's projection when it references a blob the kept
// checkpoint does not. A thread without checkpoints has nothing to prune.
func (s *Service) PruneToLatest(ctx context.Context, tx pgx.Tx, id uuid.UUID) error {
	latest, err := checkpoints.GetTuple(ctx, tx, checkpoints.Config{ThreadID: id.String()})
	switch {
	case apperr.CodeOf(err) == apperr.NotFound: // no history to prune
	case err != nil:
		return err
	default:
		// Events that reference the checkpoints going away are stored whole
		// first. The graph's delta kinds are not looked up here: a LangGraph
		// delta channel then keeps its chain back to its snapshot (see
		// checkpoints.PruneThread), which is safe for any reducer.
		if _, err := eventlog.MaterializeThread(ctx, tx, id, "", latest.Config.CheckpointID); err != nil {
			return err
		}
		if err := s.threads.ValuesInline(ctx, tx, id, latest.Checkpoint.ChannelVersions); err != nil {
			return err
		}
		if err := checkpoints.PruneThread(ctx, tx, id.String(), latest.Config.CheckpointID, nil); err != nil {
			return err
		}
	}
	return nil
}
