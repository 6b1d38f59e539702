package executor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/coordinator"
	"github.com/weftdev/weft/internal/dispatch"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/metrics"
	"github.com/weftdev/weft/internal/pregel"
	"github.com/weftdev/weft/internal/runs"
	"github.com/weftdev/weft/internal/tracing"
)

// execute runs one claimed dispatch in this process: a heartbeat keeps the
// lease (and learns of cancellation), the Pregel loop commits through the
// coordinator, and a failure that is not the graph's (a database error, a
// shutdown) gives the dispatch back for a retry.
func (s *Service) execute(parent context.Context, c coordinator.Claimed) {
	g, _ := s.graphs.Lookup(c.Run.GraphID)
	x := &execution{io: &localIO{s: s, d: c.Dispatch, run: c.Run, token: c.ClaimToken}, log: s.log,
		d: c.Dispatch, run: c.Run, token: c.ClaimToken, g: g,
		tracer: s.cfg.Tracer, metrics: s.cfg.Metrics, traceparent: c.Traceparent, worker: s.cfg.WorkerID}
	x.attempt(parent, s.coord.Lease()/3, func(cancel context.CancelCauseFunc) func() {
		s.cancels.Store(c.Dispatch.DispatchID, cancel)
		return func() { s.cancels.Delete(c.Dispatch.DispatchID) }
	})
}

// runIO is where an execution reads its thread's checkpoints and writes
// its progress: the database for the in-process pool (localIO), the worker
// API over HTTP for a remote worker (remoteIO). One executor runs on both.
type runIO interface {
	// tuple reads checkpoint id of the thread's root namespace (the
	// latest when id is ""); an apperr.NotFound error when there is none.
	tuple(ctx context.Context, id string) (*checkpoints.Tuple, error)
	// span finds the root checkpoints an earlier attempt of the run
	// wrote; ok is false when there are none.
	span(ctx context.Context) (sp runSpan, ok bool, err error)
	// maxIntVersion is the greatest integer channel version of the thread
	// (the JS saver's scheme), for minting above it.
	maxIntVersion(ctx context.Context) (int64, error)
	// commit sends one commit (claim token and key set) behind the fence;
	// a lost claim is a dispatch.ErrFenced error.
	commit(ctx context.Context, req *coordinator.CommitRequest) (*coordinator.CommitResult, error)
	// heartbeat renews the lease and returns the cancellation requested
	// for the run ("" when none); a lost claim is a dispatch.ErrFenced
	// error, and a nil error with "" means nothing to do (an outage the
	// implementation reports itself included).
	heartbeat(ctx context.Context) (string, error)
	// nack gives the dispatch back after a failure a retry may cure.
	nack(ctx context.Context, reason string) (dispatch.State, error)
	// local reports whether commits go to this process's database, which
	// takes the thread's projection from the executor (one round trip).
	local() bool
}

// runSpan is what an earlier attempt of a run wrote: its first root
// checkpoint's step and source, and its last checkpoint's id.
type runSpan struct {
	firstStep   int
	firstSource string
	last        string
}

// attempt runs x to its end under a context of its own: shutdown of
// parent stops it (errShutdown), a heartbeat every beat keeps the lease and
// learns of cancellation, track (when set) gets the attempt's cancel
// function while it runs. A failure that is not the graph's gives the
// dispatch back (nack); a lost lease just stops.
func (x *execution) attempt(parent context.Context, beat time.Duration, track func(context.CancelCauseFunc) func()) {
	d := x.d
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	defer cancel(nil)
	// The attempt continues the trace of the request that created the run.
	ctx = tracing.WithRemoteParent(ctx, x.traceparent)
	ctx, span := tracing.Start(ctx, x.tracer, "weft.run", trace.WithSpanKind(trace.SpanKindConsumer))
	defer span.End()
	if span.IsRecording() {
		span.SetAttributes(attribute.String("weft.run_id", x.run.RunID.String()), attribute.String("weft.thread_id", x.run.ThreadID.String()),
			attribute.String("weft.graph_id", x.run.GraphID), attribute.String("weft.dispatch_id", d.DispatchID.String()),
			attribute.Int("weft.attempt", d.Attempt), attribute.String("weft.worker_id", x.worker))
	}
	stopShutdown := context.AfterFunc(parent, func() { cancel(errShutdown) })
	defer stopShutdown()
	x.cancel = cancel
	if track != nil {
		defer track(cancel)()
	}
	if d.CancelAction != nil {
		cancel(errCancelRequested)
	}
	hbCtx, stopHB := context.WithCancel(ctx)
	defer stopHB()
	go x.heartbeat(hbCtx, beat, cancel)

	err := x.exec(ctx)
	if err == nil {
		return
	}
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
	cause := context.Cause(ctx)
	if errors.Is(cause, errLeaseLost) || errors.Is(err, dispatch.ErrFenced) {
		x.metrics.LeaseLost()
		x.log.Warn("run stopped: lease lost", "run_id", d.RunID, "dispatch_id", d.DispatchID, "error", err)
		return
	}
	reason := err.Error()
	if errors.Is(cause, errShutdown) {
		reason = "worker shut down"
	}
	nctx, ncancel := context.WithTimeout(context.WithoutCancel(parent), 10*time.Second)
	defer ncancel()
	state, nerr := x.io.nack(nctx, reason)
	x.log.Warn("run attempt failed", "run_id", d.RunID, "attempt", d.Attempt, "error", err, "dispatch_state", state, "nack_error", nerr)
}

