// Package threads owns the threads table: the Thread object of the Agent
// Server API plus Weft's hierarchy (parent_thread_id) and resource scope
// (resource_id), its validation, the delete strategies and search.
//
// Hierarchy invariants, all enforced inside the writing transaction:
//
//   - parent_thread_id and resource_id are trimmed; blank means null.
//   - A thread is never its own parent, its parent exists, and walking its
//     ancestors never revisits a thread (no cycles). The ancestors are read
//     FOR SHARE, so a concurrent delete or re-parent of any of them waits for
//     this transaction (or makes it wait), and two re-parentings racing to
//     close a cycle cannot both succeed: the second one either sees the
//     first one's committed edge or loses a deadlock and is retried, and
//     then sees it.
//   - The foreign key on parent_thread_id (no ON DELETE action) makes "no
//     child points at a deleted parent" a database fact.
//
// Delete strategies (one transaction, rows locked FOR UPDATE):
//
//	reject   409 when the thread has a direct child; nothing changes
//	detach   direct children become roots; grandchildren keep their parent (default)
//	cascade  the whole subtree goes
//
// Cascade locks the subtree repeatedly until it stops growing, so a child
// created concurrently under any node of the subtree is either seen and
// deleted, or its creation waits and then fails because its parent is gone.
//
// # Who writes the row
//
// Every statement that writes the threads table is in this package; other
// packages call it with their transaction or batch (a postgres.Pipeline
// is a DBTX whose Exec queues), so a thread's write keeps its place among
// their statements and their locks:
//
//	API (handlers.go, table.go)   create, patch, copy (CopyRow), delete strategies, ttl
//	state                         SetState (a state change's projection), ValuesInline (before a prune)
//	runs                          InsertTemporary, SetRunCreated, DispatchEpochBump, SetBusy,
//	                              ProjectLatest (a queued run cancelled); InsertDefault (if_not_exists)
//	coordinator                   SetRunEnded (a run's end, projection known), ProjectLatest (read back)
//	crons                         SetCronID (a stateless firing's thread); InsertDefault
//	ttl sweeper (ttl_sweeper.go)  DeleteExpired, expires_at cleared after keep_latest (whose
//	                              pruning the state package provides: PruneToLatest)
//
// The projection of a checkpoint (values, interrupts, pending tasks) is
// computed by one function, Project, whatever the checkpoint's source: the
// in-process executor's last checkpoint, an external worker's complete
// checkpoint in its ending commit, or the latest one read back
// (ProjectLatest).
//
// # The values projection
//
// A thread row shows its latest root checkpoint's values (the Thread
// object's values, search and its values filter, webhooks, a join without
// result). Writers hand it over as a State and store it through
// Store.Stored: a list channel of ValuesRefMinBytes or more of JSON whose
// checkpoint blob row the writer vouches for (State.Blobs: written by the
// same put, or read unchanged in the same transaction) is left out of
// "values" and named in values_refs {channel: version} (migration 023), so
// a long conversation is not copied into the row at every turn. Readers
// select ValuesSQL, which merges the lists back (weft_thread_values: the
// same jsonb as a whole row):
//
//	threads."values"      {"foo": "b"}                        small channels
//	threads.values_refs   {"messages": "0…7.0.8124"}          NULL: values is whole
//	   │
//	   ▼ (thread, "", channel, version)
//	checkpoint_blobs ── json | weft_list ──▶ thread_elements
//
// Invariants:
//
//   - A reference names a blob that exists when it is written
//     (weft_thread_values_refs refuses one that does not) and holds exactly
//     the projected value; rows written before migration 023, and every row
//     with encryption at rest (sealed, SQL cannot open the blobs), have no
//     references.
//   - Nothing deletes a referenced blob while the reference stands: a
//     keep_latest prune stores the projection whole first when it names a
//     blob the kept checkpoint does not (ValuesInline), a rollback projects
//     the thread again in its transaction, a thread delete deletes the row,
//     the "langgraph" views' blob delete stores the projection whole, and
//     the element log keeps the elements of every blob that exists.
//   - A copy (CopyRow) keeps the references: the checkpoints are copied
//     with their versions, first.
package threads
