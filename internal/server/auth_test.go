package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

// authResp is an answer of call.
type authResp struct {
	status int
	header http.Header
	body   []byte
}

func (r authResp) detail(t *testing.T) string {
	t.Helper()
	var b struct {
		Detail string `json:"detail"`
	}
	if err := json.Unmarshal(r.body, &b); err != nil {
		t.Fatalf("status %d body %q: not {\"detail\"}: %v", r.status, r.body, err)
	}
	return b.Detail
}

// call sends method path with body (JSON unless nil) and headers.
func call(t *testing.T, base, method, path string, body any, headers ...string) authResp {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return authResp{status: resp.StatusCode, header: resp.Header, body: b}
}

func mustStatus(t *testing.T, r authResp, want int, what string) {
	t.Helper()
	if r.status != want {
		t.Fatalf("%s: status %d, want %d; body %s", what, r.status, want, r.body)
	}
}

// startKeys runs a server with WEFT_AUTH=keys whose key cache lasts ttl.
func startKeys(t *testing.T, ttl time.Duration) *servertest.Server {
	return servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) {
		c.Auth = "keys"
		c.KeyCacheTTL = ttl
	})
}

func newKey(t *testing.T, srv *servertest.Server, tenant string, scopes ...string) (string, auth.APIKey) {
	t.Helper()
	key, k, err := auth.APIKeyCreate(context.Background(), srv.DB, tenant, scopes, "test")
	if err != nil {
		t.Fatal(err)
	}
	return key, k
}

