// Package servertest starts the real Weft server for black-box tests: a
// fresh migrated database (pgtest), the full wiring of package server, a
// loopback listener on port 0, and a small JSON client.
package servertest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/crypt"
	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
)

// Server is a running server plus a direct pool on its database (for
// assertions that the API cannot make).
type Server struct {
	URL  string
	DB   *pgxpool.Pool
	DSN  string
	Srv  *server.Server
	http *http.Client
	t    testing.TB
}

// Start runs a server on a fresh database for t; it stops when t ends. It
// has two in-process run workers.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartWith(t, pgtest.DSN(t), nil)
}

// StartWith runs a server on the database at dsn (several servers may
// share one), with the test defaults changed by edit (nil: none).
func StartWith(t testing.TB, dsn string, edit func(*server.Config)) *Server {
	t.Helper()
	cfg := server.Config{Addr: "127.0.0.1:0", DatabaseURL: dsn, Migrate: true,
		MaxBodyBytes: 1 << 20, ShutdownTimeout: 5 * time.Second, Workers: 2, Lease: 5 * time.Second,
		// Every event that repeats a checkpoint's values is stored as a
		// reference, however small, so every stream test reads rendered
		// events; so is every run's input, so every test reads rendered
		// runs.
		EventRefMinBytes: 1, InputRefMinBytes: 1}
	// WEFT_TEST_AES_KEY runs every test server with encryption at rest on
	// (that text as LANGGRAPH_AES_KEY): the same suites, sealed storage.
	if key := os.Getenv("WEFT_TEST_AES_KEY"); key != "" {
		kr, err := crypt.ParseKeyring(key, "")
		if err != nil {
			t.Fatalf("servertest: WEFT_TEST_AES_KEY: %v", err)
		}
		cfg.Keyring = kr
	}
	if edit != nil {
		edit(&cfg)
	}
	// Internal errors (5xx) are printed: a test that hits one should show why.
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	srv, err := server.Start(context.Background(), cfg, log)
	if err != nil {
		t.Fatalf("servertest: start: %v", err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	pool, err := postgres.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatalf("servertest: %v", err)
	}
	t.Cleanup(pool.Close)
	return &Server{URL: srv.URL(), DB: pool, DSN: dsn, Srv: srv, http: &http.Client{Timeout: 60 * time.Second}, t: t}
}

// TenantHeader names the tenant of a request to a server started with
// TestTenants (absent: the default tenant ""); ScopesHeader its scopes, a
// comma list (absent: tenant data only).
const (
	TenantHeader = "X-Test-Tenant"
	ScopesHeader = "X-Test-Scopes"
)

// TestTenants is an edit for StartWith: auth is on, and every request is
// the principal its TenantHeader and ScopesHeader name, as if a key had
// said so. It stands in for real credentials (API keys, JWT) so that tenant
// isolation is tested on its own; never use it outside tests.
func TestTenants(cfg *server.Config) {
	cfg.Authenticate = func(r *http.Request) (auth.Principal, error) {
		scopes := []string{auth.ScopeTenant}
		if s := r.Header.Get(ScopesHeader); s != "" {
			scopes = strings.Split(s, ",")
		}
		return auth.Principal{Identity: "test", Tenant: r.Header.Get(TenantHeader), Scopes: scopes}, nil
	}
}

// Response is a decoded response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test on error.
func (r *Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Map decodes the body as a JSON object.
func (r *Response) Map(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.JSON(t, &m)
	return m
}

// Detail returns the "detail" of an error body.
func (r *Response) Detail(t testing.TB) string {
	t.Helper()
	d, _ := r.Map(t)["detail"].(string)
	return d
}

// Do sends body (nil: no body; string or []byte: raw; else JSON-encoded)
// and fails the test on a transport error. Call it from the test goroutine.
func (s *Server) Do(method, path string, body any) *Response {
	s.t.Helper()
	r, err := s.Try(method, path, body)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// Try is Do returning the error instead; safe from any goroutine.
func (s *Server) Try(method, path string, body any) (*Response, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewReader([]byte(b))
	case []byte:
		rd = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(enc)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		return nil, err
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: data}, nil
}

// Must sends the request and fails the test unless the status is want.
func (s *Server) Must(want int, method, path string, body any) *Response {
	s.t.Helper()
	r := s.Do(method, path, body)
	if r.Status != want {
		s.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, r.Status, want, r.Body)
	}
	return r
}

// Client is a client for a server started elsewhere (another process) at
// url, with db a pool on its database.
func Client(t testing.TB, url string, db *pgxpool.Pool) *Server {
	return &Server{URL: url, DB: db, http: &http.Client{Timeout: 60 * time.Second}, t: t}
}
