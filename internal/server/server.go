// Package server wires Weft together: database (given or managed),
// migrations, stores, the HTTP API, and a graceful shutdown. cmd/server and
// the black-box tests both start the server through it.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/a2a"
	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/assistants"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/builtin"
	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/coordinator"
	"github.com/weftdev/weft/internal/crons"
	"github.com/weftdev/weft/internal/crypt"
	"github.com/weftdev/weft/internal/dispatch"
	"github.com/weftdev/weft/internal/executor"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/internal/inspect"
	"github.com/weftdev/weft/internal/mcp"
	"github.com/weftdev/weft/internal/metrics"
	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/runs"
	"github.com/weftdev/weft/internal/state"
	"github.com/weftdev/weft/internal/store"
	"github.com/weftdev/weft/internal/stream"
	"github.com/weftdev/weft/internal/threads"
	"github.com/weftdev/weft/internal/tracing"
	"github.com/weftdev/weft/internal/webhook"
	"github.com/weftdev/weft/internal/workerapi"
)

// Version is the server version reported by /info (set with -ldflags).
var Version = "0.1.0-dev"

// Server is a running Weft server.
type Server struct {
	cfg     Config
	log     *slog.Logger
	cluster *postgres.Cluster
	pool    *pgxpool.Pool
	ln      net.Listener
	http    *http.Server
	done    chan error
	// loops are the background loops that use the database (the
	// notification listener, the reaper, the in-process workers, whose
	// runs are given back to the queue, webhook delivery, the sweepers,
	// the cron scheduler, the store indexer), stopped together before the
	// pool closes; afterLoops is waited for after them.
	loops      []*loop
	afterLoops func()
	// serve runs s.http; supervisor forwards the managed cluster's
	// supervisor failure to done (nil without a managed cluster).
	serve, supervisor *loop
	// metricsHTTP serves /metrics on cfg.MetricsAddr (nil when unset).
	metricsHTTP *http.Server
	metricsLn   net.Listener
	metricsLoop *loop
	// tracer is the provider built from cfg.Tracing, flushed and shut
	// down last (nil when tracing is off or the provider was given).
	tracer *sdktrace.TracerProvider
}

