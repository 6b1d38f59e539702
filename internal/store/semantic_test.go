package store_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
	"github.com/weftdev/weft/internal/store"
	"github.com/weftdev/weft/internal/store/storetest"
)

// testDims is the fake embedder's vector length: large enough that the few
// words of a test rarely share a bucket (and the expected scores are
// computed from the same vectors, so a shared bucket cannot make a test
// wrong, only less telling).
const testDims = 256

const testModel = "openai:fake-embed-1"

type semFixture struct {
	*fixture
	embed *storetest.EmbedServer
}

// setupIndexed starts a server whose store has a semantic index on fields
// (nil: the default ["$"]) backed by a fresh fake embeddings endpoint. The
// store runs on the database's clock (retries need time to pass) unless
// clocked, and its indexer retries after 20 ms, doubling up to 200 ms.
func setupIndexed(t *testing.T, fields []string, clocked bool) *semFixture {
	t.Helper()
	e := storetest.NewEmbedServer(t, testDims)
	raw := `{"dims": 256, "embed": "` + testModel + `"}`
	if fields != nil {
		raw = `{"dims": 256, "embed": "` + testModel + `", "fields": ` + jsonOf(t, fields) + `}`
	}
	cfg, err := store.ParseIndexConfig([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"OPENAI_BASE_URL": e.URL, "OPENAI_API_KEY": "sk-test"}
	if err := cfg.WithOpenAIEnv(func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t}
	if clocked {
		f.clock = &clock{now: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	}
	f.Server = servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) {
		c.Workers = 0
		c.StoreIndex = cfg
		c.StoreIndexer = store.IndexerConfig{Backoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, Poll: 50 * time.Millisecond}
		c.StoreSweepInterval = time.Hour
		if clocked {
			c.StoreClock = f.clock.Now
			c.StoreSweepInterval = 20 * time.Millisecond
		}
	})
	return &semFixture{fixture: f, embed: e}
}

// vectorRow is a store_vectors row as a test sees it.
type vectorRow struct {
	Field    string
	Text     string
	Embedded bool
	Model    *string
	Attempts int
	Error    *string
}