// heartbeat renews the lease every beat; a refused renewal cancels the
// execution (lease lost), a requested cancellation stops it.
func (x *execution) heartbeat(ctx context.Context, beat time.Duration, cancel context.CancelCauseFunc) {
	t := time.NewTicker(beat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		action, err := x.io.heartbeat(ctx)
		switch {
		case errors.Is(err, dispatch.ErrFenced):
			cancel(errLeaseLost)
			return
		case err != nil && ctx.Err() == nil:
			x.log.Warn("heartbeat failed", "dispatch_id", x.d.DispatchID, "error", err)
		case action != "":
			cancel(errCancelRequested)
		}
	}
}

// localIO is runIO on this process's database and commit coordinator.
type localIO struct {
	s     *Service
	d     dispatch.Dispatch
	run   runs.Run
	token uuid.UUID
}

func (l *localIO) local() bool { return true }

func (l *localIO) tuple(ctx context.Context, id string) (*checkpoints.Tuple, error) {
	return checkpoints.CheckpointGetTuple(ctx, l.s.db, checkpoints.Config{ThreadID: l.run.ThreadID.String(), CheckpointID: id})
}

func (l *localIO) span(ctx context.Context) (runSpan, bool, error) {
	var sp runSpan
	err := l.s.db.QueryRow(ctx, `
		SELECT ((array_agg(metadata ORDER BY checkpoint_id))[1] ->> 'step')::int,
		       (array_agg(metadata ORDER BY checkpoint_id))[1] ->> 'source', max(checkpoint_id)
		FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = '' AND metadata @> jsonb_build_object('run_id', $2::text)
		HAVING count(*) > 0`, l.run.ThreadID.String(), l.run.RunID.String()).Scan(&sp.firstStep, &sp.firstSource, &sp.last)
	if errors.Is(err, pgx.ErrNoRows) {
		return sp, false, nil
	}
	return sp, err == nil, err
}

func (l *localIO) maxIntVersion(ctx context.Context) (int64, error) {
	return checkpoints.CheckpointBlobMaxIntVersion(ctx, l.s.db, checkpoints.Config{ThreadID: l.run.ThreadID.String()})
}

func (l *localIO) commit(ctx context.Context, req *coordinator.CommitRequest) (*coordinator.CommitResult, error) {
	req.InProcess, req.RunID, req.ThreadID = true, l.run.RunID, l.run.ThreadID
	return l.s.coord.Commit(ctx, l.d.DispatchID, req)
}

func (l *localIO) heartbeat(ctx context.Context) (string, error) {
	_, action, err := l.s.coord.Heartbeat(ctx, l.d.DispatchID, l.token)
	if err != nil && !errors.Is(err, dispatch.ErrFenced) && l.s.outage.Failed(err) {
		// Logged once per outage; the lease may run out meanwhile, and
		// then the reaper requeues the run once the database is back.
		return "", nil
	}
	return action, err
}

func (l *localIO) nack(ctx context.Context, reason string) (dispatch.State, error) {
	return l.s.coord.Nack(ctx, l.d.DispatchID, l.token, reason)
}

// execution is one attempt of one run.
type execution struct {
	io     runIO
	log    *slog.Logger
	cancel context.CancelCauseFunc // stops the attempt (set by attempt)
	d      dispatch.Dispatch
	run    runs.Run
	token  uuid.UUID
	g      *graph.Graph
	k      runs.Kwargs

	tracer      trace.Tracer     // nil: tracing off
	metrics     *metrics.Metrics // nil: not counted
	traceparent string           // the run's, the parent of the attempt's span
	worker      string           // the worker id, for the attempt's span

	mu      sync.Mutex
	pending coordinator.CommitRequest // writes and events not committed yet
	// sent are the writes committed already under checkpoint sentFor (the
	// last one a commit carried writes for): a background commit may take
	// a step's writes (an interrupt's) before the end projects the thread
	// from a tuple read earlier, which lacks them.
	sentFor string
	sent    []checkpoints.Write

	// Commits go out one at a time, in order (commitMu is held while one
	// is in flight); with async durability a step's commit runs while the
	// next step executes, and what piles up meanwhile goes in the next.
	commitMu sync.Mutex
	inflight bool // an async commit is running (under mu)
	// With "exit" durability: the checkpoint that will be written at the
	// end, and the ids of those it replaced (under mu).
	exitPut *coordinator.CheckpointPut
	dropped map[string]bool
	// streamed are the ids of messages sent chunk by chunk (under mu).
	streamed  map[string]bool
	commitErr error         // the first failed commit: nothing may follow it (under mu)
	ended     bool          // the run's end was committed (under mu)
	endc      chan struct{} // closed when ended is set (under mu; made by flushAsync)
	async     sync.WaitGroup
	md        checkpoints.Metadata
	stop      int // the step after which the recursion limit is exceeded
	limit     int
	resume    any
	resumed   bool // whether a resume value is waiting for an interrupted task
	// lastPut is the id of the root checkpoint this run put last and
	// lastBlobs the blob rows that put writes (CheckpointPut.Blobs): a
	// projection of that checkpoint may reference them, for the put is
	// committed before or with the end (run loop only).
	lastPut   string
	lastBlobs map[string]string
}

