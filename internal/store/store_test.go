package store_test

import (
	"context"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

// clock is the store's time in a test: it only moves when the test says.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type fixture struct {
	*servertest.Server
	t     *testing.T
	clock *clock
}

// setup starts a server without run workers whose store runs on a test
// clock; sweep is the sweeper interval (0: an hour, i.e. never in a test).
func setup(t *testing.T, sweep time.Duration) *fixture {
	t.Helper()
	if sweep == 0 {
		sweep = time.Hour
	}
	c := &clock{now: time.Date(2030, 1, 2, 3, 4, 5, 123456000, time.UTC)}
	s := servertest.StartWith(t, pgtest.DSN(t), func(cfg *server.Config) {
		cfg.Workers = 0
		cfg.StoreClock = c.Now
		cfg.StoreSweepInterval = sweep
	})
	return &fixture{Server: s, t: t, clock: c}
}

type item struct {
	Namespace []string       `json:"namespace"`
	Key       string         `json:"key"`
	Value     map[string]any `json:"value"`
	CreatedAt string         `json:"created_at"`
	UpdatedAt string         `json:"updated_at"`
}

func (f *fixture) put(ns []string, key string, value any, extra ...any) {
	f.t.Helper()
	body := map[string]any{"namespace": ns, "key": key, "value": value}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i].(string)] = extra[i+1]
	}
	f.Must(http.StatusNoContent, "PUT", "/store/items", body)
}

// get reads an item with the JS SDK's encoding of the namespace; nil when
// the answer is null.
func (f *fixture) get(ns []string, key string, query ...string) *item {
	f.t.Helper()
	q := url.Values{"namespace": {strings.Join(ns, ".")}, "key": {key}}
	for i := 0; i+1 < len(query); i += 2 {
		q.Set(query[i], query[i+1])
	}
	r := f.Must(http.StatusOK, "GET", "/store/items?"+q.Encode(), nil)
	if strings.TrimSpace(string(r.Body)) == "null" {
		return nil
	}
	var it item
	r.JSON(f.t, &it)
	return &it
}

func (f *fixture) search(body any) []map[string]any {
	f.t.Helper()
	var resp struct {
		Items []map[string]any `json:"items"`
	}
	f.Must(http.StatusOK, "POST", "/store/items/search", body).JSON(f.t, &resp)
	if resp.Items == nil {
		f.t.Fatalf("search %v: no items array", body)
	}
	return resp.Items
}

func keysOf(items []map[string]any) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it["key"].(string))
	}
	return out
}

func (f *fixture) namespaces(body any) [][]string {
	f.t.Helper()
	var resp struct {
		Namespaces [][]string `json:"namespaces"`
	}
	f.Must(http.StatusOK, "POST", "/store/namespaces", body).JSON(f.t, &resp)
	if resp.Namespaces == nil {
		f.t.Fatalf("namespaces %v: no namespaces array", body)
	}
	return resp.Namespaces
}

// expiresAt reads an item's expires_at from the database (zero: NULL).
func (f *fixture) expiresAt(ns []string, key string) time.Time {
	f.t.Helper()
	var at *time.Time
	if err := f.DB.QueryRow(context.Background(), `SELECT expires_at FROM store_items WHERE namespace = $1 AND key = $2`,
		ns, key).Scan(&at); err != nil {
		f.t.Fatalf("expires_at of %v/%s: %v", ns, key, err)
	}
	if at == nil {
		return time.Time{}
	}
	return *at
}

func (f *fixture) rows() int {
	f.t.Helper()
	var n int
	if err := f.DB.QueryRow(context.Background(), `SELECT count(*) FROM store_items`).Scan(&n); err != nil {
		f.t.Fatal(err)
	}
	return n
}

