package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
)

// parseEnv is ParseConfig with env as the whole environment.
func parseEnv(args []string, env map[string]string) (server.Config, error) {
	return server.ParseConfig(args, func(k string) string { return env[k] }, io.Discard)
}

// sourceOf is the source ParseConfig reports for the flag name.
func sourceOf(t *testing.T, c server.Config, name string) string {
	t.Helper()
	for _, s := range c.Settings {
		if s.Name == name {
			return s.Source
		}
	}
	t.Fatalf("no setting %q in %+v", name, c.Settings)
	return ""
}

// LangGraph's server's variables are read as Weft's, with the same
// meaning; the settings report names the alias; Weft's own variable (or the
// flag) wins; a bad value is refused naming the alias.
func TestEnvAliases(t *testing.T) {
	t.Parallel()
	t.Run("alias alone", func(t *testing.T) {
		c, err := parseEnv(nil, map[string]string{
			"DATABASE_URI":       "postgres://u:secret@db:5432/weft",
			"N_JOBS_PER_WORKER":  "0",
			"BG_JOB_MAX_RETRIES": "3",
			"CORS_ALLOW_ORIGINS": `https://a.example, "https://b.example:8443",'https://c.example'`,
			"MOUNT_PREFIX":       "/api/",
		})
		if err != nil {
			t.Fatal(err)
		}
		if c.DatabaseURL != "postgres://u:secret@db:5432/weft" || c.Workers != 0 || c.MaxAttempts != 3 || c.MountPrefix != "/api" ||
			!slices.Equal(c.CORSOrigins, []string{"https://a.example", "https://b.example:8443", "https://c.example"}) {
			t.Fatalf("config: db %q workers %d attempts %d prefix %q origins %q", c.DatabaseURL, c.Workers, c.MaxAttempts, c.MountPrefix, c.CORSOrigins)
		}
		for name, want := range map[string]string{
			"database-url": "DATABASE_URI (alias of DATABASE_URL)", "workers": "N_JOBS_PER_WORKER (alias of WEFT_WORKERS)",
			"max-attempts": "BG_JOB_MAX_RETRIES (alias of WEFT_MAX_ATTEMPTS)", "cors-origins": "CORS_ALLOW_ORIGINS (alias of WEFT_CORS_ORIGINS)",
			"mount-prefix": "MOUNT_PREFIX (alias of WEFT_MOUNT_PREFIX)", "addr": "default",
		} {
			if got := sourceOf(t, c, name); got != want {
				t.Errorf("%s: source %q, want %q", name, got, want)
			}
		}
		if len(c.Warnings) != 0 {
			t.Errorf("warnings %q, want none", c.Warnings)
		}
		// LangGraph's server falls back to POSTGRES_URI; DATABASE_URI comes first.
		c, err = parseEnv(nil, map[string]string{"POSTGRES_URI": "postgres://db/p"})
		if err != nil || c.DatabaseURL != "postgres://db/p" || sourceOf(t, c, "database-url") != "POSTGRES_URI (alias of DATABASE_URL)" {
			t.Fatalf("POSTGRES_URI: %q %v", c.DatabaseURL, err)
		}
		c, err = parseEnv(nil, map[string]string{"POSTGRES_URI": "postgres://db/p", "DATABASE_URI": "postgres://db/d"})
		if err != nil || c.DatabaseURL != "postgres://db/d" || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "POSTGRES_URI is set and ignored: DATABASE_URI") {
			t.Fatalf("both URIs: %q %v %q", c.DatabaseURL, err, c.Warnings)
		}
	})
	t.Run("both set: Weft's wins", func(t *testing.T) {
		c, err := parseEnv(nil, map[string]string{
			"DATABASE_URL": "postgres://db/weft", "DATABASE_URI": "postgres://db/other",
			"WEFT_WORKERS": "3", "N_JOBS_PER_WORKER": "7",
			"WEFT_MAX_ATTEMPTS": "4", "BG_JOB_MAX_RETRIES": "not a number",
			"WEFT_MOUNT_PREFIX": "/w", "MOUNT_PREFIX": "/api",
		})
		if err != nil {
			t.Fatal(err)
		}
		if c.DatabaseURL != "postgres://db/weft" || c.Workers != 3 || c.MaxAttempts != 4 || c.MountPrefix != "/w" {
			t.Fatalf("config: db %q workers %d attempts %d prefix %q", c.DatabaseURL, c.Workers, c.MaxAttempts, c.MountPrefix)
		}
		if got := sourceOf(t, c, "workers"); got != "WEFT_WORKERS" {
			t.Errorf("workers: source %q", got)
		}
		if len(c.Warnings) != 4 || !strings.Contains(c.Warnings[1], "N_JOBS_PER_WORKER is set and ignored: WEFT_WORKERS is set too") {
			t.Errorf("warnings %q", c.Warnings)
		}
		// The flag wins over an alias too, and an alias it overrides is not checked.
		c, err = parseEnv([]string{"-workers", "2", "-max-attempts", "9"}, map[string]string{"N_JOBS_PER_WORKER": "7", "BG_JOB_MAX_RETRIES": "0"})
		if err != nil || c.Workers != 2 || c.MaxAttempts != 9 || sourceOf(t, c, "workers") != "-workers" {
			t.Fatalf("flags: workers %d attempts %d: %v", c.Workers, c.MaxAttempts, err)
		}
	})
	t.Run("bad values name the alias", func(t *testing.T) {
		for _, tc := range []struct{ name, value, want string }{
			{"N_JOBS_PER_WORKER", "ten", `N_JOBS_PER_WORKER (alias of WEFT_WORKERS): "ten" must be an integer from 0 to 1024`},
			{"N_JOBS_PER_WORKER", "2000", "N_JOBS_PER_WORKER (alias of WEFT_WORKERS)"},
			{"BG_JOB_MAX_RETRIES", "0", `BG_JOB_MAX_RETRIES (alias of WEFT_MAX_ATTEMPTS): "0" must be an integer from 1 to 100`},
			{"CORS_ALLOW_ORIGINS", "https://a.example, app.example.com", `CORS_ALLOW_ORIGINS (alias of WEFT_CORS_ORIGINS): "https://a.example,app.example.com" holds "app.example.com", which is neither`},
			{"CORS_ALLOW_ORIGINS", `"https://a.example`, "CORS_ALLOW_ORIGINS (alias of WEFT_CORS_ORIGINS): no closing quotation"},
			{"MOUNT_PREFIX", "api", `MOUNT_PREFIX (alias of WEFT_MOUNT_PREFIX): "api" must start with "/"`},
			{"BG_JOB_TIMEOUT_SECS", "3600", `BG_JOB_TIMEOUT_SECS="3600": Weft has no time limit for runs`},
		} {
			_, err := parseEnv(nil, map[string]string{tc.name: tc.value})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s=%q: %v, want an error containing %q", tc.name, tc.value, err, tc.want)
			}
		}
	})
}

