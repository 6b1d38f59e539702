package executor

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/assistants"
	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/coordinator"
	"github.com/weftdev/weft/internal/dispatch"
	"github.com/weftdev/weft/internal/runs"
	"github.com/weftdev/weft/internal/tracing"
	"github.com/weftdev/weft/internal/workerapi"
)

// RemoteConfig configures RunRemote: a Go program's graphs executed as an
// external worker of a Weft server, over the same worker API the JS
// worker uses.
type RemoteConfig struct {
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

// RunRemote registers cfg.Graphs on the server (POST /dispatch/graphs,
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
func RunRemote(ctx context.Context, cfg RemoteConfig) error {
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
	c := &workerClient{base: strings.TrimRight(cfg.URL, "/"), http: cfg.Client, tracer: tracing.Tracer(cfg.TracerProvider),
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
		var got []coordinator.Claimed
		err := c.post(ctx, "/dispatch/claim", workerapi.ClaimRequest{WorkerID: cfg.WorkerID, GraphIDs: ids, Limit: n,
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
func registerGraphs(ctx context.Context, c *workerClient, cfg RemoteConfig) error {
	for _, id := range cfg.Graphs.IDs() {
		g, _ := cfg.Graphs.Lookup(id)
		info := assistants.InfoOf(g)
		reg := workerapi.GraphRegistration{GraphID: id, WorkerID: cfg.WorkerID, Drawable: g.Drawable(), XrayDrawables: info.XrayDrawables,
			Subgraphs: info.Subgraphs, InputSchema: info.Schemas.InputSchema, OutputSchema: info.Schemas.OutputSchema,
			StateSchema: info.Schemas.StateSchema, ConfigSchema: info.Schemas.ConfigSchema, ContextSchema: info.Schemas.ContextSchema,
			ChannelDefaults: info.ChannelDefaults}
		backoff := 200 * time.Millisecond
		for {
			var out workerapi.GraphRegistered
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

// executeRemote runs one claimed dispatch with the in-process executor
// over remoteIO.
func executeRemote(ctx context.Context, c *workerClient, cfg RemoteConfig, cl coordinator.Claimed, w *cancelWatch) {
	d := cl.Dispatch
	cl.Run.GraphID = d.GraphID // not part of the run's JSON
	g, _ := cfg.Graphs.Lookup(d.GraphID)
	lease := d.LeaseExpiresAt.Sub(d.ClaimedAt.Time)
	if lease <= 0 {
		lease = 30 * time.Second
	}
	rio := &remoteIO{c: c, d: d, run: cl.Run, token: cl.ClaimToken}
	x := &execution{io: rio, log: cfg.Log, d: d, run: cl.Run, token: cl.ClaimToken, g: g,
		tracer: c.tracer, traceparent: cl.Traceparent, worker: cfg.WorkerID}
	x.attempt(ctx, max(lease/3, 100*time.Millisecond), func(cancel context.CancelCauseFunc) func() {
		return w.track(d.DispatchID, cancel)
	})
}

// cancelWatch keeps one long-polling POST /dispatch/cancellations open
// while the worker runs anything, and stops a run whose cancellation it
// learns (within milliseconds of the request, as in-process runs; the
// heartbeat remains the fallback).
type cancelWatch struct {
	c       *workerClient
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
		var got []coordinator.Cancellation
		err := w.c.post(ctx, "/dispatch/cancellations", workerapi.CancellationsRequest{WorkerID: w.worker, Known: known, WaitMS: 10000},
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
				cancel.(context.CancelCauseFunc)(errCancelRequested)
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

// remoteIO is runIO over the worker API of a remote server.
type remoteIO struct {
	c     *workerClient
	d     dispatch.Dispatch
	run   runs.Run
	token uuid.UUID
	seq   atomic.Int64 // numbers this attempt's commits for their keys
}

func (r *remoteIO) local() bool { return false }

// rawTuple is RawTuple as read here: the stored columns kept as text.
type rawTuple struct {
	Config struct {
		ThreadID     string `json:"thread_id"`
		NS           string `json:"checkpoint_ns"`
		CheckpointID string `json:"checkpoint_id"`
	} `json:"config"`
	ParentCheckpointID *string         `json:"parent_checkpoint_id"`
	Checkpoint         json.RawMessage `json:"checkpoint"`
	Metadata           json.RawMessage `json:"metadata"`
	ChannelValues      [][]*string     `json:"channel_values"`
	PendingWrites      [][]*string     `json:"pending_writes"`
}

// stored decodes [type, base64 blob] (either may be null).
func stored(typ, blob *string) (checkpoints.StoredValue, error) {
	var v checkpoints.StoredValue
	if typ != nil {
		v.Type = *typ
	}
	if blob != nil {
		b, err := base64.StdEncoding.DecodeString(*blob)
		if err != nil {
			return v, fmt.Errorf("blob: %w", err)
		}
		v.Data = b
	}
	return v, nil
}

func (t *rawTuple) decode() (*checkpoints.Tuple, error) {
	blobs := make(map[string]checkpoints.StoredValue, len(t.ChannelValues))
	for _, cv := range t.ChannelValues {
		if len(cv) != 3 || cv[0] == nil {
			return nil, fmt.Errorf("checkpoint %s: malformed channel value", t.Config.CheckpointID)
		}
		v, err := stored(cv[1], cv[2])
		if err != nil {
			return nil, err
		}
		blobs[*cv[0]] = v
	}
	writes := make([]checkpoints.StoredWrite, 0, len(t.PendingWrites))
	for _, w := range t.PendingWrites {
		if len(w) != 4 || w[0] == nil || w[1] == nil {
			return nil, fmt.Errorf("checkpoint %s: malformed pending write", t.Config.CheckpointID)
		}
		v, err := stored(w[2], w[3])
		if err != nil {
			return nil, err
		}
		writes = append(writes, checkpoints.StoredWrite{TaskID: *w[0], Channel: *w[1], Value: v})
	}
	cfg := checkpoints.Config{ThreadID: t.Config.ThreadID, NS: t.Config.NS, CheckpointID: t.Config.CheckpointID}
	return checkpoints.TupleFromStored(cfg, t.ParentCheckpointID, t.Checkpoint, t.Metadata, blobs, writes)
}

func (r *remoteIO) tuple(ctx context.Context, id string) (*checkpoints.Tuple, error) {
	root := ""
	var t rawTuple
	err := r.c.post(ctx, "/dispatch/checkpoints/get", workerapi.CheckpointReadRequest{ThreadID: r.run.ThreadID.String(),
		CheckpointNS: &root, CheckpointID: id}, &t, 30*time.Second, retryable)
	var he *httpError
	if errors.As(err, &he) && he.status == http.StatusNotFound {
		return nil, apperr.Errorf(apperr.NotFound, "%s", he.detail)
	}
	if err != nil {
		return nil, err
	}
	return t.decode()
}

// span pages through the run's root checkpoints, newest first.
func (r *remoteIO) span(ctx context.Context) (runSpan, bool, error) {
	var sp runSpan
	root, before, found := "", "", false
	for {
		var page []struct {
			Config struct {
				CheckpointID string `json:"checkpoint_id"`
			} `json:"config"`
			Metadata checkpoints.Metadata `json:"metadata"`
		}
		err := r.c.post(ctx, "/dispatch/checkpoints/list", workerapi.CheckpointReadRequest{ThreadID: r.run.ThreadID.String(),
			CheckpointNS: &root, Before: before, Filter: map[string]any{"run_id": r.run.RunID.String()}, Limit: 1000},
			&page, 30*time.Second, retryable)
		if err != nil {
			return sp, false, err
		}
		if len(page) == 0 {
			return sp, found, nil
		}
		if !found {
			sp.last, found = page[0].Config.CheckpointID, true
		}
		first := page[len(page)-1]
		sp.firstStep, _ = first.Metadata.Step()
		sp.firstSource, _ = first.Metadata["source"].(string)
		if len(page) < 1000 {
			return sp, true, nil
		}
		before = first.Config.CheckpointID
	}
}

// maxIntVersion: the worker API has no read of the thread's blob versions,
// so a remote worker continuing a thread in the JS saver's integer scheme
// mints above its base checkpoint's versions only (as the JS saver does).
func (r *remoteIO) maxIntVersion(context.Context) (int64, error) { return 0, nil }

func (r *remoteIO) commit(ctx context.Context, req *coordinator.CommitRequest) (*coordinator.CommitResult, error) {
	// Every commit gets a key of this attempt (a dispatch's attempts share
	// its id), so a retried request is applied once, and a stale attempt's
	// commit never passes for a later one's.
	key := req.CommitID
	if key == "" {
		key = strconv.FormatInt(r.seq.Add(1), 10)
	}
	req.CommitID = r.d.DispatchID.String() + ":" + strconv.Itoa(r.d.Attempt) + ":" + key
	// A checkpoint carries only the values of the channels it changed.
	for i, c := range req.Checkpoints {
		vals := make(map[string]any, len(c.NewVersions))
		for ch := range c.NewVersions {
			if v, ok := c.Checkpoint.ChannelValues[ch]; ok {
				vals[ch] = v
			}
		}
		req.Checkpoints[i].Checkpoint.ChannelValues = vals
	}
	var res coordinator.CommitResult
	if err := r.c.post(ctx, "/dispatch/"+r.d.DispatchID.String()+"/commit", req, &res, 30*time.Second, retryable); err != nil {
		return nil, r.fenced(err)
	}
	return &res, nil
}

func (r *remoteIO) heartbeat(ctx context.Context) (string, error) {
	var res workerapi.HeartbeatResponse
	err := r.c.post(ctx, "/dispatch/"+r.d.DispatchID.String()+"/heartbeat", workerapi.FenceRequest{ClaimToken: r.token.String()},
		&res, 10*time.Second, nil)
	if err != nil {
		return "", r.fenced(err)
	}
	return res.Cancel, nil
}

func (r *remoteIO) nack(ctx context.Context, reason string) (dispatch.State, error) {
	var res workerapi.NackResponse
	err := r.c.post(ctx, "/dispatch/"+r.d.DispatchID.String()+"/nack", workerapi.FenceRequest{ClaimToken: r.token.String(), Error: reason},
		&res, 10*time.Second, retryable)
	if err != nil {
		return "", r.fenced(err)
	}
	return dispatch.State(res.State), nil
}

// fenced turns the server's 409 into dispatch.ErrFenced.
func (r *remoteIO) fenced(err error) error {
	var he *httpError
	if errors.As(err, &he) && he.status == http.StatusConflict {
		return fmt.Errorf("%w (%s)", dispatch.Fenced(r.d.DispatchID), he.detail)
	}
	return err
}

// workerClient sends the worker API's JSON requests.
type workerClient struct {
	base   string
	http   *http.Client
	tracer trace.Tracer // nil: no client spans
	apiKey string       // sent as x-api-key ("" none)
}

// httpError is a response other than 2xx.
type httpError struct {
	status int
	detail string
}

func (e *httpError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.status, e.detail) }

// retryable says whether a failed request may be sent again: it did not
// get an answer, or the server failed (5xx). Only idempotent requests are
// retried.
func retryable(err error) bool {
	var he *httpError
	if errors.As(err, &he) {
		return he.status >= 500
	}
	return true
}

// post sends body to path and decodes the answer into out, each try within
// timeout; a failure retry accepts is tried again, up to 4 times in all.
func (c *workerClient) post(ctx context.Context, path string, body, out any, timeout time.Duration, retry func(error) bool) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	backoff := 100 * time.Millisecond
	for try := 1; ; try++ {
		err = c.try(ctx, path, b, out, timeout)
		if err == nil || retry == nil || !retry(err) || try == 4 || ctx.Err() != nil {
			return err
		}
		sleep(ctx, backoff)
		backoff *= 3
	}
}

func (c *workerClient) try(ctx context.Context, path string, body []byte, out any, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.apiKey != "" {
		req.Header.Set("X-Api-Key", c.apiKey)
	}
	// A request of a run (its context holds the run's span, or its
	// traceparent when tracing is off here) carries the trace onward; a
	// span of its own when tracing is on.
	if c.tracer != nil && trace.SpanContextFromContext(ctx).IsValid() {
		var span trace.Span
		ctx, span = c.tracer.Start(ctx, "POST "+routeOf(path), trace.WithSpanKind(trace.SpanKindClient))
		defer span.End()
		req = req.WithContext(ctx)
	}
	tracing.Inject(ctx, req.Header)
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Detail any `json:"detail"`
		}
		detail := strings.TrimSpace(string(data))
		if json.Unmarshal(data, &e) == nil && e.Detail != nil {
			detail = fmt.Sprint(e.Detail)
		}
		return fmt.Errorf("POST %s: %w", path, &httpError{status: resp.StatusCode, detail: detail})
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("POST %s: decode answer: %w", path, err)
	}
	return nil
}

// routeOf is path as a route template: /dispatch/{dispatch_id}/commit for
// /dispatch/<uuid>/commit (span names stay few).
func routeOf(path string) string {
	rest, ok := strings.CutPrefix(path, "/dispatch/")
	if !ok {
		return path
	}
	id, tail, ok := strings.Cut(rest, "/")
	if _, err := uuid.Parse(id); !ok || err != nil {
		return path
	}
	return "/dispatch/{dispatch_id}/" + tail
}
