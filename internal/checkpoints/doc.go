// Package checkpoints is Weft's checkpoint store: a Go re-implementation of
// LangGraph's Postgres checkpoint saver on LangGraph's own schema
// (checkpoints, checkpoint_blobs, checkpoint_writes, checkpoint_migrations;
// migration 002), so that Weft, the JS PostgresSaver and the Python
// PostgresSaver can read and write the same threads. It also owns the
// thread's element log (thread_elements, thread_element_seqs; migration
// 014), where long lists are stored once per element (compact.go), and
// reads LangGraph's delta channels (delta.go). Deleting or copying a
// thread's checkpoints deletes or copies its summaries (package
// messagelog's thread_summaries) in the same statement.
//
// Every function takes a postgres.DBTX (a pool or a transaction), so the run
// commit coordinator can put a checkpoint, its writes and rows of other
// packages in one transaction. Each write function is a single SQL
// statement, atomic on its own even on a pool.
//
//	LangGraph saver   Weft
//	put               Put
//	putWrites         PutWrites
//	getTuple          GetTuple
//	list              List
//	deleteThread      DeleteThread
//	(Platform copy)   CopyThread
//	(metadata patch)  MergeMetadata
//	(partial reads)   GetTupleWithout, ListStored, BlobListStored
//
// The views built on these reads — the message log read by seq from the
// element log, windows of the last k messages, summaries — are package
// messagelog's, which imports this one (never the other way).
//
// # Schema
//
// Migration 002 creates the union of the JS saver's migrations v0–v4 and the
// Python saver's v5–v9 (thread_id indexes, checkpoint_writes.task_path) and
// records v = 0..9 in checkpoint_migrations, so either saver's setup() finds
// nothing to do. Weft adds no column, no foreign key (the savers write
// threads Weft does not know) and no trigger.
//
// # Rows
//
//	checkpoints (thread, ns, id; parent id; checkpoint JSON without values; metadata)
//	  │ channel_versions[ch] = version
//	  ▼
//	checkpoint_blobs (thread, ns, ch, version) ── type "json" | "bytes" | "msgpack" | "empty"
//	  │                                        └─ type weft_list: header {n, h, ranges}
//	  │                                              ▼
//	  │                          thread_elements (thread, seq, hash, data, run_id, step)
//	  │                          thread_element_seqs (thread, last seq handed out)
//	checkpoint_writes (thread, ns, checkpoint id, task, idx) ── pending writes of tasks started from it
//
// A checkpoint row holds the checkpoint JSON (v4) without channel_values,
// as the JS saver writes it. Values live in checkpoint_blobs, keyed by
// (thread, namespace, channel, version): a put writes one blob row per
// channel that changed in the step (newVersions) and has a value (a
// channel that got a version but has no value gets no row, where the stock
// savers write one of type "empty": readers treat both alike); unchanged channels are
// found again through channel_versions, so one blob row serves every later
// checkpoint with that version. Blob inserts are ON CONFLICT DO NOTHING: a
// version must therefore name exactly one value in a thread, which is why
// versions are minted by NextVersion ("{counter:032d}.0.{16 digits}", the
// Python saver's scheme with a suffix unique per call). The stock JS saver
// mints integers that repeat on sibling branches and so silently reads the
// other branch's values after a fork; with NextVersion two siblings from one
// parent never share a version. A stock JS saver can read Weft's rows, but
// cannot continue such a thread: its getNextVersion refuses string
// versions.
//
// Writes belong to the checkpoint their task started from. The special
// channels (__error__ -1, __scheduled__ -2, __interrupt__ -3, __resume__ -4)
// use fixed indexes and overwrite; other writes never overwrite an existing
// row.
//
// Checkpoint ids are UUIDv6 from NewCheckpointID: time-ordered, so the text
// order of checkpoint_id is creation order. "Latest" is the greatest id in
// the namespace on any branch, and history pages are keyset queries
// (checkpoint_id < before ORDER BY checkpoint_id DESC LIMIT n) served by
// walking the primary key backwards.
//
// A JSON list of CompactMinBytes or more (a conversation's messages) is
// stored by reference (blob type weft_list): each element once per thread
// in the element log, under a seq handed out by thread_element_seqs, and
// per version a header of seq ranges diffed against the parent's; every
// read rebuilds exactly the JSON LangGraph would have stored, and the
// "langgraph" schema's views do the same for foreign readers.
//
// # Invariants
//
//   - A version names exactly one value in a thread (NextVersion); blob
//     rows are never rewritten.
//   - Reads rebuild what a LangGraph saver would have stored: a compact
//     list with an element missing from the log is an ErrElementMissing
//     error, never a shorter list; a delta channel is replayed from its
//     nearest snapshot, never read as an empty list.
//   - A read costs a fixed number of queries for a page, whatever the
//     thread's length; a history page is a keyset query on the primary
//     key.
//   - A thread's values projection may reference a root-namespace blob row
//     (threads.values_refs, migration 023; package threads). The deletes of
//     this package do not look at it: their callers store the projection
//     whole first (a prune) or project the thread again in the same
//     transaction (a rollback), or delete the thread row with it.
//
// # Reading rows from any saver
//
// A read is three queries for a whole page, whatever the thread's length:
// the checkpoint rows, their blobs by key (deduplicated: a blob shared by
// several checkpoints of the page is fetched and decoded once, then copied),
// and their writes by checkpoint. Values are decoded by serde.Decode by the
// row's type: json and bytes (JS and Weft), msgpack (Python's default),
// null; "empty" blobs mean "no value" and the channel is left out of
// ChannelValues. Python stores primitive values inline in
// checkpoint->'channel_values' and writes no blob for them: those are read
// too (the JS saver drops them). Versions are read as text: the JS saver's
// JSON numbers become their decimal text ("3"), which is how
// checkpoint_blobs.version keys them; CompareVersions orders versions of
// mixed formats by their integer counter.
//
// # Lists stored per element
//
// A JSON list of CompactMinBytes or more is stored once per element in the
// thread's element log (compact.go) and read back by list_read.go: the
// headers of every list a read returns are resolved together, the union of
// their seq ranges fetched in one query, each list spliced from those bytes
// without decoding, and the rebuilt lists cached by content hash
// (list_cache.go). A list whose bytes are already encoding/json's output
// (jsonv.Canonical) is marked on its Tuple (Tuple.Verbatim) so a response
// can copy it as it is; a value taken unchanged from its row (a rebuilt
// list, a plaintext json blob, without LangChain envelopes) is marked too
// (Tuple.AsStored, StoredVersions), so that a thread projection written in
// the same transaction may reference the row instead of copying the value.
//
// # One message shape
//
// LangChain messages reach the store in three encodings: Python's msgpack
// pydantic models, the JS saver's lc:1 constructors
//
//	{"lc":1,"type":"constructor","id":["langchain_core","messages","HumanMessage"],"kwargs":{...}}
//
// and the plain dicts Weft's own graphs write. Reads turn the first two into
// the third — LangChain's message dict {type: "human"|"ai"|"tool"|"system"|
// …, content, id, name, additional_kwargs, response_metadata, tool_calls,
// invalid_tool_calls, usage_metadata (AI)…}, with the kwargs as they are
// (the JS saver already writes them snake_case) and the type from the class
// name — recursively (inside a messages list, inside a dict), so the API
// shows one shape whatever wrote the row. Other lc:1 constructors degrade to
// their kwargs; the JS serde's lc:2 constructors (Set, Map, RegExp, Error,
// Uint8Array) to their kwargs or their argument, and lc:2 "undefined" to
// null (serde.NormalizeLC). Weft writes values back as plain JSON ("json"
// blobs), never as lc envelopes. A delta channel of messages is rebuilt by
// replaying its writes through internal/checkpoints/deltareducer.
//
// Checkpoint, Metadata and Write are aliases of wire.Checkpoint,
// wire.Metadata and wire.Write: a worker's commit carries them whole and
// the worker protocol is a leaf package, so their shapes are declared there
// (their schemas keep the names checkpoints.Checkpoint and
// checkpoints.Write); everything that reads or writes them is here.
//
// Not implemented: the JS saver's migration of pending sends for checkpoints
// older than format v4 (it folds __pregel_tasks writes of the parent into
// channel_values); such rows read with their stored values only.
package checkpoints
