// Package dispatch is the RunDispatch queue: the durable delivery of runs to
// workers, with leases, fences, retries and an audit of every attempt. It
// owns the run_dispatches and run_dispatch_attempts tables and knows nothing
// of runs, threads or graphs beyond their ids; packages runs and coordinator
// compose these operations with their own writes in one transaction.
//
// # States
//
//	           enqueue                 claim (lease, new claim_token)            ack
//	(none) ──────────────▶ queued ─────────────────────────────────▶ claimed ───────────▶ acked
//	                         ▲  │ cancel ──▶ cancelled                 │  │ nack (attempt < max): retry with backoff
//	                         │  │ supersede (epoch bump) ──▶ superseded│  └──────────────▶ queued
//	                         │  └──────────────────────────────────────┤ nack / lease expired at max attempts
//	                         └──── lease expired (reaper), backoff ────┘──────────────▶ dead_letter
//
// A dispatch is one run's delivery; "acked" means consumed, not succeeded
// (the run row says how it ended). attempt counts claims; every claim opens
// a row in run_dispatch_attempts that records the worker, the timings and
// how the attempt ended.
//
// # Guarantees
//
//   - One claimed dispatch per thread: a partial unique index on
//     (thread_id) WHERE state = 'claimed' makes it a database fact.
//   - Strict FIFO per thread: a dispatch is claimable only when no older
//     dispatch of its thread (by seq) is queued or claimed, so a retried
//     or delayed run is never overtaken by a later one; and only while no
//     dispatch of its thread is claimed (a dead letter retried after a
//     younger run was claimed waits for it).
//   - Claim is one UPDATE … FROM (SELECT … FOR UPDATE SKIP LOCKED)
//     statement, safe with any number of concurrent claimers.
//   - Fence: every operation on a claimed dispatch presents (dispatch_id,
//     claim_token) and is refused with ErrFenced once the dispatch is no
//     longer claimed with that token or its lease has expired, even before
//     a reaper noticed. A worker that lost its lease cannot write.
//   - Reaping expired leases is one statement per batch with SKIP LOCKED:
//     every replica may run it concurrently; each expired claim is handled
//     once.
//
// Dispatch and State are aliases of wire.Dispatch and wire.DispatchState
// (Queued, … of wire.DispatchQueued, …): the worker protocol carries a
// claimed run's dispatch whole and is a leaf package, so the row's shape is
// declared there; its schema keeps the name dispatch.Dispatch.
//
// Enqueue sends NOTIFY weft_dispatch in the writing transaction, so idle
// workers wake within milliseconds of the commit; RequestCancel sends
// NOTIFY weft_cancel with the dispatch id.
package dispatch