func wantTime(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if d := got.Sub(want); d < -time.Millisecond || d > time.Millisecond {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

func TestPutGetRoundTrip(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	ns := []string{"users", "ü 1", "memories"}
	f.Must(http.StatusNoContent, "PUT", "/store/items",
		`{"namespace":["users","ü 1","memories"],"key":"k/1 x","value":{"big":123456789012345678901234567890,"nested":{"a":[1,"two",null]}},"index":false,"ttl":null}`)
	raw := f.Must(http.StatusOK, "GET", "/store/items?namespace="+url.QueryEscape("users.ü 1.memories")+"&key="+url.QueryEscape("k/1 x"), nil)
	body := string(raw.Body)
	if !strings.Contains(body, `"big":123456789012345678901234567890`) {
		t.Fatalf("value not kept exactly: %s", body)
	}
	var it item
	raw.JSON(t, &it)
	if !reflect.DeepEqual(it.Namespace, ns) || it.Key != "k/1 x" {
		t.Fatalf("item = %+v", it)
	}
	want := f.clock.Now().UTC().Format("2006-01-02T15:04:05.000000-07:00")
	if it.CreatedAt != want || it.UpdatedAt != want {
		t.Fatalf("timestamps created_at=%q updated_at=%q, want %q", it.CreatedAt, it.UpdatedAt, want)
	}
	m := raw.Map(t)
	for _, k := range []string{"namespace", "key", "value", "created_at", "updated_at"} {
		if _, ok := m[k]; !ok {
			t.Errorf("item lacks %q", k)
		}
	}
	if _, ok := m["score"]; ok {
		t.Errorf("GET item has a score: %s", body)
	}
	// Python's httpx sends a list as repeated keys; a JSON array works too.
	for _, q := range []string{
		"namespace=users&namespace=" + url.QueryEscape("ü 1") + "&namespace=memories",
		"namespace=" + url.QueryEscape(`["users","ü 1","memories"]`),
	} {
		var again item
		f.Must(http.StatusOK, "GET", "/store/items?"+q+"&key="+url.QueryEscape("k/1 x"), nil).JSON(t, &again)
		if !reflect.DeepEqual(again, it) {
			t.Fatalf("GET ?%s = %+v, want %+v", q, again, it)
		}
	}
	// index as a list of paths is accepted (and ignored).
	f.put([]string{"a"}, "k", map[string]any{"x": 1}, "index", []string{"x", "y.z"})
	if f.get([]string{"a"}, "k") == nil {
		t.Fatal("item put with index paths is missing")
	}
}

func TestPutUpsertKeepsCreatedAt(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	ns := []string{"a", "b"}
	f.put(ns, "k", map[string]any{"v": 1, "old": true})
	first := f.get(ns, "k")
	f.clock.Advance(90 * time.Second)
	f.put(ns, "k", map[string]any{"v": 2})
	second := f.get(ns, "k")
	if second.CreatedAt != first.CreatedAt {
		t.Fatalf("created_at changed: %s → %s", first.CreatedAt, second.CreatedAt)
	}
	if second.UpdatedAt <= first.UpdatedAt {
		t.Fatalf("updated_at not bumped: %s → %s", first.UpdatedAt, second.UpdatedAt)
	}
	if !reflect.DeepEqual(second.Value, map[string]any{"v": float64(2)}) {
		t.Fatalf("value = %v, want it replaced", second.Value)
	}
	if n := f.rows(); n != 1 {
		t.Fatalf("%d rows after two puts of one item", n)
	}
}

func TestGetAbsentIsNull(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	f.put([]string{"a"}, "k", map[string]any{})
	for _, q := range []string{"namespace=a&key=other", "namespace=b&key=k", "namespace=a.k&key=k", "key=k", "namespace=&key=k"} {
		r := f.Must(http.StatusOK, "GET", "/store/items?"+q, nil)
		if string(r.Body) != "null\n" || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("GET ?%s = %q (%s), want JSON null", q, r.Body, r.Header.Get("Content-Type"))
		}
	}
	r := f.Do("GET", "/store/items?namespace=a", nil)
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Detail(t), "key") {
		t.Fatalf("GET without key = %d %s, want 400 naming key", r.Status, r.Body)
	}
}

func TestDeleteIsIdempotent(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	ns := []string{"a", "b"}
	f.put(ns, "k", map[string]any{"v": 1})
	f.put(ns, "keep", map[string]any{"v": 2})
	for i := 0; i < 2; i++ {
		f.Must(http.StatusNoContent, "DELETE", "/store/items", map[string]any{"namespace": ns, "key": "k"})
		if f.get(ns, "k") != nil {
			t.Fatal("deleted item still readable")
		}
	}
	f.Must(http.StatusNoContent, "DELETE", "/store/items", map[string]any{"key": "keep"}) // root: nothing there
	if f.get(ns, "keep") == nil || f.rows() != 1 {
		t.Fatal("a delete took the wrong item")
	}
}

