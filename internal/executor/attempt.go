package executor

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/dispatch"
	"github.com/weftdev/weft/internal/metrics"
	"github.com/weftdev/weft/internal/tracing"
	"github.com/weftdev/weft/internal/wire"
)

// Attempt runs attempts of claimed runs over an IO of the caller's: a
// remote worker's (package workerclient), whose reads and commits go
// through the worker API. The in-process pool runs its own (execute).
type Attempt struct {
	// IO reads the run's thread and commits its progress.
	IO IO
	// Graph is the run's graph (nil: the run ends as error, the graph not
	// being registered on this worker).
	Graph *graph.Graph
	// Log receives the attempt's warnings.
	Log *slog.Logger
	// Tracer traces the attempt, its supersteps and nodes (nil: tracing
	// off).
	Tracer trace.Tracer
	// WorkerID names the worker on the attempt's span.
	WorkerID string
	// Beat is how often the lease is renewed (IO.Heartbeat).
	Beat time.Duration
	// Track, when set, gets the attempt's cancel function while it runs,
	// and returns what to call when it ends: cancelling with
	// ErrCancelRequested stops the run at its step boundary, as a
	// requested cancellation does.
	Track func(context.CancelCauseFunc) func()
}

// Run runs one attempt of claimed run cl to its end (see execution.attempt):
// a heartbeat every a.Beat keeps the lease and learns of cancellation; a
// failure that is not the graph's gives the dispatch back (nack); a lost
// lease just stops. Shutdown of parent stops the attempt after its current
// step and gives the run back.
func (a Attempt) Run(parent context.Context, cl wire.Claimed) {
	x := newExecution(a.IO, cl, a.Graph, a.Log, a.Tracer, nil, a.WorkerID)
	x.attempt(parent, a.Beat, a.Track)
}

// execute runs one claimed dispatch in this process: a heartbeat keeps the
// lease (and learns of cancellation), the Pregel loop commits through the
// coordinator, and a failure that is not the graph's (a database error, a
// shutdown) gives the dispatch back for a retry.
func (s *Service) execute(parent context.Context, c wire.Claimed) {
	g, _ := s.graphs.Lookup(c.Run.GraphID)
	x := newExecution(&localIO{s: s, d: c.Dispatch, run: c.Run, token: c.ClaimToken}, c, g, s.log, s.cfg.Tracer, s.cfg.Metrics, s.cfg.WorkerID)
	x.attempt(parent, s.coord.Lease()/3, func(cancel context.CancelCauseFunc) func() {
		s.cancels.Store(c.Dispatch.DispatchID, cancel)
		return func() { s.cancels.Delete(c.Dispatch.DispatchID) }
	})
}

// newExecution is an attempt of claimed run c of graph g over io.
func newExecution(io IO, c wire.Claimed, g *graph.Graph, log *slog.Logger, tracer trace.Tracer, m *metrics.Metrics, worker string) *execution {
	return &execution{io: io, c: &committer{io: io, token: c.ClaimToken}, log: log, d: c.Dispatch, run: c.Run, g: g,
		tracer: tracer, metrics: m, traceparent: c.Traceparent, worker: worker}
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
	x.c.cancel = cancel
	if track != nil {
		defer track(cancel)()
	}
	if d.CancelAction != nil {
		cancel(ErrCancelRequested)
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
	state, nerr := x.io.Nack(nctx, reason)
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
		action, err := x.io.Heartbeat(ctx)
		switch {
		case errors.Is(err, dispatch.ErrFenced):
			cancel(errLeaseLost)
			return
		case err != nil && ctx.Err() == nil:
			x.log.Warn("heartbeat failed", "dispatch_id", x.d.DispatchID, "error", err)
		case action != "":
			cancel(ErrCancelRequested)
		}
	}
}
