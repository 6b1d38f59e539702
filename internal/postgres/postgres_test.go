package postgres_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/postgres/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func TestMigrateIsIdempotentAndRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	known, err := postgres.KnownVersion()
	if err != nil || known == 0 {
		t.Fatalf("KnownVersion = %d, %v", known, err)
	}
	if err := postgres.Migrate(pool); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	if v, err := postgres.SchemaVersion(pool); err != nil || v != known {
		t.Fatalf("SchemaVersion = %d, %v; want %d", v, err, known)
	}
	// Pretend a newer Weft migrated this database.
	if _, err := pool.Exec(context.Background(), `UPDATE schema_migrations SET version = $1`, known+1); err != nil {
		t.Fatal(err)
	}
	if err := postgres.Migrate(pool); !errors.Is(err, postgres.ErrSchemaTooNew) {
		t.Fatalf("Migrate on newer schema = %v; want ErrSchemaTooNew", err)
	}
}

func TestWithTxRollsBackOnError(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	ctx := context.Background()
	boom := errors.New("boom")
	err := postgres.WithTx(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO threads (thread_id) VALUES (gen_random_uuid())`); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("WithTx = %v; want boom", err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM threads`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("threads after rollback = %d, %v; want 0", n, err)
	}
}

func TestWithTxRetriesDeadlockVictim(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	ctx := context.Background()
	attempts := 0
	err := postgres.WithTx(ctx, pool, func(tx pgx.Tx) error {
		attempts++
		if attempts == 1 {
			// Raise a real deadlock_detected error from the server.
			_, err := tx.Exec(ctx, `DO $$ BEGIN RAISE EXCEPTION 'synthetic' USING ERRCODE = '40P01'; END $$`)
			return err
		}
		return nil
	})
	if err != nil || attempts != 2 {
		t.Fatalf("WithTx = %v after %d attempts; want success on attempt 2", err, attempts)
	}
}