func TestExpiredItemsAreInvisibleAtOnce(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	ns := []string{"tmp"}
	f.put(ns, "short", map[string]any{"text": "ephemeral"}, "ttl", 1)
	f.put(ns, "long", map[string]any{"text": "ephemeral"}, "ttl", 5)
	f.put([]string{"other"}, "forever", map[string]any{"text": "ephemeral"})
	created := f.get(ns, "short", "refresh_ttl", "false")
	if created == nil {
		t.Fatal("item missing before its ttl")
	}
	f.clock.Advance(59 * time.Second)
	if f.get(ns, "short", "refresh_ttl", "false") == nil {
		t.Fatal("item missing 59 s into a 1 minute ttl")
	}
	f.clock.Advance(time.Second) // expires_at is now: expired
	if it := f.get(ns, "short"); it != nil {
		t.Fatalf("expired item still readable: %+v", it)
	}
	if got := keysOf(f.search(map[string]any{"namespace_prefix": ns, "query": "ephemeral"})); !reflect.DeepEqual(got, []string{"long"}) {
		t.Fatalf("search lists %v, want only the live item", got)
	}
	f.clock.Advance(5 * time.Minute)
	if got := f.namespaces(map[string]any{}); !reflect.DeepEqual(got, [][]string{{"other"}}) {
		t.Fatalf("namespaces = %v, want only the namespace with a live item", got)
	}
	if n := f.rows(); n != 3 {
		t.Fatalf("%d rows: the sweeper (not due) should not have run yet", n)
	}
	// A put over an expired item starts a new one.
	f.put(ns, "short", map[string]any{"v": 2})
	again := f.get(ns, "short")
	if again == nil || again.CreatedAt == created.CreatedAt || again.CreatedAt != again.UpdatedAt {
		t.Fatalf("put over an expired item = %+v (the expired one was created %s)", again, created.CreatedAt)
	}
	if !f.expiresAt(ns, "short").IsZero() {
		t.Fatal("a put without ttl left an expiry")
	}
}

func TestSweeperDeletesExpiredItems(t *testing.T) {
	t.Parallel()
	f := setup(t, 20*time.Millisecond)
	f.put([]string{"tmp"}, "a", map[string]any{}, "ttl", 1)
	f.put([]string{"tmp"}, "b", map[string]any{}, "ttl", 0.5)
	f.put([]string{"tmp"}, "later", map[string]any{}, "ttl", 10)
	f.put([]string{"keep"}, "forever", map[string]any{})
	time.Sleep(100 * time.Millisecond) // several sweeps: nothing is due
	if n := f.rows(); n != 4 {
		t.Fatalf("the sweeper deleted live items: %d rows left of 4", n)
	}
	f.clock.Advance(2 * time.Minute)
	deadline := time.Now().Add(10 * time.Second)
	for f.rows() != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the sweeper left %d rows, want 2", f.rows())
		}
		time.Sleep(10 * time.Millisecond)
	}
	var keys []string
	if err := f.DB.QueryRow(context.Background(), `SELECT array_agg(key ORDER BY key) FROM store_items`).Scan(&keys); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(keys, []string{"forever", "later"}) {
		t.Fatalf("rows left: %v", keys)
	}
}