// vectors reads the vector rows of an item, by field.
func (f *semFixture) vectors(ns []string, key string) []vectorRow {
	f.t.Helper()
	rows, err := f.DB.Query(context.Background(), `SELECT field, text, embedding IS NOT NULL, model, attempts, last_error
		FROM store_vectors WHERE namespace = $1 AND key = $2 ORDER BY field`, ns, key)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	var out []vectorRow
	for rows.Next() {
		var r vectorRow
		if err := rows.Scan(&r.Field, &r.Text, &r.Embedded, &r.Model, &r.Attempts, &r.Error); err != nil {
			f.t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		f.t.Fatal(err)
	}
	return out
}

// waitFor polls cond every 10 ms for up to 10 s.
func (f *semFixture) waitFor(what string, cond func() bool) {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			f.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitEmbedded waits until no vector row is pending.
func (f *semFixture) waitEmbedded() {
	f.t.Helper()
	f.waitFor("every vector to be embedded", func() bool {
		var pending int
		if err := f.DB.QueryRow(context.Background(), `SELECT count(*) FROM store_vectors WHERE embedding IS NULL`).Scan(&pending); err != nil {
			f.t.Fatal(err)
		}
		return pending == 0
	})
}

// cosine is the score a search must return for two texts.
func cosine(a, b string) float64 {
	x, y := storetest.BagOfWords(a, testDims), storetest.BagOfWords(b, testDims)
	var dot, nx, ny float64
	for i := range x {
		dot += float64(x[i]) * float64(y[i])
		nx += float64(x[i]) * float64(x[i])
		ny += float64(y[i]) * float64(y[i])
	}
	if nx == 0 || ny == 0 {
		return 0
	}
	return dot / (math.Sqrt(nx) * math.Sqrt(ny))
}

// scored is a search result's key and score (the score must be a number).
type scored struct {
	Key   string
	Score float64
}

func (f *semFixture) semantic(body map[string]any) []scored {
	f.t.Helper()
	var out []scored
	for _, it := range f.search(body) {
		s, ok := it["score"].(float64)
		if !ok {
			f.t.Fatalf("search %v: item %v has score %#v, want a number", body, it["key"], it["score"])
		}
		out = append(out, scored{Key: it["key"].(string), Score: s})
	}
	return out
}

// wantRanking checks keys and scores of got against the cosine of each
// key's text with the query, best first; keys are given in namespace and
// key order.
func wantRanking(t *testing.T, got []scored, query string, texts map[string]string, keys ...string) {
	t.Helper()
	want := make([]scored, len(keys))
	for i, k := range keys {
		want[i] = scored{Key: k, Score: cosine(query, texts[k])}
	}
	// Ties keep the keys' order, which is the server's (namespace, key).
	sort.SliceStable(want, func(i, j int) bool { return want[i].Score > want[j].Score })
	if len(got) != len(want) {
		t.Fatalf("query %q: got %v, want %v", query, got, want)
	}
	for i := range want {
		if got[i].Key != want[i].Key || math.Abs(got[i].Score-want[i].Score) > 1e-9 {
			t.Fatalf("query %q: got %v, want %v", query, got, want)
		}
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSemanticSearchRanksByCosineSimilarity(t *testing.T) {
	t.Parallel()
	f := setupIndexed(t, []string{"text"}, false)
	ns := []string{"docs", "u1"}
	texts := map[string]string{
		"a": "the red apple fell",
		"b": "green apple pie with red cherries and apple cream",
		"c": "a blue sky over the sea",
		"d": "red red apple apple",
		"e": "nothing in common here",
	}
	for k, text := range texts {
		f.put(ns, k, map[string]any{"text": text, "other": "ignored words apple"})
	}
	f.waitEmbedded()
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		rows := f.vectors(ns, k)
		if len(rows) != 1 || rows[0].Field != "text" || rows[0].Text != texts[k] || *rows[0].Model != testModel+"/256" {
			t.Fatalf("vectors of %s = %+v, want one row for field text", k, rows)
		}
	}
	wantRanking(t, f.semantic(map[string]any{"namespace_prefix": ns, "query": "red apple"}), "red apple", texts, "a", "b", "c", "d", "e")
	wantRanking(t, f.semantic(map[string]any{"query": "the sea and the sky"}), "the sea and the sky", texts, "a", "b", "c", "d", "e")
	// limit and offset page through the ranking.
	all := f.semantic(map[string]any{"query": "red apple"})
	if page := f.semantic(map[string]any{"query": "red apple", "limit": 2, "offset": 1}); !reflect.DeepEqual(page, all[1:3]) {
		t.Fatalf("limit 2 offset 1 = %v, want %v", page, all[1:3])
	}
	// The query was embedded by the same endpoint and model.
	if got := f.embed.Models(); got[len(got)-1] != "fake-embed-1" {
		t.Fatalf("models sent %v, want fake-embed-1", got)
	}
	if got := f.embed.Authorizations(); got[0] != "Bearer sk-test" {
		t.Fatalf("Authorization %q, want Bearer sk-test", got[0])
	}
	// A listing (no query) is still newest first with a null score.
	for _, it := range f.search(map[string]any{"namespace_prefix": ns}) {
		if it["score"] != nil {
			t.Fatalf("listing item %v has score %v", it["key"], it["score"])
		}
	}
}

func TestSemanticSearchKeepsPrefixAndFilter(t *testing.T) {
	t.Parallel()
	f := setupIndexed(t, []string{"text"}, false)
	texts := map[string]string{"a1": "apple one", "a2": "apple apple two", "b1": "apple", "ab": "apple tree three", "o1": "apple"}
	f.put([]string{"a"}, "a1", map[string]any{"text": texts["a1"], "kind": "x"})
	f.put([]string{"a", "deep"}, "a2", map[string]any{"text": texts["a2"], "kind": "y"})
	f.put([]string{"b"}, "b1", map[string]any{"text": texts["b1"], "kind": "x"})
	f.put([]string{"ab"}, "ab", map[string]any{"text": texts["ab"], "kind": "x"})
	f.put([]string{"a"}, "o1", map[string]any{"text": texts["o1"], "kind": "z", "tags": []string{"t"}})
	f.waitEmbedded()
	q := "apple tree"
	wantRanking(t, f.semantic(map[string]any{"namespace_prefix": []string{"a"}, "query": q}), q, texts, "a1", "a2", "o1")
	wantRanking(t, f.semantic(map[string]any{"namespace_prefix": []string{"a", "deep"}, "query": q}), q, texts, "a2")
	wantRanking(t, f.semantic(map[string]any{"filter": map[string]any{"kind": "x"}, "query": q}), q, texts, "a1", "b1", "ab")
	wantRanking(t, f.semantic(map[string]any{"namespace_prefix": []string{"a"}, "filter": map[string]any{"kind": "x"}, "query": q}), q, texts, "a1")
	wantRanking(t, f.semantic(map[string]any{"filter": map[string]any{"tags": []string{"t"}}, "query": q}), q, texts, "o1")
	if got := f.semantic(map[string]any{"namespace_prefix": []string{"c"}, "query": q}); len(got) != 0 {
		t.Fatalf("prefix with no items gave %v", got)
	}
}

func TestSemanticSearchLeavesOutUnindexedItems(t *testing.T) {
	t.Parallel()
	f := setupIndexed(t, nil, false) // fields ["$"]: the whole value
	ns := []string{"mem"}
	f.put(ns, "indexed", map[string]any{"note": "pizza with olives"})
	f.put(ns, "hidden", map[string]any{"note": "pizza with olives"}, "index", false)
	f.put(ns, "no-fields", map[string]any{"note": "pizza"}, "index", []string{})
	f.put(ns, "was-indexed", map[string]any{"note": "pizza again"})
	f.waitEmbedded()
	if rows := f.vectors(ns, "was-indexed"); len(rows) != 1 {
		t.Fatalf("was-indexed has vectors %+v, want one", rows)
	}
	f.put(ns, "was-indexed", map[string]any{"note": "pizza again"}, "index", false)
	for _, k := range []string{"hidden", "no-fields", "was-indexed"} {
		if rows := f.vectors(ns, k); len(rows) != 0 {
			t.Fatalf("%s has vectors %+v, want none", k, rows)
		}
		if it := f.get(ns, k); it == nil {
			t.Fatalf("%s is not readable", k)
		}
	}
	// The whole value is embedded as indented JSON (LangGraph's "$").
	rows := f.vectors(ns, "indexed")
	if len(rows) != 1 || rows[0].Field != "$" || rows[0].Text != "{\n  \"note\": \"pizza with olives\"\n}" {
		t.Fatalf("vectors of indexed = %+v", rows)
	}
	got := f.semantic(map[string]any{"query": "pizza"})
	if len(got) != 1 || got[0].Key != "indexed" {
		t.Fatalf("semantic search returned %v, want only the indexed item", got)
	}
	// A listing and a filter still see every item.
	if keys := keysOf(f.search(map[string]any{"namespace_prefix": ns})); len(keys) != 4 {
		t.Fatalf("listing = %v, want 4 items", keys)
	}
}

func TestSemanticSearchPerItemFields(t *testing.T) {
	t.Parallel()
	f := setupIndexed(t, []string{"body"}, false)
	ns := []string{"kb"}
	f.put(ns, "titled", map[string]any{"title": "volcano eruption", "body": "lava flows downhill"}, "index", []string{"title"})
	f.put(ns, "bodied", map[string]any{"title": "ocean tides", "body": "volcano lava rock"})
	f.put(ns, "multi", map[string]any{"sections": []any{
		map[string]any{"text": "first part about rivers"}, map[string]any{"text": "second part about volcano"}, map[string]any{"x": 1},
	}, "meta": map[string]any{"tag": "geo", "n": 7}}, "index", []string{"sections[*].text", "meta.n", "{meta.tag,missing}", "sections[-1]"})
	f.waitEmbedded()
	want := map[string][]vectorRow{
		"titled": {{Field: "title", Text: "volcano eruption"}},
		"bodied": {{Field: "body", Text: "volcano lava rock"}},
		"multi": {
			{Field: "meta.n", Text: "7"},
			{Field: "sections[*].text.0", Text: "first part about rivers"},
			{Field: "sections[*].text.1", Text: "second part about volcano"},
			{Field: "sections[-1]", Text: "{\n  \"x\": 1\n}"},
			{Field: "{meta.tag,missing}", Text: "geo"},
		},
	}
	for key, rows := range want {
		got := f.vectors(ns, key)
		if len(got) != len(rows) {
			t.Fatalf("vectors of %s = %+v, want %+v", key, got, rows)
		}
		for i := range rows {
			if got[i].Field != rows[i].Field || got[i].Text != rows[i].Text || !got[i].Embedded {
				t.Fatalf("vectors of %s = %+v, want %+v", key, got, rows)
			}
		}
	}
	// "titled" is found by its title, not its body; an item's score is its
	// best field's.
	got := f.semantic(map[string]any{"query": "volcano eruption"})
	wantScores := []scored{
		{"titled", 1},
		{"bodied", cosine("volcano eruption", "volcano lava rock")},
		{"multi", cosine("volcano eruption", "second part about volcano")},
	}
	sort.SliceStable(wantScores, func(i, j int) bool { return wantScores[i].Score > wantScores[j].Score })
	if len(got) != 3 {
		t.Fatalf("got %v, want %v", got, wantScores)
	}
	for i := range wantScores {
		if got[i].Key != wantScores[i].Key || math.Abs(got[i].Score-wantScores[i].Score) > 1e-9 {
			t.Fatalf("got %v, want %v", got, wantScores)
		}
	}
	if s := f.semantic(map[string]any{"query": "lava flows downhill", "filter": map[string]any{"title": "volcano eruption"}}); len(s) != 1 || s[0].Score != 0 {
		t.Fatalf("titled's body is not indexed, yet scored %v", s)
	}
	// Malformed or excessive index lists are refused.
	for _, index := range []any{[]string{"a["}, []string{""}, []string{"a[x]"}, "title", []any{1}} {
		r := f.Do("PUT", "/store/items", map[string]any{"namespace": ns, "key": "bad", "value": map[string]any{"a": 1}, "index": index})
		if r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("index %v: status %d, want 422", index, r.Status)
		}
	}
	many := make([]any, store.MaxIndexTexts+1)
	for i := range many {
		many[i] = "w"
	}
	r := f.Do("PUT", "/store/items", map[string]any{"namespace": ns, "key": "bad", "value": map[string]any{"a": many}, "index": []string{"a[*]"}})
	if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Detail(t), "more than") {
		t.Fatalf("too many texts: %d %s", r.Status, r.Body)
	}
	if f.get(ns, "bad") != nil {
		t.Fatal("a refused put stored the item")
	}
}

func TestSemanticSearchReembedsChangedValues(t *testing.T) {
	t.Parallel()
	f := setupIndexed(t, []string{"text", "tag"}, false)
	ns := []string{"pets"}
	f.put(ns, "p", map[string]any{"text": "a sleepy cat", "tag": "animal"})
	f.waitEmbedded()
	if s := f.semantic(map[string]any{"query": "sleepy cat"}); len(s) != 1 || math.Abs(s[0].Score-cosine("sleepy cat", "a sleepy cat")) > 1e-9 {
		t.Fatalf("before the update: %v", s)
	}
	calls := len(f.embed.Inputs())
	// The same value again: nothing to embed.
	f.put(ns, "p", map[string]any{"text": "a sleepy cat", "tag": "animal"})
	// A new text: that field alone is embedded again.
	f.put(ns, "p", map[string]any{"text": "a barking dog", "tag": "animal"})
	f.waitEmbedded()
	inputs := f.embed.Inputs()[calls:]
	if !reflect.DeepEqual(inputs, []string{"a barking dog"}) {
		t.Fatalf("after the updates the endpoint embedded %q, want only the changed field", inputs)
	}
	s := f.semantic(map[string]any{"query": "barking dog"})
	if len(s) != 1 || math.Abs(s[0].Score-cosine("barking dog", "a barking dog")) > 1e-9 {
		t.Fatalf("after the update, barking dog: %v", s)
	}
	s = f.semantic(map[string]any{"query": "sleepy cat"})
	if len(s) != 1 || math.Abs(s[0].Score-cosine("sleepy cat", "animal")) > 1e-9 {
		t.Fatalf("after the update, sleepy cat: %v (the old text's vector must be gone)", s)
	}
	// Dropping a field drops its vector; delete takes the rest.
	f.put(ns, "p", map[string]any{"text": "a barking dog"})
	if rows := f.vectors(ns, "p"); len(rows) != 1 || rows[0].Field != "text" || !rows[0].Embedded {
		t.Fatalf("vectors after dropping tag: %+v", rows)
	}
	f.Must(http.StatusNoContent, "DELETE", "/store/items", map[string]any{"namespace": ns, "key": "p"})
	if rows := f.vectors(ns, "p"); len(rows) != 0 {
		t.Fatalf("vectors after delete: %+v", rows)
	}
	if s := f.semantic(map[string]any{"query": "barking dog"}); len(s) != 0 {
		t.Fatalf("a deleted item was found: %v", s)
	}
}

func TestSemanticSearchExpiredItemsTakeTheirVectors(t *testing.T) {
	t.Parallel()
	f := setupIndexed(t, nil, true)
	ns := []string{"tmp"}
	f.put(ns, "short", map[string]any{"v": "ephemeral note"}, "ttl", 1)
	f.put(ns, "long", map[string]any{"v": "lasting note"})
	f.waitEmbedded()
	if s := f.semantic(map[string]any{"query": "note", "refresh_ttl": false}); len(s) != 2 {
		t.Fatalf("before expiry: %v", s)
	}
	f.clock.Advance(2 * time.Minute)
	// Invisible at once …
	if s := f.semantic(map[string]any{"query": "note"}); len(s) != 1 || s[0].Key != "long" {
		t.Fatalf("after expiry: %v", s)
	}
	// … and the sweeper deletes the item with its vectors.
	f.waitFor("the expired item's vectors to go", func() bool { return len(f.vectors(ns, "short")) == 0 })
	if len(f.vectors(ns, "long")) != 1 {
		t.Fatal("the live item lost its vector")
	}
}

func TestSemanticSearchSurvivesAFailingEndpoint(t *testing.T) {
	t.Parallel()
	f := setupIndexed(t, []string{"text"}, false)
	ns := []string{"flaky"}
	f.embed.FailWith(http.StatusInternalServerError)
	start := time.Now()
	f.put(ns, "k", map[string]any{"text": "resilient memory"})
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the put took %v: it must not wait for the endpoint", d)
	}
	if it := f.get(ns, "k"); it == nil || it.Value["text"] != "resilient memory" {
		t.Fatalf("the item is not readable while the endpoint fails: %+v", it)
	}
	// Retried with backoff, the failure recorded.
	f.waitFor("two failed attempts", func() bool {
		rows := f.vectors(ns, "k")
		return len(rows) == 1 && rows[0].Attempts >= 2
	})
	rows := f.vectors(ns, "k")
	if rows[0].Embedded || rows[0].Error == nil || !strings.Contains(*rows[0].Error, "HTTP 500") {
		t.Fatalf("pending row = %+v, want not embedded with the 500 recorded", rows[0])
	}
	// A semantic search needs the endpoint for its query: 503, not 500.
	r := f.Do("POST", "/store/items/search", map[string]any{"query": "memory"})
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" ||
		!strings.Contains(r.Detail(t), "embeddings endpoint") || !strings.Contains(r.Detail(t), "HTTP 500") {
		t.Fatalf("search with the endpoint down: %d %v %s", r.Status, r.Header, r.Body)
	}
	// Other failures are 503 too; a query the endpoint refuses is the
	// client's (422).
	f.embed.FailWith(http.StatusTooManyRequests)
	if r := f.Do("POST", "/store/items/search", map[string]any{"query": "memory"}); r.Status != http.StatusServiceUnavailable {
		t.Fatalf("search with the endpoint rate limiting: %d %s", r.Status, r.Body)
	}
	f.embed.FailWith(0)
	f.embed.Refuse("too long")
	if r := f.Do("POST", "/store/items/search", map[string]any{"query": "a query too long"}); r.Status != http.StatusUnprocessableEntity ||
		!strings.Contains(r.Detail(t), "refused") {
		t.Fatalf("search with a refused query: %d %s", r.Status, r.Body)
	}
	f.embed.Refuse("")
	// The endpoint is back: the item is embedded and found.
	f.waitEmbedded()
	if s := f.semantic(map[string]any{"query": "resilient memory"}); len(s) != 1 || s[0].Key != "k" || math.Abs(s[0].Score-1) > 1e-9 {
		t.Fatalf("after recovery: %v", s)
	}
	if rows := f.vectors(ns, "k"); rows[0].Error != nil {
		t.Fatalf("last_error kept after success: %v", *rows[0].Error)
	}
	// The endpoint unreachable altogether is a 503 as well.
	down := setupIndexed(t, nil, false)
	down.embed.FailWith(http.StatusBadGateway)
	if r := down.Do("POST", "/store/items/search", map[string]any{"query": "x"}); r.Status != http.StatusServiceUnavailable {
		t.Fatalf("search with a 502 upstream: %d %s", r.Status, r.Body)
	}
}

