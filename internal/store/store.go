package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/crypt"
	"github.com/weftdev/weft/internal/postgres"
)

// Store reads and writes store_items and store_vectors. Exported methods
// run on the pool (a put with an index, and a search that refreshes ttls, in
// a transaction); the statements they run take "now" as their first
// argument (see nowSQL).
type Store struct {
	db    *pgxpool.Pool
	clock func() time.Time
	// index and embedder are set by EnableIndex (nil: no semantic index).
	index    *IndexConfig
	embedder Embedder
	// defaultTTL is the ttl (minutes) of a put without one (nil: none) and
	// noRefresh makes refresh_ttl default to false (langgraph.json's
	// store.ttl default_ttl and refresh_on_read; SetTTLDefaults).
	defaultTTL *float64
	noRefresh  bool
}

// SetTTLDefaults makes a put without a ttl expire after defaultTTL minutes
// (nil: never) and reads refresh ttls unless asked not to when
// refreshOnRead, else only when asked to.
func (s *Store) SetTTLDefaults(defaultTTL *float64, refreshOnRead bool) {
	s.defaultTTL, s.noRefresh = defaultTTL, !refreshOnRead
}

// NewStore returns a Store on db. clock, when not nil, is the time every
// statement uses instead of the database's now() (tests move it).
func NewStore(db *pgxpool.Pool, clock func() time.Time) *Store {
	return &Store{db: db, clock: clock}
}

// EnableIndex turns semantic search on: puts file the texts cfg's fields
// select for embedding, searches with a query rank by cosine similarity to
// the query's embedding. Call it before the store serves requests, and run
// an indexer (StartIndexer) to embed what puts leave pending.
func (s *Store) EnableIndex(cfg *IndexConfig, e Embedder) {
	s.index, s.embedder = cfg, e
}

// Indexed reports whether the store has a semantic index.
func (s *Store) Indexed() bool { return s.index != nil }

// now is the first argument of every statement: nil means the database's
// now().
func (s *Store) now() *time.Time {
	if s.clock == nil {
		return nil
	}
	t := s.clock()
	return &t
}

// nowSQL is the current time in a statement whose first argument is now().
const nowSQL = `coalesce($1::timestamptz, now())`

// expiresSQL is expires_at for a ttl in minutes (NULL ttl: never).
const expiresSQL = nowSQL + ` + make_interval(secs => %s * 60)`

// liveSQL selects the items that have not expired.
const liveSQL = `(s.expires_at IS NULL OR s.expires_at > ` + nowSQL + `)`

const itemColumns = `s.namespace, s.key, s.value, s.created_at, s.updated_at`

// PutParams are the inputs of Put (validated by the handler).
type PutParams struct {
	Namespace []string
	Key       string
	Value     json.RawMessage // a JSON object
	TTL       *float64        // minutes; nil: never expires
	// NoIndex (a put's index: false) keeps the item out of semantic search;
	// IndexPaths (its index: [paths]) replace the index's fields for it.
	// Both are ignored without an index.
	NoIndex    bool
	IndexPaths []string
}

// itemUpsert inserts or replaces an item. Replacing keeps created_at unless
// the old item had expired (and was waiting for the sweeper): then the put
// starts a new item.
var itemUpsert = `
	INSERT INTO store_items AS s (tenant_id, namespace, key, value, created_at, updated_at, expires_at, ttl_minutes)
	VALUES ($6, $2, $3, $4::jsonb, ` + nowSQL + `, ` + nowSQL + `, ` + fmt.Sprintf(expiresSQL, "$5::float8") + `, $5::float8)
	ON CONFLICT (tenant_id, namespace, key) DO UPDATE SET
		value = EXCLUDED.value,
		updated_at = EXCLUDED.updated_at,
		expires_at = EXCLUDED.expires_at,
		ttl_minutes = EXCLUDED.ttl_minutes,
		created_at = CASE WHEN s.expires_at <= EXCLUDED.updated_at THEN EXCLUDED.created_at ELSE s.created_at END`

// itemUpsertUnindexed is itemUpsert dropping the item's vectors: without an
// index nothing would re-embed the new value, and stale vectors must not
// answer a search once an index is configured again.
var itemUpsertUnindexed = `WITH unindexed AS (DELETE FROM store_vectors WHERE tenant_id = $6 AND namespace = $2 AND key = $3) ` + itemUpsert

