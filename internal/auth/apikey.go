package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/postgres"
)

// KeyPrefix starts every API key, so a leaked one is recognisable (secret
// scanners, logs).
const KeyPrefix = "weft_"

// APIKey is a stored API key: everything but the key itself, of which only
// the SHA-256 hash is kept.
type APIKey struct {
	KeyID     uuid.UUID  `db:"key_id" json:"key_id"`
	Tenant    string     `db:"tenant" json:"tenant"`
	Scopes    []string   `db:"scopes" json:"scopes"`
	Name      string     `db:"name" json:"name"`
	CreatedAt time.Time  `db:"created_at" json:"created_at"`
	RevokedAt *time.Time `db:"revoked_at" json:"revoked_at"`
}

const apiKeyColumns = "key_id, tenant, scopes, name, created_at, revoked_at"

// HashKey is the SHA-256 of key, the only form in which keys are stored.
func HashKey(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

// APIKeyCreate makes a new key for tenant with scopes (checked against
// KnownScopes; tenant data scopes need a tenant) and stores its hash. The
// returned key is the only copy there will ever be.
func APIKeyCreate(ctx context.Context, db postgres.DBTX, tenant string, scopes []string, name string) (string, APIKey, error) {
	tenant = strings.TrimSpace(tenant)
	if HasTenantData(scopes) && tenant == "" {
		return "", APIKey{}, errors.New("a key with tenant data scopes needs a tenant (--tenant NAME)")
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return "", APIKey{}, err
	}
	key := KeyPrefix + base64.RawURLEncoding.EncodeToString(secret)
	id, err := uuid.NewV7()
	if err != nil {
		return "", APIKey{}, err
	}
	rows, err := db.Query(ctx, `INSERT INTO api_keys (key_id, key_hash, tenant, scopes, name)
		VALUES ($1, $2, $3, $4, $5) RETURNING `+apiKeyColumns, id, HashKey(key), tenant, scopes, name)
	if err != nil {
		return "", APIKey{}, fmt.Errorf("create api key: %w", err)
	}
	k, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[APIKey])
	if err != nil {
		return "", APIKey{}, fmt.Errorf("create api key: %w", err)
	}
	return key, k, nil
}

// APIKeyList returns every key, revoked ones included, oldest first.
func APIKeyList(ctx context.Context, db postgres.DBTX) ([]APIKey, error) {
	rows, err := db.Query(ctx, `SELECT `+apiKeyColumns+` FROM api_keys ORDER BY created_at, key_id`)
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByName[APIKey])
}

// ErrKeyNotFound is APIKeyRevoke's error for an id no key has.
var ErrKeyNotFound = errors.New("no API key has this id")

// APIKeyRevoke marks a key revoked (once: revoking it again keeps the first
// time). Servers stop accepting it within their key cache's lifetime.
func APIKeyRevoke(ctx context.Context, db postgres.DBTX, id uuid.UUID) (APIKey, error) {
	rows, err := db.Query(ctx, `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now())
		WHERE key_id = $1 RETURNING `+apiKeyColumns, id)
	if err != nil {
		return APIKey{}, fmt.Errorf("revoke api key: %w", err)
	}
	k, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[APIKey])
	if errors.Is(err, pgx.ErrNoRows) {
		return APIKey{}, ErrKeyNotFound
	}
	return k, err
}

// apiKeyByHash returns the key that is not revoked with this hash.
func apiKeyByHash(ctx context.Context, db postgres.DBTX, hash []byte) (APIKey, error) {
	rows, err := db.Query(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`, hash)
	if err != nil {
		return APIKey{}, err
	}
	return pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[APIKey])
}

// DefaultKeyCacheTTL is how long a server trusts a key it looked up: a
// revoked key stops working within it.
const DefaultKeyCacheTTL = 5 * time.Second

// Keys authenticates requests by API key (WEFT_AUTH=keys): the key's hash
// is looked up in api_keys, and valid keys are remembered for TTL so most
// requests cost no query. A revoked key is refused within TTL. Unknown keys
// are not remembered (each costs one indexed lookup).
type Keys struct {
	db    postgres.DBTX
	ttl   time.Duration
	now   func() time.Time
	mu    sync.Mutex
	cache map[[32]byte]cachedKey
}

type cachedKey struct {
	p       Principal
	expires time.Time
}

// NewKeys returns the API key authenticator on db; ttl ≤ 0 means
// DefaultKeyCacheTTL.
func NewKeys(db postgres.DBTX, ttl time.Duration) *Keys {
	if ttl <= 0 {
		ttl = DefaultKeyCacheTTL
	}
	return &Keys{db: db, ttl: ttl, now: time.Now, cache: map[[32]byte]cachedKey{}}
}

// Authenticate implements Authenticator.
func (k *Keys) Authenticate(r *http.Request) (Principal, error) {
	cred := Credential(r)
	if cred == "" {
		return Principal{}, errMissing
	}
	return k.Lookup(r.Context(), cred)
}

// Lookup returns the principal of key: 401 when it is unknown or revoked.
func (k *Keys) Lookup(ctx context.Context, key string) (Principal, error) {
	hash := sha256.Sum256([]byte(key))
	now := k.now()
	k.mu.Lock()
	c, ok := k.cache[hash]
	if ok && now.After(c.expires) {
		delete(k.cache, hash)
		ok = false
	}
	if len(k.cache) > 10000 { // bounded: drop the expired ones
		for h, c := range k.cache {
			if now.After(c.expires) {
				delete(k.cache, h)
			}
		}
	}
	k.mu.Unlock()
	if ok {
		return c.p, nil
	}
	ak, err := apiKeyByHash(ctx, k.db, hash[:])
	if errors.Is(err, pgx.ErrNoRows) {
		return Principal{}, Unauthorized("Invalid API key")
	}
	if err != nil {
		return Principal{}, fmt.Errorf("look up api key: %w", err)
	}
	p := Principal{Identity: "key:" + ak.KeyID.String(), Tenant: ak.Tenant, Scopes: ak.Scopes}
	k.mu.Lock()
	k.cache[hash] = cachedKey{p: p, expires: now.Add(k.ttl)}
	k.mu.Unlock()
	return p, nil
}

// Chain is an Authenticator that tries a fixed map of credentials first
// (weft dev's own worker key, valid in every auth mode) and then next.
func Chain(fixed map[string]Principal, next Authenticator) Authenticator {
	return &chain{fixed: fixed, next: next}
}

type chain struct {
	fixed map[string]Principal
	next  Authenticator
}

func (c *chain) Authenticate(r *http.Request) (Principal, error) {
	if cred := Credential(r); cred != "" {
		if p, ok := c.fixed[cred]; ok {
			return p, nil
		}
	}
	return c.next.Authenticate(r)
}
