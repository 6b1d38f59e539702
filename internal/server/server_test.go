package server_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestParseConfig(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	c, err := server.ParseConfig(nil, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:8123" || c.DatabaseURL != "" || c.DataDir != ".weft" || !c.Migrate ||
		c.MaxBodyBytes != 10<<20 || c.ShutdownTimeout != 30*time.Second || c.LogLevel != slog.LevelInfo || c.WebhookAllowPrivate {
		t.Fatalf("defaults = %+v", c)
	}
	env = map[string]string{"WEFT_ADDR": "127.0.0.1:9999", "DATABASE_URL": "postgres://x/y", "WEFT_MIGRATE": "false",
		"WEFT_LOG_LEVEL": "debug", "WEFT_LOG_FORMAT": "json", "WEFT_WEBHOOK_ALLOW_PRIVATE": "true"}
	c, err = server.ParseConfig([]string{"-addr", "127.0.0.1:7777"}, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:7777" || c.DatabaseURL != "postgres://x/y" || c.Migrate || c.LogLevel != slog.LevelDebug || c.LogFormat != "json" ||
		!c.WebhookAllowPrivate {
		t.Fatalf("env + flag = %+v", c)
	}
	for _, bad := range [][]string{{"-migrate", "perhaps"}, {"-log-format", "xml"}, {"-max-body-bytes", "10"},
		{"-shutdown-timeout", "soon"}, {"-log-level", "loud"}, {"-addr", ""},
		{"-webhook-allow-private", "maybe"}} {
		env = map[string]string{}
		if _, err := server.ParseConfig(bad, getenv, io.Discard); err == nil {
			t.Errorf("ParseConfig(%v) accepted", bad)
		}
	}
}

// The managed cluster is created on first start, stopped on shutdown and
// reused (with its data) on the next start.
func TestManagedDatabaseLifecycle(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("", "weft-srv-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// Let the PostgreSQL user reach the data dir inside (the server would
	// otherwise place the cluster under /var/lib/weft, outside this test).
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := server.Config{Addr: "127.0.0.1:0", DataDir: filepath.Join(dir, "data"), Migrate: true,
		MaxBodyBytes: 1 << 20, ShutdownTimeout: 5 * time.Second}
	ctx := context.Background()

	srv, err := server.Start(ctx, cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(srv.URL()+"/threads", "application/json", strings.NewReader(`{"thread_id":"6f1a7c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b"}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("create: %v %v", resp, err)
	}
	resp.Body.Close()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(cfg.DataDir, "pgdata", "postmaster.pid")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("PostgreSQL still running after shutdown (postmaster.pid: %v)", err)
	}

	srv, err = server.Start(ctx, cfg, quiet)
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	defer srv.Shutdown(ctx)
	resp, err = http.Get(srv.URL() + "/threads/6f1a7c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("thread lost across restart: %v %v", resp, err)
	}
	resp.Body.Close()
}

func TestRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	pool, err := postgres.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	known, _ := postgres.KnownVersion()
	if _, err := pool.Exec(context.Background(), `UPDATE schema_migrations SET version = $1`, known+7); err != nil {
		t.Fatal(err)
	}
	for _, migrate := range []bool{true, false} {
		cfg := server.Config{Addr: "127.0.0.1:0", DatabaseURL: dsn, Migrate: migrate, MaxBodyBytes: 1 << 20}
		srv, err := server.Start(context.Background(), cfg, quiet)
		if !errors.Is(err, postgres.ErrSchemaTooNew) {
			if srv != nil {
				srv.Shutdown(context.Background())
			}
			t.Fatalf("migrate=%v: Start = %v; want ErrSchemaTooNew", migrate, err)
		}
	}
}

// slowBody delivers its bytes only after release is closed.
type slowBody struct {
	first   []byte
	rest    []byte
	release chan struct{}
	sent    bool
}

func (b *slowBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, b.first), nil
	}
	if b.rest == nil {
		return 0, io.EOF
	}
	<-b.release
	n := copy(p, b.rest)
	b.rest = nil
	return n, nil
}

// Shutdown lets a request that is already in flight finish.
func TestShutdownDrainsInFlightRequests(t *testing.T) {
	t.Parallel()
	cfg := server.Config{Addr: "127.0.0.1:0", DatabaseURL: pgtest.DSN(t), Migrate: true,
		MaxBodyBytes: 1 << 20, ShutdownTimeout: 10 * time.Second}
	srv, err := server.Start(context.Background(), cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	body := &slowBody{first: []byte(`{"metadata":`), rest: []byte(`{"drained":true}}`), release: make(chan struct{})}
	req, _ := http.NewRequest("POST", srv.URL()+"/threads", body)
	req.ContentLength = int64(len(body.first) + len(body.rest))
	result := make(chan int, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			result <- -1
			return
		}
		resp.Body.Close()
		result <- resp.StatusCode
	}()
	time.Sleep(200 * time.Millisecond) // the request is now being read by the server
	shutdown := make(chan error, 1)
	go func() { shutdown <- srv.Shutdown(context.Background()) }()
	time.Sleep(200 * time.Millisecond)
	select {
	case err := <-shutdown:
		t.Fatalf("Shutdown returned (%v) while a request was in flight", err)
	default:
	}
	close(body.release)
	if code := <-result; code != http.StatusOK {
		t.Fatalf("in-flight request got %d during shutdown", code)
	}
	if err := <-shutdown; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// The CORS and Host flags reach the router.
func TestSecurityConfigApplies(t *testing.T) {
	t.Parallel()
	s := servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) {
		c.CORSOrigins = []string{"https://app.example.com"}
		c.AllowedHosts = []string{"weft.internal"}
	})
	get := func(host, origin string) *http.Response {
		req, _ := http.NewRequest("GET", s.URL+"/info", nil)
		req.Host = host
		req.Header.Set("Origin", origin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := get("127.0.0.1", "https://app.example.com"); r.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" {
		t.Fatalf("configured origin: %v", r.Header)
	}
	if r := get("127.0.0.1", "https://evil.example"); r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("foreign origin: %v", r.Header)
	}
	if r := get("weft.internal:8123", ""); r.StatusCode != http.StatusOK {
		t.Fatalf("configured host: %d", r.StatusCode)
	}
	if r := get("rebound.example", ""); r.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign host on loopback: %d", r.StatusCode)
	}
}

// -builtin-graphs (WEFT_BUILTIN_GRAPHS) defaults to true and takes a boolean.
func TestParseConfigBuiltinGraphs(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if c, err := server.ParseConfig(nil, getenv, io.Discard); err != nil || c.NoBuiltinGraphs {
		t.Fatalf("default: %v %+v", err, c.NoBuiltinGraphs)
	}
	env["WEFT_BUILTIN_GRAPHS"] = "false"
	if c, err := server.ParseConfig(nil, getenv, io.Discard); err != nil || !c.NoBuiltinGraphs {
		t.Fatalf("WEFT_BUILTIN_GRAPHS=false: %v %+v", err, c.NoBuiltinGraphs)
	}
	if c, err := server.ParseConfig([]string{"-builtin-graphs", "true"}, getenv, io.Discard); err != nil || c.NoBuiltinGraphs {
		t.Fatalf("the flag wins: %v %+v", err, c.NoBuiltinGraphs)
	}
	if _, err := server.ParseConfig([]string{"-builtin-graphs", "sometimes"}, getenv, io.Discard); err == nil {
		t.Fatal("a non-boolean was accepted")
	}
}