func TestRefreshTTL(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	ns := []string{"s"}
	for _, k := range []string{"get", "noget", "search", "nosearch"} {
		f.put(ns, k, map[string]any{"k": k}, "ttl", 10)
	}
	f.put(ns, "plain", map[string]any{"k": "plain"})
	put := f.clock.Now()
	wantTime(t, "expires_at after put", f.expiresAt(ns, "get"), put.Add(10*time.Minute))

	f.clock.Advance(8 * time.Minute)
	now := f.clock.Now()
	f.get(ns, "get") // refresh_ttl defaults to true
	f.get(ns, "noget", "refresh_ttl", "false")
	f.search(map[string]any{"namespace_prefix": ns, "filter": map[string]any{"k": "search"}})
	f.search(map[string]any{"namespace_prefix": ns, "filter": map[string]any{"k": "nosearch"}, "refresh_ttl": false})
	f.get(ns, "plain")
	wantTime(t, "refreshed by GET", f.expiresAt(ns, "get"), now.Add(10*time.Minute))
	wantTime(t, "refreshed by search", f.expiresAt(ns, "search"), now.Add(10*time.Minute))
	wantTime(t, "GET refresh_ttl=false", f.expiresAt(ns, "noget"), put.Add(10*time.Minute))
	wantTime(t, "search refresh_ttl=false", f.expiresAt(ns, "nosearch"), put.Add(10*time.Minute))
	if !f.expiresAt(ns, "plain").IsZero() {
		t.Fatal("a read gave an item without ttl an expiry")
	}

	f.clock.Advance(5 * time.Minute) // 13 min after the put, 5 after the refresh
	for k, live := range map[string]bool{"get": true, "search": true, "noget": false, "nosearch": false, "plain": true} {
		if got := f.get(ns, k, "refresh_ttl", "false") != nil; got != live {
			t.Errorf("%s: visible=%v, want %v", k, got, live)
		}
	}
	// updated_at is not touched by a refresh.
	if it := f.get(ns, "get"); it.UpdatedAt != it.CreatedAt {
		t.Fatalf("a refresh bumped updated_at: %+v", it)
	}
}

func TestSearch(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	// One second apart, so updated_at orders them: i0 oldest … i5 newest.
	puts := []struct {
		ns    []string
		key   string
		value map[string]any
	}{
		{[]string{"a", "b"}, "i0", map[string]any{"kind": "note", "text": "Say HELLO world", "tags": []any{"x", "y"}}},
		{[]string{"a", "b", "c"}, "i1", map[string]any{"kind": "note", "deep": map[string]any{"list": []any{map[string]any{"s": "a Hello inside"}}}}},
		{[]string{"a", "bc"}, "i2", map[string]any{"kind": "note", "text": "hello"}},
		{[]string{"x"}, "i3", map[string]any{"kind": "todo", "hello": 1}},
		{[]string{"a", "b"}, "i4", map[string]any{"kind": "todo", "n": 4200, "ok": true}},
		{[]string{"a", "b"}, "i5", map[string]any{"kind": "note", "tags": []any{"y"}}},
	}
	for _, p := range puts {
		f.put(p.ns, p.key, p.value)
		f.clock.Advance(time.Second)
	}
	cases := []struct {
		name string
		body map[string]any
		want []string
	}{
		{"everything, newest first", map[string]any{}, []string{"i5", "i4", "i3", "i2", "i1", "i0"}},
		{"empty prefix", map[string]any{"namespace_prefix": []string{}}, []string{"i5", "i4", "i3", "i2", "i1", "i0"}},
		{"prefix stops at a label boundary", map[string]any{"namespace_prefix": []string{"a", "b"}}, []string{"i5", "i4", "i1", "i0"}},
		{"prefix is the whole namespace", map[string]any{"namespace_prefix": []string{"a", "b", "c"}}, []string{"i1"}},
		{"prefix of one label", map[string]any{"namespace_prefix": []string{"a"}}, []string{"i5", "i4", "i2", "i1", "i0"}},
		{"prefix matching nothing", map[string]any{"namespace_prefix": []string{"b"}}, []string{}},
		{"filter", map[string]any{"filter": map[string]any{"kind": "todo"}}, []string{"i4", "i3"}},
		{"filter on an array element", map[string]any{"filter": map[string]any{"tags": []any{"x"}}}, []string{"i0"}},
		{"filter with prefix", map[string]any{"namespace_prefix": []string{"a"}, "filter": map[string]any{"kind": "note"}}, []string{"i5", "i2", "i1", "i0"}},
		{"null filter", map[string]any{"filter": nil, "limit": 2}, []string{"i5", "i4"}},
		{"query is case-insensitive and finds nested values, not keys", map[string]any{"query": "hELLo"}, []string{"i2", "i1", "i0"}},
		{"query matches numbers and booleans", map[string]any{"query": "420"}, []string{"i4"}},
		{"query with prefix and filter", map[string]any{"query": "hello", "namespace_prefix": []string{"a", "b"}, "filter": map[string]any{"kind": "note"}}, []string{"i1", "i0"}},
		{"query with LIKE characters is literal", map[string]any{"query": "%"}, []string{}},
		{"empty query", map[string]any{"query": ""}, []string{"i5", "i4", "i3", "i2", "i1", "i0"}},
		{"limit", map[string]any{"limit": 2}, []string{"i5", "i4"}},
		{"limit and offset", map[string]any{"limit": 2, "offset": 3}, []string{"i2", "i1"}},
		{"offset past the end", map[string]any{"offset": 6}, []string{}},
	}
	for _, c := range cases {
		items := f.search(c.body)
		if got := keysOf(items); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v gave %v, want %v", c.name, c.body, got, c.want)
		}
		for _, it := range items {
			if s, ok := it["score"]; !ok || s != nil {
				t.Errorf("%s: item %v: score must be present and null", c.name, it["key"])
			}
		}
	}
	// The default limit is 10.
	for i := 0; i < 12; i++ {
		f.put([]string{"many"}, string(rune('a'+i)), map[string]any{})
	}
	if n := len(f.search(map[string]any{"namespace_prefix": []string{"many"}})); n != 10 {
		t.Fatalf("default limit gave %d items, want 10", n)
	}
	items := f.search(map[string]any{"namespace_prefix": []string{"a", "b", "c"}})
	if !reflect.DeepEqual(items[0]["namespace"], []any{"a", "b", "c"}) || items[0]["value"].(map[string]any)["kind"] != "note" {
		t.Fatalf("search item = %v", items[0])
	}
}

