// Package coordinator is the commit coordinator and the lifecycle of a
// claimed run: claims, commits, heartbeats, nacks and the reaper. It is the
// one package that writes several domains (runs, dispatches, checkpoints,
// run events, threads) in one transaction, for in-process and external
// workers alike. Of its own it owns run_commits (the answer of each commit
// key, for replays) and run_writes (the pending writes a run recorded
// under older checkpoints, for rollback). The other domains' rows it
// writes through their packages, passing its transaction or batch: the
// thread's projection at a run's end through threads.Store.SetRunEnded (a
// projection the committer knows: threads.Project of the in-process
// executor's last checkpoint, or of an external worker's complete one in
// the ending commit) or threads.Store.ProjectLatest (the general path and
// rollbacks: the latest checkpoint read back), the dispatch's end through
// package dispatch, the webhook's pending mark with webhook.PendingSet.
//
// The bodies it takes and answers are the worker protocol's (package wire:
// wire.CommitRequest, wire.CommitResult, wire.Claimed, wire.Cancellation,
// wire.End); a Commit is a wire.CommitRequest with what only this
// process's executor adds (in process, the run and thread, the thread's
// projection, the run's own checkpoints), never taken from a request.
//
// # A claimed run
//
//	Claim ─▶ claimed (lease, claim_token) ──Commit*──▶ Commit with End ─▶ run ended, dispatch acked
//	            │   ▲ Heartbeat (renews the lease, returns a requested cancellation)
//	            │   └─┘
//	            ├── Nack ─▶ queued again after a backoff (run pending) │ dead_letter at the last attempt (run error)
//	            └── lease expired ─▶ Reap: as Nack ("lease_expired")
//
// A requested cancellation turns the end into interrupted (action
// interrupt) or deletes the run and everything it wrote (rollback); a nack
// or an expired lease of a run being cancelled ends it as cancelled.
//
// # The commit
//
// Commit is the only durable write path of a run. In one transaction it
// checks the fence (the dispatch is claimed with the caller's claim token
// and its lease has not run out; 409 otherwise), writes checkpoints and
// their blobs, pending writes, the run's events (numbered per run, for
// resumable streams; NOTIFY on runs.ChannelRunEvent), and, when the commit
// ends the run, the run's outcome, the dispatch's end, the webhook's
// pending delivery and the thread's projection (values, interrupts, status,
// error, current run). A commit that does not end the run renews a lease
// past its half.
//
// # Invariants
//
//   - Nothing half-written is ever visible: a commit applies whole or not
//     at all; a fenced worker writes nothing, not even one checkpoint.
//   - Idempotent: a replayed commit key returns the first result and
//     writes nothing (in-process commits, which are never re-sent, record
//     no key).
//   - Lock order thread → dispatch, as in run creation and cancellation, so
//     ends, creations and cancels on a thread serialize without deadlock.
//   - One round trip in the common case: the in-process executor's commits
//     go as one pipelined batch (weft_fence raises inside it when the claim
//     is no longer valid); an external worker's commit too (external.go),
//     its run, thread and graph taken from the claim, and an end carrying
//     the run's last checkpoint complete projects the thread from it
//     instead of reading it back. Anything unusual (a fence or replay-key
//     miss, a pending cancellation, a newer checkpoint on the thread) takes
//     the full path.
//   - A rollback deletes the run, every checkpoint it wrote (metadata
//     run_id), the pending writes it recorded under older checkpoints
//     (run_writes), and the blobs no checkpoint uses any more.
//   - The reaper is safe on every replica at once (SKIP LOCKED); it also
//     deletes the temporary threads of stateless runs that ended more than
//     TempRetention ago.
//
// Whenever work may have become claimable (a dispatch notification, a
// requeue, a reconnect), Wake wakes long-polling claims (ClaimWait) and the
// pools registered with OnWork; a dispatch notification names its graph
// (WakeGraph), and wakes only the claimers that may take it.
package coordinator
