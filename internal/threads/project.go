package threads

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/pregel"
)

// Projection is what a thread shows of its latest root checkpoint: its
// State (values, interrupts by task, and the blobs Values may reference)
// and whether tasks are pending (the thread is then interrupted).
type Projection struct {
	State
	Pending bool
}

// Project is the projection of root checkpoint t, with the pending writes
// t carries, for a thread of graph g (nil: a graph neither compiled in nor
// registered by a worker): the graph's state values, the interrupts of
// its next tasks and whether there are any. A nil t is a thread without
// checkpoints: values null, no interrupts ({}). Blobs is left for the
// caller to fill in, as only it knows which blob rows hold Values' lists
// (State.Blobs).
//
// It is the one computation of the projection: the in-process executor
// (from the checkpoint it just made), the commit coordinator (from an
// external worker's complete checkpoint in the ending commit) and
// ProjectLatest (from the checkpoint read back) all call it.
func Project(t *checkpoints.Tuple, g *graph.Graph) Projection {
	if t == nil {
		return Projection{State: State{Interrupts: []byte("{}")}}
	}
	tasks := pregel.Tasks(t, g)
	return Projection{
		State: State{
			Values:     pregel.StateValues(t.Checkpoint.ChannelValues, g),
			Interrupts: jsonv.Must(pregel.InterruptsByTask(tasks)),
		},
		Pending: len(tasks) > 0,
	}
}

// GraphLookup finds the graph a thread is projected with: the one compiled
// into the server (Compiled), else a worker's stand-in (node order,
// channel defaults) read in the caller's transaction (Worker:
// assistants.WorkerGraph, which threads cannot import).
type GraphLookup struct {
	Compiled *graph.Registry
	Worker   func(ctx context.Context, db postgres.DBTX, graphID string) (*graph.Graph, bool, error)
}

// ProjectLatest recomputes thread threadID's projection after a run ended
// or was cancelled, in the caller's transaction (thread row locked): the
// commit coordinator calls it at a run's end (general path, rollback),
// package runs at the cancellation of a queued run. The projection is
// Project of the latest root checkpoint (read in this transaction, so a
// list channel read unchanged from its blob row is stored by reference to
// it), and the status: busy while another run is pending or running, else
// error when the run failed (runErr), interrupted when tasks are pending,
// idle. active_run_id becomes the oldest run still pending or running.
func (s *Store) ProjectLatest(ctx context.Context, tx pgx.Tx, threadID uuid.UUID, graphs GraphLookup, graphID string, runErr []byte) error {
	var busy bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM runs WHERE thread_id = $1 AND status IN ('pending', 'running'))`,
		threadID).Scan(&busy); err != nil {
		return err
	}
	g, ok := graphs.Compiled.Lookup(graphID)
	if !ok && graphID != "" {
		// A worker's graph: its stand-in (node order, channel defaults).
		var err error
		if g, _, err = graphs.Worker(ctx, tx, graphID); err != nil {
			return err
		}
	}
	pr := Project(nil, g)
	t, err := checkpoints.GetTuple(ctx, tx, checkpoints.Config{ThreadID: threadID.String()})
	switch {
	case apperr.CodeOf(err) == apperr.NotFound:
	case err != nil:
		return err
	default:
		if err := checkpoints.ResolveDelta(ctx, tx, []checkpoints.Tuple{*t}, pregel.DeltaKinds(g)); err != nil {
			return err
		}
		pr = Project(t, g)
		pr.Blobs = checkpoints.StoredVersions(t, &t.Checkpoint)
	}
	status := "idle"
	switch {
	case busy:
		status = "busy"
	case runErr != nil:
		status = "error"
	case pr.Pending:
		status = "interrupted"
	}
	stored, err := s.Stored(ctx, pr.State)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `UPDATE threads SET "values" = $2, values_refs = weft_thread_values_refs($1, $6), interrupts = $3,
		status = $4, error = $5, active_run_id = `+nextActiveRun+`, state_updated_at = now(), updated_at = now() WHERE thread_id = $1`,
		threadID, stored.Values, stored.Interrupts, status, runErr, stored.Refs)
	return err
}

// SetRunEnded writes (or queues, on a postgres.Pipeline) the end of a run
// on its thread with a projection the committer knows (pr, of the run's
// last root checkpoint): values, interrupts, error runErr, the next active
// run, and the status (busy while another run is pending or running, else
// error, interrupted when pr.Pending, idle). The puts of pr's checkpoint
// come before it in the same transaction, so a reference to a blob one of
// them writes is readable when this commits.
func (s *Store) SetRunEnded(ctx context.Context, db postgres.DBTX, threadID uuid.UUID, pr *Projection, runErr []byte) error {
	st, err := s.Stored(ctx, pr.State)
	if err != nil {
		return err
	}
	_, err = db.Exec(ctx, `UPDATE threads SET "values" = $2, values_refs = weft_thread_values_refs($1, $6), interrupts = $3, error = $4,
		active_run_id = `+nextActiveRun+`,
		status = CASE WHEN EXISTS (SELECT 1 FROM runs WHERE thread_id = $1 AND status IN ('pending', 'running')) THEN 'busy'
		              WHEN $4::jsonb IS NOT NULL THEN 'error' WHEN $5 THEN 'interrupted' ELSE 'idle' END,
		state_updated_at = now(), updated_at = now()
		WHERE thread_id = $1`, threadID, st.Values, st.Interrupts, runErr, pr.Pending, st.Refs)
	return err
}

// nextActiveRun is the thread's current run once one ended: the oldest
// run still pending or running ($1 is the thread id). It reads the runs
// table (package runs') inside the thread's own update.
const nextActiveRun = `(SELECT run_id FROM runs WHERE thread_id = $1 AND status IN ('pending', 'running')
	ORDER BY created_at LIMIT 1)`
