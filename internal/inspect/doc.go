// Package inspect serves the read endpoints the time-travel UI (web/) needs
// and the LangGraph Agent Server API has no equivalent for, under /inspect:
//
//	GET /inspect/threads/storage?thread_id=…            rows and bytes per thread (checkpoints, blobs, writes, run events), children, runs
//	GET /inspect/threads/{thread_id}/checkpoints        the checkpoint tree, light nodes, keyset-paged like history
//	GET /inspect/threads/{thread_id}/checkpoints/{id}   one checkpoint as stored: versions, versions_seen, blobs, writes decoded
//	GET /inspect/threads/{thread_id}/runs               runs with their timings (started_at, finished_at), error and event count
//	GET /inspect/threads/{thread_id}/runs/{run_id}      one of those
//
// Everything here is read-only and paged: a page costs O(page) index probes,
// except where a doc comment says otherwise (counts over one thread's rows).
// The package reads other packages' tables (threads, runs, run_events and the
// LangGraph checkpoint tables) directly and writes nothing; values are decoded
// through package checkpoints, so rows of every saver (Weft, the JS and the
// Python PostgresSaver) read as the state API shows them.
//
// # Checkpoint nodes
//
// A node is what a tree needs and no values: id, parent, step, source (input,
// loop, update, fork), the run that wrote it (metadata run_id), the channels
// whose version differs from its parent's (what the step changed), and counts
// of the pending writes recorded under it (writes belong to the checkpoint
// their task started from, so a node's writes are its tasks' outputs, errors
// and interrupts). Pages are newest first by checkpoint id across every
// branch, as history is; a node's parent may be on a later page.
//
// # Storage
//
// Bytes are pg_column_size of the data columns (checkpoint + metadata of a
// checkpoint row, the blob of a blob or write row, data of a run event): what
// PostgreSQL stores after compression, without row headers or indexes.
package inspect