// Start connects to (or starts) the database, migrates it, binds the
// listener and serves in the background. On error everything already
// started is stopped again.
func Start(ctx context.Context, cfg Config, log *slog.Logger) (_ *Server, err error) {
	// done has room for both a supervisor failure and the serve error.
	s := &Server{cfg: cfg, log: log, done: make(chan error, 2)}
	if err := cfg.checkAuth(); err != nil {
		return nil, err
	}
	if err := cfg.checkExposure(log); err != nil {
		return nil, err
	}
	// Every store reached from here (requests, background loops) finds the
	// keyring on its context: encryption at rest (package crypt).
	ctx = crypt.WithKeyring(ctx, cfg.Keyring)
	// The background loops run until they are stopped, whatever becomes of
	// ctx.
	bg := context.WithoutCancel(ctx)
	defer func() {
		if err != nil {
			s.closeDB()
			s.closeObs(context.WithoutCancel(ctx))
		}
	}()
	tp := cfg.TracerProvider
	if tp == nil && cfg.Tracing.On() {
		if s.tracer, err = tracing.NewProvider(ctx, cfg.Tracing, "weft", Version); err != nil {
			return nil, err
		}
		tp = s.tracer
	}
	tracer := tracing.Tracer(tp)
	dsn := cfg.DatabaseURL
	if dsn == "" {
		c, err := postgres.NewCluster(cfg.DataDir, log)
		if err != nil {
			return nil, err
		}
		if err := c.Start(ctx); err != nil {
			if errors.Is(err, postgres.ErrDataDirInUse) {
				return nil, err // says it all
			}
			return nil, fmt.Errorf("start local PostgreSQL: %w", err)
		}
		s.cluster = c
		// A postmaster that dies is restarted; when it cannot be kept
		// running the server stops on its own (Done) instead of serving
		// without a database.
		failed := c.Supervise(postgres.SuperviseConfig{})
		s.supervisor = newLoop("postgres supervisor", forwarding(failed, s.done))
		if err := s.supervisor.Start(bg); err != nil {
			return nil, err
		}
		if err := c.EnsureDatabase(ctx, "weft"); err != nil {
			return nil, err
		}
		dsn = c.DSN("weft")
	}
	if s.pool, err = postgres.Connect(ctx, dsn); err != nil {
		return nil, err
	}
	if cfg.Migrate {
		if err := postgres.Migrate(s.pool); err != nil {
			return nil, err
		}
	}
	if err := checkSchema(s.pool); err != nil {
		return nil, err
	}

	graphs := cfg.Graphs
	switch {
	case graphs != nil:
	case cfg.NoBuiltinGraphs:
		graphs = graph.NewRegistry()
	default:
		graphs = builtin.Graphs()
	}
	assistantStore := assistants.NewStore(s.pool)
	if err := assistants.RegisterBuiltin(ctx, s.pool, graphs); err != nil {
		return nil, err
	}
	for _, id := range graphs.IDs() {
		log.Info("graph registered", "graph_id", id, "source", assistants.SourceBuiltin)
	}
	// A database once served with other compiled-in graphs (the demos,
	// before weft dev) lists none of them now.
	if gone, err := assistants.PruneBuiltin(ctx, s.pool, graphs.IDs()); err != nil {
		return nil, err
	} else if len(gone) > 0 {
		log.Info("graphs no longer compiled in left the catalog", "graph_ids", gone)
	}
	if err := assistantStore.EnsureSystem(ctx, graphs.IDs()); apperr.CodeOf(err) == apperr.Conflict {
		// A tenant's row at a built-in graph's system id (made before such
		// ids were refused): serve the rest, loudly; the graph name
		// resolves to no assistant until that row is deleted.
		s.log.Error("built-in graphs' system assistants not created", "error", err)
	} else if err != nil {
		return nil, err
	}
	threadStore := threads.NewStore(s.pool, threads.Config{ValuesRefMinBytes: cfg.ValuesRefMinBytes, DefaultTTL: cfg.ThreadDefaultTTL})
	threadStore.OnDelete(func(ctx context.Context, tx pgx.Tx, ids []uuid.UUID) error {
		if err := runs.StopThreads(ctx, tx, ids); err != nil {
			return err
		}
		return checkpoints.DeleteThread(ctx, tx, uuidStrings(ids)...)
	})
	stateSvc := state.NewService(s.pool, threadStore, graphs, assistantStore)
	threadHandlers := threads.NewHandlers(threadStore)
	threadHandlers.Supersteps = stateSvc.ApplySupersteps
	// Bound before the runs service starts: webhooks that are paths go to
	// this server's own URL. Nothing after this can fail, so the listener
	// needs no cleanup on error.
	if s.ln, err = net.Listen("tcp", cfg.Addr); err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	if cfg.MetricsAddr != "" {
		if s.metricsLn, err = net.Listen("tcp", cfg.MetricsAddr); err != nil {
			s.ln.Close()
			return nil, fmt.Errorf("listen on %s (metrics): %w", cfg.MetricsAddr, err)
		}
	}
	m := newMetrics(s.pool, log)
	runSvc := runs.NewService(s.pool, graphs, assistantStore, threadStore, log, runs.Config{MaxAttempts: cfg.MaxAttempts,
		Headers: cfg.ConfigurableHeaders, Webhooks: cfg.Webhooks})
	coord := coordinator.NewService(s.pool, graphs, threadStore, log, coordinator.Config{Lease: cfg.Lease,
		TempRetention: cfg.TempRetention, Metrics: m, Tracer: tracer, EventRefMinBytes: cfg.EventRefMinBytes, Assistants: assistantStore,
		InputRefMinBytes: cfg.InputRefMinBytes})
	pool := executor.NewService(s.pool, graphs, coord, log, executor.Config{Workers: cfg.Workers, WorkerID: cfg.WorkerID,
		Metrics: m, Tracer: tracer})
	watchSnapshot(m, s.pool, cfg.Workers, pool.WorkerID()) // GET /metrics?format=json
	streams := stream.NewService(s.pool, runSvc, log, stream.Config{StreamHeartbeat: cfg.StreamHeartbeat, Metrics: m})
	hooks := webhook.NewService(s.pool, log, webhook.Config{SelfURL: selfURL(s.ln.Addr()) + cfg.MountPrefix,
		Disabled: cfg.Disabled[httpapi.GroupWebhooks], AllowPrivate: cfg.WebhookAllowPrivate, Policy: cfg.Webhooks, Backoff: cfg.WebhookBackoff, Metrics: m, Tracer: tracer})
	workers := workerapi.NewHandlers(s.pool, graphs, assistantStore, coord, runSvc, log)
	workers.DescribeGraphs(cfg.GraphDescriptions)
	stateSvc.SetExternalUpdater(workers) // update_state of graphs external workers serve
	listener := postgres.NewListener(s.pool.Config().ConnString(), log, append(coordinator.NotifyChannels(), store.NotifyChannel)...)
	runSvc.Start(listener)
	streams.Start(listener)
	// The background loops, started below in this order (the run packages
	// subscribe to listener before it runs).
	loops := []*loop{
		newLoop("lease reaper", waiting(func(ctx context.Context) func() { return coord.Start(ctx, listener) })),
		newLoop("run workers", waiting(func(ctx context.Context) func() { return pool.Start(ctx, listener) })),
		newLoop("webhook delivery", waiting(hooks.Start)),
		newLoop("notification listener", blocking(listener.Run)),
	}
	ttlSweep := cfg.TTLSweepInterval
	if ttlSweep <= 0 {
		ttlSweep = time.Minute
	}
	loops = append(loops, newLoop("thread ttl sweeper", blocking(func(ctx context.Context) { threadStore.RunTTLSweeper(ctx, ttlSweep, stateSvc.PruneToLatest, log) })))
	storeItems := store.NewStore(s.pool, cfg.StoreClock)
	storeItems.SetTTLDefaults(cfg.StoreDefaultTTL, !cfg.StoreNoRefreshOnRead)
	if cfg.StoreIndex != nil {
		storeItems.EnableIndex(cfg.StoreIndex, store.NewEmbedder(cfg.StoreIndex))
		log.Info("store semantic index", "embed", cfg.StoreIndex.Embed, "dims", cfg.StoreIndex.Dims, "fields", cfg.StoreIndex.Fields)
	}
	cronSvc := crons.NewService(s.pool, runSvc, log, crons.Config{Interval: cfg.CronInterval, Clock: cfg.CronClock, Batch: cfg.CronBatch, Threads: threadStore})
	loops = append(loops,
		newLoop("store sweeper", waiting(func(ctx context.Context) func() {
			return storeItems.StartSweeper(ctx, cfg.StoreSweepInterval, log)
		})),
		newLoop("cron scheduler", waiting(cronSvc.Start)),
		newLoop("store indexer", waiting(func(ctx context.Context) func() {
			return storeItems.StartIndexer(ctx, listener, cfg.StoreIndexer, log)
		})),
	)
	// closeDB stops them all (even when one fails to start), then lets the
	// deletions of temporary threads that answered requests finish before
	// the database closes (the requests are over by then).
	s.loops, s.afterLoops = loops, runSvc.Wait
	if err := startLoops(bg, loops...); err != nil {
		s.ln.Close()
		return nil, err
	}
	authn, err := newAuthenticator(ctx, cfg, s.pool, log)
	if err != nil {
		s.ln.Close()
		return nil, err
	}
	handler := httpapi.NewRouter(httpapi.Deps{
		Log:        log,
		DB:         s.pool,
		Version:    Version,
		MaxBody:    cfg.MaxBodyBytes,
		Threads:    threadHandlers,
		State:      state.NewHandlers(stateSvc),
		Runs:       runs.NewHandlers(runSvc),
		Streams:    stream.NewHandlers(streams),
		Workers:    workers,
		Assistants: assistants.NewHandlers(assistantStore, threadStore),
		Store:      store.NewHandlers(storeItems),
		Crons:      crons.NewHandlers(cronSvc),
		Inspect:    inspect.NewHandlers(s.pool),
		A2A:        a2a.NewHandlers(s.pool, graphs, assistantStore, threadStore, runSvc, streams, log),
		Security:   cfg.Security(),
		TextErrors: cfg.ErrorBody == "text",
		OpenAPI:    openAPIEdit(cfg),
		Disabled:   cfg.Disabled,
		LogHeaders: cfg.LogHeaders,
		Settings:   cfg.Settings,
		Warnings:   cfg.Warnings,
		Metrics:    m,
		Tracer:     tracer,
		Auth:       authn,
		Authorize:  cfg.Authorize,
		ThreadMetadata: func(ctx context.Context, id uuid.UUID) (map[string]any, error) {
			t, err := threadStore.Get(ctx, id)
			if err != nil {
				return nil, err
			}
			var md map[string]any
			if err := json.Unmarshal(t.Metadata, &md); err != nil {
				return nil, fmt.Errorf("thread %s metadata: %w", id, err)
			}
			return md, nil
		},
		MCP: mcp.New(mcp.Config{Assistants: assistantStore, Runs: runSvc, Log: log, Version: Version,
			AuthOn: authn != nil, Authorize: cfg.Authorize}),
		AssistantMetadata: func(ctx context.Context, ref string) (map[string]any, error) {
			a, err := assistantStore.Resolve(ctx, s.pool, ref)
			if err != nil {
				return nil, err
			}
			return assistantMetadata(a)
		},
	})
	if cfg.Front != nil {
		guard := cfg.Security().Handler
		if cfg.AuthFirst && authn != nil { // http.middleware_order auth_first: the API's requests authenticated before the app's middleware
			check := cfg.AuthenticateNow
			if check == nil {
				check = func(r *http.Request) error { _, err := authn.Authenticate(r); return err }
			}
			authFirst := httpapi.AuthFirst(handler, check, log, cfg.ErrorBody == "text")
			guard = func(next http.Handler) http.Handler { return cfg.Security().Handler(authFirst(next)) }
		}
		handler = cfg.Front(handler, guard)
	}
	handler = httpapi.Mount(cfg.MountPrefix, handler)
	s.http = &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return crypt.WithKeyring(context.Background(), cfg.Keyring) }}
	// Streams end at shutdown (their clients resume elsewhere with
	// Last-Event-ID) instead of holding the drain open.
	s.http.RegisterOnShutdown(streams.BeginShutdown)
	// These loops cannot fail to start (serving calls started first).
	s.serve = newLoop("http server", serving(s.http, s.ln, func(err error) { s.done <- err }))
	_ = s.serve.Start(bg)
	if s.metricsLn != nil {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", m.Handler(log))
		s.metricsHTTP = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		s.metricsLoop = newLoop("metrics server", serving(s.metricsHTTP, s.metricsLn, func(err error) {
			if !errors.Is(err, http.ErrServerClosed) {
				log.Error("metrics listener", "error", err)
			}
		}))
		_ = s.metricsLoop.Start(bg)
		log.Info("metrics listening", "addr", s.metricsLn.Addr().String())
	}
	logSettings(log, cfg)
	log.Info("weft listening", "addr", s.Addr(), "version", Version, "managed_db", s.cluster != nil, "tracing", tp != nil,
		"auth", authMode(cfg), "encryption", cfg.Keyring != nil)
	return s, nil
}

