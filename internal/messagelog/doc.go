// Package messagelog reads a thread's list channels as views and keeps
// summaries of them (DESIGN §5, "layers as views, never lossy storage"):
// the message log paged by seq, windows of the last k messages of a
// state read, and summary records covering seq ranges. It owns the
// thread_summaries table (migration 019) and writes nothing else; the
// elements themselves belong to package checkpoints, which writes the
// thread's element log (thread_elements) and hands out the stored form of
// a list (checkpoints.StoredList). This package reads the log by seq
// (elements.go). Package state serves it over HTTP (GET
// /threads/{id}/messages, messages_window, /summaries); the executor hands
// a graph its summaries.
//
//	checkpoints ◀── messagelog ◀── state, executor
//
// # Data
//
//	checkpoint ──channel_versions[ch]──▶ checkpoint_blobs (ch, version)
//	                                      │ weft_list: header {n, ranges [lo, hi]…}
//	                                      │   └──▶ thread_elements (seq, data, run_id, step)   ◀── ListView.Records(from, to)
//	                                      └ json / msgpack / inline: the whole list (short by construction)
//	thread_summaries (channel, from_seq..to_seq, summary) ── covers ──▶ seqs of the element log
//
// A ListView opens a channel at one checkpoint with two indexed queries
// (the checkpoint row, the channel's blob) and reads a range of positions
// with one more, whatever the list's length.
//
// # Invariants
//
//   - A view never changes what is stored: windows and summaries are
//     derived, and a summary never replaces or edits a checkpoint value.
//   - The seq of an element is stable: an element of a compact list keeps
//     its element-log seq on every checkpoint and branch that holds it; an
//     element of a plain list has its 1-based position, the seq the
//     thread's first compaction gives it.
//   - A missing element is an error (checkpoints.ErrElementMissing), never
//     a shorter list; a value not stored as a value at the checkpoint (a
//     delta channel) is ErrListReplay, and the caller reads it whole.
//   - One summary per thread, channel and range (409 on a second); the
//     summary that goes with a window is the widest that ends before the
//     window's first seq. A thread's summaries are deleted and copied with
//     its checkpoints (checkpoints.DeleteThread and checkpoints.CopyThread: one
//     statement each, so they never outlive or miss the thread's rows).
package messagelog
