package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// JWTConfig configures bearer-token authentication (WEFT_AUTH=jwt).
type JWTConfig struct {
	// JWKSURL serves the issuer's public keys (a JSON Web Key Set).
	JWKSURL string
	// Issuer must equal the token's iss claim.
	Issuer string
	// Audience must be one of the token's aud values.
	Audience string
	// TenantClaim names the claim holding the tenant (default "tenant").
	TenantClaim string
	// Refresh is how long a fetched key set is used before it is fetched
	// again (default 10m). A token signed by a key the set lacks (a
	// rotation) fetches it at once, at most once per MinRefresh.
	Refresh time.Duration
	// MinRefresh spaces the fetches (default 10s; negative: none, for
	// tests), so tokens with made-up key ids or a failing key server do not
	// cause a fetch per request.
	MinRefresh time.Duration
	// Leeway is the clock skew tolerated on exp, nbf and iat (default 30s).
	Leeway time.Duration
	// Client fetches the key set (default: a client with a 10s timeout).
	Client *http.Client
	// Now is the clock tokens are checked against (default time.Now).
	Now func() time.Time
}

// jwtMethods are the signature algorithms accepted: public-key ones only
// (never "none" or HMAC, whose key would be the public key).
var jwtMethods = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// JWT authenticates bearer tokens against a JWKS.
type JWT struct {
	cfg    JWTConfig
	log    *slog.Logger
	parser *jwt.Parser

	fetchMu sync.Mutex // one fetch at a time
	mu      sync.RWMutex
	keys    map[string]crypto.PublicKey // by kid ("" for keys without one)
	fetched time.Time                   // last successful fetch
	tried   time.Time                   // last attempt
}

