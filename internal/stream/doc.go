// Package stream serves the event streams of runs and threads as
// Server-Sent Events, from the durable per-run event log (run_events) the
// coordinator writes: create-and-stream (stateful and stateless), join
// with Last-Event-ID, the thread stream, and protocol v2
// (POST /threads/{id}/commands and /stream/events) for the 1.x SDK's
// thread-centric client. It owns no table: it reads the event log
// (package eventlog's run_events), the run, the thread and its latest
// checkpoint, and starts runs through package runs.
//
// # A stream
//
//	metadata ─▶ events of the requested modes, id = index among them (0, 1, …) ─▶ end (the run's log says so)
//	   │ idle: a comment line every StreamHeartbeat
//	   │ client drops: it resumes with Last-Event-ID (strictly after that seq; -1 = from the start)
//	   └ server shuts down: the stream ends; the client resumes on any replica
//
// # Invariants
//
//   - Events are never dropped: a stream reads the log itself, woken by
//     NOTIFY on runs.ChannelRunEvent / ChannelRunEnd (a poll as fallback),
//     so a stream can be served by any replica, whoever executes the run.
//     A reader that falls behind only reads later.
//   - The bytes of an event are the same live and replayed: the wire form
//     is rendered from the stored event and the requested modes. Its id is
//     its index among the run's events those modes send, as LangGraph's
//     servers number them (the log also holds events of other modes, for
//     thread streams and protocol v2, so its seq has gaps).
//   - A run's stream ends only after the run's end is in the log.
//   - on_disconnect=cancel cancels the run when the client goes away.
//   - Protocol v2 numbers every event of a thread with a stable per-thread
//     seq (run_events.thread_seq), so since / Last-Event-ID resume without
//     loss or repeats across runs.
package stream