func TestListNamespaces(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	for _, ns := range [][]string{{"a", "b", "c"}, {"a", "b", "d"}, {"a", "e"}, {"x", "b", "c"}, {"ab"}, {"a", "b", "c"}} {
		f.put(ns, "k"+strings.Join(ns, ""), map[string]any{})
	}
	f.put([]string{"a", "b", "c"}, "second", map[string]any{}) // two items, one namespace
	f.put([]string{"gone", "c"}, "k", map[string]any{}, "ttl", 1)
	f.clock.Advance(time.Minute)
	cases := []struct {
		body map[string]any
		want [][]string
	}{
		{map[string]any{}, [][]string{{"a", "b", "c"}, {"a", "b", "d"}, {"a", "e"}, {"ab"}, {"x", "b", "c"}}},
		{map[string]any{"prefix": []string{"a"}}, [][]string{{"a", "b", "c"}, {"a", "b", "d"}, {"a", "e"}}},
		{map[string]any{"prefix": []string{"a", "b", "c"}}, [][]string{{"a", "b", "c"}}},
		{map[string]any{"prefix": []string{"a", "b", "c", "d"}}, [][]string{}},
		{map[string]any{"suffix": []string{"c"}}, [][]string{{"a", "b", "c"}, {"x", "b", "c"}}},
		{map[string]any{"suffix": []string{"b", "c"}, "prefix": []string{"x"}}, [][]string{{"x", "b", "c"}}},
		{map[string]any{"suffix": []string{"a", "b", "c"}}, [][]string{{"a", "b", "c"}}},
		{map[string]any{"prefix": []string{"*", "b"}}, [][]string{{"a", "b", "c"}, {"a", "b", "d"}, {"x", "b", "c"}}},
		{map[string]any{"prefix": []string{"a", "*", "d"}}, [][]string{{"a", "b", "d"}}},
		{map[string]any{"suffix": []string{"*", "c"}}, [][]string{{"a", "b", "c"}, {"x", "b", "c"}}},
		{map[string]any{"suffix": []string{"*"}, "max_depth": 1}, [][]string{{"a"}, {"ab"}, {"x"}}},
		{map[string]any{"max_depth": 2}, [][]string{{"a", "b"}, {"a", "e"}, {"ab"}, {"x", "b"}}},
		{map[string]any{"max_depth": 2, "prefix": []string{"a"}}, [][]string{{"a", "b"}, {"a", "e"}}},
		{map[string]any{"max_depth": 2, "limit": 2, "offset": 1}, [][]string{{"a", "e"}, {"ab"}}},
		{map[string]any{"limit": 1, "offset": 4}, [][]string{{"x", "b", "c"}}},
		{map[string]any{"offset": 5}, [][]string{}},
		{map[string]any{"max_depth": 1000}, [][]string{{"a", "b", "c"}, {"a", "b", "d"}, {"a", "e"}, {"ab"}, {"x", "b", "c"}}},
	}
	for _, c := range cases {
		if got := f.namespaces(c.body); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v gave %v, want %v", c.body, got, c.want)
		}
	}
}

