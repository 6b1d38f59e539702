package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weftdev/weft/internal/postgres"
)

func TestIsUnavailable(t *testing.T) {
	t.Parallel()
	pg := func(code string) error { return fmt.Errorf("query: %w", &pgconn.PgError{Code: code}) }
	// A real failed connection attempt: nothing listens on this socket.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, connErr := pgx.Connect(ctx, "postgres:///x?host="+t.TempDir()+"&user=x&sslmode=disable")
	if connErr == nil {
		t.Fatal("connected to nothing")
	}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{connErr, true},
		{fmt.Errorf("begin: %w", connErr), true},
		{pg("08006"), true}, // connection_failure
		{pg("57P01"), true}, // admin_shutdown
		{pg("57P02"), true}, // crash_shutdown
		{pg("57P03"), true}, // cannot_connect_now
		{pg("53300"), true}, // too_many_connections
		{fmt.Errorf("receive: %w", io.ErrUnexpectedEOF), true},
		{fmt.Errorf("write: %w", syscall.ECONNRESET), true},
		{pgconn.ErrConnClosed, true},
		{nil, false},
		{pg("23505"), false}, // unique_violation
		{pg("22P05"), false}, // untranslatable_character (a client's NUL)
		{pg("57014"), false}, // query_canceled
		{pgx.ErrNoRows, false},
		{context.Canceled, false},
		{errors.New("something else"), false},
	} {
		if got := postgres.IsUnavailable(c.err); got != c.want {
			t.Errorf("IsUnavailable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
