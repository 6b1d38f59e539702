package projectauth

import (
	"container/list"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"
)

// CacheConfig is langgraph.json's auth.cache: who the authenticate handler
// said a request comes from is remembered by the values of the request's
// Keys headers, for TTL, among at most MaxSize such identities (the least
// recently used is dropped first), as LangGraph's server caches a JS
// auth.path's authenticate results. A request carrying none of the Keys
// headers is always authenticated anew; so is one whose handler refused it
// (a refusal is never remembered). The on() handlers are asked on every
// request either way.
type CacheConfig struct {
	Keys    []string      // header names (any case)
	TTL     time.Duration // 0: nothing is remembered
	MaxSize int           // <= 0: 1000
}

// SetCache makes c remember identities as cfg says (call it before c
// serves requests).
func (c *Client) SetCache(cfg CacheConfig) {
	if cfg.MaxSize <= 0 {
		cfg.MaxSize = 1000
	}
	keys := make([]string, len(cfg.Keys))
	for i, k := range cfg.Keys {
		keys[i] = strings.ToLower(k)
	}
	c.cache = &identityCache{keys: keys, ttl: cfg.TTL, max: cfg.MaxSize, now: time.Now,
		order: list.New(), byKey: map[string]*list.Element{}}
}

// identityCache is an LRU of identities with a TTL. A nil *identityCache
// remembers nothing.
type identityCache struct {
	keys  []string
	ttl   time.Duration
	max   int
	now   func() time.Time
	mu    sync.Mutex
	order *list.List // of *cacheEntry, most recently used first
	byKey map[string]*list.Element
}

type cacheEntry struct {
	key string
	id  Identity
	at  time.Time
}

// keyOf is the cache key of a request with header h: the values of the
// configured headers it carries, "" when it carries none (not cached).
func (ic *identityCache) keyOf(h http.Header) string {
	if ic == nil {
		return ""
	}
	var pairs [][2]string
	for _, k := range ic.keys {
		if v, ok := h[http.CanonicalHeaderKey(k)]; ok {
			pairs = append(pairs, [2]string{k, strings.Join(v, ", ")})
		}
	}
	if len(pairs) == 0 {
		return ""
	}
	b, _ := json.Marshal(pairs)
	return string(b)
}

// get is the identity remembered under key, if it has not expired.
func (ic *identityCache) get(key string) (Identity, bool) {
	if ic == nil || key == "" {
		return Identity{}, false
	}
	ic.mu.Lock()
	defer ic.mu.Unlock()
	e, ok := ic.byKey[key]
	if !ok {
		return Identity{}, false
	}
	ent := e.Value.(*cacheEntry)
	if ic.now().Sub(ent.at) >= ic.ttl {
		ic.order.Remove(e)
		delete(ic.byKey, key)
		return Identity{}, false
	}
	ic.order.MoveToFront(e)
	return ent.id, true
}

// put remembers id under key, dropping the least recently used identities
// beyond the size.
func (ic *identityCache) put(key string, id Identity) {
	if ic == nil || key == "" {
		return
	}
	ic.mu.Lock()
	defer ic.mu.Unlock()
	if e, ok := ic.byKey[key]; ok {
		ic.order.Remove(e)
		delete(ic.byKey, key)
	}
	for ic.order.Len() >= ic.max {
		last := ic.order.Back()
		ic.order.Remove(last)
		delete(ic.byKey, last.Value.(*cacheEntry).key)
	}
	ic.byKey[key] = ic.order.PushFront(&cacheEntry{key: key, id: id, at: ic.now()})
}

// identify is who u's request comes from: remembered, or asked of the
// authenticate handler (and then remembered).
func (c *Client) identify(ctx context.Context, u user) (Identity, error) {
	if id, ok := c.cache.get(u.cacheKey); ok {
		return id, nil
	}
	out, err := c.call(ctx, "/authenticate", u.Request)
	if err != nil {
		return Identity{}, err
	}
	id := Identity{User: out.User, Scopes: out.Scopes}
	if id.Scopes == nil {
		id.Scopes = []string{}
	}
	c.cache.put(u.cacheKey, id)
	return id, nil
}

// check authenticates u's request and asks the on() handler of resource
// and action with value: with a remembered identity the authenticate
// handler is not asked again (the worker's /authorize), else both are
// asked at once (/check) and the identity remembered, even when the on()
// handler refused.
func (c *Client) check(ctx context.Context, u user, resource, action string, value map[string]any) (*reply, error) {
	if id, ok := c.cache.get(u.cacheKey); ok {
		out, err := c.call(ctx, "/authorize", map[string]any{"user": id.User, "scopes": id.Scopes,
			"resource": resource, "action": action, "value": value})
		if err != nil {
			return nil, err
		}
		out.User, out.Scopes = id.User, id.Scopes
		return out, nil
	}
	out, err := c.callReply(ctx, "/check", map[string]any{"request": u.Request, "resource": resource,
		"action": action, "value": value})
	if out != nil && c.cache != nil && (err == nil || out.User != nil) {
		// A refusal of the on() handler carries the identity (worker-js's
		// check); one of the authenticate handler does not.
		id := Identity{User: out.User, Scopes: out.Scopes}
		if id.Scopes == nil {
			id.Scopes = []string{}
		}
		c.cache.put(u.cacheKey, id)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}
