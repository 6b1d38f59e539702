// Package store is Weft's Store (reference §10): long-term memory shared
// across threads and runs. An item is a JSON object filed under a namespace
// (a path of labels, ["users", "u1", "memories"]) and a key; the HTTP API
// puts, gets, deletes and searches items and lists the namespaces in use.
//
// # Table
//
// store_items (migration 006) has one row per item, primary key
// (namespace, key). Beside the namespace (text[]) it keeps ns_path, a
// generated column holding the labels joined and ended by "."
// (["a","b"] → "a.b."), in byte order (COLLATE "C"). Labels never contain
// "." (the API refuses them), so a namespace under the prefix ["a","b"] is
// exactly a row whose ns_path lies in ["a.b.", "a.b/"): a prefix search is
// one range scan of the ns_path btree. Comparing array slices
// (namespace[1:n] = $prefix) cannot use an index at all; measured with
// EXPLAIN ANALYZE on 5,000 items in 1,050 namespaces, the prefix ["user7"]
// (100 items) is a bitmap index scan on ns_path followed by a top-N sort,
// where the slice comparison walks the updated_at index and filters every
// row (a prefix is a range, so its matches are still sorted by updated_at
// after the scan). Listing every item newest first walks the updated_at
// index; a filter (value @> {...}) has a GIN index (jsonb_path_ops) for when
// it is selective; the sweeper reads a partial index on expires_at.
//
// # Time to live
//
// An item put with ttl (minutes) gets expires_at = now + ttl and keeps
// ttl_minutes. Every read filters on expires_at, so an item is invisible the
// moment it expires, whether or not the sweeper has deleted it yet; a put
// over an expired item starts a new one (its created_at is the put's). The
// sweeper (StartSweeper) deletes expired rows in batches every interval
// (default DefaultSweepInterval). refresh_ttl, on by default as in
// LangGraph, sets expires_at to the read's time plus ttl_minutes on a GET and
// on every item a search returns; items without a ttl are not written.
//
// "Now" is the database's now() unless the Store has a clock (tests use one
// so time moves without sleeping): every statement takes it as
// coalesce($now, now()).
//
// # Search
//
// Without a query (or with an empty one) a search lists the live items
// under the prefix that match the filter, newest update first, each with
// "score": null. Without a semantic index, a query is a case-insensitive
// substring match over the item's scalar values (strings, numbers and
// booleans, at any depth; not the keys) that filters and does not rank. With
// one, a query is ranked by meaning (below).
//
// # Semantic index
//
// Configured like langgraph.json's store.index (IndexConfig, from
// WEFT_STORE_INDEX or -store-index; ParseIndexConfig and
// IndexConfigFromLangGraphJSON read it): dims, embed "openai:MODEL" (an
// OpenAI-compatible POST {OPENAI_BASE_URL}/embeddings) and fields, the JSON
// paths whose text is embedded (default "$", the whole value; syntax and
// naming in fieldpath.go, checked against LangGraph.js's getTextAtPath).
//
// store_vectors (migration 010) has one row per (item, field): the field's
// path, its text and, once embedded, its vector (real[], as the model
// returned it), its norm and the model (embed and dims) that made it. The
// row is a small queue entry while it has no vector:
//
//	       put (new field, or new text)
//	(none) ───────────────────────────▶ pending ──claim──▶ claimed ──save──▶ embedded
//	                                      ▲  ▲  (token, lease)  │  │                │
//	                                      │  └─ lease runs out ─┘  │ failure:       │ put with a new text
//	                                      │                        │ attempts+1,    │ (or another model's)
//	                                      └──── backoff ◀──────────┘ last_error     │
//	                                      └─────────────────────────────────────────┘
//
// A put (PUT /store/items) runs in one transaction: it upserts the item,
// deletes the rows of fields the value no longer yields, inserts a pending
// row per new field and resets a field whose text changed (a field whose
// text is the same keeps its vector: re-putting a value costs no
// embedding), then sends NOTIFY weft_store_embed. It never calls the
// endpoint, so it succeeds while the endpoint is down, and the item is
// readable at once. index: false (or []) leaves the item without rows;
// index: [paths] uses those paths instead of the configured fields. Without
// an index configured, a put deletes the item's rows (nothing would
// re-embed the new value). A deleted item's rows go with it (ON DELETE
// CASCADE), and so do an expired item's when the sweeper deletes it.
//
// The indexer (StartIndexer) runs on every replica. It wakes on the
// notification, when the next failed row is due, and at least every poll
// interval, and then claims batches of due rows with one UPDATE … FROM
// (SELECT … FOR UPDATE SKIP LOCKED) (the partial index on available_at WHERE
// embedding IS NULL): a fresh claim_token, and available_at pushed a lease
// ahead so that a crashed indexer's rows come back. It sends the batch's
// distinct texts to the endpoint (at most 128 inputs per request) and saves
// each vector only where the row still carries its claim_token and no vector
// (a put that changed the text in between voided the claim, so an old text's
// vector is never filed under a new text). A failure reschedules the rows:
// attempts + 1, last_error, and a backoff of 1 s doubling up to 1 h (±25 %);
// rows are retried for as long as their item lives. When the endpoint
// refuses a batch's input (HTTP 400, 413, 422: a text too long, say), each
// text is sent alone at once, so one bad text only holds back itself.
// Vectors are checked to have dims elements; an answer that does not is a
// failure.
//
// A semantic search embeds the query first, synchronously. If the endpoint
// fails (unreachable, 5xx, 429, an unusable answer) the search answers 503
// with Retry-After and a {"detail"} naming the endpoint's error; if the
// endpoint refuses the query itself, 422. Then one statement ranks the live
// items under the prefix matching the filter: for each, a lateral subquery
// scores its vectors of the configured model (one PK lookup) and keeps the
// best; the score is the exact cosine similarity
//
//	e·q / (|e| |q|)     e·q summed in float8 over the float4 elements in SQL,
//	                    |e| stored at write, |q| computed from the query
//
// (LangGraph's Postgres store reports the same value, 1 - cosine distance).
// Items come best first, ties by namespace and key; an item's score is
// that of its best field. Items whose rows are all pending (just put, or
// the endpoint failing) or that have none (index: false) are left out:
// listing and text match are the ways to see every item. refresh_ttl
// applies as for any search.
//
// # Latency
//
// Exact search reads and scores every vector under the prefix: the time is
// linear in their number and in dims. BenchmarkSemanticSearch (one vector per
// item, dims 1536, limit 10, query embedding excluded), on 2 shared vCPUs
// (AMD EPYC), PostgreSQL 15 with default settings, at two levels of load
// from other work on the machine:
//
//	items under the prefix     100      1,000     10,000     100,000
//	load average 2–3         17 ms     177 ms     2.06 s      16.8 s
//	load average 10–11       52 ms     558 ms     5.24 s      69.9 s
//
// about 0.17 ms per 1536-dimension vector on a quiet machine (some 110 ns
// per element: SQL arithmetic goes through the executor element by
// element), 0.5–0.7 ms on a busy one. The correlated
// scoring subquery keeps PostgreSQL from using parallel workers. Keep the
// prefix of a semantic search narrow (one user's memories) or add an ANN
// index (below) for large prefixes. The vector stays in the row (STORAGE
// MAIN, toast_tuple_target 8160) up to about 2,000 dimensions, so a scan
// does not pay a TOAST lookup per vector.
//
// # An ANN index where pgvector exists
//
// pgvector is not required and not used. Where it can be installed, the
// table takes an HNSW index without moving any data, since real[] casts to
// vector:
//
//	CREATE EXTENSION vector;
//	ALTER TABLE store_vectors ADD COLUMN embedding_ann vector(1536)
//	    GENERATED ALWAYS AS (embedding::vector(1536)) STORED;
//	CREATE INDEX store_vectors_ann_idx ON store_vectors
//	    USING hnsw (embedding_ann vector_cosine_ops);
//
// (dims as configured; the column accepts only vectors of that length, which
// the indexer guarantees for one model). The search statement then ranks
// by the index instead of the lateral subquery: ORDER BY v.embedding_ann <=>
// $query LIMIT n over store_vectors joined to the live items under the
// prefix and filter, keeping each item's best row, with score 1 - distance
// (pgvector 0.8's hnsw.iterative_scan keeps a filtered page full). That
// statement is not written here: nothing could test it.
//
// # Changing the index
//
// Vectors record the embed setting and dims that made them, and a search
// compares the query only with vectors of the configured ones: after a
// change of model or dims, items are left out of semantic search until they
// are embedded again. A put does that for its item; to re-embed everything
// from the stored texts,
//
//	UPDATE store_vectors SET embedding = NULL, norm = NULL, model = NULL, attempts = 0,
//	    available_at = now(), claim_token = NULL, last_error = NULL;
//
// and the indexers pick the rows up within their poll interval. A change of
// fields applies to items put afterwards (a row's text is what the fields
// selected when its item was put).
package store