// NewJWT returns the JWT authenticator; it fetches the key set once now
// (a failure is logged, and retried on the first token).
func NewJWT(ctx context.Context, cfg JWTConfig, log *slog.Logger) (*JWT, error) {
	if cfg.JWKSURL == "" || cfg.Issuer == "" || cfg.Audience == "" {
		return nil, errors.New("jwt auth needs a JWKS URL, an issuer and an audience")
	}
	if cfg.TenantClaim == "" {
		cfg.TenantClaim = "tenant"
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = 10 * time.Minute
	}
	if cfg.MinRefresh < 0 {
		cfg.MinRefresh = 0
	} else if cfg.MinRefresh == 0 {
		cfg.MinRefresh = 10 * time.Second
	}
	if cfg.Leeway == 0 {
		cfg.Leeway = 30 * time.Second
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	j := &JWT{cfg: cfg, log: log, parser: jwt.NewParser(jwt.WithValidMethods(jwtMethods), jwt.WithIssuer(cfg.Issuer),
		jwt.WithAudience(cfg.Audience), jwt.WithExpirationRequired(), jwt.WithLeeway(cfg.Leeway), jwt.WithTimeFunc(cfg.Now))}
	if err := j.refresh(ctx); err != nil {
		log.Warn("jwt auth: cannot fetch the key set yet; tokens are refused until it can", "jwks_url", cfg.JWKSURL, "error", err)
	}
	return j, nil
}

// Authenticate implements Authenticator.
func (j *JWT) Authenticate(r *http.Request) (Principal, error) {
	cred := Credential(r)
	if cred == "" {
		return Principal{}, errMissing
	}
	ctx := r.Context()
	j.mu.RLock()
	stale := j.cfg.Now().Sub(j.fetched) > j.cfg.Refresh
	j.mu.RUnlock()
	if stale {
		if err := j.refresh(ctx); err != nil {
			j.log.Warn("jwt auth: refreshing the key set failed; using the keys fetched before", "error", err)
		}
	}
	claims := jwt.MapClaims{}
	_, err := j.parser.ParseWithClaims(cred, claims, func(t *jwt.Token) (any, error) { return j.key(ctx, t) })
	if err != nil {
		var ae *Error
		if errors.As(err, &ae) {
			return Principal{}, ae
		}
		return Principal{}, Unauthorized("Invalid token: " + tokenProblem(err))
	}
	p := Principal{Scopes: scopesOf(claims["scope"])}
	if sub, _ := claims["sub"].(string); sub != "" {
		p.Identity = "jwt:" + sub
	}
	switch t := claims[j.cfg.TenantClaim].(type) {
	case string:
		p.Tenant = t
	case nil:
	default:
		return Principal{}, Unauthorized(fmt.Sprintf("Invalid token: claim %q must be a string", j.cfg.TenantClaim))
	}
	if p.Tenant == "" && HasTenantData(p.Scopes) {
		return Principal{}, Unauthorized(fmt.Sprintf("Invalid token: it grants tenant data but has no %q claim", j.cfg.TenantClaim))
	}
	return p, nil
}

// tokenProblem names what is wrong with a token, without echoing it.
func tokenProblem(err error) string {
	for _, c := range []struct {
		err error
		msg string
	}{
		{jwt.ErrTokenMalformed, "malformed"},
		{jwt.ErrTokenExpired, "expired"},
		{jwt.ErrTokenNotValidYet, "not valid yet"},
		{jwt.ErrTokenInvalidIssuer, "wrong issuer"},
		{jwt.ErrTokenInvalidAudience, "wrong audience"},
		{jwt.ErrTokenRequiredClaimMissing, "a required claim is missing"},
		{jwt.ErrTokenSignatureInvalid, "bad signature"},
		{jwt.ErrTokenUnverifiable, "cannot be verified"},
	} {
		if errors.Is(err, c.err) {
			return c.msg
		}
	}
	return "rejected"
}

// scopesOf reads a scope claim: a space separated string (RFC 8693) or an
// array of strings.
func scopesOf(v any) []string {
	switch s := v.(type) {
	case string:
		return strings.Fields(s)
	case []any:
		var out []string
		for _, e := range s {
			if str, ok := e.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

// key finds the verification key of t: by its kid, fetching the set again
// (at most once per MinRefresh) when the kid is unknown; a token without
// kid is tried against every key.
func (j *JWT) key(ctx context.Context, t *jwt.Token) (any, error) {
	kid, _ := t.Header["kid"].(string)
	if k, ok := j.lookup(kid); ok {
		return k, nil
	}
	if err := j.refresh(ctx); err != nil {
		j.log.Warn("jwt auth: fetching the key set failed", "error", err)
	}
	j.mu.RLock()
	empty := len(j.keys) == 0
	j.mu.RUnlock()
	if empty {
		return nil, &Error{Status: http.StatusServiceUnavailable, Detail: "The token's key set cannot be fetched right now; retry shortly"}
	}
	if k, ok := j.lookup(kid); ok {
		return k, nil
	}
	return nil, Unauthorized("Invalid token: signed by an unknown key")
}

func (j *JWT) lookup(kid string) (any, bool) {
	j.mu.RLock()
	defer j.mu.RUnlock()
	if kid != "" {
		k, ok := j.keys[kid]
		return k, ok
	}
	set := jwt.VerificationKeySet{}
	for _, k := range j.keys {
		set.Keys = append(set.Keys, k)
	}
	return set, len(set.Keys) > 0
}

// refresh fetches the key set, unless the last attempt is less than
// MinRefresh ago (a failing key server is not asked on every request).
func (j *JWT) refresh(ctx context.Context) error {
	j.fetchMu.Lock()
	defer j.fetchMu.Unlock()
	now := j.cfg.Now()
	j.mu.RLock()
	recent := !j.tried.IsZero() && now.Sub(j.tried) < j.cfg.MinRefresh
	j.mu.RUnlock()
	if recent {
		return nil
	}
	j.mu.Lock()
	j.tried = now
	j.mu.Unlock()
	keys, err := j.fetch(ctx)
	if err != nil {
		return err
	}
	j.mu.Lock()
	j.keys, j.fetched = keys, now
	j.mu.Unlock()
	return nil
}

func (j *JWT) fetch(ctx context.Context) (map[string]crypto.PublicKey, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.cfg.JWKSURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := j.cfg.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch JWKS: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("fetch JWKS: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch JWKS: %s answered %d", j.cfg.JWKSURL, resp.StatusCode)
	}
	return ParseJWKS(body)
}

// JWK is one JSON Web Key (RFC 7517) of the kinds Weft verifies with: RSA,
// EC (P-256, P-384, P-521) and OKP (Ed25519).
type JWK struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// ParseJWKS reads a key set's signature keys by kid; keys of other kinds
// or uses are skipped.
func ParseJWKS(body []byte) (map[string]crypto.PublicKey, error) {
	var set struct {
		Keys []JWK `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("JWKS: %w", err)
	}
	out := map[string]crypto.PublicKey{}
	for _, k := range set.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		pub, err := k.PublicKey()
		if err != nil {
			return nil, fmt.Errorf("JWKS key %q: %w", k.Kid, err)
		}
		if pub != nil {
			out[k.Kid] = pub
		}
	}
	return out, nil
}

// PublicKey decodes the key; nil (and no error) for a kind Weft does not
// verify with.
func (k JWK) PublicKey() (crypto.PublicKey, error) {
	b64 := func(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "=")) }
	switch k.Kty {
	case "RSA":
		n, err := b64(k.N)
		if err != nil {
			return nil, err
		}
		e, err := b64(k.E)
		if err != nil {
			return nil, err
		}
		if len(n) < 256 || len(e) == 0 || len(e) > 4 {
			return nil, errors.New("RSA key too small or malformed (2048 bits at least)")
		}
		return &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}, nil
	case "EC":
		var curve elliptic.Curve
		switch k.Crv {
		case "P-256":
			curve = elliptic.P256()
		case "P-384":
			curve = elliptic.P384()
		case "P-521":
			curve = elliptic.P521()
		default:
			return nil, nil
		}
		x, err := b64(k.X)
		if err != nil {
			return nil, err
		}
		y, err := b64(k.Y)
		if err != nil {
			return nil, err
		}
		size := (curve.Params().BitSize + 7) / 8
		if len(x) != size || len(y) != size {
			return nil, errors.New("EC coordinates of the wrong length")
		}
		// The uncompressed point form (SEC 1), checked to be on the curve.
		point := append(append([]byte{4}, x...), y...)
		return ecdsa.ParseUncompressedPublicKey(curve, point)
	case "OKP":
		if k.Crv != "Ed25519" {
			return nil, nil
		}
		x, err := b64(k.X)
		if err != nil {
			return nil, err
		}
		if len(x) != ed25519.PublicKeySize {
			return nil, errors.New("Ed25519 key of the wrong length")
		}
		return ed25519.PublicKey(x), nil
	}
	return nil, nil
}
