// Package executor runs graphs: the superstep loop of one run attempt, the
// in-process worker pool, and the two kinds of I/O an execution uses.
//
// # The loop
//
// The in-process workers claim runs of the graphs compiled into the binary
// (woken by the coordinator on the queue's notifications, polling as a
// fallback), renew their lease every third of it (a refused renewal stops
// the execution: lease lost; a requested cancellation — a heartbeat's
// answer, a commit's, or NOTIFY weft_cancel — stops it at the step
// boundary, cancelling the running nodes' context), and run package
// pregel's superstep loop:
//
//	input or command → input checkpoint (source "input"; pending tasks discarded)
//	loop: tasks = pending tasks of the latest checkpoint
//	      none → success; step > recursion limit → GraphRecursionError
//	      interrupt_before hit → success, thread interrupted
//	      run the tasks in parallel (tasks done in an earlier attempt reuse
//	      their pending writes; a task that finishes while others run has
//	      its writes committed at once)
//	      a node error → __error__ write, run error; an interrupt() →
//	      __interrupt__ write, run success, thread interrupted
//	      apply the writes (LangGraph's apply_writes) → checkpoint (source
//	      "loop"); interrupt_after hit or no next task → end
//
// Checkpoints are committed per the run's durability (LangGraph's): async
// (default; a step's checkpoint commits while the next step runs, and what
// piles up in the meantime follows in the next commit, at most 20 ms
// later), sync, or exit. Commits go out one at a time, in order; after a
// failed commit nothing more is written. A retry (after a crash, a lost
// lease or a nack) continues after the last checkpoint the run committed.
// A failure that is not the graph's (a database error, a shutdown) gives
// the dispatch back (nack) for a retry with backoff; the run is
// dead-lettered (error) after its last attempt.
//
// # I/O
//
// One executor serves two kinds of worker. Its reads of the thread's
// checkpoints, its commits, heartbeats and nacks go through runIO:
//
//	localIO   the in-process pool: the database and the coordinator directly;
//	          commits pipelined in one round trip with the thread's projection
//	remoteIO  RunRemote, a Go program's graphs as an external worker of a
//	          server elsewhere: the worker API over HTTP (package workerapi's
//	          types), raw checkpoint reads decoded with
//	          checkpoints.TupleFromStored, commits keyed per attempt so a
//	          retried request applies once, a 409 stopping the run at once
//
// Debug events (checkpoints, tasks and their results) are derived from the
// same steps (debug_events.go).
//
// # Invariants
//
//   - The package owns no table: an execution reads the thread's
//     checkpoints and writes only through runIO, so every write is a
//     fenced coordinator commit.
//   - A run attempt writes nothing after its lease is lost or a commit
//     failed; commits of one attempt go out in order.
//   - An attempt resumes where the last committed checkpoint left off:
//     tasks already done reuse their pending writes and are not run again.
package executor
