package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/postgres"
)

const keysUsage = `Usage:
  weft keys create --tenant NAME [--scope tenant] [--name TEXT]
                       make an API key; it is printed once (stdout), only its SHA-256 hash is stored
  weft keys list       every key: id, tenant, scopes, name, created, revoked
  weft keys revoke ID  revoke a key; servers refuse it within 5 seconds

Scopes (comma list): tenant (all the tenant's data: threads, runs, state, assistants,
store, crons) or any of threads, assistants, store, crons; worker (the worker API only);
admin (the run queue across tenants, /metrics). Keys work when the server runs with
WEFT_AUTH=keys.

The database is the server's: DATABASE_URL (-database-url), or the managed cluster under
WEFT_DATA_DIR (-data-dir, default .weft), reached while the server runs or started for
the command when it does not.

Flags:`

// keys is `weft keys create|list|revoke`: API key management, straight on
// the database (the server need not run).
func keys(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	env := func(key, def string) string {
		if v := getenv(key); v != "" {
			return v
		}
		return def
	}
	sub := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("weft keys", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, keysUsage)
		fs.PrintDefaults()
	}
	dsn := fs.String("database-url", env("DATABASE_URL", ""), "PostgreSQL URL; empty uses the managed local cluster (DATABASE_URL)")
	dataDir := fs.String("data-dir", env("WEFT_DATA_DIR", ".weft"), "directory of the managed local cluster (WEFT_DATA_DIR)")
	tenant := fs.String("tenant", "", "create: the tenant the key acts as (required for tenant data scopes)")
	scope := fs.String("scope", auth.ScopeTenant, "create: comma list of scopes")
	name := fs.String("name", "", "create: a note on what the key is for")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	var id uuid.UUID
	switch sub {
	case "create", "list":
		if fs.NArg() > 0 {
			fmt.Fprintf(stderr, "weft keys %s: unexpected argument %q\n", sub, fs.Arg(0))
			fs.Usage()
			return 2
		}
	case "revoke":
		if fs.NArg() != 1 {
			fmt.Fprintln(stderr, "weft keys revoke: give the id of one key (weft keys list shows them)")
			return 2
		}
		var err error
		if id, err = uuid.Parse(fs.Arg(0)); err != nil {
			fmt.Fprintf(stderr, "weft keys revoke: %q is not a key id (weft keys list shows them)\n", fs.Arg(0))
			return 2
		}
	default:
		fmt.Fprintf(stderr, "weft keys: unknown command %q\n", sub)
		fs.Usage()
		return 2
	}
	var scopes []string
	if sub == "create" {
		var err error
		if scopes, err = auth.ParseScopes(*scope); err != nil {
			fmt.Fprintln(stderr, "weft keys create: --scope:", err)
			return 2
		}
		if auth.HasTenantData(scopes) && strings.TrimSpace(*tenant) == "" {
			fmt.Fprintln(stderr, "weft keys create: --tenant NAME is required for a key with tenant data scopes")
			return 2
		}
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pool, closeDB, err := openDatabase(ctx, *dsn, *dataDir, log)
	if err != nil {
		fmt.Fprintln(stderr, "weft keys:", err)
		return 1
	}
	defer closeDB()
	switch sub {
	case "create":
		key, k, err := auth.APIKeyCreate(ctx, pool, *tenant, scopes, *name)
		if err != nil {
			fmt.Fprintln(stderr, "weft keys create:", err)
			return 1
		}
		fmt.Fprintln(stdout, key)
		fmt.Fprintf(stderr, "Created key %s (tenant %q, scopes %s). This is the only time it is shown: only its hash is stored.\n",
			k.KeyID, k.Tenant, strings.Join(k.Scopes, ","))
	case "list":
		list, err := auth.APIKeyList(ctx, pool)
		if err != nil {
			fmt.Fprintln(stderr, "weft keys list:", err)
			return 1
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "KEY_ID\tTENANT\tSCOPES\tNAME\tCREATED\tREVOKED")
		for _, k := range list {
			revoked := "-"
			if k.RevokedAt != nil {
				revoked = k.RevokedAt.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", k.KeyID, k.Tenant, strings.Join(k.Scopes, ","), k.Name,
				k.CreatedAt.UTC().Format(time.RFC3339), revoked)
		}
		_ = tw.Flush()
	case "revoke":
		k, err := auth.APIKeyRevoke(ctx, pool, id)
		if err != nil {
			fmt.Fprintln(stderr, "weft keys revoke:", err)
			return 1
		}
		fmt.Fprintf(stdout, "revoked %s at %s (servers refuse it within %s)\n", k.KeyID, k.RevokedAt.UTC().Format(time.RFC3339),
			auth.DefaultKeyCacheTTL)
	}
	return 0
}

// openDatabase connects to the server's database, migrated: dsn, or the
// managed cluster under dataDir — the running server's, or started here
// (and stopped by the returned close) when no server runs.
func openDatabase(ctx context.Context, dsn, dataDir string, log *slog.Logger) (*pgxpool.Pool, func(), error) {
	closeAll := func() {}
	if dsn == "" {
		c, err := postgres.NewCluster(dataDir, log)
		if err != nil {
			return nil, nil, err
		}
		switch err := c.Start(ctx); {
		case errors.Is(err, postgres.ErrDataDirInUse):
			// A server runs the cluster: reach it through its socket.
		case err != nil:
			return nil, nil, fmt.Errorf("start local PostgreSQL: %w", err)
		default:
			closeAll = func() {
				if err := c.Stop(); err != nil {
					log.Error("stop local PostgreSQL", "error", err)
				}
			}
			if err := c.EnsureDatabase(ctx, "weft"); err != nil {
				closeAll()
				return nil, nil, err
			}
		}
		dsn = c.DSN("weft")
	}
	pool, err := postgres.Connect(ctx, dsn)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	if err := postgres.Migrate(pool); err != nil {
		pool.Close()
		closeAll()
		return nil, nil, err
	}
	return pool, func() { pool.Close(); closeAll() }, nil
}