// syncBuffer is a log destination the server writes from its goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A server configured by LangGraph's variables alone serves under their
// settings, and GET /info and the start log say which variable gave each.
func TestEnvAliasesReported(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"DATABASE_URI": pgtest.DSN(t), "WEFT_ADDR": "127.0.0.1:0", "N_JOBS_PER_WORKER": "1", "BG_JOB_MAX_RETRIES": "2",
		"CORS_ALLOW_ORIGINS": "https://app.example.com", "MOUNT_PREFIX": "/api/",
	}
	cfg, err := server.ParseConfig(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	ctx := context.Background()
	srv, err := server.Start(ctx, cfg, slog.New(slog.NewJSONHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(ctx) })
	base := "http://" + srv.Addr()
	client := &http.Client{Timeout: 10 * time.Second}

	req, _ := http.NewRequest("GET", base+"/api/info", nil)
	req.Header.Set("Origin", "https://app.example.com")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var info struct{ Settings []httpapi.Setting }
	err = json.NewDecoder(resp.Body).Decode(&info)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /api/info: %d %v", resp.StatusCode, err)
	}
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "https://app.example.com" {
		t.Errorf("CORS_ALLOW_ORIGINS not applied: Access-Control-Allow-Origin %q", got)
	}
	want := map[string]httpapi.Setting{
		"database-url": {Source: "DATABASE_URI (alias of DATABASE_URL)"},
		"workers":      {Value: "1", Source: "N_JOBS_PER_WORKER (alias of WEFT_WORKERS)"},
		"max-attempts": {Value: "2", Source: "BG_JOB_MAX_RETRIES (alias of WEFT_MAX_ATTEMPTS)"},
		"cors-origins": {Value: "https://app.example.com", Source: "CORS_ALLOW_ORIGINS (alias of WEFT_CORS_ORIGINS)"},
		"mount-prefix": {Value: "/api", Source: "MOUNT_PREFIX (alias of WEFT_MOUNT_PREFIX)"},
	}
	for _, s := range info.Settings {
		w, ok := want[s.Name]
		if !ok {
			continue
		}
		delete(want, s.Name)
		if s.Source != w.Source || (w.Value != "" && s.Value != w.Value) {
			t.Errorf("GET /info setting %s: %q from %q, want %q from %q", s.Name, s.Value, s.Source, w.Value, w.Source)
		}
	}
	if len(want) > 0 {
		t.Errorf("GET /info lacks settings %v", want)
	}
	// The mount prefix is applied: the API is under /api only.
	if resp, err := client.Get(base + "/info"); err != nil || resp.StatusCode != 404 {
		t.Errorf("GET /info outside the prefix: %v %v, want 404", resp, err)
	} else {
		resp.Body.Close()
	}
	// The start log's setting lines name the alias as well.
	for _, line := range strings.Split(logs.String(), "\n") {
		var l struct{ Msg, Name, Source string }
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "setting" && l.Name == "workers" {
			if l.Source != "N_JOBS_PER_WORKER (alias of WEFT_WORKERS)" {
				t.Errorf("start log: workers from %q", l.Source)
			}
			return
		}
	}
	t.Errorf("no setting line for workers in the start log:\n%s", logs.String())
}