// noted records put as the run's last (see lastPut) and returns it.
func (x *execution) noted(put coordinator.CheckpointPut) coordinator.CheckpointPut {
	x.lastPut, x.lastBlobs = put.Checkpoint.ID, put.Blobs()
	return put
}

func (x *execution) emit(event string, data any) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.pending.Events = append(x.pending.Events, coordinator.Event{Event: event, Data: data})
}

// stepQueue is what a step queues with its checkpoint, in the same
// critical section: its tasks' writes and the events that repeat them or
// the checkpoint (updates, values, checkpoints, debug; the messages
// events of the nodes' updates, in their order). So they share the
// checkpoint's commit, and are stored as references to them (eventlog),
// however the background commits of streamed chunks interleave.
type stepQueue struct {
	writes coordinator.WriteBatch
	events []coordinator.Event
}

// queue adds q to what is pending (x.mu held).
func (x *execution) queue(q *stepQueue) {
	if q == nil {
		return
	}
	if len(q.writes.Writes) > 0 {
		x.pending.Writes = append(x.pending.Writes, q.writes)
	}
	x.pending.Events = append(x.pending.Events, q.events...)
}

// commit sends the pending writes and events, plus cps (with q, the step
// that made them) and end, as one commit, after any commit in flight. It
// uses a context that a cancellation does not interrupt, so a cancelled
// run can still record how it ended. A cancellation the commit reports
// stops the execution.
func (x *execution) commit(ctx context.Context, key string, cps []coordinator.CheckpointPut, end *coordinator.End, q *stepQueue) (*coordinator.CommitResult, error) {
	x.commitMu.Lock()
	defer x.commitMu.Unlock()
	x.mu.Lock()
	if err := x.commitErr; err != nil {
		// An earlier commit failed: what it carried is lost, so nothing
		// after it may be written (a checkpoint without its parent).
		x.mu.Unlock()
		return nil, err
	}
	if x.ended || (end == nil && len(cps) == 0 && x.exitPut == nil && len(x.pending.Checkpoints) == 0 &&
		len(x.pending.Writes) == 0 && len(x.pending.Events) == 0) {
		// Nothing to send: a background commit that lost the race with
		// the end (which took what it had), or one with nothing pending.
		x.mu.Unlock()
		return &coordinator.CommitResult{}, nil
	}
	x.queue(q)
	for _, c := range cps {
		x.addCheckpoint(c)
	}
	req := x.pending
	x.pending = coordinator.CommitRequest{}
	if end != nil {
		// The end marker goes only with the commit that ends the run, so a
		// stream never sees it before the run's status has changed.
		req.Events = append(req.Events, coordinator.Event{Event: "end", Data: map[string]any{"status": end.Status}})
	}
	if x.exitPut != nil && end != nil {
		req.Checkpoints = append(req.Checkpoints, *x.exitPut)
		x.exitPut = nil
	}
	if len(x.dropped) > 0 {
		req.Writes = slices.DeleteFunc(req.Writes, func(b coordinator.WriteBatch) bool { return x.dropped[b.CheckpointID] })
	}
	for _, b := range req.Writes {
		if b.CheckpointID != x.sentFor {
			x.sentFor, x.sent = b.CheckpointID, nil
		}
		x.sent = append(x.sent, b.Writes...)
	}
	x.mu.Unlock()
	req.ClaimToken, req.CommitID, req.End = x.token, key, end
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	res, err := x.io.commit(cctx, &req)
	if err != nil {
		x.mu.Lock()
		if x.commitErr == nil {
			x.commitErr = err
		}
		x.mu.Unlock()
		return nil, err
	}
	if end != nil {
		x.mu.Lock()
		x.ended = true
		if x.endc != nil {
			close(x.endc)
		}
		x.mu.Unlock()
	}
	if res.Cancel != "" && end == nil && x.cancel != nil {
		x.cancel(errCancelRequested)
	}
	return res, nil
}

// checkpoint commits a step's checkpoint, with q (the step's writes and
// the events that repeat them), as the run's durability says: "sync" waits
// for it, "exit" keeps it for the end, "async" (the default, as in
// LangGraph) commits it in the background while the next step runs,
// unless a commit is in flight already (then it goes with the next one).
func (x *execution) checkpoint(ctx context.Context, put coordinator.CheckpointPut, q *stepQueue) error {
	x.mu.Lock()
	x.queue(q)
	x.addCheckpoint(put)
	if err := x.commitErr; err != nil {
		x.mu.Unlock()
		return err
	}
	switch {
	case x.k.Durability == "exit":
		x.mu.Unlock()
		return nil
	case x.k.Durability == "sync":
		x.mu.Unlock()
		_, err := x.commit(ctx, "", nil, nil, nil)
		return err
	}
	x.mu.Unlock()
	x.flushAsync(ctx)
	return nil
}