func TestAPIKeyAuthentication(t *testing.T) {
	t.Parallel()
	srv := startKeys(t, 50*time.Millisecond)
	tenantKey, tk := newKey(t, srv, "acme", auth.ScopeTenant)
	workerKey, _ := newKey(t, srv, "", auth.ScopeWorker)
	adminKey, _ := newKey(t, srv, "", auth.ScopeAdmin)
	threadsOnly, _ := newKey(t, srv, "acme", auth.ScopeThreads)

	// Missing and bad credentials: 401 {"detail"}, with WWW-Authenticate.
	r := call(t, srv.URL, "POST", "/threads/search", map[string]any{})
	mustStatus(t, r, 401, "no key")
	if d := r.detail(t); !strings.Contains(d, "x-api-key") || r.header.Get("WWW-Authenticate") == "" {
		t.Fatalf("no key: detail %q, WWW-Authenticate %q", d, r.header.Get("WWW-Authenticate"))
	}
	mustStatus(t, call(t, srv.URL, "POST", "/threads/search", nil, "x-api-key", "weft_not-a-key"), 401, "bad key")
	mustStatus(t, call(t, srv.URL, "POST", "/threads/search", nil, "Authorization", "Bearer weft_not-a-key"), 401, "bad bearer")
	mustStatus(t, call(t, srv.URL, "POST", "/threads/search", nil, "Authorization", "Basic "+tenantKey), 401, "basic scheme")
	mustStatus(t, call(t, srv.URL, "GET", "/info", nil), 401, "/info without key")
	mustStatus(t, call(t, srv.URL, "GET", "/no/such/route", nil), 401, "unknown route without key")
	// Probes and the UI's files stay open.
	for _, p := range []string{"/ok", "/livez", "/", "/ui/config.json"} {
		mustStatus(t, call(t, srv.URL, "GET", p, nil), 200, p)
	}

	// x-api-key and Bearer both work.
	mustStatus(t, call(t, srv.URL, "POST", "/threads", map[string]any{}, "x-api-key", tenantKey), 200, "create with x-api-key")
	mustStatus(t, call(t, srv.URL, "POST", "/threads/search", nil, "Authorization", "Bearer "+tenantKey), 200, "search with bearer")
	mustStatus(t, call(t, srv.URL, "POST", "/assistants/search", nil, "x-api-key", tenantKey), 200, "assistants with tenant key")
	mustStatus(t, call(t, srv.URL, "GET", "/info", nil, "x-api-key", workerKey), 200, "/info with any key")

	// Scopes: 403 naming the missing one.
	r = call(t, srv.URL, "POST", "/dispatch/claim", map[string]any{"worker_id": "w", "wait_ms": 0}, "x-api-key", tenantKey)
	mustStatus(t, r, 403, "tenant key on the worker API")
	if d := r.detail(t); !strings.Contains(d, "worker") {
		t.Fatalf("403 detail %q does not name the worker scope", d)
	}
	mustStatus(t, call(t, srv.URL, "POST", "/threads", map[string]any{}, "x-api-key", workerKey), 403, "worker key on /threads")
	mustStatus(t, call(t, srv.URL, "GET", "/dispatches", nil, "x-api-key", tenantKey), 403, "tenant key on the queue")
	mustStatus(t, call(t, srv.URL, "GET", "/metrics", nil, "x-api-key", tenantKey), 403, "tenant key on /metrics")
	mustStatus(t, call(t, srv.URL, "POST", "/assistants/search", nil, "x-api-key", threadsOnly), 403, "threads-only key on assistants")
	mustStatus(t, call(t, srv.URL, "POST", "/threads/search", nil, "x-api-key", threadsOnly), 200, "threads-only key on threads")
	mustStatus(t, call(t, srv.URL, "GET", "/dispatches", nil, "x-api-key", adminKey), 200, "admin key on the queue")
	mustStatus(t, call(t, srv.URL, "POST", "/dispatch/claim", map[string]any{"worker_id": "w", "wait_ms": 0}, "x-api-key", workerKey),
		200, "worker key on the worker API")

	// A CORS preflight needs no key (browsers send none).
	r = call(t, srv.URL, "OPTIONS", "/threads", nil, "Origin", "http://localhost:3000", "Access-Control-Request-Method", "POST",
		"Access-Control-Request-Headers", "x-api-key")
	mustStatus(t, r, 204, "preflight")

	// Revocation: refused within the cache's lifetime.
	if _, err := auth.APIKeyRevoke(context.Background(), srv.DB, tk.KeyID); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := call(t, srv.URL, "POST", "/threads/search", nil, "x-api-key", tenantKey)
		if r.status == 401 {
			break
		}
		if r.status != 200 || time.Now().After(deadline) {
			t.Fatalf("revoked key: status %d after revocation; body %s", r.status, r.body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Without auth the server refuses an address other than loopback, before
// touching the database; WEFT_AUTH=none overrides (tested on the config in
// exposure_test.go, without binding a public address).
func TestRefusesNonLoopbackWithoutAuth(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:8123"} {
		cfg := server.Config{Addr: addr, DatabaseURL: "postgres://nobody@127.0.0.1:1/none", Migrate: true}
		_, err := server.Start(context.Background(), cfg, quiet)
		if err == nil || !strings.Contains(err.Error(), "WEFT_AUTH") || !strings.Contains(err.Error(), "refusing to listen") {
			t.Fatalf("Start(%s) without auth: %v, want a refusal naming WEFT_AUTH", addr, err)
		}
	}
	// Auth on: the address is accepted (here it then fails on the database
	// it cannot reach, after the check).
	cfg := server.Config{Addr: "0.0.0.0:0", DatabaseURL: "postgres://nobody@127.0.0.1:1/none", Auth: "keys"}
	if _, err := server.Start(context.Background(), cfg, quiet); err == nil || strings.Contains(err.Error(), "refusing") {
		t.Fatalf("Start with keys: %v, want a database error", err)
	}
}

func TestParseConfigAuth(t *testing.T) {
	t.Parallel()
	parse := func(env map[string]string) (server.Config, error) {
		return server.ParseConfig(nil, func(k string) string { return env[k] }, io.Discard)
	}
	c, err := parse(map[string]string{"WEFT_AUTH": "jwt", "WEFT_JWT_JWKS_URL": "https://id.example.com/jwks.json",
		"WEFT_JWT_ISSUER": "https://id.example.com/", "WEFT_JWT_AUDIENCE": "weft", "WEFT_JWT_TENANT_CLAIM": "org"})
	if err != nil || c.Auth != "jwt" || c.JWT.TenantClaim != "org" || c.JWT.Audience != "weft" || c.JWT.Refresh != 10*time.Minute || !c.AuthOn() {
		t.Fatalf("jwt config = %+v, %v", c.JWT, err)
	}
	if c, err := parse(nil); err != nil || c.Auth != "" || c.AuthOn() || c.JWT.TenantClaim != "tenant" {
		t.Fatalf("default = %q %v", c.Auth, err)
	}
	for _, bad := range []map[string]string{
		{"WEFT_AUTH": "magic"},
		{"WEFT_AUTH": "jwt"},
		{"WEFT_AUTH": "jwt", "WEFT_JWT_JWKS_URL": "https://x/jwks", "WEFT_JWT_ISSUER": "x"},
		{"WEFT_AUTH": "jwt", "WEFT_JWT_JWKS_URL": "ftp://x/jwks", "WEFT_JWT_ISSUER": "x", "WEFT_JWT_AUDIENCE": "y"},
		{"WEFT_JWT_JWKS_REFRESH": "0s"},
	} {
		if _, err := parse(bad); err == nil {
			t.Errorf("ParseConfig(%v) accepted", bad)
		}
	}
	_, err = parse(map[string]string{"WEFT_AUTH": "jwt"})
	if err == nil || !strings.Contains(err.Error(), "WEFT_JWT_JWKS_URL") {
		t.Fatalf("jwt without settings: %v, want the missing settings named", err)
	}
}