// Put inserts the item or replaces the value, ttl and updated_at of an
// existing one. With an index, the same transaction files the texts the
// item's fields select as pending vectors (none with NoIndex) and notifies
// the indexers: the put never waits for the embeddings endpoint, and an
// item is never stored without its pending vectors. A path selecting more
// than MaxIndexTexts texts is a 422.
func (s *Store) Put(ctx context.Context, p PutParams) error {
	kr := crypt.FromContext(ctx)
	stored := kr.SealJSON(p.Value) // encryption at rest (nil keyring: as it is)
	if p.TTL == nil {
		p.TTL = s.defaultTTL
	}
	if s.index == nil {
		_, err := s.db.Exec(ctx, itemUpsertUnindexed, s.now(), p.Namespace, p.Key, string(stored), p.TTL, auth.Tenant(ctx))
		return err
	}
	var texts []fieldText
	if !p.NoIndex {
		paths := p.IndexPaths
		if paths == nil {
			paths = s.index.Fields
		}
		var err error
		if texts, err = indexTexts(p.Value, paths); err != nil {
			return apperr.Errorf(apperr.Invalid, "Invalid index: %v", err)
		}
	}
	return postgres.WithTx(ctx, s.db, func(tx pgx.Tx) error {
		now := s.now()
		if _, err := tx.Exec(ctx, itemUpsert, now, p.Namespace, p.Key, string(stored), p.TTL, auth.Tenant(ctx)); err != nil {
			return err
		}
		for i := range texts {
			texts[i].Text = sealText(kr, texts[i].Text)
		}
		return syncVectors(ctx, tx, now, auth.Tenant(ctx), p.Namespace, p.Key, texts, s.index.VectorModel())
	})
}

// itemGetRefresh reads a live item, first pushing its expiry forward when
// it has a ttl ($4: refresh_ttl).
var itemGetRefresh = `
	WITH refreshed AS (
		UPDATE store_items s SET expires_at = ` + fmt.Sprintf(expiresSQL, "s.ttl_minutes") + `
		WHERE $4 AND s.tenant_id = $5 AND s.namespace = $2 AND s.key = $3 AND s.expires_at > ` + nowSQL + `
		RETURNING ` + itemColumns + `
	)
	SELECT * FROM refreshed
	UNION ALL
	SELECT ` + itemColumns + ` FROM store_items s
	WHERE s.tenant_id = $5 AND s.namespace = $2 AND s.key = $3 AND ` + liveSQL + ` AND NOT EXISTS (SELECT FROM refreshed)`

// Get returns the live item (nil when it does not exist or has expired).
// refresh pushes the expiry of an item with a ttl to now + ttl.
func (s *Store) Get(ctx context.Context, namespace []string, key string, refresh bool) (*Item, error) {
	return itemGet(ctx, s.db, s.now(), namespace, key, refresh)
}

func itemGet(ctx context.Context, db postgres.DBTX, now *time.Time, namespace []string, key string, refresh bool) (*Item, error) {
	rows, err := db.Query(ctx, itemGetRefresh, now, namespace, key, refresh, auth.Tenant(ctx))
	if err != nil {
		return nil, err
	}
	item, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Item])
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err == nil {
		err = item.open(ctx)
	}
	if err != nil {
		return nil, err
	}
	return &item, nil
}

const itemDelete = `DELETE FROM store_items WHERE tenant_id = $3 AND namespace = $1 AND key = $2`

// Delete deletes the item; deleting an absent one is not an error.
func (s *Store) Delete(ctx context.Context, namespace []string, key string) error {
	return itemDeleteOne(ctx, s.db, namespace, key)
}

func itemDeleteOne(ctx context.Context, db postgres.DBTX, namespace []string, key string) error {
	_, err := db.Exec(ctx, itemDelete, namespace, key, auth.Tenant(ctx))
	return err
}

// SearchParams select a page of items (validated by the handler).
type SearchParams struct {
	Prefix []string        // namespaces starting with these labels; empty: all
	Filter json.RawMessage // a JSON object the value must contain; nil: none
	// Query without Vector: a case-insensitive substring of a scalar value
	// ("": none). With Vector (the query's embedding, see EmbedQuery) the
	// items are ranked by cosine similarity to it instead, and Query is not
	// matched as text.
	Query   string
	Vector  []float32
	Limit   int  // 1..1000
	Offset  int  // >= 0
	Refresh bool // push the expiry of the returned items with a ttl
}

