package weft

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"

	"go.opentelemetry.io/otel/trace"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/cli"
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
// stops on its own. It does not return. The weft binary's other commands
// work too (keys, reencrypt), all but dev (internal/cli).
func Main(graphs *graph.Registry) { cli.Main(graphs, nil) }
