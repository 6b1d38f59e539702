package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DBTX is what store functions that read or write take: a pool or a
// transaction, so a coordinator can compose writes of several packages in
// one transaction.
type DBTX interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// TxStarter is a DBTX that can open a transaction (a pool, or a tx for a
// savepoint).
type TxStarter interface {
	DBTX
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Connect opens a connection pool and checks it with a ping. The pool has
// at least 16 connections, and keeps minConns of them open (unless the URL
// sets pool_min_conns) so a request after an idle spell does not pay for a
// new connection: a fork on the server, authentication, and preparing its
// statements again. A connection attempt gives up after DefaultConnectTimeout
// unless the URL sets connect_timeout, so while the database is unreachable
// a request fails within that time (a 503, see IsUnavailable) instead of
// hanging on a dial.
func Connect(ctx context.Context, dsn string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	if cfg.MaxConns < 16 {
		cfg.MaxConns = 16
	}
	if !strings.Contains(dsn, "pool_min_conns") {
		cfg.MinConns = min(minConns, cfg.MaxConns)
	}
	cfg.AfterConnect = func(_ context.Context, c *pgx.Conn) error {
		RegisterUUID(c.TypeMap())
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return pool, nil
}

// minConns is the default number of connections a pool keeps open.
const minConns = 2

// DefaultConnectTimeout bounds one connection attempt (dial, TLS, startup,
// authentication) when the URL sets no connect_timeout.
const DefaultConnectTimeout = 5 * time.Second

// maxTxAttempts bounds the retries of a transaction that lost a deadlock or
// serialization race.
const maxTxAttempts = 8

// WithTx runs fn in a transaction and commits it when fn returns nil. A
// transaction that PostgreSQL aborts as a deadlock victim or a serialization
// failure is retried from the start (fn must therefore be safe to re-run:
// it only touches the database through tx). The deferred rollback uses a
// context that outlives a cancelled request, so no transaction is left open.
func WithTx(ctx context.Context, db TxStarter, fn func(tx pgx.Tx) error) error {
	var err error
	for attempt := 1; attempt <= maxTxAttempts; attempt++ {
		err = withTxOnce(ctx, db, fn)
		if err == nil || !IsRetryable(err) || ctx.Err() != nil {
			return err
		}
		// Back off a little, with jitter, so the retried transaction does not
		// walk straight back into the same lock order.
		select {
		case <-time.After(time.Duration(rand.IntN(10*attempt)+1) * time.Millisecond):
		case <-ctx.Done():
			return err
		}
	}
	return err
}

func withTxOnce(ctx context.Context, db TxStarter, fn func(tx pgx.Tx) error) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// SQLSTATE codes Weft reacts to.
const (
	codeUniqueViolation      = "23505"
	codeForeignKeyViolation  = "23503"
	codeSerializationFailure = "40001"
	codeDeadlockDetected     = "40P01"
	codeDuplicateDatabase    = "42P04"
	// CodeFenced and CodeCancelPending are raised by weft_fence (migration 003).
	CodeFenced        = "WF409"
	CodeCancelPending = "WF499"
)

func sqlState(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

// IsRetryable reports whether err aborted a transaction that can simply be
// run again (deadlock victim, serialization failure).
func IsRetryable(err error) bool {
	s := sqlState(err)
	return s == codeDeadlockDetected || s == codeSerializationFailure
}

// IsUniqueViolation reports a unique or primary key violation.
func IsUniqueViolation(err error) bool { return sqlState(err) == codeUniqueViolation }

// IsForeignKeyViolation reports a foreign key violation.
func IsForeignKeyViolation(err error) bool { return sqlState(err) == codeForeignKeyViolation }

func isDuplicateDatabase(err error) bool { return sqlState(err) == codeDuplicateDatabase }

// Qualify prefixes every column of a comma-separated column list with
// alias ("a, b" → "t.a, t.b"), for queries that join tables sharing names.
func Qualify(alias, columns string) string {
	return alias + "." + strings.ReplaceAll(strings.Join(strings.Fields(columns), " "), ", ", ", "+alias+".")
}

// SQLState returns err's SQLSTATE ("" when err is not from PostgreSQL).
func SQLState(err error) string { return sqlState(err) }

// DataException reports whether err is PostgreSQL refusing a value (SQLSTATE
// class 22: a NUL character jsonb cannot hold, a number beyond numeric's
// range, …), with the server's message.
func DataException(err error) (string, bool) {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "22") {
		return pgErr.Message, true
	}
	return "", false
}

// IsUnavailable reports whether err means the database cannot be reached
// or is not accepting work right now, so the request did nothing and a
// retry in a moment may succeed: a failed connection attempt (refused,
// missing socket, timeout, "the database system is starting up / shutting
// down"), a connection lost mid-statement (reset, EOF, closed), SQLSTATE
// class 08 (connection exception), 57P01 admin_shutdown, 57P02
// crash_shutdown, 57P03 cannot_connect_now and 53300 too_many_connections.
// The HTTP layer answers these with 503 and Retry-After.
//
// A connection lost while a COMMIT was in flight is also reported: the
// transaction may or may not have committed, which only the caller's own
// idempotence (a client-chosen id, a commit key) can settle.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch c := pgErr.Code; {
		case strings.HasPrefix(c, "08"), c == "57P01", c == "57P02", c == "57P03", c == "53300":
			return true
		}
		var connErr *pgconn.ConnectError
		// Any other server error is about the statement (or, inside a
		// failed connection attempt, e.g. bad credentials: still an outage
		// for the client, the server cannot work).
		return errors.As(err, &connErr)
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) {
		return true
	}
	if errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return true
	}
	// A pgconn timeout (a deadline hit while talking to the server), but
	// not a caller that went away.
	return pgconn.Timeout(err) && !errors.Is(err, context.Canceled)
}