// storeSnapshot is a fingerprint of every row version of store_items.
func storeSnapshot(t *testing.T, f *fixture) string {
	t.Helper()
	var s string
	if err := f.DB.QueryRow(context.Background(), `SELECT count(*) || ':' ||
		coalesce(md5(string_agg(ctid::text || xmin::text, '|' ORDER BY ctid)), '-') FROM store_items`).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestInvalidRequestsAre4xxAndWriteNothing(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	f.put([]string{"a", "b"}, "k", map[string]any{"v": 1}, "ttl", 10)
	before := storeSnapshot(t, f)
	long := strings.Repeat("x", 1025)
	many := make([]string, 65)
	for i := range many {
		many[i] = "l"
	}
	type req struct {
		method, path string
		body         any
		status       int
		detail       string
	}
	put := func(body any, detail string) req {
		return req{"PUT", "/store/items", body, http.StatusUnprocessableEntity, detail}
	}
	ok := map[string]any{"v": 2}
	reqs := []req{
		put(map[string]any{"namespace": []string{"a.b"}, "key": "k", "value": ok}, "periods"),
		put(map[string]any{"namespace": []string{"a", ""}, "key": "k", "value": ok}, "empty"),
		put(map[string]any{"namespace": []string{}, "key": "k", "value": ok}, "namespace"),
		put(map[string]any{"key": "k", "value": ok}, "namespace"),
		put(map[string]any{"namespace": "a.b", "key": "k", "value": ok}, "namespace"),
		put(map[string]any{"namespace": []any{"a", 1}, "key": "k", "value": ok}, "namespace"),
		put(map[string]any{"namespace": many, "key": "k", "value": ok}, "labels"),
		put(map[string]any{"namespace": []string{long}, "key": "k", "value": ok}, "bytes"),
		put(map[string]any{"namespace": []string{"a", "b"}, "value": ok}, "key"),
		put(map[string]any{"namespace": []string{"a", "b"}, "key": "", "value": ok}, "key"),
		put(map[string]any{"namespace": []string{"a", "b"}, "key": 5, "value": ok}, "key"),
		put(map[string]any{"namespace": []string{"a", "b"}, "key": long, "value": ok}, "key"),
		put(map[string]any{"namespace": []string{"a", "b"}, "key": "k"}, "value"),
		put(map[string]any{"namespace": []string{"a", "b"}, "key": "k", "value": nil}, "value"),
		put(map[string]any{"namespace": []string{"a", "b"}, "key": "k", "value": []any{1}}, "value"),
		put(map[string]any{"namespace": []string{"a", "b"}, "key": "k", "value": "text"}, "value"),
		put(map[string]any{"namespace": []string{"a", "b"}, "key": "k", "value": ok, "index": true}, "index"),
		put(map[string]any{"namespace": []string{"a", "b"}, "key": "k", "value": ok, "index": "x"}, "index"),
		put(map[string]any{"namespace": []string{"a", "b"}, "key": "k", "value": ok, "index": []any{1}}, "index"),
		put(map[string]any{"namespace": []string{"a", "b"}, "key": "k", "value": ok, "ttl": 0}, "ttl"),
		put(map[string]any{"namespace": []string{"a", "b"}, "key": "k", "value": ok, "ttl": -1}, "ttl"),
		put(map[string]any{"namespace": []string{"a", "b"}, "key": "k", "value": ok, "ttl": "5"}, "ttl"),
		put(map[string]any{"namespace": []string{"a", "b"}, "key": "k", "value": ok, "ttl": 1e12}, "ttl"),
		put(`{"namespace":["a","b"],"key":"k\u0000","value":{}}`, "NUL"),
		put(`{"namespace":["a\u0000","b"],"key":"k","value":{}}`, "NUL"),
		put(`{"namespace":["a","b"],"key":"k","value":{"x":"\u0000"}}`, "NUL"),
		put(`{"namespace":["a","b"],"key":"k","value":{"x":1e400}}`, "range"),
		put(`{"namespace":["a","b"],"key":"k","value":{}`, "JSON"),
		put(`[1]`, "object"),
		put(nil, "namespace"),
		{"GET", "/store/items?namespace=a..b&key=k", nil, 422, "periods"},
		{"GET", "/store/items?namespace=a.b.&key=k", nil, 422, "periods"},
		{"GET", "/store/items?namespace=a&namespace=b.c&key=k", nil, 422, "periods"},
		{"GET", "/store/items?namespace=%5B%22a.b%22%5D&key=k", nil, 422, "periods"},
		{"GET", "/store/items?namespace=a%00&key=k", nil, 422, "NUL"},
		{"GET", "/store/items?namespace=%FF&key=k", nil, 422, "UTF-8"},
		{"GET", "/store/items?namespace=a.b&key=", nil, 422, "key"},
		{"GET", "/store/items?namespace=a.b&key=k%00", nil, 422, "NUL"},
		{"GET", "/store/items?namespace=a.b&key=k&key=k", nil, 422, "key"},
		{"GET", "/store/items?namespace=a.b", nil, 400, "key"},
		{"GET", "/store/items?namespace=a.b&key=k&refresh_ttl=maybe", nil, 422, "refresh_ttl"},
		{"DELETE", "/store/items", map[string]any{"namespace": []string{"a", "b"}}, 422, "key"},
		{"DELETE", "/store/items", map[string]any{"namespace": []string{"a.b"}, "key": "k"}, 422, "periods"},
		{"DELETE", "/store/items", map[string]any{"namespace": "a.b", "key": "k"}, 422, "namespace"},
		{"DELETE", "/store/items", nil, 422, "key"},
		{"POST", "/store/items/search", map[string]any{"limit": 0}, 422, "limit"},
		{"POST", "/store/items/search", map[string]any{"limit": 1001}, 422, "limit"},
		{"POST", "/store/items/search", map[string]any{"offset": -1}, 422, "offset"},
		{"POST", "/store/items/search", map[string]any{"filter": []any{1}}, 422, "filter"},
		{"POST", "/store/items/search", map[string]any{"filter": "x"}, 422, "filter"},
		{"POST", "/store/items/search", map[string]any{"namespace_prefix": []string{"a.b"}}, 422, "periods"},
		{"POST", "/store/items/search", map[string]any{"namespace_prefix": []string{""}}, 422, "empty"},
		{"POST", "/store/items/search", map[string]any{"query": 5}, 422, "query"},
		{"POST", "/store/items/search", map[string]any{"refresh_ttl": "yes"}, 422, "refresh_ttl"},
		{"POST", "/store/namespaces", map[string]any{"max_depth": 0}, 422, "max_depth"},
		{"POST", "/store/namespaces", map[string]any{"prefix": []string{"a.b"}}, 422, "periods"},
		{"POST", "/store/namespaces", map[string]any{"suffix": []string{""}}, 422, "empty"},
		{"POST", "/store/namespaces", map[string]any{"limit": 0}, 422, "limit"},
		{"POST", "/store/namespaces", map[string]any{"offset": -5}, 422, "offset"},
	}
	for _, r := range reqs {
		resp := f.Do(r.method, r.path, r.body)
		if resp.Status != r.status {
			t.Errorf("%s %s %v: status %d, want %d; body %s", r.method, r.path, r.body, resp.Status, r.status, resp.Body)
			continue
		}
		if d := resp.Detail(t); !strings.Contains(d, r.detail) {
			t.Errorf("%s %s %v: detail %q does not mention %q", r.method, r.path, r.body, d, r.detail)
		}
		if after := storeSnapshot(t, f); after != before {
			t.Fatalf("%s %s %v changed store_items", r.method, r.path, r.body)
		}
	}
	if it := f.get([]string{"a", "b"}, "k", "refresh_ttl", "false"); it == nil || it.Value["v"] != float64(1) {
		t.Fatalf("item after refused requests = %+v", it)
	}
}
