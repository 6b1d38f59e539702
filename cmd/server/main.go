// Command server runs Weft: `go run ./cmd/server` listens on
// 127.0.0.1:8123 with a managed local PostgreSQL under ./.weft, or on the
// database named by DATABASE_URL. SIGINT / SIGTERM drain in-flight requests
// and stop cleanly. Flags and environment variables: see -help.
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
	select {
	case <-ctx.Done():
		log.Info("shutting down: draining requests")
	case err := <-srv.Done():
		log.Error("http server stopped", "error", err)
	}
	stop()
	if err := srv.Shutdown(context.Background()); err != nil {
		log.Error("shutdown", "error", err)
		os.Exit(1)
	}
	log.Info("stopped")
}
