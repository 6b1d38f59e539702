package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/store"
)

// benchDims is the vector length of the search benchmark: OpenAI's
// text-embedding-3-small, the example index of the docs.
const benchDims = 1536

// BenchmarkSemanticSearch measures POST /store/items/search's database
// work for a semantic query: N items, each with one embedded vector of
// benchDims float4 (deterministic pseudo-random values), all under the
// namespace prefix ["bench"] (100 namespaces ["bench", "uK"]); a search
// ranks every item under the prefix by exact cosine similarity computed in
// SQL and returns the best 10. The query's embedding (a call to the
// endpoint) is not included. "prefix=all" scores all N items,
// "prefix=1%" the N/100 under ["bench", "u7"].
//
//	go test -run '^$' -bench SemanticSearch -benchtime 5x ./internal/store/
func BenchmarkSemanticSearch(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("items=%d/dims=%d", n, benchDims), func(b *testing.B) {
			if testing.Short() && n > 10_000 {
				b.Skip("-short: 10,000 items only")
			}
			s, conn, loaded := loadBench(b, n)
			query := benchVector(rand.New(rand.NewPCG(0, 0xfeed)))
			for _, c := range []struct {
				name   string
				prefix []string
				want   int
			}{{"prefix=all", []string{"bench"}, n}, {"prefix=1%", []string{"bench", "u7"}, n / 100}} {
				b.Run(c.name, func(b *testing.B) {
					var version string
					var workers int
					_ = conn.QueryRow(context.Background(), `SELECT current_setting('server_version'), current_setting('max_parallel_workers_per_gather')::int`).Scan(&version, &workers)
					b.Logf("exact cosine over %d vectors (float4[%d], one per item) under prefix %v, limit 10, in SQL; query embedding excluded; PostgreSQL %s, max_parallel_workers_per_gather %d; %s",
						c.want, benchDims, c.prefix, version, workers, loaded)
					for b.Loop() {
						items, err := s.Search(context.Background(), store.SearchParams{Prefix: c.prefix, Vector: query, Limit: 10})
						if err != nil {
							b.Fatal(err)
						}
						if len(items) != 10 || items[0].Score == nil || *items[0].Score < *items[9].Score {
							b.Fatalf("search returned %d items, first %v", len(items), items[0])
						}
					}
					b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/search")
				})
			}
		})
	}
}

// loadBench fills a fresh database with n items and their vectors (COPY),
// analyzes it, and returns a Store with a matching index, a connection for
// settings, and what was loaded.
func loadBench(b *testing.B, n int) (*store.Store, *pgx.Conn, string) {
	b.Helper()
	ctx := context.Background()
	dsn := pgtest.DSN(b)
	pool, err := postgres.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	start := time.Now()
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Now()
	items := make([][]any, 0, n)
	vecs := make([][]any, 0, n)
	for i := range n {
		ns := []string{"bench", fmt.Sprintf("u%d", i%100)}
		key := fmt.Sprintf("k%d", i)
		value, _ := json.Marshal(map[string]any{"text": key})
		v := benchVector(rng)
		items = append(items, []any{ns, key, string(value), now, now})
		vecs = append(vecs, []any{ns, key, "$", key, v, benchNorm(v), "openai:bench/1536", now})
	}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"store_items"}, []string{"namespace", "key", "value", "created_at", "updated_at"},
		pgx.CopyFromRows(items)); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"store_vectors"}, []string{"namespace", "key", "field", "text", "embedding", "norm", "model", "updated_at"},
		pgx.CopyFromRows(vecs)); err != nil {
		b.Fatal(err)
	}
	for _, table := range []string{"store_items", "store_vectors"} {
		if _, err := pool.Exec(ctx, `VACUUM ANALYZE `+table); err != nil {
			b.Fatal(err)
		}
	}
	var size string
	_ = pool.QueryRow(ctx, `SELECT pg_size_pretty(pg_total_relation_size('store_vectors'))`).Scan(&size)
	loaded := fmt.Sprintf("%d items loaded in %v, store_vectors %s", n, time.Since(start).Round(time.Second), size)
	s := store.NewStore(pool, nil)
	s.EnableIndex(&store.IndexConfig{Dims: benchDims, Embed: "openai:bench", Fields: []string{"$"}}, nil)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = conn.Close(ctx) })
	return s, conn, loaded
}

func benchVector(rng *rand.Rand) []float32 {
	v := make([]float32, benchDims)
	for i := range v {
		v[i] = rng.Float32()*2 - 1
	}
	return v
}

func benchNorm(v []float32) float64 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	return math.Sqrt(sum)
}
