package executor

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/coordinator"
	"github.com/weftdev/weft/internal/dispatch"
	"github.com/weftdev/weft/internal/runs"
	"github.com/weftdev/weft/internal/wire"
)

// IO is where an execution reads its thread's checkpoints and writes its
// progress: the database and the coordinator for the in-process pool
// (localIO), the worker API over HTTP for a remote worker (package
// workerclient). One executor runs on both.
type IO interface {
	// Tuple reads checkpoint id of the thread's root namespace (the
	// latest when id is ""); an apperr.NotFound error when there is none.
	Tuple(ctx context.Context, id string) (*checkpoints.Tuple, error)
	// Span finds the root checkpoints an earlier attempt of the run
	// wrote; ok is false when there are none.
	Span(ctx context.Context) (sp Span, ok bool, err error)
	// MaxIntVersion is the greatest integer channel version of the thread
	// (the JS saver's scheme), for minting above it.
	MaxIntVersion(ctx context.Context) (int64, error)
	// Commit sends one commit (claim token and key set) behind the fence;
	// a lost claim is a dispatch.ErrFenced error. c's projection and own
	// checkpoints are for this process's coordinator only: a remote IO
	// sends c.CommitRequest.
	Commit(ctx context.Context, c *coordinator.Commit) (*wire.CommitResult, error)
	// Heartbeat renews the lease and returns the cancellation requested
	// for the run ("" when none); a lost claim is a dispatch.ErrFenced
	// error, and a nil error with "" means nothing to do (an outage the
	// implementation reports itself included).
	Heartbeat(ctx context.Context) (string, error)
	// Nack gives the dispatch back after a failure a retry may cure.
	Nack(ctx context.Context, reason string) (dispatch.State, error)
	// Local reports whether commits go to this process's database, which
	// takes the thread's projection from the executor (one round trip).
	Local() bool
}

// Span is what an earlier attempt of a run wrote: its first root
// checkpoint's step and source, and its last checkpoint's id.
type Span struct {
	FirstStep   int
	FirstSource string
	Last        string
}

// localIO is IO on this process's database and commit coordinator.
type localIO struct {
	s     *Service
	d     dispatch.Dispatch
	run   runs.Run
	token uuid.UUID
}

func (l *localIO) Local() bool { return true }

func (l *localIO) Tuple(ctx context.Context, id string) (*checkpoints.Tuple, error) {
	return checkpoints.GetTuple(ctx, l.s.db, checkpoints.Config{ThreadID: l.run.ThreadID.String(), CheckpointID: id})
}

func (l *localIO) Span(ctx context.Context) (Span, bool, error) {
	var sp Span
	err := l.s.db.QueryRow(ctx, `
		SELECT ((array_agg(metadata ORDER BY checkpoint_id))[1] ->> 'step')::int,
		       (array_agg(metadata ORDER BY checkpoint_id))[1] ->> 'source', max(checkpoint_id)
		FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = '' AND metadata @> jsonb_build_object('run_id', $2::text)
		HAVING count(*) > 0`, l.run.ThreadID.String(), l.run.RunID.String()).Scan(&sp.FirstStep, &sp.FirstSource, &sp.Last)
	if errors.Is(err, pgx.ErrNoRows) {
		return sp, false, nil
	}
	return sp, err == nil, err
}

func (l *localIO) MaxIntVersion(ctx context.Context) (int64, error) {
	return checkpoints.BlobMaxIntVersion(ctx, l.s.db, checkpoints.Config{ThreadID: l.run.ThreadID.String()})
}

func (l *localIO) Commit(ctx context.Context, req *coordinator.Commit) (*wire.CommitResult, error) {
	req.InProcess, req.RunID, req.ThreadID = true, l.run.RunID, l.run.ThreadID
	return l.s.coord.Commit(ctx, l.d.DispatchID, req)
}

func (l *localIO) Heartbeat(ctx context.Context) (string, error) {
	_, action, err := l.s.coord.Heartbeat(ctx, l.d.DispatchID, l.token)
	if err != nil && !errors.Is(err, dispatch.ErrFenced) && l.s.outage.Failed(err) {
		// Logged once per outage; the lease may run out meanwhile, and
		// then the reaper requeues the run once the database is back.
		return "", nil
	}
	return action, err
}

func (l *localIO) Nack(ctx context.Context, reason string) (dispatch.State, error) {
	return l.s.coord.Nack(ctx, l.d.DispatchID, l.token, reason)
}
