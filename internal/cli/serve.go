package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/server"
)

// parseConfig reads a command's flags and environment as serve does, then
// check (optional) adjusts or refuses the config; done says the command
// ends here with code: 0 after -help, 2 for a bad config (said on
// stderr).
func parseConfig(args []string, getenv func(string) string, stderr io.Writer, check func(*server.Config) error) (cfg server.Config, code int, done bool) {
	cfg, err := server.ParseConfig(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return cfg, 0, true
	}
	if err == nil && check != nil {
		err = check(&cfg)
	}
	if err != nil {
		fmt.Fprintln(stderr, "weft: config:", err)
		return cfg, 2, true
	}
	return cfg, 0, false
}

// Serve is `weft serve`: the server until SIGINT or SIGTERM. edit
// (optional) adjusts the parsed config; started (optional) runs once the
// server serves, with a context that ends at shutdown, and its wait
// function is awaited before the server drains. weft dev is Serve with
// both.
func Serve(graphs *graph.Registry, args []string, getenv func(string) string, stderr io.Writer,
	edit func(*server.Config) error, started func(ctx context.Context, srv *server.Server, log *slog.Logger) (wait func())) int {
	cfg, code, done := parseConfig(args, getenv, stderr, edit)
	if done {
		return code
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
	code = 0
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