// flushAsync commits what is pending in the background, unless a commit
// is in flight already (what is pending then goes with the next one). What
// piled up while a commit was in flight follows it after flushLinger,
// unless the run's end (which takes it) comes first: a long step never
// holds back the checkpoint of the step before it.
func (x *execution) flushAsync(ctx context.Context) {
	x.mu.Lock()
	if x.inflight {
		x.mu.Unlock()
		return
	}
	x.inflight = true
	if x.endc == nil {
		x.endc = make(chan struct{})
	}
	endc := x.endc
	x.mu.Unlock()
	x.async.Go(func() {
		for {
			_, _ = x.commit(ctx, "", nil, nil, nil) // a failure is kept in commitErr
			x.mu.Lock()
			more := x.commitErr == nil && !x.ended &&
				len(x.pending.Checkpoints)+len(x.pending.Writes)+len(x.pending.Events) > 0
			if !more {
				x.inflight = false
				x.mu.Unlock()
				return
			}
			x.mu.Unlock()
			t := time.NewTimer(flushLinger)
			select {
			case <-t.C:
			case <-endc:
				t.Stop()
			}
		}
	})
}

// flushLinger is how long what piled up during a background commit waits
// for the next commit (a quick next step's, or the end) before it is
// committed on its own.
const flushLinger = 20 * time.Millisecond

// addCheckpoint queues a checkpoint for the next commit (x.mu held). With
// "exit" durability only the run's last checkpoint is written, as in
// LangGraph: each new one replaces the one kept so far, taking over its
// parent (the last checkpoint written before the run) and the channel
// versions it changed (their blobs are written with it), and the pending
// writes under the one it replaces are dropped with it.
func (x *execution) addCheckpoint(put coordinator.CheckpointPut) {
	if x.k.Durability != "exit" {
		x.pending.Checkpoints = append(x.pending.Checkpoints, put)
		return
	}
	if prev := x.exitPut; prev != nil {
		if x.dropped == nil {
			x.dropped = map[string]bool{}
		}
		x.dropped[prev.Checkpoint.ID] = true
		put.Parent = prev.Parent
		nv := maps.Clone(prev.NewVersions)
		maps.Copy(nv, put.NewVersions)
		put.NewVersions = nv
	}
	x.exitPut = &put
}

// settle waits for a commit in flight and returns its failure, if any.
func (x *execution) settle() error {
	x.async.Wait()
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.commitErr
}

func (x *execution) exec(ctx context.Context) error {
	if err := jsonv.Decode(x.run.Kwargs, &x.k); err != nil {
		return x.fail(ctx, fmt.Errorf("run kwargs: %w", err))
	}
	if x.g == nil {
		return x.fail(ctx, fmt.Errorf("graph %q is not registered on this worker", x.run.GraphID))
	}
	if u, ok := x.updateOf(); ok {
		return x.applyUpdate(ctx, u)
	}
	var err error
	if x.limit, err = runs.RecursionLimit(x.k.Config); err != nil {
		return x.fail(ctx, err)
	}
	x.md = checkpoints.Metadata{}
	var runMD map[string]any
	_ = jsonv.Decode(x.run.Metadata, &runMD)
	maps.Copy(x.md, runMD)
	maps.Copy(x.md, checkpoints.Metadata{"run_id": x.run.RunID.String(), "thread_id": x.run.ThreadID.String(),
		"graph_id": x.g.ID, "assistant_id": x.run.AssistantID.String(), "parents": map[string]any{}})
	// A struct, so that run_id comes first as the Agent Server sends it,
	// also when the event is stored encrypted (jsonb would reorder a map's
	// keys the same way; an encrypted event keeps its marshalled order).
	x.emit("metadata", struct {
		RunID   string `json:"run_id"`
		Attempt int    `json:"attempt"`
	}{x.run.RunID.String(), x.d.Attempt})

	base, err := x.start(ctx)
	if err != nil {
		var ae *apperr.Error
		if errors.As(err, &ae) {
			return x.fail(ctx, err)
		}
		return err
	}
	err = x.loop(ctx, base)
	if serr := x.settle(); err == nil {
		err = serr
	}
	return err
}

// fail ends the run as error with err's message (a problem of the run, not
// of the infrastructure: retrying would not help).
func (x *execution) fail(ctx context.Context, err error) error {
	e := map[string]any{"error": pregel.ErrorClass(err), "message": err.Error()}
	x.emit("error", e)
	_, cerr := x.commit(ctx, "end", nil, &coordinator.End{Status: runs.StatusError, Error: e}, nil)
	return cerr
}

// tupleOf turns a checkpoint this execution wrote into a Tuple.
func tupleOf(thread string, cp checkpoints.Checkpoint, md checkpoints.Metadata, parent *checkpoints.Config) *checkpoints.Tuple {
	return &checkpoints.Tuple{Config: checkpoints.Config{ThreadID: thread, CheckpointID: cp.ID}, Checkpoint: cp,
		Metadata: md, Parent: parent}
}

