// Package runs keeps run records: a run is the user's intent and its
// outcome, the source of truth for its status. It owns the runs table's
// life before and after execution — creation (validation against the
// graph, multitask strategies), cancellation, reads, deletion, waiting for
// the end — and the run routes of the API (create, wait, list, get,
// delete, join, cancel, batch, and the dispatch history of a run). What
// happens while a run executes belongs to the packages above it:
//
//	runs ◀── coordinator ◀── executor      (in-process pool; workerclient for Go workers)
//	  ▲            ▲
//	  │            └──────── workerapi     (the worker HTTP API)
//	  └───────────────────── stream        (SSE of runs and threads, protocol v2)
//
// # States
//
//	create ──▶ pending ──claim──▶ running ──end──▶ success | error | interrupted
//	              │   ▲              │ nack / lease expired: pending again (or error at the last attempt)
//	              │   └──────────────┘
//	              └── cancel before any claim: interrupted (deleted on rollback)
//
// timeout is reserved. The commit coordinator writes every transition
// after pending; this package writes creation and the cancellation of
// queued runs.
//
// # Creation
//
// Creating a run writes the run (with its assistant's config, context and
// version copied in the same statement), its dispatch (package dispatch)
// and the thread's update (busy, graph_id and assistant_id merged into its
// metadata, run pointers, the thread's config and ttl clock) in one
// transaction under the thread's row lock; the enqueue strategy sends all
// of it as one batch, one round trip. The dispatch's NOTIFY wakes idle
// workers. On a busy thread the multitask strategy decides: reject (409),
// enqueue (default: FIFO per thread), interrupt or rollback (the thread's
// dispatch epoch is bumped, queued runs are superseded — interrupted, or
// deleted on rollback — and the worker of the executing run is told to
// stop; it records the end through the coordinator).
//
// # Who writes the thread row
//
// This package writes no table but runs: the thread's side of a run goes
// through package threads, in this package's transaction or batch, in the
// same place among its statements: the stateless run's thread
// (threads.Store.InsertTemporary), a new run's update of its thread
// (SetRunCreated: busy, metadata, run pointers, config, ttl clock), the
// dispatch epoch bumped by an interrupt or rollback (DispatchEpochBump),
// the projection after a queued run is cancelled (ProjectLatest) and a
// retried run's thread busy again (SetBusy). The webhook's pending mark in
// the statements that end a run is webhook.PendingSet's.
//
// # The row
//
// A run's row stores its kwargs and metadata without what every run holds
// alike (storedKwargs, runMetadata) and, once the run's input
// checkpoint is committed, without its input: kwargs.input_ref names the
// __start__ blob of that checkpoint, which holds the input (InputRefSet,
// queued by the coordinator in the commit that writes the blob, when the
// blob reads back as exactly the stored input; never with encryption at
// rest). Every read selects Columns, whose weft_run_kwargs and
// weft_run_metadata (migrations 022 and 024) put it all back, byte for
// byte as a row stored whole; a reference whose blob is missing is an
// error. A reference stays readable: a prune stores the input whole before
// it deletes the blob (eventlog.MaterializeThread), and so do the
// langgraph views' blob delete and weft reencrypt; a rollback deletes the
// run with its checkpoints, a thread delete its runs with its blobs; a
// thread copy copies no run. A retried attempt continues from the
// checkpoints its run committed, and its claim renders the input.
//
// # Invariants
//
//   - A run and its dispatch are created together or not at all; an
//     assistant deleted or moved to another graph since validation makes
//     the insert find no row, and the run is not created (404).
//   - The thread is busy while one of its runs is pending or running;
//     threads.Store.ProjectLatest recomputes its status, values and
//     interrupts in the transaction that ends a run (here for queued runs,
//     in the coordinator for executed ones).
//   - A run that ended or was deleted is announced on ChannelRunEnd in the
//     same transaction; Join waits on it with a poll as fallback, and keeps
//     waiting through a database outage.
//   - Only a finished run can be deleted (409 while pending or running).
//
// Run and Status are aliases of wire.Run and wire.RunStatus (the status
// constants of wire.RunPending, …): the worker protocol carries a claimed
// run whole and is a leaf package, so the record's shape is declared there;
// its schema keeps the name runs.Run. What needs this package's
// dependencies stays here: the columns, and Open, which decrypts a row.
//
// The end-to-end tests of the run packages (execution, commits, the worker
// API, streams, webhooks, crashes) live in this package's tests: they drive
// the whole server over HTTP.
package runs