// newAuthenticator is the authenticator cfg asks for (nil: auth off).
func newAuthenticator(ctx context.Context, cfg Config, pool *pgxpool.Pool, log *slog.Logger) (auth.Authenticator, error) {
	var a auth.Authenticator
	switch {
	case cfg.Authenticate != nil:
		a = auth.AuthenticatorFunc(cfg.Authenticate)
	case cfg.Auth == "keys":
		a = auth.NewKeys(pool, cfg.KeyCacheTTL)
	case cfg.Auth == "jwt":
		j, err := auth.NewJWT(ctx, cfg.JWT, log)
		if err != nil {
			return nil, err
		}
		a = j
	default:
		return nil, nil
	}
	if cfg.WorkerKey != "" {
		a = auth.Chain(map[string]auth.Principal{cfg.WorkerKey: {Identity: "weft-dev-worker", Scopes: []string{auth.ScopeWorker}}}, a)
	}
	return a, nil
}

// authMode names the auth mode for the start log line.
func authMode(cfg Config) string {
	switch {
	case cfg.Authenticate != nil:
		return "hook"
	case cfg.Auth == "":
		return "none (loopback only)"
	}
	return cfg.Auth
}

// newMetrics is this process's metrics, with the pool's statistics and the
// queue's depth read at scrape time.
func newMetrics(pool *pgxpool.Pool, log *slog.Logger) *metrics.Metrics {
	m := metrics.New(Version)
	m.WatchPool(pool)
	m.WatchQueue(func(ctx context.Context) ([]metrics.QueueDepth, error) {
		rows, err := dispatch.Depths(ctx, pool)
		out := make([]metrics.QueueDepth, len(rows))
		for i, r := range rows {
			out[i] = metrics.QueueDepth{State: string(r.State), GraphID: r.GraphID, Count: r.Count}
		}
		return out, err
	}, log)
	return m
}