// start finds where this attempt begins: after the last checkpoint an
// earlier attempt of the run committed, or, on a first attempt, at the
// run's base (the given checkpoint or the thread's latest) with the input
// or command applied (an input checkpoint, queued for the first commit).
func (x *execution) start(ctx context.Context) (*checkpoints.Tuple, error) {
	tid := x.run.ThreadID.String()
	if x.d.Attempt > 1 || x.run.Attempt > 1 {
		sp, ok, err := x.io.span(ctx)
		if err != nil {
			return nil, err
		}
		if ok {
			firstStep := sp.firstStep
			if sp.firstSource == "input" {
				firstStep++
			}
			x.stop = firstStep + x.limit
			x.takeResume()
			return x.io.tuple(ctx, sp.last)
		}
	}
	base, err := x.io.tuple(ctx, x.k.CheckpointID)
	if apperr.CodeOf(err) == apperr.NotFound {
		if x.k.CheckpointID != "" {
			return nil, err
		}
		base, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	step := -1
	if base != nil {
		step, _ = base.Metadata.Step()
	}
	var writes []pregel.TaskWrites
	if c := x.k.Command; c != nil {
		var tw pregel.TaskWrites
		tw.Name = pregel.InputTask
		if jsonv.Present(c.Update) {
			upd, err := runs.CommandUpdates(x.g, c.Update)
			if err != nil {
				return nil, err
			}
			for _, k := range slices.Sorted(maps.Keys(upd)) {
				tw.Writes = append(tw.Writes, checkpoints.Write{Channel: k, Value: upd[k]})
			}
		}
		nodes, err := runs.CommandGoto(x.g, c.Goto)
		if err != nil {
			return nil, err
		}
		for _, n := range nodes {
			tw.Writes = append(tw.Writes, checkpoints.Write{Channel: pregel.TriggerChannel(n)})
		}
		if len(tw.Writes) > 0 {
			writes = []pregel.TaskWrites{tw}
		}
		if jsonv.Present(c.Resume) && base != nil {
			x.takeResume()
			x.pending.Writes = append(x.pending.Writes, coordinator.WriteBatch{CheckpointID: base.Config.CheckpointID,
				Writes: []checkpoints.Write{{TaskID: pregel.NullTaskID, Channel: checkpoints.ChannelResume, Value: x.resume}}})
		}
	} else if jsonv.Present(x.k.Input) {
		var in map[string]any
		if err := jsonv.Decode(x.k.Input, &in); err != nil {
			return nil, apperr.Errorf(apperr.Invalid, "Invalid input: %v", err)
		}
		var pending []pregel.Task
		if base != nil {
			pending = pregel.Tasks(base, x.g)
		}
		writes = pregel.InputWrites(pending, runs.InputChannels(x.g, in))
	} else if base != nil {
		// Continuing with no input: past any static breakpoint it stopped at.
		cp := pregel.Clone(&base.Checkpoint)
		cp.ID, cp.TS = base.Checkpoint.ID, base.Checkpoint.TS
		pregel.MarkInterruptSeen(&cp)
		base = &checkpoints.Tuple{Config: base.Config, Checkpoint: cp, Metadata: base.Metadata, Parent: base.Parent, PendingWrites: base.PendingWrites}
	}
	x.stop = step + 1 + x.limit
	if len(writes) == 0 {
		return base, nil
	}
	var baseCP *checkpoints.Checkpoint
	var parent *checkpoints.Config
	if base != nil {
		baseCP, parent = &base.Checkpoint, &base.Config
	}
	version, err := x.version(ctx, baseCP)
	if err != nil {
		return nil, err
	}
	cp, changed, err := pregel.ApplyWrites(x.g, baseCP, writes, version)
	if err != nil {
		return nil, apperr.Errorf(apperr.Invalid, "Invalid input: %v", err)
	}
	if base == nil {
		step = -1 // a thread's first checkpoint is the input at step -1
	} else {
		step++
	}
	x.stop = step + 1 + x.limit
	cp.ID, cp.TS = checkpoints.NewCheckpointID(step), now()
	md := x.metadata("input", step)
	put := coordinator.CheckpointPut{Checkpoint: cp, Metadata: md, NewVersions: changed}
	if parent != nil {
		put.Parent = parent.CheckpointID
	}
	x.noted(put)
	// Committed with the first step (or the end), in one transaction.
	t := tupleOf(tid, cp, md, parent)
	x.mu.Lock()
	x.pending.Events = append(x.pending.Events, x.checkpointEvents(t, step)...)
	x.addCheckpoint(put)
	x.mu.Unlock()
	return t, nil
}

// takeResume reads the run's command.resume, if any, as the answer for the
// interrupted tasks of the run's first step.
func (x *execution) takeResume() {
	if x.k.Command != nil && jsonv.Present(x.k.Command.Resume) {
		_ = jsonv.Decode(x.k.Command.Resume, &x.resume)
		x.resumed = true
	}
}

func (x *execution) metadata(source string, step int) checkpoints.Metadata {
	md := maps.Clone(x.md)
	md["source"], md["step"] = source, step
	return md
}

func now() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000000+00:00") }

// version mints the channel version of a step on top of base.
func (x *execution) version(ctx context.Context, base *checkpoints.Checkpoint) (string, error) {
	var threadMax int64
	if pregel.UsesIntVersions(base) {
		var err error
		threadMax, err = x.io.maxIntVersion(ctx)
		if err != nil {
			return "", err
		}
	}
	return pregel.NextVersion(base, threadMax), nil
}

// resumeFor returns the answers task gets: those recorded for it, plus the
// run's resume value when the task is waiting on an interrupt (a map keyed
// by interrupt id answers only the interrupts it names).
func (x *execution) resumeFor(t pregel.Task) []any {
	r := t.Resumes()
	if !x.resumed || len(t.Interrupts) == 0 {
		return r
	}
	if m, ok := x.resume.(map[string]any); ok {
		matched := false
		for _, in := range t.Interrupts {
			if im, ok := in.(map[string]any); ok {
				if id, _ := im["id"].(string); id != "" {
					if v, ok := m[id]; ok {
						r = append(r, v)
						matched = true
					}
				}
			}
		}
		if matched {
			return r
		}
	}
	return append(r, x.resume)
}

// loop runs supersteps from base until the graph ends, pauses, fails, is
// cancelled or exceeds its recursion limit. Each step's result is one
// commit (the writes of its last task, the new checkpoint and the step's
// events); writes of a task that finishes while others still run are
// committed at once, so a retried step does not re-run it.
func (x *execution) loop(ctx context.Context, base *checkpoints.Tuple) error {
	tid := x.run.ThreadID.String()
	var stepSpan trace.Span = noop.Span{}
	defer func() { stepSpan.End() }()
	for {
		if base == nil {
			return x.end(ctx, &coordinator.End{Status: runs.StatusSuccess, Result: map[string]any{}}, nil)
		}
		tasks := pregel.Tasks(base, x.g)
		values, err := pregel.Values(&base.Checkpoint, x.g)
		if err != nil {
			return err
		}
		if len(tasks) == 0 {
			return x.end(ctx, &coordinator.End{Status: runs.StatusSuccess, Result: values}, base)
		}
		if errors.Is(context.Cause(ctx), errCancelRequested) {
			return x.end(ctx, &coordinator.End{Status: runs.StatusInterrupted, Result: values}, base)
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		step, _ := base.Metadata.Step()
		step++
		if step > x.stop {
			return x.fail(ctx, fmt.Errorf("%w: recursion limit of %d reached without hitting a stop condition; "+
				"raise config.recursion_limit", pregel.ErrRecursion, x.limit))
		}
		if stopAt := pregel.ShouldInterrupt(&base.Checkpoint, x.k.InterruptBefore, tasks); len(stopAt) > 0 {
			x.emit("updates", map[string]any{"__interrupt__": []any{}})
			return x.end(ctx, &coordinator.End{Status: runs.StatusSuccess, Result: values}, base)
		}
		// The step's span parents its nodes and its commit (ctx is the
		// step's from here on); it ends with the step or at a return.
		var sctx context.Context
		sctx, stepSpan = tracing.Start(ctx, x.tracer, "weft.superstep")
		ctx := sctx
		if stepSpan.IsRecording() {
			stepSpan.SetAttributes(attribute.Int("weft.step", step), attribute.Int("weft.tasks", len(tasks)))
		}

		for _, task := range tasks {
			x.recordTaskStart(task, step, values)
		}
		outcomes := x.runTasks(ctx, base, tasks, values, step)
		for i, o := range outcomes {
			x.recordTaskResult(tasks[i], step, o.TaskOutcome)
		}
		x.resumed = false
		for _, o := range outcomes {
			if o.commitErr != nil {
				return o.commitErr // what it carried is lost: retry the attempt
			}
		}
		cause := context.Cause(ctx)
		if errors.Is(cause, errLeaseLost) {
			return cause
		}
		var interrupts []any
		var failure error
		cancelled := false
		for i, o := range outcomes {
			if o.Err != nil && (errors.Is(o.Err, context.Canceled) || errors.Is(o.Err, context.DeadlineExceeded)) && ctx.Err() != nil {
				cancelled = true
				outcomes[i].Writes.Writes = nil // a cancelled task wrote nothing
				continue
			}
			interrupts = append(interrupts, o.Interrupts...)
			if o.Err != nil && failure == nil {
				failure = o.Err
			}
		}
		// The step's writes go with its checkpoint and the events that
		// repeat them (q); a step that makes no checkpoint queues them for
		// its end.
		q := &stepQueue{writes: coordinator.WriteBatch{CheckpointID: base.Config.CheckpointID, Own: x.owns(base)}}
		for _, o := range outcomes {
			if !o.committed {
				q.writes.Writes = append(q.writes.Writes, o.Writes.Writes...)
			}
		}
		if failure != nil || cancelled || len(interrupts) > 0 {
			x.addWrites(q.writes)
		}
		switch {
		case failure != nil:
			e := map[string]any{"error": pregel.ErrorClass(failure), "message": failure.Error()}
			x.emit("error", e)
			return x.end(ctx, &coordinator.End{Status: runs.StatusError, Error: e}, base)
		case cancelled && errors.Is(cause, errShutdown):
			if _, err := x.commit(ctx, "", nil, nil, nil); err != nil {
				return err
			}
			return cause
		case cancelled:
			return x.end(ctx, &coordinator.End{Status: runs.StatusInterrupted, Result: values}, base)
		case len(interrupts) > 0:
			x.emit("updates", map[string]any{"__interrupt__": interrupts})
			res := maps.Clone(values)
			res["__interrupt__"] = interrupts
			x.emit("values", res)
			return x.end(ctx, &coordinator.End{Status: runs.StatusSuccess, Result: res}, base)
		}

		writes := make([]pregel.TaskWrites, len(outcomes))
		for i, o := range outcomes {
			writes[i] = o.Writes
		}
		version, err := x.version(ctx, &base.Checkpoint)
		if err != nil {
			return err // the attempt is retried
		}
		cp, changed, err := pregel.ApplyWrites(x.g, &base.Checkpoint, writes, version)
		if err != nil {
			x.addWrites(q.writes)
			e := map[string]any{"error": pregel.ErrorClass(err), "message": err.Error()}
			x.emit("error", e)
			return x.end(ctx, &coordinator.End{Status: runs.StatusError, Error: e}, base)
		}
		cp.ID, cp.TS = checkpoints.NewCheckpointID(step), now()
		md := x.metadata("loop", step)
		next := tupleOf(tid, cp, md, &base.Config)
		newValues, err := pregel.Values(&cp, x.g)
		if err != nil {
			return err
		}
		// The step's updates events repeat its writes, its values event
		// (and its checkpoints and debug events) its checkpoint: queued
		// with them (q), they share their commit and are stored as
		// references to them.
		for i, o := range outcomes {
			if tasks[i].Name != graph.START && o.Update != nil {
				q.events = append(q.events, coordinator.Event{Event: "updates", Data: map[string]any{tasks[i].Name: o.Update}})
				q.events = append(q.events, x.messageEvents(tasks[i], step, o.Update)...)
			}
		}
		q.events = append(q.events, coordinator.Event{Event: "values", Data: newValues})
		q.events = append(q.events, x.checkpointEvents(next, step)...)
		var end *coordinator.End
		ran := make([]pregel.Task, len(tasks))
		copy(ran, tasks)
		put := x.noted(coordinator.CheckpointPut{Parent: base.Config.CheckpointID, Checkpoint: cp, Metadata: md, NewVersions: changed})
		if len(pregel.Tasks(next, x.g)) == 0 || len(pregel.ShouldInterrupt(&cp, x.k.InterruptAfter, ran)) > 0 {
			end = &coordinator.End{Status: runs.StatusSuccess, Result: newValues}
			end.Projection = x.project(next)
		}
		if end != nil {
			_, err := x.commit(ctx, "", []coordinator.CheckpointPut{put}, end, q)
			return err
		}
		if err := x.checkpoint(ctx, put, q); err != nil {
			return err
		}
		stepSpan.End()
		base = next
	}
}

// messageEvents are, for a run that asked for the messages-tuple stream
// mode, the events of every message a node wrote to a messages channel,
// as [message, metadata] with LangGraph's run metadata.
func (x *execution) messageEvents(t pregel.Task, step int, update graph.State) []coordinator.Event {
	if !x.wants("messages-tuple") {
		return nil
	}
	var evs []coordinator.Event
	for _, c := range x.g.Channels {
		msgs, _ := update[c.Name].([]any)
		if c.Kind != graph.Messages || len(msgs) == 0 {
			continue
		}
		md := x.messageMetadata(t, step)
		for _, m := range msgs {
			id, _ := m.(map[string]any)["id"].(string)
			x.mu.Lock()
			streamed := x.streamed[id]
			x.mu.Unlock()
			if !streamed { // a streamed message was sent chunk by chunk already
				evs = append(evs, coordinator.Event{Event: "messages", Data: []any{m, md}})
			}
		}
	}
	return evs
}

// messageMetadata is the metadata of a messages-tuple event of task t:
// LangGraph's run metadata.
func (x *execution) messageMetadata(t pregel.Task, step int) map[string]any {
	ns := t.Name + ":" + t.ID
	return map[string]any{"langgraph_node": t.Name, "langgraph_step": step,
		"langgraph_triggers": []string{pregel.TriggerChannel(t.Name)}, "langgraph_path": t.Path,
		"langgraph_checkpoint_ns": ns, "checkpoint_ns": ns, "tags": []any{},
		"run_id": x.run.RunID.String(), "thread_id": x.run.ThreadID.String(),
		"graph_id": x.g.ID, "assistant_id": x.run.AssistantID.String()}
}

// streamer is what task t's node streams to while it runs: custom data
// and message chunks become events at once, and are committed in the
// background (coalesced while a commit is in flight) so that streams see
// them live. With "exit" durability they wait for the end.
func (x *execution) streamer(ctx context.Context, t pregel.Task, step int) func(kind string, data any) {
	return func(kind string, data any) {
		switch kind {
		case graph.StreamCustom:
			x.emit("custom", data)
		case graph.StreamMessageChunk:
			if !x.wants("messages-tuple") {
				return // not streamed: no stream of this run can show it
			}
			if m, ok := data.(map[string]any); ok {
				if id, _ := m["id"].(string); id != "" {
					x.mu.Lock()
					if x.streamed == nil {
						x.streamed = map[string]bool{}
					}
					x.streamed[id] = true
					x.mu.Unlock()
				}
			}
			x.emit("messages", []any{data, x.messageMetadata(t, step)})
		default:
			return
		}
		if x.k.Durability != "exit" {
			x.flushAsync(ctx)
		}
	}
}

// env is what task t's node sees of the run: its config and context (the
// assistant's merged under the run's at creation) and ids.
func (x *execution) env(ctx context.Context, t pregel.Task, step int) pregel.Env {
	env := pregel.Env{Config: x.k.Config, Context: x.k.Context, Stream: x.streamer(ctx, t, step),
		Run: graph.RunInfo{RunID: x.run.RunID.String(), ThreadID: x.run.ThreadID.String(),
			AssistantID: x.run.AssistantID.String(), GraphID: x.g.ID, Step: step}}
	if l, ok := x.io.(*localIO); ok {
		env.Thread = threadReader{db: l.s.db, thread: x.run.ThreadID.String()}
	}
	return env
}

// owns reports whether this run wrote checkpoint t.
func (x *execution) owns(t *checkpoints.Tuple) bool {
	return t.Metadata["run_id"] == x.run.RunID.String()
}

func (x *execution) addWrites(b coordinator.WriteBatch) {
	if len(b.Writes) == 0 {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.pending.Writes = append(x.pending.Writes, b)
}

// end commits the end of the run with whatever is pending; t is the
// thread's latest checkpoint (nil: unknown), from which the commit
// projects the thread without reading it back.
func (x *execution) end(ctx context.Context, end *coordinator.End, t *checkpoints.Tuple) error {
	end.Projection = x.project(t)
	_, err := x.commit(ctx, "end", nil, end, nil)
	return err
}

// project is the thread's projection of checkpoint t with the writes
// pending in this execution.
func (x *execution) project(t *checkpoints.Tuple) *coordinator.Projection {
	if t == nil || !x.io.local() {
		return nil
	}
	tt := *t
	x.mu.Lock()
	tt.PendingWrites = slices.Clone(t.PendingWrites)
	type key struct {
		task, channel string
		idx           int
	}
	seen := make(map[key]bool, len(t.PendingWrites))
	for _, w := range t.PendingWrites {
		seen[key{w.TaskID, w.Channel, w.Idx}] = true
	}
	var sent []checkpoints.Write
	if x.sentFor == t.Config.CheckpointID {
		sent = x.sent // committed since t was read, or already in it
	}
	for _, w := range sent {
		if !seen[key{w.TaskID, w.Channel, w.Idx}] {
			tt.PendingWrites = append(tt.PendingWrites, w)
		}
	}
	for _, b := range x.pending.Writes {
		if b.CheckpointID == t.Config.CheckpointID {
			tt.PendingWrites = append(tt.PendingWrites, b.Writes...)
		}
	}
	x.mu.Unlock()
	tasks := pregel.Tasks(&tt, x.g)
	pr := &coordinator.Projection{Values: pregel.StateValues(tt.Checkpoint.ChannelValues, x.g),
		Interrupts: jsonv.Must(pregel.InterruptsByTask(tasks)), Pending: len(tasks) > 0}
	if t.Config.NS == "" && t.Config.CheckpointID == x.lastPut {
		// This run put t (committed before or with the end): the thread
		// row may reference the blobs that put writes.
		pr.Blobs = x.lastBlobs
	}
	return pr
}

// outcome is a task's result in this attempt.
type outcome struct {
	pregel.TaskOutcome
	committed bool  // its writes were committed on their own already
	commitErr error // committing them on their own failed
}

// runTasks runs a step's tasks in parallel; tasks that completed in an
// earlier attempt are not run again, their recorded writes are reused. A
// task that finishes while others still run has its writes committed at
// once.
func (x *execution) runTasks(ctx context.Context, base *checkpoints.Tuple, tasks []pregel.Task, values graph.State, step int) []outcome {
	out := make([]outcome, len(tasks))
	var startInput any
	if v, ok := base.Checkpoint.ChannelValues[graph.START]; ok {
		startInput, _ = checkpoints.Materialize(v)
	}
	var todo []int
	for i, t := range tasks {
		if t.Done() {
			writes := slices.DeleteFunc(slices.Clone(t.Writes), func(w checkpoints.Write) bool { return w.Channel == checkpoints.ChannelResume })
			out[i] = outcome{TaskOutcome: pregel.TaskOutcome{Update: t.Result,
				Writes: pregel.TaskWrites{Name: t.Name, Triggers: []string{pregel.TriggerChannel(t.Name)}, Writes: writes}}, committed: true}
			continue
		}
		todo = append(todo, i)
	}
	var mu sync.Mutex
	remaining := len(todo)
	var wg sync.WaitGroup
	for _, i := range todo {
		wg.Go(func() {
			nctx, span := x.startNode(ctx, tasks[i])
			o := pregel.RunTask(nctx, x.g, tasks[i], values, startInput, x.resumeFor(tasks[i]), x.env(nctx, tasks[i], step))
			if o.Err != nil {
				span.RecordError(o.Err)
				span.SetStatus(codes.Error, o.Err.Error())
			} else if len(o.Interrupts) > 0 {
				span.SetAttributes(attribute.Bool("weft.interrupted", true))
			}
			span.End()
			mu.Lock()
			remaining--
			early := remaining > 0 && o.Err == nil && ctx.Err() == nil && x.k.Durability != "exit"
			mu.Unlock()
			out[i] = outcome{TaskOutcome: o}
			if early {
				x.addWrites(coordinator.WriteBatch{CheckpointID: base.Config.CheckpointID, Writes: o.Writes.Writes, Own: x.owns(base)})
				if _, err := x.commit(ctx, "writes:"+base.Config.CheckpointID+":"+tasks[i].ID, nil, nil, nil); err != nil {
					out[i].commitErr = err
				} else {
					out[i].committed = true
				}
			}
		})
	}
	wg.Wait()
	return out
}

// startNode starts task t's span (a child of its step's), or nothing when
// tracing is off.
func (x *execution) startNode(ctx context.Context, t pregel.Task) (context.Context, trace.Span) {
	if x.tracer == nil {
		return ctx, noop.Span{}
	}
	ctx, span := x.tracer.Start(ctx, "weft.node "+t.Name)
	span.SetAttributes(attribute.String("weft.node", t.Name), attribute.String("weft.task_id", t.ID))
	return ctx, span
}
