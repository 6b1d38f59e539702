package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

// jwksServer is a local issuer's key set endpoint whose keys a test swaps.
type jwksServer struct {
	*httptest.Server
	body    atomic.Value // []byte
	fetches atomic.Int64
}

func newJWKS(t *testing.T) *jwksServer {
	s := &jwksServer{}
	s.body.Store([]byte(`{"keys":[]}`))
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(s.body.Load().([]byte))
	}))
	t.Cleanup(s.Close)
	return s
}

// serve publishes keys (by kid): *rsa.PublicKey or *ecdsa.PublicKey.
func (s *jwksServer) serve(t *testing.T, keys map[string]any) {
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	var set []map[string]string
	for kid, k := range keys {
		switch k := k.(type) {
		case *rsa.PublicKey:
			set = append(set, map[string]string{"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
				"n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())})
		case *ecdsa.PublicKey:
			raw, err := k.Bytes() // 0x04 || X || Y
			if err != nil {
				t.Fatal(err)
			}
			n := (len(raw) - 1) / 2
			set = append(set, map[string]string{"kty": "EC", "kid": kid, "crv": "P-256",
				"x": b64(raw[1 : 1+n]), "y": b64(raw[1+n:])})
		default:
			t.Fatalf("key %T", k)
		}
	}
	b, _ := json.Marshal(map[string]any{"keys": set})
	s.body.Store(b)
}

const (
	testIssuer   = "https://issuer.test/"
	testAudience = "weft-api"
)

// sign makes a token for claims (iss, aud, exp filled unless given) with
// key under kid.
func sign(t *testing.T, method jwt.SigningMethod, key any, kid string, claims jwt.MapClaims) string {
	t.Helper()
	full := jwt.MapClaims{"iss": testIssuer, "aud": testAudience, "sub": "user-1",
		"exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix()}
	for k, v := range claims {
		if v == nil {
			delete(full, k)
		} else {
			full[k] = v
		}
	}
	tok := jwt.NewWithClaims(method, full)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func rsaKey(t *testing.T) *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestJWTAuthentication(t *testing.T) {
	t.Parallel()
	k1, k2, other := rsaKey(t), rsaKey(t), rsaKey(t)
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	jwks := newJWKS(t)
	jwks.serve(t, map[string]any{"k1": &k1.PublicKey, "ec1": &ec.PublicKey})

	// The authorize hook records who each request was.
	var mu sync.Mutex
	var seen []auth.Principal
	srv := servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) {
		c.Auth = "jwt"
		c.JWT = auth.JWTConfig{JWKSURL: jwks.URL, Issuer: testIssuer, Audience: testAudience, TenantClaim: "org",
			MinRefresh: -1, Leeway: time.Second}
		c.Authorize = func(ctx context.Context, req auth.Request) (auth.Decision, error) {
			mu.Lock()
			seen = append(seen, req.Principal)
			mu.Unlock()
			return auth.Allow(), nil
		}
	})
	last := func() auth.Principal {
		mu.Lock()
		defer mu.Unlock()
		return seen[len(seen)-1]
	}
	bearer := func(tok string) []string { return []string{"Authorization", "Bearer " + tok} }
	search := func(tok string) authResp {
		return call(t, srv.URL, "POST", "/threads/search", map[string]any{}, bearer(tok)...)
	}
	tenantScopes := jwt.MapClaims{"org": "acme", "scope": "openid tenant"}

	// Valid: RS256 and ES256; the tenant from the configured claim, scopes
	// from "scope"; x-api-key carries a token too.
	mustStatus(t, search(sign(t, jwt.SigningMethodRS256, k1, "k1", tenantScopes)), 200, "valid RS256")
	if p := last(); p.Tenant != "acme" || !slices.Equal(p.Scopes, []string{"openid", "tenant"}) || p.Identity != "jwt:user-1" {
		t.Fatalf("principal = %+v", p)
	}
	mustStatus(t, call(t, srv.URL, "POST", "/threads/search", nil, "x-api-key",
		sign(t, jwt.SigningMethodES256, ec, "ec1", jwt.MapClaims{"org": "beta", "scope": []string{"threads"}})), 200, "valid ES256")
	if p := last(); p.Tenant != "beta" || !slices.Equal(p.Scopes, []string{"threads"}) {
		t.Fatalf("principal = %+v", p)
	}

	// Refused: 401 with what is wrong.
	for _, c := range []struct {
		name, tok, want string
	}{
		{"expired", sign(t, jwt.SigningMethodRS256, k1, "k1", jwt.MapClaims{"org": "acme", "scope": "tenant",
			"exp": time.Now().Add(-time.Hour).Unix()}), "expired"},
		{"no exp", sign(t, jwt.SigningMethodRS256, k1, "k1", jwt.MapClaims{"org": "acme", "scope": "tenant", "exp": nil}), "claim"},
		{"wrong issuer", sign(t, jwt.SigningMethodRS256, k1, "k1", jwt.MapClaims{"org": "acme", "scope": "tenant",
			"iss": "https://evil.test/"}), "issuer"},
		{"wrong audience", sign(t, jwt.SigningMethodRS256, k1, "k1", jwt.MapClaims{"org": "acme", "scope": "tenant",
			"aud": "another-api"}), "audience"},
		{"wrong key under a known kid", sign(t, jwt.SigningMethodRS256, other, "k1", tenantScopes), "signature"},
		{"unknown kid", sign(t, jwt.SigningMethodRS256, other, "nobody", tenantScopes), "unknown key"},
		{"HS256 with the public modulus as secret", sign(t, jwt.SigningMethodHS256, k1.PublicKey.N.Bytes(), "k1", tenantScopes), "Invalid token"},
		{"tenant data without the tenant claim", sign(t, jwt.SigningMethodRS256, k1, "k1", jwt.MapClaims{"scope": "tenant"}), "org"},
		{"garbage", "not.a.token", "malformed"},
	} {
		r := search(c.tok)
		mustStatus(t, r, 401, c.name)
		if d := r.detail(t); !strings.Contains(d, c.want) {
			t.Errorf("%s: detail %q, want it to mention %q", c.name, d, c.want)
		}
	}

	// Scopes from the scope claim: a worker token reaches the worker API
	// only, a tenant token not the worker API.
	workerTok := sign(t, jwt.SigningMethodRS256, k1, "k1", jwt.MapClaims{"scope": "worker"})
	mustStatus(t, search(workerTok), 403, "worker token on threads")
	mustStatus(t, call(t, srv.URL, "POST", "/dispatch/claim", map[string]any{"worker_id": "w", "wait_ms": 0}, bearer(workerTok)...),
		200, "worker token on the worker API")
	mustStatus(t, call(t, srv.URL, "POST", "/dispatch/claim", map[string]any{"worker_id": "w", "wait_ms": 0},
		bearer(sign(t, jwt.SigningMethodRS256, k1, "k1", tenantScopes))...), 403, "tenant token on the worker API")

	// Key rotation: the issuer now signs with k2 only. A token with the new
	// kid fetches the set again and passes; k1's tokens stop passing.
	jwks.serve(t, map[string]any{"k2": &k2.PublicKey})
	before := jwks.fetches.Load()
	mustStatus(t, search(sign(t, jwt.SigningMethodRS256, k2, "k2", tenantScopes)), 200, "token of the rotated-in key")
	if jwks.fetches.Load() == before {
		t.Fatal("an unknown kid did not fetch the key set again")
	}
	mustStatus(t, search(sign(t, jwt.SigningMethodRS256, k1, "k1", tenantScopes)), 401, "token of the rotated-out key")
	// Known kids are served from the cache.
	before = jwks.fetches.Load()
	for range 3 {
		mustStatus(t, search(sign(t, jwt.SigningMethodRS256, k2, "k2", tenantScopes)), 200, "cached key")
	}
	if n := jwks.fetches.Load() - before; n != 0 {
		t.Fatalf("%d fetches for tokens of a cached key, want 0", n)
	}
}

// The key set is fetched again once Refresh has passed, and an unknown kid
// fetches it at most once per MinRefresh.
func TestJWTKeySetCaching(t *testing.T) {
	t.Parallel()
	k1 := rsaKey(t)
	jwks := newJWKS(t)
	jwks.serve(t, map[string]any{"k1": &k1.PublicKey})
	now := time.Now()
	var clock atomic.Int64
	clock.Store(now.UnixNano())
	j, err := auth.NewJWT(context.Background(), auth.JWTConfig{JWKSURL: jwks.URL, Issuer: testIssuer, Audience: testAudience,
		Refresh: time.Minute, MinRefresh: 10 * time.Second, Now: func() time.Time { return time.Unix(0, clock.Load()) }}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	authn := func(tok string) error {
		r, _ := http.NewRequest("GET", "/", nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		_, err := j.Authenticate(r)
		return err
	}
	good := sign(t, jwt.SigningMethodRS256, k1, "k1", jwt.MapClaims{"scope": "worker"})
	if err := authn(good); err != nil || jwks.fetches.Load() != 1 {
		t.Fatalf("first token: %v, %d fetches", err, jwks.fetches.Load())
	}
	for i := range 5 { // made-up kids: one fetch at most within MinRefresh
		if err := authn(sign(t, jwt.SigningMethodRS256, k1, "made-up-"+string(rune('a'+i)), nil)); err == nil {
			t.Fatal("a token with an unknown kid passed")
		}
	}
	if n := jwks.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches after unknown kids within MinRefresh, want 1", n)
	}
	clock.Add(int64(2 * time.Minute)) // past Refresh: fetched again
	if err := authn(sign(t, jwt.SigningMethodRS256, k1, "k1", jwt.MapClaims{"scope": "worker",
		"exp": time.Unix(0, clock.Load()).Add(time.Hour).Unix(), "iat": time.Unix(0, clock.Load()).Unix()})); err != nil {
		t.Fatal(err)
	}
	if n := jwks.fetches.Load(); n != 2 {
		t.Fatalf("%d fetches after Refresh passed, want 2", n)
	}
}