// MetricsAddr is the address of the separate metrics listener ("" when
// none).
func (s *Server) MetricsAddr() string {
	if s.metricsLn == nil {
		return ""
	}
	return s.metricsLn.Addr().String()
}

// closeObs stops the metrics listener and flushes and stops the tracer
// provider this server built.
func (s *Server) closeObs(ctx context.Context) {
	if s.metricsHTTP != nil {
		_ = s.metricsHTTP.Close()
		s.stopLoops(s.metricsLoop)
		s.metricsHTTP = nil
	} else if s.metricsLn != nil {
		_ = s.metricsLn.Close()
	}
	if s.tracer != nil {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := s.tracer.Shutdown(ctx); err != nil {
			s.log.Warn("tracing: flush spans at shutdown", "error", err)
		}
		s.tracer = nil
	}
}

// selfURL is the base URL this server reaches itself at: its listen
// address, with a wildcard host (0.0.0.0, ::) replaced by loopback.
func selfURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip.To4() == nil {
			host = "::1"
		}
	}
	return "http://" + net.JoinHostPort(host, port)
}

func uuidStrings(ids []uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

// checkSchema refuses a database whose schema this binary does not know
// (also when migrations are disabled).
func checkSchema(pool *pgxpool.Pool) error {
	have, err := postgres.SchemaVersion(pool)
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	known, err := postgres.KnownVersion()
	if err != nil {
		return err
	}
	switch {
	case have > known:
		return fmt.Errorf("%w: database is at version %d, this server knows up to %d", postgres.ErrSchemaTooNew, have, known)
	case have < known:
		return fmt.Errorf("database schema is at version %d, this server needs %d: run with -migrate=true", have, known)
	}
	return nil
}

// Addr is the address the server listens on (useful with port 0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// openAPIEdit is cfg.EditOpenAPI, with the mount prefix as the served
// document's server, as LangGraph's server lists it (nil: no edit).
func openAPIEdit(cfg Config) httpapi.EditOpenAPI {
	if cfg.MountPrefix == "" {
		return cfg.EditOpenAPI
	}
	return func(ctx context.Context, doc map[string]any) error {
		if cfg.EditOpenAPI != nil {
			if err := cfg.EditOpenAPI(ctx, doc); err != nil {
				return err
			}
		}
		doc["servers"] = []any{map[string]any{"url": cfg.MountPrefix}}
		return nil
	}
}

// URL is the server's base URL, with the mount prefix (Config.MountPrefix).
func (s *Server) URL() string { return "http://" + s.Addr() + s.cfg.MountPrefix }

// DSN is the connection string of the database the server uses (the
// managed cluster's when no DatabaseURL was given).
func (s *Server) DSN() string { return s.pool.Config().ConnString() }

// Done receives an error if the server stops on its own: serving failed,
// or the managed PostgreSQL died and could not be restarted.
func (s *Server) Done() <-chan error { return s.done }

// Shutdown stops accepting connections, waits up to the configured drain
// timeout for in-flight requests, then closes the database (and stops the
// managed cluster).
func (s *Server) Shutdown(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ShutdownTimeout)
	defer cancel()
	err := s.http.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		s.log.Warn("shutdown timeout: closing remaining connections")
		err = s.http.Close()
	}
	s.stopLoops(s.serve)
	s.closeDB()
	s.closeObs(context.WithoutCancel(ctx))
	return err
}

