// Command server runs Weft: `make run` (which builds bin/weft and execs it)
// listens on 127.0.0.1:8123 with a managed local PostgreSQL under ./.weft, or
// on the database named by DATABASE_URL. SIGINT / SIGTERM drain in-flight
// requests, stop the managed PostgreSQL and exit 0. The process exits 1 when
// it cannot start (e.g. another server holds the data directory) or when it
// stops on its own (e.g. the managed PostgreSQL could not be restarted).
// Flags and environment variables: see -help.
//
// Run the binary itself rather than `go run`: SIGTERM sent to `go run`
// kills only the go command, leaving the server and its PostgreSQL running
// (a later start adopts and stops them, but until then they hold the data
// directory).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/weftdev/weft/internal/server"
)

func main() {
	cfg, err := server.ParseConfig(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "weft: config:", err)
		os.Exit(2)
	}
	log := cfg.NewLogger(os.Stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := server.Start(ctx, cfg, log)
	if err != nil {
		log.Error("weft: cannot start", "error", err)
		os.Exit(1)
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
	if err := srv.Shutdown(context.Background()); err != nil {
		log.Error("shutdown", "error", err)
		os.Exit(1)
	}
	log.Info("stopped")
	os.Exit(code)
}
