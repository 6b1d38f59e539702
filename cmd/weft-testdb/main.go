// Command weft-testdb runs a command with one throw-away PostgreSQL
// cluster for all of it: it starts a managed cluster in a temporary
// directory, exports its URL as WEFT_TEST_DATABASE_URL (which
// internal/postgres/pgtest uses instead of starting a cluster per test
// binary), runs the command, then stops the cluster and removes the
// directory, also when the command fails or is interrupted. It exits with
// the command's exit code. The cluster is bound to this process by
// pgtest's watchdog: killed (even with SIGKILL), weft-testdb still leaves no
// PostgreSQL running.
//
//	go run ./cmd/weft-testdb go test -race ./...
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/weftdev/weft/internal/postgres/pgtest"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: weft-testdb command [args...]")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cluster, err := pgtest.StartCluster(ctx, "weft-testdb-")
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "weft-testdb: start PostgreSQL:", err)
		return 1
	}
	defer func() {
		if err := cluster.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "weft-testdb: stop PostgreSQL:", err)
		}
	}()

	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "WEFT_TEST_DATABASE_URL="+cluster.DSN("postgres"))
	// Forward interrupts to the command and wait for it, so the cluster is
	// always stopped afterwards.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "weft-testdb:", err)
		return 1
	}
	go func() {
		for s := range sig {
			_ = cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode()
	case err != nil:
		fmt.Fprintln(os.Stderr, "weft-testdb:", err)
		return 1
	}
	return 0
}
