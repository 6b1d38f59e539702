package projectauth

import (
	"net/http"
	"testing"
	"time"
)

// auth.cache's memory: keyed by the listed headers' values (none: not
// kept), for the ttl, the least recently used dropped beyond the size.
func TestIdentityCache(t *testing.T) {
	c := &Client{}
	c.SetCache(CacheConfig{Keys: []string{"Authorization", "X-Tenant"}, TTL: time.Minute, MaxSize: 2})
	now := time.Unix(0, 0)
	c.cache.now = func() time.Time { return now }
	key := func(h ...string) string {
		hd := http.Header{}
		for i := 0; i+1 < len(h); i += 2 {
			hd.Add(h[i], h[i+1])
		}
		return c.cache.keyOf(hd)
	}
	if k := key("Cookie", "x"); k != "" {
		t.Fatalf("a request without the cache keys has key %q", k)
	}
	a, b, d := key("Authorization", "a"), key("Authorization", "b"), key("Authorization", "a", "X-Tenant", "t")
	if a == b || a == d {
		t.Fatal("different header values share a key")
	}
	id := func(name string) Identity { return Identity{User: map[string]any{"identity": name}} }
	c.cache.put(a, id("a"))
	c.cache.put(b, id("b"))
	if got, ok := c.cache.get(a); !ok || got.User["identity"] != "a" { // a is now the most recent
		t.Fatalf("get a: %v %v", got, ok)
	}
	c.cache.put(d, id("d")) // drops b
	if _, ok := c.cache.get(b); ok {
		t.Fatal("b kept beyond max_size though least recently used")
	}
	now = now.Add(59 * time.Second)
	if _, ok := c.cache.get(a); !ok {
		t.Fatal("a forgotten within its ttl")
	}
	now = now.Add(time.Second)
	if _, ok := c.cache.get(a); ok {
		t.Fatal("a kept past its ttl (a read does not extend it)")
	}
	var none *identityCache
	none.put("k", id("x"))
	if _, ok := none.get("k"); ok {
		t.Fatal("no cache remembered something")
	}
}
