// Package pgtest gives tests a real, migrated PostgreSQL database in
// milliseconds: one cluster per test binary (a managed local cluster in a
// temporary directory, or the server named by WEFT_TEST_DATABASE_URL), one
// migrated template database, and a fresh database cloned from the template
// for every test, so tests can run with t.Parallel().
//
// A package that uses it declares
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// so that the cluster is stopped and removed when its tests end. The
// cluster is also bound to the test binary's process by a watchdog (see
// Cluster): a binary that panics, times out (go test -timeout), is killed, or
// has no TestMain calling Main leaves no PostgreSQL running either.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftdev/weft/internal/postgres"
)

var (
	once     sync.Once
	cluster  *Cluster
	adminDSN string // a DSN whose database can be swapped
	template string
	setupErr error
)

// Main runs m and tears the test cluster down afterwards. It returns the
// exit code for os.Exit.
func Main(m *testing.M) int {
	code := m.Run()
	if cluster == nil && template != "" {
		// A shared server outlives this binary: drop its template.
		if admin, err := postgres.Connect(context.Background(), adminDSN); err == nil {
			_, _ = admin.Exec(context.Background(), `DROP DATABASE IF EXISTS `+template+` WITH (FORCE)`)
			admin.Close()
		}
	}
	if cluster != nil {
		if err := cluster.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest: stop cluster:", err)
		}
	}
	return code
}

func setup() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if u := os.Getenv("WEFT_TEST_DATABASE_URL"); u != "" {
		adminDSN = u
	} else {
		c, err := StartCluster(ctx, "weft-test-")
		if err != nil {
			setupErr = err
			return
		}
		cluster = c
		adminDSN = c.DSN("postgres")
	}
	template = "weft_tpl_" + randomSuffix()
	admin, err := postgres.Connect(ctx, adminDSN)
	if err != nil {
		setupErr = err
		return
	}
	defer admin.Close()
	if _, err := admin.Exec(ctx, `CREATE DATABASE `+template); err != nil {
		setupErr = fmt.Errorf("create template: %w", err)
		return
	}
	pool, err := postgres.Connect(ctx, withDatabase(adminDSN, template))
	if err != nil {
		setupErr = err
		return
	}
	defer pool.Close()
	if err := postgres.Migrate(pool); err != nil {
		setupErr = fmt.Errorf("migrate template: %w", err)
	}
}

// DSN creates a fresh migrated database for t and returns its connection
// string. The database is dropped when t ends (best effort).
func DSN(t testing.TB) string {
	t.Helper()
	once.Do(setup)
	if setupErr != nil {
		t.Fatalf("pgtest: %v", setupErr)
	}
	ctx := context.Background()
	name := "weft_test_" + randomSuffix()
	admin, err := postgres.Connect(ctx, adminDSN)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer admin.Close()
	if _, err := admin.Exec(ctx, fmt.Sprintf(`CREATE DATABASE %s TEMPLATE %s`, name, template)); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		if cluster != nil {
			return // the whole cluster is removed at the end of the run
		}
		admin, err := postgres.Connect(context.Background(), adminDSN)
		if err != nil {
			return
		}
		defer admin.Close()
		_, _ = admin.Exec(context.Background(), `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
	})
	return withDatabase(adminDSN, name)
}

// Pool returns a connection pool on a fresh migrated database for t, closed
// when t ends.
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, err := postgres.Connect(context.Background(), DSN(t))
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func withDatabase(dsn, name string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		panic(fmt.Sprintf("pgtest: bad DSN: %v", err))
	}
	u.Path = "/" + name
	return u.String()
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
