// Package weft runs a whole Weft server (the LangGraph Agent Server API on
// PostgreSQL) inside a Go program, serving the graphs the program defines
// with package graph.
//
// Two entry points:
//
//   - Main(graphs) is a complete main function: it reads the same flags
//     and environment variables as the weft binary (WEFT_ADDR,
//     DATABASE_URL, WEFT_DATA_DIR, WEFT_WORKERS, ...; see -help), serves
//     until SIGINT or SIGTERM, drains and exits. cmd/server is Main(nil).
//   - Start(ctx, graphs, Options) starts a server and returns it, for
//     programs and tests that manage its lifetime themselves.
//
// Without a database URL the server runs a managed local PostgreSQL in its
// data directory (./.weft by default), as the weft binary does; the
// PostgreSQL binaries (initdb, postgres) must then be on PATH or in the
// usual install locations.
package weft

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"go.opentelemetry.io/otel/trace"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/reencrypt"
	"github.com/weftdev/weft/internal/server"
)

// Options configure Start. The zero value listens on 127.0.0.1:8123 with a
// managed PostgreSQL under ./.weft, migrates it, and runs 4 × CPUs
// in-process workers: the weft binary's defaults.
type Options struct {
	// Addr is the listen address (default 127.0.0.1:8123; "127.0.0.1:0"
	// picks a free port, see Server.URL). An address other than loopback
	// needs Auth or Authenticate (or Auth "none").
	Addr string
	// DatabaseURL is a PostgreSQL URL; empty runs a managed local cluster
	// in DataDir.
	DatabaseURL string
	// DataDir is the managed cluster's directory (default ".weft"). Only
	// one server may use a data directory at a time.
	DataDir string
	// Workers is the number of in-process run workers (default 4 × CPUs).
	Workers int
	// Logger receives the server's logs (default: text at info level on
	// stderr).
	Logger *slog.Logger
	// TracerProvider traces the server (requests, run attempts, supersteps,
	// nodes, commits, webhooks; see docs/operations.md). nil: no tracing
	// (Main builds a provider from the OTEL_* environment instead). The
	// caller shuts it down.
	TracerProvider trace.TracerProvider
	// MetricsAddr also serves GET /metrics on this address (it is on Addr
	// either way); "" for none.
	MetricsAddr string
	// Auth authenticates requests like WEFT_AUTH: "keys" (API keys, weft
	// keys create), "jwt" (bearer tokens, configured by JWT), "none"; ""
	// (the default) is none, and the server then refuses an Addr that is
	// not loopback. An Authenticate hook replaces it.
	Auth string
	// JWT configures Auth "jwt": JWKSURL, Issuer and Audience are required.
	JWT JWTOptions
	// Authenticate is the program's own authentication: it returns the
	// caller's Principal (its Tenant and Scopes decide what it may touch),
	// or an error — Unauthorized(detail) for a missing or bad credential
	// (401), an *AuthError for another status, any other error a 500. It
	// is not called for /ok, /livez and the web UI's files.
	Authenticate func(r *http.Request) (Principal, error)
	// Authorize is asked about every request to the API after its scope was
	// checked: Allow(), Deny(reason) (403) or Filter(metadata). nil: every
	// request its scopes allow is allowed.
	Authorize func(ctx context.Context, req AuthRequest) (AuthDecision, error)
}

// Server is a running embedded server.
type Server struct {
	s *server.Server
}

