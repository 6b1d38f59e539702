// Package crons keeps crons (reference API §11): a schedule that creates a
// run at each tick, on a thread (POST /threads/{thread_id}/runs/crons) or,
// for a stateless cron (POST /runs/crons), on a new thread each time. It
// owns the crons table, its SQL, the cron routes and the scheduler that
// fires due crons on every replica.
//
//	crons ──▶ runs (Validate at create / patch, CreateTx at each firing)
//
// A cron row holds the schedule (a 5-field cron expression or @hourly-style
// descriptor, parsed by github.com/robfig/cron/v3), its IANA timezone
// (default UTC), end_time, enabled, on_run_completed (stateless crons), its
// metadata, the run payload (the run-create fields: input, config,
// context, webhook, interrupt_before/after, multitask_strategy,
// stream_mode, durability, …) and next_run_date, the tick it fires next.
//
// # States
//
//	          create (next_run_date = first tick after now)
//	              │
//	              ▼            PATCH enabled=false
//	┌─────────▶ waiting ◀──────────────────────────▶ disabled
//	│             │            PATCH enabled=true    (keeps next_run_date; never claimed)
//	│             │ now ≥ next_run_date              (next_run_date = first tick after now)
//	│             ▼
//	│          due ──claim (FOR UPDATE SKIP LOCKED)──▶ firing (one replica's transaction)
//	│                                                    │ run created (or refused: tick skipped)
//	└──── next_run_date = first tick after now ◀─────────┤
//	                                                     │ that tick is past end_time
//	                                                     ▼
//	                                                   ended (next_run_date NULL; a PATCH of
//	                                                   end_time or schedule revives it)
//
// DELETE removes a cron in any state (after a firing in progress commits);
// deleting its thread or its assistant deletes it too (ON DELETE CASCADE).
//
// # Firing
//
// Every replica runs the scheduler (Start): every Interval (1s) it opens a
// transaction, reads "now" (the injected clock, or the database's now(),
// which every replica shares), locks up to Batch enabled crons whose
// next_run_date ≤ now with FOR UPDATE SKIP LOCKED, and for each one
// creates its run through runs.CreateTx — in a savepoint, so that a refused
// run does not undo the others — and sets next_run_date to the schedule's
// first tick after now (NULL past end_time). The runs, their dispatches
// (whose NOTIFY wakes the workers at commit) and the new next_run_dates
// commit together.
//
// Each firing is an ordinary run: run metadata = the cron's metadata plus
// cron_id; multitask strategies, webhooks, streams and joins work as for
// any run. A stateless cron's run gets a new thread (its metadata: graph_id,
// assistant_id and cron_id, so POST /threads/search finds the threads of a
// cron); with on_run_completed delete (the default) the run is temporary,
// and its thread is deleted after the run like that of a stateless run
// nobody waited for: by the reaper's sweep, TempRetention (1 min) after
// the run ended, or at once when a client joins the run for its result.
// keep keeps the thread.
//
// A run that cannot be created for a reason retrying will not cure — a
// client error such as a busy thread with multitask_strategy reject, or an
// input the assistant's graph no longer accepts — skips that tick (a
// warning in the log); the cron fires again at its next tick. Errors that
// retrying cures (deadlock, serialization failure, database outage) roll
// the whole transaction back and the ticks stay due.
//
// # Missed ticks
//
// When a due tick is fired late — the servers were down for an hour, or
// the database was unreachable — the cron fires once and its next tick is
// the first one after now: an every-minute cron after an hour's outage
// creates one run, not sixty. A cron is "run the graph on this schedule",
// and sixty back-to-back copies of an hourly report or a reminder are
// never what anyone wanted; a graph that needs to know what it missed can
// read its thread's history or the time of its last run. The same holds
// for a disabled cron that is enabled again (it is not fired for the
// ticks it was off: next_run_date moves to the first tick after now) and
// for a schedule or timezone change.
//
// # Invariants
//
//   - A tick is fired at most once: the run's creation and the move of
//     next_run_date past the tick are one transaction, under the cron's
//     row lock. A replica that claimed a row another replica has just
//     advanced re-reads it (READ COMMITTED re-checks the WHERE clause on
//     the new row version) and skips it.
//   - A tick is fired at least once (unless its run is refused): until
//     that transaction commits the tick stays due. A replica that dies
//     mid-fire loses its connection, PostgreSQL rolls its transaction
//     back, and another replica (or it, restarted) fires the tick.
//   - next_run_date is NULL exactly when the schedule has no tick left
//     before end_time; a disabled cron keeps its next_run_date but is
//     never claimed.
//   - A cron's payload was validated as a run (runs.Validate) when it was
//     created or last changed: an invalid schedule, timezone, field or an
//     unknown assistant is a 4xx and nothing is written.
//   - Tests never wait for minutes: "now" is the Config.Clock when set
//     (server.Config.CronClock), else the database's now().
package crons