// A text the endpoint refuses does not hold back the others of its batch:
// the indexer sends each text of a refused batch alone.
func TestIndexerIsolatesARefusedText(t *testing.T) {
	t.Parallel()
	f := setupIndexed(t, []string{"text"}, false)
	ns := []string{"batch"}
	f.embed.FailWith(http.StatusServiceUnavailable) // the puts pile up
	f.put(ns, "good1", map[string]any{"text": "fine words"})
	f.put(ns, "bad", map[string]any{"text": "poison pill"})
	f.put(ns, "good2", map[string]any{"text": "more fine words"})
	// All three due at one instant (any claim in flight void): one batch.
	if _, err := f.DB.Exec(context.Background(),
		`UPDATE store_vectors SET available_at = now() + interval '300 ms', claim_token = NULL, attempts = 0, last_error = NULL`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // a request in flight (its claim void) ends before the endpoint changes
	before := len(f.embed.Requests())
	f.embed.Refuse("poison")
	f.embed.FailWith(0)
	f.waitFor("the good texts to be embedded", func() bool {
		return f.vectors(ns, "good1")[0].Embedded && f.vectors(ns, "good2")[0].Embedded
	})
	f.waitFor("the refused text to be retried", func() bool { return f.vectors(ns, "bad")[0].Attempts >= 2 })
	if r := f.vectors(ns, "bad")[0]; r.Embedded || !strings.Contains(*r.Error, "HTTP 400") {
		t.Fatalf("refused row = %+v", r)
	}
	for _, k := range []string{"good1", "good2"} {
		if r := f.vectors(ns, k)[0]; r.Attempts != 0 {
			t.Fatalf("%s was embedded after %d failures, want none: the refused batch must be split at once", k, r.Attempts)
		}
	}
	reqs := f.embed.Requests()[before:]
	if len(reqs) < 4 || len(reqs[0]) != 3 || !reflect.DeepEqual(reqs[1:4], [][]string{{"fine words"}, {"poison pill"}, {"more fine words"}}) {
		t.Fatalf("requests after the refusal: %q, want the batch of 3, then each text alone", reqs)
	}
	got := f.semantic(map[string]any{"query": "fine words"})
	keys := []string{}
	for _, s := range got {
		keys = append(keys, s.Key)
	}
	slices.Sort(keys)
	if !reflect.DeepEqual(keys, []string{"good1", "good2"}) {
		t.Fatalf("found %v", got)
	}
}

// Without an index a query stays a text match with a null score, and a put
// drops vectors an earlier index left (they could not follow the value).
func TestNoIndexKeepsTextMatchAndDropsStaleVectors(t *testing.T) {
	t.Parallel()
	f := setupIndexed(t, nil, false)
	ns := []string{"n"}
	f.put(ns, "k", map[string]any{"v": "old words"})
	f.waitEmbedded()
	plain := servertest.StartWith(t, f.DSN, func(c *server.Config) { c.Workers = 0 })
	plain.Must(http.StatusNoContent, "PUT", "/store/items", map[string]any{"namespace": ns, "key": "k", "value": map[string]any{"v": "new words"}})
	if rows := f.vectors(ns, "k"); len(rows) != 0 {
		t.Fatalf("vectors after a put without an index: %+v", rows)
	}
	var resp struct {
		Items []map[string]any `json:"items"`
	}
	plain.Must(http.StatusOK, "POST", "/store/items/search", map[string]any{"query": "NEW"}).JSON(t, &resp)
	if len(resp.Items) != 1 || resp.Items[0]["score"] != nil {
		t.Fatalf("text match without an index: %v", resp.Items)
	}
}
