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

	"go.opentelemetry.io/otel/attribute"
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
	"github.com/weftdev/weft/internal/threads"
	"github.com/weftdev/weft/internal/tracing"
	"github.com/weftdev/weft/internal/wire"
)

// execution is one attempt of one run: the superstep loop, which reads
// through io and hands what each step produced to its committer.
type execution struct {
	io  IO
	c   *committer
	log *slog.Logger
	d   dispatch.Dispatch
	run runs.Run
	g   *graph.Graph
	k   runs.Kwargs

	tracer      trace.Tracer     // nil: tracing off
	metrics     *metrics.Metrics // nil: not counted
	traceparent string           // the run's, the parent of the attempt's span
	worker      string           // the worker id, for the attempt's span

	// streamed are the ids of messages sent chunk by chunk (under
	// streamMu).
	streamMu sync.Mutex
	streamed map[string]bool

	md      checkpoints.Metadata
	stop    int // the step after which the recursion limit is exceeded
	limit   int
	resume  any
	resumed bool // whether a resume value is waiting for an interrupted task
	// lastPut is the id of the root checkpoint this run put last and
	// lastBlobs the blob rows that put writes (checkpoints.WrittenVersions):
	// a projection of that checkpoint may reference them, for the put is
	// committed before or with the end (run loop only).
	lastPut   string
	lastBlobs map[string]string
}

// noted records put as the run's last (see lastPut) and returns it.
func (x *execution) noted(put wire.CheckpointPut) wire.CheckpointPut {
	x.lastPut, x.lastBlobs = put.Checkpoint.ID, checkpoints.WrittenVersions(&put.Checkpoint, put.NewVersions)
	return put
}

