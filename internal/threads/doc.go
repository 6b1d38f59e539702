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
package threads
