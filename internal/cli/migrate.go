package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/server"
)

// migrateCmd is `weft migrate`: the schema of the database at DATABASE_URL
// (-database-url) brought up to the version this binary knows, then exit —
// what a deployment runs once per release (the Helm chart's pre-install and
// pre-upgrade Job) so that its servers can start with WEFT_MIGRATE=false.
// It prints the version before and after on stderr and exits 0 (also when
// there was nothing to do), 2 on a bad config (no DATABASE_URL: a managed
// local cluster is migrated by the server itself), 1 when the database is
// unreachable, dirty, or newer than this binary. Concurrent runs are safe:
// golang-migrate's advisory lock serialises them.
func migrateCmd(args []string, getenv func(string) string, stderr io.Writer) int {
	cfg, code, done := parseConfig(args, getenv, stderr, func(cfg *server.Config) error {
		if cfg.DatabaseURL == "" {
			return errors.New("DATABASE_URL is not set: weft migrate applies migrations to the database it names " +
				"(a managed local cluster is migrated by the server at start)")
		}
		return nil
	})
	if done {
		return code
	}
	log := cfg.NewLogger(stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	pool, err := postgres.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		log.Error("weft migrate: database", "error", err)
		return 1
	}
	defer pool.Close()
	before, err := postgres.SchemaVersion(pool)
	if err != nil {
		log.Error("weft migrate: read schema version", "error", err)
		return 1
	}
	if err := postgres.Migrate(pool); err != nil {
		log.Error("weft migrate", "error", err, "version", before)
		return 1
	}
	after, err := postgres.SchemaVersion(pool)
	if err != nil {
		log.Error("weft migrate: read schema version", "error", err)
		return 1
	}
	if after == before {
		log.Info("weft migrate: schema already up to date", "version", after)
	} else {
		log.Info("weft migrate: schema migrated", "from", before, "to", after)
	}
	return 0
}