// where renders the conditions of p after the live check, with arguments
// appended to args (whose first is now).
func (p *SearchParams) where(ctx context.Context, args *[]any) string {
	var sb strings.Builder
	arg := func(v any) string {
		*args = append(*args, v)
		return fmt.Sprintf("$%d", len(*args))
	}
	fmt.Fprintf(&sb, " AND s.tenant_id = %s", arg(auth.Tenant(ctx)))
	if len(p.Prefix) > 0 {
		lo, hi := prefixRange(p.Prefix)
		fmt.Fprintf(&sb, " AND s.ns_path >= %s AND s.ns_path < %s", arg(lo), arg(hi))
	}
	if p.Filter != nil {
		fmt.Fprintf(&sb, " AND s.value @> %s::jsonb", arg(string(p.Filter)))
	}
	if p.Query != "" && p.Vector == nil {
		fmt.Fprintf(&sb, ` AND EXISTS (SELECT FROM jsonb_path_query(s.value, 'strict $.**') AS v(j)
			WHERE jsonb_typeof(v.j) IN ('string', 'number', 'boolean')
			AND strpos(lower(v.j #>> '{}'), lower(%s)) > 0)`, arg(p.Query))
	}
	return sb.String()
}

// Search returns a page of live items, newest update first (ties by
// namespace and key), each with a null score. With a Vector it returns the
// items that have vectors of the index's model instead, best cosine
// similarity first (an item's score is that of its best field; ties by
// namespace and key): items whose vectors are still pending are left out.
// With Refresh, the returned items with a ttl expire ttl minutes from now;
// the page and its refresh are one statement.
func (s *Store) Search(ctx context.Context, p SearchParams) ([]SearchItem, error) {
	if crypt.FromContext(ctx) != nil && (p.Filter != nil || p.Query != "" && p.Vector == nil) {
		return nil, apperr.Errorf(apperr.Invalid, "Search by value (filter, or query without a semantic index) is not available: store values are encrypted at rest (LANGGRAPH_AES_KEY); search by namespace prefix, or semantically with an index")
	}
	args := []any{s.now()}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	where := p.where(ctx, &args)
	var sql string
	if p.Vector != nil {
		if s.index == nil {
			return nil, fmt.Errorf("store: a vector search without an index")
		}
		q := make([]float64, len(p.Vector))
		for i, x := range p.Vector {
			q[i] = float64(x)
		}
		score := fmt.Sprintf(scoreSQL, arg(q), arg(norm(p.Vector)))
		// Per item, its best vector's score: a lateral subquery, one index
		// lookup per item, each vector scored once; an item without vectors
		// of the model has no row there and drops out of the join. The rows
		// sorted are items with a score, not their vectors.
		sql = fmt.Sprintf(`WITH page AS (SELECT %s, s.tenant_id, s.ns_path, best.score
			FROM store_items s CROSS JOIN LATERAL (
				SELECT %s AS score FROM store_vectors v
				WHERE v.tenant_id = s.tenant_id AND v.namespace = s.namespace AND v.key = s.key AND v.model = %s
				ORDER BY 1 DESC LIMIT 1) best
			WHERE %s%s
			ORDER BY best.score DESC, s.ns_path, s.key LIMIT %s OFFSET %s)`,
			itemColumns, score, arg(s.index.VectorModel()), liveSQL, where, arg(p.Limit), arg(p.Offset))
	} else {
		sql = fmt.Sprintf(`WITH page AS (SELECT %s, s.tenant_id, s.ns_path, NULL::float8 AS score FROM store_items s WHERE %s%s
			ORDER BY s.updated_at DESC, s.ns_path, s.key LIMIT %s OFFSET %s)`,
			itemColumns, liveSQL, where, arg(p.Limit), arg(p.Offset))
	}
	if p.Refresh {
		sql += `, refreshed AS (
			UPDATE store_items s SET expires_at = ` + fmt.Sprintf(expiresSQL, "s.ttl_minutes") + `
			FROM page p WHERE s.tenant_id = p.tenant_id AND s.namespace = p.namespace AND s.key = p.key AND s.ttl_minutes IS NOT NULL)`
	}
	if p.Vector != nil {
		sql += ` SELECT namespace, key, value, created_at, updated_at, score FROM page ORDER BY score DESC, ns_path, key`
	} else {
		sql += ` SELECT namespace, key, value, created_at, updated_at, score FROM page ORDER BY updated_at DESC, ns_path, key`
	}
	var items []SearchItem
	search := func(db postgres.DBTX) error {
		rows, err := db.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		items, err = pgx.CollectRows(rows, pgx.RowToStructByName[SearchItem])
		return err
	}
	var err error
	if p.Refresh {
		// In a transaction so that a deadlock between two searches
		// refreshing the same items is retried.
		err = postgres.WithTx(ctx, s.db, func(tx pgx.Tx) error { return search(tx) })
	} else {
		err = search(s.db)
	}
	if err != nil {
		return nil, err
	}
	if items == nil {
		items = []SearchItem{}
	}
	for i := range items {
		if err := items[i].open(ctx); err != nil {
			return nil, err
		}
	}
	return items, nil
}

