package store_test

import (
	"testing"
	"time"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

// langgraph.json's store.ttl (weft dev): a put without a ttl gets
// default_ttl, and refresh_on_read false makes reads leave ttls alone
// unless they ask.
func TestTTLDefaults(t *testing.T) {
	t.Parallel()
	c := &clock{now: time.Date(2030, 1, 2, 3, 4, 5, 123456000, time.UTC)}
	defaultTTL := 10.0
	s := servertest.StartWith(t, pgtest.DSN(t), func(cfg *server.Config) {
		cfg.Workers = 0
		cfg.StoreClock = c.Now
		cfg.StoreSweepInterval = time.Hour
		cfg.StoreDefaultTTL = &defaultTTL
		cfg.StoreNoRefreshOnRead = true
	})
	f := &fixture{Server: s, t: t, clock: c}
	ns := []string{"d"}
	f.put(ns, "default", map[string]any{"k": "default"})
	f.put(ns, "own", map[string]any{"k": "own"}, "ttl", 3)
	put := c.Now()
	wantTime(t, "default ttl", f.expiresAt(ns, "default"), put.Add(10*time.Minute))
	wantTime(t, "a put's own ttl", f.expiresAt(ns, "own"), put.Add(3*time.Minute))

	c.Advance(2 * time.Minute)
	now := c.Now()
	f.get(ns, "default") // no refresh unless asked
	f.search(map[string]any{"namespace_prefix": ns, "filter": map[string]any{"k": "default"}})
	wantTime(t, "read without refresh_ttl", f.expiresAt(ns, "default"), put.Add(10*time.Minute))
	f.get(ns, "own", "refresh_ttl", "true")
	wantTime(t, "GET refresh_ttl=true", f.expiresAt(ns, "own"), now.Add(3*time.Minute))
	f.search(map[string]any{"namespace_prefix": ns, "filter": map[string]any{"k": "default"}, "refresh_ttl": true})
	wantTime(t, "search refresh_ttl=true", f.expiresAt(ns, "default"), now.Add(10*time.Minute))

	c.Advance(11 * time.Minute)
	if f.get(ns, "default") != nil || f.get(ns, "own") != nil {
		t.Fatal("items outlived their ttls")
	}
}
