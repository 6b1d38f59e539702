// Package runs executes graphs: run records and their lifecycle, the
// commit coordinator, the reaper and the in-process worker pool. It is the
// one package that writes several domains (runs, dispatches, checkpoints,
// threads) in one transaction.
//
// # Runs
//
// A run is the user's intent and its outcome (status pending → running →
// success | error | interrupted; timeout is reserved). Creating one writes
// the run, its dispatch (package dispatch) and the thread's update (busy,
// graph_id and assistant_id merged into its metadata, run pointers) in one
// transaction under the thread's row lock, then NOTIFYs idle workers. On a
// busy thread the multitask strategy decides: reject (409), enqueue
// (default: FIFO per thread), interrupt or rollback (the thread's dispatch
// epoch is bumped, queued runs are superseded — interrupted, or deleted on
// rollback — and the worker of the executing run is told to stop).
//
// # The commit coordinator
//
// Commit is the only durable write path of a run, for in-process and
// external workers alike. In one transaction it checks the fence (the
// dispatch is claimed with the caller's claim token and its lease has not
// run out; 409 otherwise), writes checkpoints and their blobs, pending
// writes, the run's events (numbered per run, for resumable streams), and,
// when the commit ends the run, the run's outcome, the dispatch's end and
// the thread's projection (values, interrupts, status, error, current run).
// Replaying a commit key returns the first result and writes nothing. The
// in-process executor's commits go as one pipelined batch (weft_fence
// raises inside it when the claim is no longer valid), one round trip.
//
// A rollback (a cancellation with action rollback, or the rollback
// strategy) deletes the run, every checkpoint it wrote (metadata run_id),
// the pending writes it recorded under older checkpoints (run_writes), and
// the blobs no checkpoint uses any more.
//
// # The executor
//
// The in-process workers claim runs of the graphs compiled into the binary
// (woken by LISTEN/NOTIFY, polling as a fallback), renew their lease every
// third of it (a refused renewal stops the execution: lease lost; a
// requested cancellation stops it at the step boundary, cancelling the
// running nodes' context), and run package pregel's superstep loop:
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
// later), sync, or exit. A retry
// (after a crash, a lost lease or a nack) continues after the last
// checkpoint the run committed. A failure that is not the graph's (a
// database error, a shutdown) gives the dispatch back (nack) for a retry
// with backoff; the run is dead-lettered (error) after its last attempt.
//
// One executor serves two kinds of worker. Its reads of the thread's
// checkpoints, its commits, heartbeats and nacks go through runIO:
// localIO (the in-process pool: the database directly, commits pipelined in
// one round trip with the thread's projection) or remoteIO (RunRemote, a Go
// program's graphs run as an external worker of a server elsewhere: the
// worker API over HTTP, raw checkpoint reads decoded with
// checkpoints.TupleFromStored, commits keyed per attempt so a retried
// request applies once, a 409 stopping the run at once).
//
// # Graphs of external workers
//
// A worker registers each graph it serves (POST /dispatch/graphs,
// worker_graphs.go): the graph catalog gets its drawing and JSON Schemas
// and the graph a system assistant. The server has no definition of such a
// graph: run creation checks node and state-key names against a stand-in
// built from the catalog, the in-process pool never claims its runs (it
// claims only compiled-in graphs), and state reads order next and tasks by
// the drawing's node order. The worker's checkpointer reads checkpoints as
// stored (POST /dispatch/checkpoints/get|list) and writes through the same
// fenced commit as every worker; a commit goes in one round trip
// (worker_commit.go) and, when the worker sends the run's last checkpoint
// complete with the end, the thread is projected from it instead of read
// back; anything unusual (a fence or replay-key miss, a pending cancel, a
// newer checkpoint on the thread) takes the full path. update_state on such
// a thread is handed to a worker as a run carrying the update
// (worker_update.go), since only the graph's own runtime can apply it.
//
// # Events
//
// Every run's events (metadata, values after each step, updates per node,
// error, end) are appended to run_events in the commit that produced them;
// wait and join read the result the end stored on the run.
//
// # Webhooks
//
// The statement that ends a run whose kwargs name a webhook also marks its
// delivery pending (webhook.go has the state diagram); every replica's
// delivery loop claims due deliveries with SKIP LOCKED and a lease, POSTs
// the final run, and retries with backoff, so a webhook is delivered at
// least once unless it fails 8 times or its address is refused.
package runs
