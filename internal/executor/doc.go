// Package executor runs graphs: the superstep loop of one run attempt, its
// committer, the in-process worker pool, and the I/O interface an
// execution reads and commits through.
//
//	attempt.go     an attempt: its context, heartbeat, nack; Attempt for a caller's own IO
//	loop.go        the superstep loop (execution): start, steps, end, the thread's projection
//	tasks.go       a step's tasks in parallel: env, streaming, interrupts' answers
//	committer.go   the committer: a step's results into ordered commits, per durability
//	io.go          IO, and localIO (this process's database and coordinator)
//	pool.go        the in-process pool: claims, wake-ups, cancellations
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
// # The committer
//
// The loop hands what each step produced (its checkpoint, its tasks'
// writes, the events that repeat them) to the attempt's committer, which
// turns them into commits as the Committer of the Python and JS workers
// does (worker-py/weft_worker/run.py, worker-js/src/run.mjs): queued
// together so they share one commit (events stored as references to the
// checkpoint and writes they repeat), sent one at a time and in order,
// background commits coalescing what piles up meanwhile, nothing sent
// after a failed commit or after the end.
//
// # I/O
//
// One executor serves two kinds of worker. Its reads of the thread's
// checkpoints, its commits, heartbeats and nacks go through IO:
//
//	localIO   the in-process pool: the database and the coordinator directly;
//	          commits pipelined in one round trip with the thread's projection
//	          (coordinator.Commit carries it, and the run's own checkpoints)
//	remote    package workerclient, a Go program's graphs as an external
//	          worker of a server elsewhere: the worker API over HTTP (package
//	          wire's bodies), raw checkpoint reads decoded with
//	          checkpoints.TupleFromStored, commits keyed per attempt so a
//	          retried request applies once, a 409 stopping the run at once;
//	          it runs its attempts with Attempt
//
// The package does not import the worker API's handlers (workerapi) or
// client (workerclient): the protocol's types are package wire's.
//
// Debug events (checkpoints, tasks and their results) are derived from the
// same steps (debug_events.go).
//
// # Invariants
//
//   - The package owns no table: an execution reads the thread's
//     checkpoints and writes only through IO, so every write is a
//     fenced coordinator commit.
//   - A run attempt writes nothing after its lease is lost or a commit
//     failed; commits of one attempt go out in order.
//   - An attempt resumes where the last committed checkpoint left off:
//     tasks already done reuse their pending writes and are not run again.
package executor
