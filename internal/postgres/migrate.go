package postgres

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/golang-migrate/migrate/v4"
	migratepgx "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/weftdev/weft/migrations"
)

// ErrSchemaTooNew means the database was migrated by a newer Weft: this
// server refuses to run on a schema it does not know.
var ErrSchemaTooNew = errors.New("database schema is newer than this server knows")

// KnownVersion is the newest migration embedded in this binary.
func KnownVersion() (uint, error) {
	entries, err := fs.ReadDir(migrations.FS, ".")
	if err != nil {
		return 0, err
	}
	var newest uint
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		if !ok || !strings.HasSuffix(e.Name(), ".up.sql") {
			continue
		}
		n, err := strconv.ParseUint(num, 10, 32)
		if err != nil {
			return 0, fmt.Errorf("migration %s: bad number: %w", e.Name(), err)
		}
		newest = max(newest, uint(n))
	}
	return newest, nil
}

// Migrate brings the schema up to KnownVersion. It refuses (ErrSchemaTooNew)
// a database whose schema is newer, and a dirty one (a migration that failed
// half-way needs a human). Concurrent callers are serialised by
// golang-migrate's advisory lock.
func Migrate(pool *pgxpool.Pool) error {
	m, err := newMigrate(pool)
	if err != nil {
		return err
	}
	defer m.Close()
	known, err := KnownVersion()
	if err != nil {
		return err
	}
	current, dirty, err := m.Version()
	switch {
	case errors.Is(err, migrate.ErrNilVersion):
	case err != nil:
		return fmt.Errorf("read schema version: %w", err)
	case dirty:
		return fmt.Errorf("database schema is dirty at version %d (a migration failed half-way); fix it by hand", current)
	case current > known:
		return fmt.Errorf("%w: database is at version %d, this server knows up to %d; upgrade Weft", ErrSchemaTooNew, current, known)
	}
	if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// SchemaVersion reports the schema version recorded in the database (0 when
// none).
func SchemaVersion(pool *pgxpool.Pool) (uint, error) {
	m, err := newMigrate(pool)
	if err != nil {
		return 0, err
	}
	defer m.Close()
	v, _, err := m.Version()
	if errors.Is(err, migrate.ErrNilVersion) {
		return 0, nil
	}
	return v, err
}

func newMigrate(pool *pgxpool.Pool) (*migrate.Migrate, error) {
	src, err := iofs.New(migrations.FS, ".")
	if err != nil {
		return nil, fmt.Errorf("migrations source: %w", err)
	}
	db := stdlib.OpenDBFromPool(pool)
	drv, err := migratepgx.WithInstance(db, &migratepgx.Config{})
	if err != nil {
		return nil, fmt.Errorf("migrations driver: %w", err)
	}
	m, err := migrate.NewWithInstance("iofs", src, "pgx5", drv)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	return m, nil
}
