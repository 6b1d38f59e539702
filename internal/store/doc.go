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
// Until semantic search exists, a search's query is a case-insensitive
// substring match over the item's scalar values (strings, numbers and
// booleans, at any depth; not the keys), and results stay ordered by
// updated_at, newest first, each with "score": null. The index field of a
// put is validated (false, null or a list of field paths) and otherwise
// ignored.
package store
