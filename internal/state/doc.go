// Package state is the thread state API — time travel: the state of a
// thread at any checkpoint, its history, update_state (and with an older
// base, fork), and thread copy. It composes three packages in one
// transaction per change: checkpoints (the LangGraph-schema rows), threads
// (the thread row lock and its values / interrupts / status projection) and
// graph (the reducers and edges of the thread's graph, bound by
// metadata.graph_id).
//
// Reading a checkpoint follows LangGraph's Pregel rules, so threads written
// by LangGraph's own PostgresSaver read the same as Weft's: values are the
// graph's state channels; a node is next when its trigger channel
// ("branch:to:<node>", or "__start__") holds a value newer than the version
// the node last saw; every Send in "__pregel_tasks" is a task; pending
// __interrupt__ / __error__ writes become the tasks' interrupts and errors.
//
// update_state writes a checkpoint the way LangGraph's does: one fresh
// version (checkpoints.NextVersion of the base's highest) for every channel
// the update touches, as_node's trigger consumed, and the trigger channels
// of the nodes after as_node set. Versions are unique per write, so a fork
// never shares a blob with its sibling branch: the stock JS saver's fork bug
// (reference/checkpoint/ROWS.md §3) cannot happen.
//
// Long conversations (messages.go; docs/long-threads.md) are read through
// views that load only what they show: the message log (GET
// /threads/{id}/messages, a page of a list channel by seq), windowed state
// reads (messages_window=k: the checkpoint read without the list, then its
// last k elements, messagelog.ListView) and summaries, records covering a
// seq range stored beside the checkpoints (messagelog.Summary*), never in
// place of a value.
//
// This package writes no thread row itself: the projection of a change
// goes through threads.Store (SetState, ValuesInline, CopyRow) in the
// change's transaction. The ttl sweeper is package threads'
// (threads.Store.RunTTLSweeper); its keep_latest strategy prunes through
// PruneToLatest, which this package provides because pruning needs the
// checkpoints and the event log (the server wires it where it starts the
// sweeper).
package state
