package cli_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/cli"
	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

// migrateCmd runs `weft migrate args...` with env as the environment.
func migrateCmd(env map[string]string, args ...string) (code int, stderr string) {
	var out, errOut bytes.Buffer
	code = cli.Run(nil, nil, append([]string{"migrate"}, args...), func(k string) string { return env[k] }, &out, &errOut)
	return code, out.String() + errOut.String()
}

// emptyDatabase creates a database with no schema at all on the test
// cluster and returns its URL.
func emptyDatabase(t *testing.T) string {
	t.Helper()
	admin := pgtest.Pool(t)
	name := "weft_empty_" + strings.ReplaceAll(t.Name(), "/", "_")
	name = strings.ToLower(name[:min(len(name), 50)])
	if _, err := admin.Exec(context.Background(), `CREATE DATABASE `+name); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// weft migrate brings an empty database to the schema this binary knows and
// exits, so a server started with WEFT_MIGRATE=false (as the Helm chart's
// Deployments are, after its migration Job) serves on it; that server
// refuses the same database before the migration. A second run changes
// nothing and still exits 0 (every helm upgrade runs it).
func TestMigrateCommand(t *testing.T) {
	t.Parallel()
	dsn := emptyDatabase(t)
	known, err := postgres.KnownVersion()
	if err != nil {
		t.Fatal(err)
	}
	noMigrate := server.Config{Addr: "127.0.0.1:0", DatabaseURL: dsn, Migrate: false, MaxBodyBytes: 1 << 20,
		ShutdownTimeout: time.Second, Lease: 5 * time.Second, MaxAttempts: 5, EventRefMinBytes: 1}
	if srv, err := server.Start(context.Background(), noMigrate, slog.New(slog.NewTextHandler(io.Discard, nil))); err == nil {
		_ = srv.Shutdown(context.Background())
		t.Fatal("a server with WEFT_MIGRATE=false started on an empty database")
	} else if !strings.Contains(err.Error(), "schema is at version 0") {
		t.Fatalf("server on an empty database: %v", err)
	}

	env := map[string]string{"DATABASE_URL": dsn}
	code, out := migrateCmd(env)
	if code != 0 {
		t.Fatalf("weft migrate: exit %d: %s", code, out)
	}
	if want := `schema migrated" from=0 to=` + strconv.FormatUint(uint64(known), 10); !strings.Contains(out, want) {
		t.Errorf("weft migrate said %q, want %q", out, want)
	}
	pool, err := postgres.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if v, err := postgres.SchemaVersion(pool); err != nil || v != known {
		t.Fatalf("schema version after weft migrate: %d, %v; want %d", v, err, known)
	}

	srv := servertest.StartWith(t, dsn, func(c *server.Config) { c.Migrate = false })
	resp, err := http.Get(srv.URL + "/ok")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /ok of a server started with WEFT_MIGRATE=false after weft migrate: %d", resp.StatusCode)
	}
	srv.Must(http.StatusOK, http.MethodPost, "/threads", map[string]any{})

	code, out = migrateCmd(env)
	if code != 0 || !strings.Contains(out, `schema already up to date" version=`+strconv.FormatUint(uint64(known), 10)) {
		t.Fatalf("weft migrate again: exit %d: %s", code, out)
	}
}

// weft migrate fails, with the exit code a Job's restart policy reads,
// when there is nothing it may migrate.
func TestMigrateCommandFailures(t *testing.T) {
	t.Parallel()
	t.Run("no database url", func(t *testing.T) {
		code, out := migrateCmd(nil)
		if code != 2 || !strings.Contains(out, "DATABASE_URL is not set") {
			t.Fatalf("exit %d: %s", code, out)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		code, out := migrateCmd(map[string]string{"DATABASE_URL": "postgres://weft@127.0.0.1:1/none?connect_timeout=2"})
		if code != 1 || !strings.Contains(out, "connect to database") {
			t.Fatalf("exit %d: %s", code, out)
		}
	})
	t.Run("schema newer than the binary", func(t *testing.T) {
		dsn := pgtest.DSN(t)
		pool, err := postgres.Connect(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		if _, err := pool.Exec(context.Background(), `UPDATE schema_migrations SET version = version + 1`); err != nil {
			t.Fatal(err)
		}
		code, out := migrateCmd(map[string]string{"DATABASE_URL": dsn})
		if code != 1 || !strings.Contains(out, "newer than this server knows") {
			t.Fatalf("exit %d: %s", code, out)
		}
	})
	t.Run("stray argument", func(t *testing.T) {
		code, out := migrateCmd(nil, "up")
		if code != 2 || !strings.Contains(out, `unexpected argument "up"`) {
			t.Fatalf("exit %d: %s", code, out)
		}
	})
}
