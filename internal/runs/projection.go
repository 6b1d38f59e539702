package runs

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/assistants"
	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/pregel"
	"github.com/weftdev/weft/internal/threads"
)

// NextActiveRun is the thread's current run once one ended: the oldest run
// still pending or running ($1 is the thread id).
const NextActiveRun = `(SELECT run_id FROM runs WHERE thread_id = $1 AND status IN ('pending', 'running')
	ORDER BY created_at LIMIT 1)`

// ProjectThread recomputes the thread's projection after a run ended or
// was cancelled, in the caller's transaction (thread row locked): the
// commit coordinator calls it at a run's end, cancellation of a queued run
// here. The projection is values and interrupts of the latest root checkpoint, and
// the status: busy while another run is pending or running, else error
// when the run failed (runErr), interrupted when tasks are pending, idle.
// The checkpoint is read in this transaction, so a list channel read
// unchanged from its blob row is stored by reference to it (ts.Stored).
func ProjectThread(ctx context.Context, tx pgx.Tx, graphs *graph.Registry, ts *threads.Store, threadID uuid.UUID, graphID string, runErr []byte) error {
	var busy bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM runs WHERE thread_id = $1 AND status IN ('pending', 'running'))`,
		threadID).Scan(&busy); err != nil {
		return err
	}
	g, ok := graphs.Lookup(graphID)
	if !ok && graphID != "" {
		// A worker's graph: its stand-in (node order, channel defaults).
		var err error
		if g, _, err = assistants.WorkerGraph(ctx, tx, graphID); err != nil {
			return err
		}
	}
	st := threads.State{Interrupts: []byte("{}")}
	pendingTasks := 0
	t, err := checkpoints.CheckpointGetTuple(ctx, tx, checkpoints.Config{ThreadID: threadID.String()})
	switch {
	case apperr.CodeOf(err) == apperr.NotFound:
	case err != nil:
		return err
	default:
		if err := checkpoints.CheckpointDeltaResolve(ctx, tx, []checkpoints.Tuple{*t}, pregel.DeltaKinds(g)); err != nil {
			return err
		}
		tasks := pregel.Tasks(t, g)
		pendingTasks = len(tasks)
		st.Values = pregel.StateValues(t.Checkpoint.ChannelValues, g)
		st.Interrupts = jsonv.Must(pregel.InterruptsByTask(tasks))
		st.Blobs = checkpoints.StoredVersions(t, &t.Checkpoint)
	}
	status := "idle"
	switch {
	case busy:
		status = "busy"
	case runErr != nil:
		status = "error"
	case pendingTasks > 0:
		status = "interrupted"
	}
	stored, err := ts.Stored(ctx, st)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `UPDATE threads SET "values" = $2, values_refs = weft_thread_values_refs($1, $6), interrupts = $3,
		status = $4, error = $5, active_run_id = `+NextActiveRun+`, state_updated_at = now(), updated_at = now() WHERE thread_id = $1`,
		threadID, stored.Values, stored.Interrupts, status, runErr, stored.Refs)
	return err
}