func (x *execution) exec(ctx context.Context) error {
	if err := jsonv.Decode(x.run.Kwargs, &x.k); err != nil {
		return x.fail(ctx, fmt.Errorf("run kwargs: %w", err))
	}
	x.c.durability = x.k.Durability
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
	x.c.emit("metadata", struct {
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
	if serr := x.c.settle(); err == nil {
		err = serr
	}
	return err
}

// fail ends the run as error with err's message (a problem of the run, not
// of the infrastructure: retrying would not help).
func (x *execution) fail(ctx context.Context, err error) error {
	e := map[string]any{"error": pregel.ErrorClass(err), "message": err.Error()}
	x.c.emit("error", e)
	return x.c.end(ctx, "end", &wire.End{Status: runs.StatusError, Error: e}, nil, nil)
}

// tupleOf turns a checkpoint this execution wrote into a Tuple.
func tupleOf(thread string, cp checkpoints.Checkpoint, md checkpoints.Metadata, parent *checkpoints.Config) *checkpoints.Tuple {
	return &checkpoints.Tuple{Config: checkpoints.Config{ThreadID: thread, CheckpointID: cp.ID}, Checkpoint: cp,
		Metadata: md, Parent: parent}
}

// tuple reads checkpoint id of the run's thread (its latest when empty)
// with its channel values decoded once for the whole attempt
// (pregel.Decoded).
func (x *execution) tuple(ctx context.Context, id string) (*checkpoints.Tuple, error) {
	t, err := x.io.Tuple(ctx, id)
	if err != nil || t == nil {
		return t, err
	}
	cp, err := pregel.Decoded(t.Checkpoint)
	if err != nil {
		return nil, err
	}
	out := *t
	out.Checkpoint = cp
	return &out, nil
}

// start finds where this attempt begins: after the last checkpoint an
// earlier attempt of the run committed, or, on a first attempt, at the
// run's base (the given checkpoint or the thread's latest) with the input
// or command applied (an input checkpoint, queued for the first commit).
func (x *execution) start(ctx context.Context) (*checkpoints.Tuple, error) {
	tid := x.run.ThreadID.String()
	if x.d.Attempt > 1 || x.run.Attempt > 1 {
		sp, ok, err := x.io.Span(ctx)
		if err != nil {
			return nil, err
		}
		if ok {
			firstStep := sp.FirstStep
			if sp.FirstSource == "input" {
				firstStep++
			}
			x.stop = firstStep + x.limit
			x.takeResume()
			return x.tuple(ctx, sp.Last)
		}
	}
	base, err := x.tuple(ctx, x.k.CheckpointID)
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
			x.c.addWrites(wire.WriteBatch{CheckpointID: base.Config.CheckpointID,
				Writes: []checkpoints.Write{{TaskID: pregel.NullTaskID, Channel: checkpoints.ChannelResume, Value: x.resume}}}, false)
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
	put := wire.CheckpointPut{Checkpoint: cp, Metadata: md, NewVersions: changed}
	if parent != nil {
		put.Parent = parent.CheckpointID
	}
	x.noted(put)
	// Committed with the first step (or the end), in one transaction.
	t := tupleOf(tid, cp, md, parent)
	x.c.addInput(put, x.checkpointEvents(t, step))
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
		threadMax, err = x.io.MaxIntVersion(ctx)
		if err != nil {
			return "", err
		}
	}
	return pregel.NextVersion(base, threadMax), nil
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
			return x.end(ctx, &wire.End{Status: runs.StatusSuccess, Result: map[string]any{}}, nil)
		}
		tasks := pregel.Tasks(base, x.g)
		values, err := pregel.Values(&base.Checkpoint, x.g)
		if err != nil {
			return err
		}
		if len(tasks) == 0 {
			return x.end(ctx, &wire.End{Status: runs.StatusSuccess, Result: values}, base)
		}
		if errors.Is(context.Cause(ctx), ErrCancelRequested) {
			return x.end(ctx, &wire.End{Status: runs.StatusInterrupted, Result: values}, base)
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
			x.c.emit("updates", map[string]any{"__interrupt__": []any{}})
			return x.end(ctx, &wire.End{Status: runs.StatusSuccess, Result: values}, base)
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
		q := &stepQueue{writes: wire.WriteBatch{CheckpointID: base.Config.CheckpointID}, own: x.owns(base)}
		for _, o := range outcomes {
			if !o.committed {
				q.writes.Writes = append(q.writes.Writes, o.Writes.Writes...)
			}
		}
		if failure != nil || cancelled || len(interrupts) > 0 {
			x.c.addWrites(q.writes, q.own)
		}
		switch {
		case failure != nil:
			e := map[string]any{"error": pregel.ErrorClass(failure), "message": failure.Error()}
			x.c.emit("error", e)
			return x.end(ctx, &wire.End{Status: runs.StatusError, Error: e}, base)
		case cancelled && errors.Is(cause, errShutdown):
			if err := x.c.flush(ctx, ""); err != nil {
				return err
			}
			return cause
		case cancelled:
			return x.end(ctx, &wire.End{Status: runs.StatusInterrupted, Result: values}, base)
		case len(interrupts) > 0:
			x.c.emit("updates", map[string]any{"__interrupt__": interrupts})
			res := maps.Clone(values)
			res["__interrupt__"] = interrupts
			x.c.emit("values", res)
			return x.end(ctx, &wire.End{Status: runs.StatusSuccess, Result: res}, base)
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
			x.c.addWrites(q.writes, q.own)
			e := map[string]any{"error": pregel.ErrorClass(err), "message": err.Error()}
			x.c.emit("error", e)
			return x.end(ctx, &wire.End{Status: runs.StatusError, Error: e}, base)
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
				q.events = append(q.events, wire.Event{Event: "updates", Data: map[string]any{tasks[i].Name: o.Update}})
				q.events = append(q.events, x.messageEvents(tasks[i], step, o.Update)...)
			}
		}
		q.events = append(q.events, wire.Event{Event: "values", Data: newValues})
		q.events = append(q.events, x.checkpointEvents(next, step)...)
		ran := make([]pregel.Task, len(tasks))
		copy(ran, tasks)
		put := x.noted(wire.CheckpointPut{Parent: base.Config.CheckpointID, Checkpoint: cp, Metadata: md, NewVersions: changed})
		if len(pregel.Tasks(next, x.g)) == 0 || len(pregel.ShouldInterrupt(&cp, x.k.InterruptAfter, ran)) > 0 {
			return x.c.end(ctx, "", &wire.End{Status: runs.StatusSuccess, Result: newValues}, x.project(next), q, put)
		}
		if err := x.c.checkpoint(ctx, put, q); err != nil {
			return err
		}
		stepSpan.End()
		base = next
	}
}

// owns reports whether this run wrote checkpoint t.
func (x *execution) owns(t *checkpoints.Tuple) bool {
	return t.Metadata["run_id"] == x.run.RunID.String()
}

// end commits the end of the run with whatever is pending; t is the
// thread's latest checkpoint (nil: unknown), from which the commit
// projects the thread without reading it back.
func (x *execution) end(ctx context.Context, end *wire.End, t *checkpoints.Tuple) error {
	return x.c.end(ctx, "end", end, x.project(t), nil)
}

// project is the thread's projection (threads.Project) of checkpoint t
// with the writes pending in this execution.
func (x *execution) project(t *checkpoints.Tuple) *coordinator.Projection {
	if t == nil || !x.io.Local() {
		return nil
	}
	tt := *t
	tt.PendingWrites = x.c.writesUnder(t)
	pr := threads.Project(&tt, x.g)
	if t.Config.NS == "" && t.Config.CheckpointID == x.lastPut {
		// This run put t (committed before or with the end): the thread
		// row may reference the blobs that put writes.
		pr.Blobs = x.lastBlobs
	}
	return &pr
}