// Start connects to (or starts) the database, migrates it, registers every
// graph of graphs (Registry.Register validated them) (with a system assistant per graph
// id, as the weft binary does for its built-in graphs) and serves the API
// in the background until Shutdown. graphs nil serves Weft's built-in
// example graphs. On error nothing is left running.
func Start(ctx context.Context, graphs *graph.Registry, opt Options) (*Server, error) {
	cfg, err := defaults()
	if err != nil {
		return nil, err
	}
	if opt.Addr != "" {
		cfg.Addr = opt.Addr
	}
	cfg.DatabaseURL = opt.DatabaseURL
	if opt.DataDir != "" {
		cfg.DataDir = opt.DataDir
	}
	if opt.Workers < 0 {
		return nil, fmt.Errorf("weft: workers must not be negative, got %d", opt.Workers)
	}
	if opt.Workers > 0 {
		cfg.Workers = opt.Workers
	}
	log := opt.Logger
	if log == nil {
		log = cfg.NewLogger(os.Stderr)
	}
	cfg.Graphs = graphs
	cfg.TracerProvider = opt.TracerProvider
	cfg.MetricsAddr = opt.MetricsAddr
	cfg.Auth, cfg.JWT, cfg.Authenticate, cfg.Authorize = opt.Auth, opt.JWT, opt.Authenticate, opt.Authorize
	if cfg.JWT.TenantClaim == "" {
		cfg.JWT.TenantClaim = "tenant"
	}
	s, err := server.Start(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	return &Server{s: s}, nil
}

// defaults is the weft binary's configuration with no flag or environment
// variable set.
func defaults() (server.Config, error) {
	return server.ParseConfig(nil, func(string) string { return "" }, io.Discard)
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.s.Addr() }

// URL is the server's base URL (http://host:port), what SDK clients take as
// their apiUrl.
func (s *Server) URL() string { return s.s.URL() }

// Done receives an error when the server stops on its own (serving failed,
// or the managed PostgreSQL died and could not be restarted).
func (s *Server) Done() <-chan error { return s.s.Done() }

// Shutdown stops accepting requests, drains in-flight ones for up to 30
// seconds (runs in progress are handed back to the queue and resume on the
// next start), then closes the database and stops the managed PostgreSQL.
func (s *Server) Shutdown(ctx context.Context) error { return s.s.Shutdown(ctx) }

// Main is a complete main function serving graphs (nil: the built-in
// example graphs): it parses the process's flags and environment exactly
// like the weft binary (-help lists them), starts the server, and on
// SIGINT or SIGTERM drains requests, stops the managed PostgreSQL and
// exits 0. It exits 2 on a bad flag, 1 when the server cannot start or
// stops on its own. It does not return.
func Main(graphs *graph.Registry) {
	os.Exit(run(graphs, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// usage names the commands; the flags follow it (-help).
const usage = `Usage:
  weft [serve] [flags]                 serve the API (the default command)
  weft dev --config langgraph.json [flags]
                                       serve a LangGraph.js project: the server, no demo graphs,
                                       and the project's graphs through the JS worker (needs node)
  weft keys create|list|revoke [flags] manage API keys (WEFT_AUTH=keys); weft keys -help
  weft reencrypt [flags]               rewrite every encrypted value under LANGGRAPH_AES_KEY (after a
                                       rotation: old keys in WEFT_AES_OLD_KEYS), seal plaintext rows,
                                       print counts per table; safe to repeat or interrupt

Flags (every command; each has an environment variable, see -help):`

// run is Main without the exit: the command (serve, the default, or, for
// the weft binary itself, dev), then its flags.
func run(graphs *graph.Registry, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch {
	case cmd == "serve":
		return serve(graphs, args, getenv, stderr, nil, nil)
	case cmd == "dev" && graphs == nil:
		return dev(args, getenv, stderr)
	case cmd == "keys":
		return keys(args, getenv, stdout, stderr)
	case cmd == "reencrypt":
		return reencryptCmd(args, getenv, stderr)
	}
	fmt.Fprintf(stderr, "weft: unknown command %q\n%s\n", cmd, usage)
	_, _ = server.ParseConfig([]string{"-help"}, getenv, stderr) // prints the flags
	return 2
}

// serve runs the server until SIGINT or SIGTERM. edit (optional) adjusts
// the parsed config; started (optional) runs once the server serves, with a
// context that ends at shutdown, and its wait function is awaited before
// the server drains.
func serve(graphs *graph.Registry, args []string, getenv func(string) string, stderr io.Writer,
	edit func(*server.Config) error, started func(ctx context.Context, srv *server.Server, log *slog.Logger) (wait func())) int {
	cfg, err := server.ParseConfig(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err == nil && edit != nil {
		err = edit(&cfg)
	}
	if err != nil {
		fmt.Fprintln(stderr, "weft: config:", err)
		return 2
	}
	cfg.Graphs = graphs
	log := cfg.NewLogger(stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := server.Start(ctx, cfg, log)
	if err != nil {
		log.Error("weft: cannot start", "error", err)
		return 1
	}
	wait := func() {}
	if started != nil {
		wait = started(ctx, srv, log)
	}
	code := 0
	select {
	case <-ctx.Done():
		log.Info("shutting down: draining requests")
	case err := <-srv.Done():
		log.Error("server stopped on its own; shutting down", "error", err)
		code = 1
	}
	stop()
	wait()
	if err := srv.Shutdown(context.Background()); err != nil {
		log.Error("shutdown", "error", err)
		return 1
	}
	log.Info("stopped")
	return code
}

// reencryptCmd is `weft reencrypt`: the database the flags name (as for
// serve), every encrypted row rewritten under the current key. It prints
// one line per table and exits 0, 2 on a bad config (no key), 1 on
// failure (run it again: it resumes).
func reencryptCmd(args []string, getenv func(string) string, stderr io.Writer) int {
	cfg, err := server.ParseConfig(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err == nil && cfg.Keyring == nil {
		err = errors.New("LANGGRAPH_AES_KEY is not set: reencrypt seals with it (old keys go in WEFT_AES_OLD_KEYS)")
	}
	if err != nil {
		fmt.Fprintln(stderr, "weft: config:", err)
		return 2
	}
	log := cfg.NewLogger(stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	pool, closeDB, err := server.OpenDatabase(ctx, cfg, log)
	if err != nil {
		log.Error("weft reencrypt: database", "error", err)
		return 1
	}
	defer closeDB()
	_, err = reencrypt.Run(ctx, pool, cfg.Keyring, 500, func(c reencrypt.Count) {
		fmt.Fprintf(stderr, "%-18s scanned %d, rewritten %d, changed meanwhile %d\n", c.Table, c.Scanned, c.Rewritten, c.Skipped)
	})
	if err != nil {
		log.Error("weft reencrypt (run it again to resume)", "error", err)
		return 1
	}
	fmt.Fprintln(stderr, "weft reencrypt: done; every encrypted value is under the current key")
	return 0
}
