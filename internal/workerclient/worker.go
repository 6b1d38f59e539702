package workerclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/assistants"
	"github.com/weftdev/weft/internal/executor"
	"github.com/weftdev/weft/internal/tracing"
	"github.com/weftdev/weft/internal/wire"
)

// Config configures Run: a Go program's graphs executed as an external
// worker of a Weft server, over the same worker API the JS worker uses.
type Config struct {
	// URL is the server's base URL (http://host:port).
	URL string
	// Graphs are the graphs this worker serves (registered on the server
	// at start; the server must not have them compiled in).
	Graphs *graph.Registry
	// WorkerID names the worker in the dispatch audit (required).
	WorkerID string
	// Concurrency is how many runs execute at once (default 8).
	Concurrency int
	// Wait is how long one claim long-polls for work (default 10s, at
	// most 30s).
	Wait time.Duration
	// Client sends the requests (default: a client without timeout; every
	// request has a deadline of its own).
	Client *http.Client
	// APIKey is sent as x-api-key on every request: a key with the worker
	// scope when the server authenticates ("" sends none).
	APIKey string
	// Log receives the worker's logs (default: slog.Default()).
	Log *slog.Logger
	// TracerProvider traces the runs this worker executes (attempt,
	// superstep and node spans, client spans of its requests), continuing
	// each run's trace from the traceparent its claim carries (nil: no
	// spans; the run's traceparent is still forwarded on its requests).
	TracerProvider trace.TracerProvider
}

// Run registers cfg.Graphs on the server (POST /dispatch/graphs,
// retried while the server cannot be reached), then claims their runs
// (POST /dispatch/claim, long poll, up to Concurrency at once) and executes
// each with the executor the in-process pool uses, its reads and commits
// going through the worker API: heartbeats renew the lease and carry
// cancellation, commits are fenced and idempotent (retried on a network
// error or a 5xx), a lost lease (409) stops the run at once, a failure
// that is not the graph's gives it back (nack). When ctx ends it stops
// claiming, stops the runs in progress after their current step, gives
// them back, and returns nil. A registration the server refuses is an
// error.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Graphs == nil || len(cfg.Graphs.IDs()) == 0 {
		return errors.New("remote worker: no graphs to serve")
	}
	if cfg.WorkerID == "" {
		return errors.New("remote worker: a worker id is required")
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 8
	}
	if cfg.Wait <= 0 {
		cfg.Wait = 10 * time.Second
	}
	cfg.Wait = min(cfg.Wait, 30*time.Second)
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	c := &client{base: strings.TrimRight(cfg.URL, "/"), http: cfg.Client, tracer: tracing.Tracer(cfg.TracerProvider),
		apiKey: cfg.APIKey}
	if err := registerGraphs(ctx, c, cfg); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return nil
	}
	ids := cfg.Graphs.IDs()
	w := &cancelWatch{c: c, worker: cfg.WorkerID, log: cfg.Log, started: make(chan struct{}, 1)}
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go w.run(watchCtx)
	cfg.Log.Info("worker started", "worker_id", cfg.WorkerID, "url", c.base, "graphs", ids, "concurrency", cfg.Concurrency)
	slots := make(chan struct{}, cfg.Concurrency)
	var wg sync.WaitGroup
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		select { // one slot free at least, then take every free one
		case slots <- struct{}{}:
		case <-ctx.Done():
			continue
		}
		n := 1
		for n < min(cfg.Concurrency, 32) {
			select {
			case slots <- struct{}{}:
				n++
				continue
			default:
			}
			break
		}
		var got []wire.Claimed
		err := c.post(ctx, "/dispatch/claim", wire.ClaimRequest{WorkerID: cfg.WorkerID, GraphIDs: ids, Limit: n,
			WaitMS: int(cfg.Wait / time.Millisecond)}, &got, cfg.Wait+30*time.Second, nil)
		for range n - len(got) {
			<-slots
		}
		if err != nil {
			if ctx.Err() == nil {
				cfg.Log.Warn("claim failed", "worker_id", cfg.WorkerID, "error", err)
				sleep(ctx, backoff)
				backoff = min(backoff*2, 5*time.Second)
			}
			continue
		}
		backoff = 100 * time.Millisecond
		for _, cl := range got {
			wg.Go(func() {
				defer func() { <-slots }()
				executeRemote(ctx, c, cfg, cl, w)
			})
		}
	}
	wg.Wait()
	cfg.Log.Info("worker stopped", "worker_id", cfg.WorkerID)
	return nil
}

