package cli_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/cli"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

// send makes a request with an API key; it returns the status and body.
func send(t *testing.T, method, url, key string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// keysCmd runs `weft keys args...` on the database at dsn.
func keysCmd(dsn string, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = cli.Run(nil, nil, append([]string{"keys"}, args...), func(k string) string {
		if k == "DATABASE_URL" {
			return dsn
		}
		return ""
	}, &out, &errOut)
	return code, out.String(), errOut.String()
}

// weft keys create prints the key once and stores only its hash; list
// shows it; revoke makes servers refuse it.
func TestKeysCommand(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	code, out, errOut := keysCmd(dsn, "create", "--tenant", "acme", "--scope", "tenant,admin", "--name", "ci")
	if code != 0 {
		t.Fatalf("keys create: exit %d: %s", code, errOut)
	}
	key := strings.TrimSpace(out)
	if strings.Count(out, "\n") != 1 || !strings.HasPrefix(key, auth.KeyPrefix) || len(key) < 40 {
		t.Fatalf("keys create printed %q, want the key alone on one line", out)
	}
	if !strings.Contains(errOut, "only its hash is stored") {
		t.Fatalf("keys create said %q", errOut)
	}

	srv := servertest.StartWith(t, dsn, func(c *server.Config) { c.Auth = "keys"; c.KeyCacheTTL = 50 * time.Millisecond })
	var rows []string
	r, err := srv.DB.Query(context.Background(), `SELECT row_to_json(k)::text FROM api_keys k`)
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		var s string
		if err := r.Scan(&s); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, s)
	}
	if len(rows) != 1 {
		t.Fatalf("api_keys has %d rows, want 1", len(rows))
	}
	secret := strings.TrimPrefix(key, auth.KeyPrefix)
	if strings.Contains(rows[0], secret) || strings.Contains(rows[0], secret[:16]) {
		t.Fatalf("the key (or part of it) is stored: %s", rows[0])
	}
	var hash []byte
	var tenant, name string
	var scopes []string
	if err := srv.DB.QueryRow(context.Background(), `SELECT key_hash, tenant, scopes, name FROM api_keys`).Scan(&hash, &tenant, &scopes, &name); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(key))
	if !bytes.Equal(hash, sum[:]) || tenant != "acme" || strings.Join(scopes, ",") != "tenant,admin" || name != "ci" {
		t.Fatalf("stored key: hash %x tenant %q scopes %v name %q", hash, tenant, scopes, name)
	}

	if st, b := send(t, "POST", srv.URL+"/threads/search", key, nil); st != 200 {
		t.Fatalf("the created key: %d %s", st, b)
	}
	if st, b := send(t, "GET", srv.URL+"/dispatches", key, nil); st != 200 {
		t.Fatalf("the created key's admin scope: %d %s", st, b)
	}

	code, out, errOut = keysCmd(dsn, "list")
	var id string
	if err := srv.DB.QueryRow(context.Background(), `SELECT key_id::text FROM api_keys`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "acme") || strings.Contains(out, secret) {
		t.Fatalf("keys list: exit %d: %s %s", code, out, errOut)
	}

	if code, out, errOut = keysCmd(dsn, "revoke", id); code != 0 || !strings.Contains(out, "revoked "+id) {
		t.Fatalf("keys revoke: exit %d: %s %s", code, out, errOut)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, b := send(t, "POST", srv.URL+"/threads/search", key, nil)
		if st == 401 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("revoked key still accepted: %d %s", st, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code, _, _ = keysCmd(dsn, "list"); code != 0 {
		t.Fatal("keys list after revoke failed")
	}

	// Bad input: exit 2 with a message, nothing created.
	for _, args := range [][]string{{"create"}, {"create", "--tenant", "a", "--scope", "root"}, {"create", "--tenant", "a", "extra"},
		{"revoke"}, {"revoke", "not-an-id"}, {"rotate"}} {
		if code, _, errOut := keysCmd(dsn, args...); code != 2 || errOut == "" {
			t.Errorf("keys %v: exit %d (%q), want 2 with a message", args, code, errOut)
		}
	}
	if code, _, errOut := keysCmd(dsn, "revoke", "00000000-0000-0000-0000-000000000001"); code != 1 || !strings.Contains(errOut, "no API key") {
		t.Errorf("revoke of an unknown id: exit %d %q", code, errOut)
	}
	// A worker key needs no tenant.
	if code, out, errOut := keysCmd(dsn, "create", "--scope", "worker"); code != 0 || !strings.HasPrefix(out, auth.KeyPrefix) {
		t.Errorf("worker key: exit %d %q %q", code, out, errOut)
	}
	var n int
	if err := srv.DB.QueryRow(context.Background(), `SELECT count(*) FROM api_keys`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d keys stored, want 2 (%v)", n, err)
	}
}
