package server

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftdev/weft/internal/postgres"
)

// OpenDatabase connects to the database cfg names, starting the managed
// local cluster when DatabaseURL is empty, for a command that works on the
// database without serving (weft reencrypt). The schema must be the one
// this binary knows (it migrates first when cfg.Migrate). close releases
// the pool and stops the cluster.
func OpenDatabase(ctx context.Context, cfg Config, log *slog.Logger) (pool *pgxpool.Pool, close func(), err error) {
	var cluster *postgres.Cluster
	close = func() {
		if pool != nil {
			pool.Close()
		}
		if cluster != nil {
			if err := cluster.Stop(); err != nil {
				log.Error("stop local PostgreSQL", "error", err)
			}
		}
	}
	defer func() {
		if err != nil {
			close()
		}
	}()
	dsn := cfg.DatabaseURL
	if dsn == "" {
		if cluster, err = postgres.NewCluster(cfg.DataDir, log); err != nil {
			return nil, nil, err
		}
		if err = cluster.Start(ctx); err != nil {
			return nil, nil, fmt.Errorf("start local PostgreSQL: %w", err)
		}
		if err = cluster.EnsureDatabase(ctx, "weft"); err != nil {
			return nil, nil, err
		}
		dsn = cluster.DSN("weft")
	}
	if pool, err = postgres.Connect(ctx, dsn); err != nil {
		return nil, nil, err
	}
	if cfg.Migrate {
		if err = postgres.Migrate(pool); err != nil {
			return nil, nil, err
		}
	}
	if err = checkSchema(pool); err != nil {
		return nil, nil, err
	}
	return pool, close, nil
}