// registerGraphs registers every graph of cfg with the server, retrying
// while it cannot be reached (it may still be starting).
func registerGraphs(ctx context.Context, c *client, cfg Config) error {
	for _, id := range cfg.Graphs.IDs() {
		g, _ := cfg.Graphs.Lookup(id)
		info := assistants.InfoOf(g)
		reg := wire.GraphRegistration{GraphID: id, WorkerID: cfg.WorkerID, Drawable: g.Drawable(), XrayDrawables: info.XrayDrawables,
			Subgraphs: info.Subgraphs, InputSchema: info.Schemas.InputSchema, OutputSchema: info.Schemas.OutputSchema,
			StateSchema: info.Schemas.StateSchema, ConfigSchema: info.Schemas.ConfigSchema, ContextSchema: info.Schemas.ContextSchema,
			ChannelDefaults: info.ChannelDefaults}
		backoff := 200 * time.Millisecond
		for {
			var out wire.GraphRegistered
			err := c.post(ctx, "/dispatch/graphs", reg, &out, 30*time.Second, nil)
			if err == nil {
				cfg.Log.Info("graph registered", "graph_id", id, "assistant_id", out.AssistantID)
				break
			}
			var he *httpError
			if errors.As(err, &he) && he.status < 500 {
				return fmt.Errorf("remote worker: register graph %q: %w", id, err)
			}
			if ctx.Err() != nil {
				return nil
			}
			cfg.Log.Warn("graph registration failed; retrying", "graph_id", id, "error", err)
			sleep(ctx, backoff)
			backoff = min(backoff*2, 5*time.Second)
		}
	}
	return nil
}

// executeRemote runs one claimed dispatch with the executor the
// in-process pool uses, over remoteIO.
func executeRemote(ctx context.Context, c *client, cfg Config, cl wire.Claimed, w *cancelWatch) {
	d := cl.Dispatch
	cl.Run.GraphID = d.GraphID // not part of the run's JSON
	g, _ := cfg.Graphs.Lookup(d.GraphID)
	lease := d.LeaseExpiresAt.Sub(d.ClaimedAt.Time)
	if lease <= 0 {
		lease = 30 * time.Second
	}
	a := executor.Attempt{IO: &remoteIO{c: c, d: d, run: cl.Run, token: cl.ClaimToken}, Graph: g, Log: cfg.Log,
		Tracer: c.tracer, WorkerID: cfg.WorkerID, Beat: max(lease/3, 100*time.Millisecond),
		Track: func(cancel context.CancelCauseFunc) func() { return w.track(d.DispatchID, cancel) }}
	a.Run(ctx, cl)
}

// cancelWatch keeps one long-polling POST /dispatch/cancellations open
// while the worker runs anything, and stops a run whose cancellation it
// learns (within milliseconds of the request, as in-process runs; the
// heartbeat remains the fallback).
type cancelWatch struct {
	c       *client
	worker  string
	log     *slog.Logger
	runs    sync.Map      // dispatch id → context.CancelCauseFunc of its attempt
	started chan struct{} // a run started: the watch wakes if idle
}

// track registers the attempt of dispatch id until the returned function
// is called.
func (w *cancelWatch) track(id uuid.UUID, cancel context.CancelCauseFunc) func() {
	w.runs.Store(id, cancel)
	select {
	case w.started <- struct{}{}:
	default:
	}
	return func() { w.runs.Delete(id) }
}

func (w *cancelWatch) run(ctx context.Context) {
	told := map[uuid.UUID]bool{} // cancellations already acted on
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		var known []uuid.UUID
		active := 0
		w.runs.Range(func(k, _ any) bool {
			active++
			if told[k.(uuid.UUID)] {
				known = append(known, k.(uuid.UUID))
			}
			return true
		})
		clear(told) // only the runs still active count
		for _, id := range known {
			told[id] = true
		}
		if active == 0 {
			select {
			case <-ctx.Done():
				return
			case <-w.started:
			}
			continue
		}
		var got []wire.Cancellation
		err := w.c.post(ctx, "/dispatch/cancellations", wire.CancellationsRequest{WorkerID: w.worker, Known: known, WaitMS: 10000},
			&got, 40*time.Second, nil)
		if err != nil {
			if ctx.Err() == nil {
				w.log.Warn("watching cancellations failed", "worker_id", w.worker, "error", err)
				sleep(ctx, backoff)
				backoff = min(backoff*2, 5*time.Second)
			}
			continue
		}
		backoff = 100 * time.Millisecond
		for _, c := range got {
			// A run claimed a moment ago may not be tracked yet: it is
			// answered again by the next call.
			if cancel, ok := w.runs.Load(c.DispatchID); ok {
				told[c.DispatchID] = true
				cancel.(context.CancelCauseFunc)(executor.ErrCancelRequested)
			}
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
