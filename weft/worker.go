package weft

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/tracing"
	"github.com/weftdev/weft/internal/workerclient"
)

// WorkerOptions configure RunWorker. The zero value is a worker named
// after the host and process, running up to 8 runs at once.
type WorkerOptions struct {
	// WorkerID names the worker in the server's dispatch audit (default
	// "weft-worker-go-<host>-<pid>-<random>").
	WorkerID string
	// Concurrency is how many runs execute at once (default 8).
	Concurrency int
	// Wait is how long one claim waits for work on the server (long poll;
	// default 10s, at most 30s).
	Wait time.Duration
	// APIKey is sent as x-api-key on every request: a key with the worker
	// scope (weft keys create --scope worker) when the server runs with
	// WEFT_AUTH=keys, a token with the worker scope with WEFT_AUTH=jwt.
	// "" sends none (a server without auth).
	APIKey string
	// HTTPClient sends the worker API's requests (default: a client
	// without timeout; every request has a deadline of its own).
	HTTPClient *http.Client
	// Logger receives the worker's logs (default: text at info level on
	// stderr).
	Logger *slog.Logger
	// TracerProvider traces the runs the worker executes (a run span per
	// attempt, continuing the trace of the request that created the run,
	// with its supersteps, nodes and the worker API requests under it).
	// nil: no spans (the run's traceparent is still forwarded to the
	// server). WorkerMain builds one from the OTEL_* environment.
	TracerProvider trace.TracerProvider
}

// RunWorker serves graphs as an external worker of the Weft server at url
// (http://host:port), over the same worker API as the JS worker: it
// registers every graph of graphs (POST /dispatch/graphs: its drawing and
// JSON Schemas, so the assistant routes answer for it, and its system
// assistant), then claims runs of those graphs and executes them with the
// same executor as an embedded server, reading checkpoints and committing
// through the server (fenced, idempotent commits; heartbeats that renew
// the lease and carry cancellation). The server keeps runs, threads and
// streams; it must not have these graph ids compiled in (start it with
// -workers 0, or serving other graphs).
//
// Registration is retried while the server cannot be reached; a
// registration it refuses (a graph id it serves itself) is an error. When
// ctx ends, RunWorker stops claiming, stops the runs in progress at their
// current step, gives them back to the queue (another worker resumes them
// from their last checkpoint) and returns nil. A worker that dies without
// giving its runs back loses their leases; the server then requeues them.
func RunWorker(ctx context.Context, url string, graphs *graph.Registry, opt WorkerOptions) error {
	if err := checkURL(url); err != nil {
		return err
	}
	if opt.Concurrency < 0 {
		return fmt.Errorf("weft: worker concurrency must not be negative, got %d", opt.Concurrency)
	}
	if opt.WorkerID == "" {
		opt.WorkerID = defaultWorkerID()
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return workerclient.Run(ctx, workerclient.Config{URL: url, Graphs: graphs, WorkerID: opt.WorkerID,
		Concurrency: opt.Concurrency, Wait: opt.Wait, Client: opt.HTTPClient, Log: log, TracerProvider: opt.TracerProvider,
		APIKey: opt.APIKey})
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("weft: worker needs the server's URL (http://host:port), got %q", s)
	}
	return nil
}

func defaultWorkerID() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("weft-worker-go-%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}

// WorkerMain is a complete main function serving graphs as a remote
// worker: it reads WEFT_URL (the server, required), WEFT_API_KEY (its
// worker key when the server authenticates), WEFT_WORKER_ID,
// WEFT_WORKER_CONCURRENCY and the OTEL_* tracing variables (as the server
// does; service name weft-worker) from the environment, runs RunWorker until
// SIGINT or SIGTERM (runs in progress are given back) and exits 0. It
// exits 2 on a bad setting, 1 when the server refuses a graph. It does not
// return.
func WorkerMain(graphs *graph.Registry) {
	os.Exit(workerMain(graphs, os.Getenv, os.Stderr))
}

// workerMain is WorkerMain without the exit.
func workerMain(graphs *graph.Registry, getenv func(string) string, stderr io.Writer) int {
	opt := WorkerOptions{WorkerID: getenv("WEFT_WORKER_ID"), APIKey: getenv("WEFT_API_KEY")}
	if s := getenv("WEFT_WORKER_CONCURRENCY"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			fmt.Fprintf(stderr, "weft: config: WEFT_WORKER_CONCURRENCY must be a positive integer, got %q\n", s)
			return 2
		}
		opt.Concurrency = n
	}
	url := getenv("WEFT_URL")
	if err := checkURL(url); err != nil {
		fmt.Fprintln(stderr, "weft: config: WEFT_URL:", err)
		return 2
	}
	tr, err := tracing.SettingsFromEnv(getenv)
	if err != nil {
		fmt.Fprintln(stderr, "weft: config: tracing:", err)
		return 2
	}
	opt.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if tr.On() {
		tp, err := tracing.NewProvider(ctx, tr, "weft-worker", server.Version)
		if err != nil {
			fmt.Fprintln(stderr, "weft: tracing:", err)
			return 2
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = tp.Shutdown(sctx) // flushes the last spans
		}()
		opt.TracerProvider = tp
	}
	if err := RunWorker(ctx, url, graphs, opt); err != nil {
		opt.Logger.Error("worker failed", "error", err)
		if errors.Is(err, context.Canceled) {
			return 0
		}
		return 1
	}
	return 0
}