// loopStopTimeout bounds how long a shutdown waits for a set of
// background loops to return once cancelled; one still running after that
// is logged and left to finish on its own.
const loopStopTimeout = time.Minute

// stopLoops stops loops together (stopLoops in loops.go), within
// loopStopTimeout, logging what did not stop cleanly.
func (s *Server) stopLoops(loops ...*loop) {
	ctx, cancel := context.WithTimeout(context.Background(), loopStopTimeout)
	defer cancel()
	if err := stopLoops(ctx, loops...); err != nil {
		s.log.Error("stop background loops", "error", err)
	}
}

func (s *Server) closeDB() {
	if s.loops != nil {
		s.stopLoops(s.loops...)
		s.loops = nil
	}
	if s.afterLoops != nil {
		s.afterLoops()
		s.afterLoops = nil
	}
	if s.pool != nil {
		s.pool.Close()
	}
	if s.cluster != nil {
		// Stops the supervisor, the cluster (logged) and releases the
		// data-dir lock.
		if err := s.cluster.Stop(); err != nil {
			s.log.Error("stop local PostgreSQL", "error", err)
		}
	}
	// Stopping the cluster ended its supervisor: the watch has forwarded
	// what it sent, if anything.
	s.stopLoops(s.supervisor)
}

// assistantMetadata is a's metadata as a map (for authorize filters).
func assistantMetadata(a *assistants.Assistant) (map[string]any, error) {
	var md map[string]any
	if len(a.Metadata) > 0 {
		if err := json.Unmarshal(a.Metadata, &md); err != nil {
			return nil, fmt.Errorf("assistant %s metadata: %w", a.AssistantID, err)
		}
	}
	return md, nil
}