// EmbedQuery returns the embedding of a search query, calling the endpoint
// synchronously. Its failure is an *EmbedError.
func (s *Store) EmbedQuery(ctx context.Context, query string) ([]float32, error) {
	vecs, err := s.embedder.Embed(ctx, []string{query})
	if err != nil {
		return nil, err
	}
	return vecs[0], nil
}

// NamespaceParams select a page of namespaces (validated by the handler).
type NamespaceParams struct {
	Prefix   []string // namespaces starting with these labels ("*" matches any label)
	Suffix   []string // namespaces ending with these labels ("*" matches any label)
	MaxDepth int      // > 0: namespaces truncated to this many labels (then deduplicated); 0: whole
	Limit    int      // 1..1000
	Offset   int      // >= 0
}

// ListNamespaces returns the distinct namespaces holding live items,
// matching the prefix and suffix, truncated to MaxDepth, sorted.
func (s *Store) ListNamespaces(ctx context.Context, p NamespaceParams) ([][]string, error) {
	args := []any{s.now()}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, " AND s.tenant_id = %s", arg(auth.Tenant(ctx)))
	// The labels before the first wildcard give an indexed range.
	lead := p.Prefix
	for i, label := range p.Prefix {
		if label == wildcard {
			lead = p.Prefix[:i]
			break
		}
	}
	if len(lead) > 0 {
		lo, hi := prefixRange(lead)
		fmt.Fprintf(&sb, " AND s.ns_path >= %s AND s.ns_path < %s", arg(lo), arg(hi))
	}
	if len(lead) < len(p.Prefix) {
		fmt.Fprintf(&sb, ` AND cardinality(s.namespace) >= cardinality(%[1]s::text[])
			AND NOT EXISTS (SELECT FROM unnest(%[1]s::text[]) WITH ORDINALITY AS c(label, i)
				WHERE c.label <> '*' AND s.namespace[c.i] <> c.label)`, arg(p.Prefix))
	}
	if len(p.Suffix) > 0 {
		fmt.Fprintf(&sb, ` AND cardinality(s.namespace) >= cardinality(%[1]s::text[])
			AND NOT EXISTS (SELECT FROM unnest(%[1]s::text[]) WITH ORDINALITY AS c(label, i)
				WHERE c.label <> '*' AND s.namespace[cardinality(s.namespace) - cardinality(%[1]s::text[]) + c.i] <> c.label)`,
			arg(p.Suffix))
	}
	ns := "s.namespace"
	if p.MaxDepth > 0 {
		ns = fmt.Sprintf("s.namespace[1:%s::int]", arg(p.MaxDepth))
	}
	limit, offset := arg(p.Limit), arg(p.Offset)
	rows, err := s.db.Query(ctx, fmt.Sprintf(`SELECT DISTINCT %s AS ns FROM store_items s WHERE %s%s
		ORDER BY ns LIMIT %s OFFSET %s`, ns, liveSQL, sb.String(), limit, offset), args...)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[[]string])
	if out == nil {
		out = [][]string{}
	}
	return out, err
}

// itemSweep deletes up to $2 expired items, skipping rows other
// transactions hold (a refresh in flight).
var itemSweep = `
	DELETE FROM store_items s USING (
		SELECT tenant_id, namespace, key FROM store_items
		WHERE expires_at <= ` + nowSQL + `
		ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED) d
	WHERE s.tenant_id = d.tenant_id AND s.namespace = d.namespace AND s.key = d.key`

// sweepBatch is how many expired items one sweep statement deletes.
const sweepBatch = 1000

// Sweep deletes every expired item, sweepBatch rows per statement, and
// returns how many it deleted.
func (s *Store) Sweep(ctx context.Context) (int64, error) {
	var total int64
	for {
		tag, err := s.db.Exec(ctx, itemSweep, s.now(), sweepBatch)
		if err != nil {
			return total, err
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < sweepBatch {
			return total, nil
		}
	}
}
