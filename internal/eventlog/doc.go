// Package eventlog is the storage form of the run event log (run_events):
// how a commit's events are written and how a reader gets them back.
//
// Most events are stored whole. An event that repeats the values of a
// checkpoint written in the same commit — a values event (also a
// subgraph's "values|<ns>"), a checkpoints event, a debug event of type
// checkpoint — is stored as a reference instead: its data column holds the
// event without those values, and its ref column names the checkpoint and
// the channels that fill the object at a path of the event:
//
//	ref = {"ns": "", "id": "1f0…", "path": ["payload", "values"], "keys": ["messages"]}
//
// Before Encode writes a reference it checks that each referenced value is
// the value a read of that checkpoint returns: the channel's blob is
// written by this very commit (the checkpoint's new versions) and the
// event's value encodes to the same JSON as the blob's stored form (the
// reader's LangChain-envelope normalisation included). A value that does
// not match, a checkpoint not written in the same commit (an interrupt's
// values event, or a step whose checkpoint is not kept under "exit"
// durability) and a reference that would save less than MinBytes leave
// the event whole. So a reference never changes what a reader sees: the
// rendered event is the same JSON value as the event the run produced,
// and since every stream sends what PostgreSQL's jsonb returns, the same
// bytes. An external worker's plain-JSON events arrive as JSON text
// (wire.Event keeps them so): Encode decodes them to match them,
// and stores the text as it came when they stay whole.
//
// An updates event ({node: update}, a subgraph's "updates|<ns>" too)
// repeats what the node's task wrote: each key of the update is one of
// the task's pending writes, which the same commit stores in
// checkpoint_writes. Such an event is stored as a task reference: its
// data column holds {node: {}}, and its ref names the checkpoint the
// writes are recorded under (the step's parent), the task and the keys:
//
//	ref = {"ns": "", "id": "1f0…", "task": "3c5…", "path": ["echo"], "keys": ["messages"]}
//
// Encode writes one only when a task of the commit's write batches in the
// event's namespace (the batch's checkpoint namespace, "" for the root)
// wrote each key of the update exactly once, to that channel, a value
// whose stored form (what a read of the write returns, LangChain
// envelopes normalised) is the event's value, worth TaskMinBytes (256;
// MinBytes when lower: a task reference is read back by primary key, so it
// pays off on smaller values than a checkpoint reference). Anything
// else stays whole: an interrupt's updates event, a key the task did not
// write or wrote twice, a value that differs, writes committed earlier
// (a task that finished while others still ran, whose writes went out on
// their own). A task's regular writes are never replaced once recorded
// (checkpoints.PutWrites keeps the first row, and a task with
// writes is not run again), so the reference keeps rendering the same.
//
// A messages event is [chunk, metadata], and a streamed message sends
// every token with the same metadata (node, step, triggers, the run's
// configurable metadata), most of what such an event holds. Within one
// commit, a messages event whose metadata an earlier one carries whole is
// stored as [chunk] with ref = {"prev": n}: the metadata is that of the
// event n seqs earlier in the same run (whole, never itself a reference;
// a run's events are only ever deleted together).
//
// A run's result (runs.result, what wait and join answer) is encoded as a
// values event of the run's last commit: EncodeResult stores it as a
// checkpoint reference in runs.result_ref when it repeats that
// checkpoint's values, and RenderResult renders it.
//
// A Renderer turns references back into whole events: it loads each
// referenced checkpoint once per batch, and the referenced tasks' writes
// in one query per batch (checkpoints.TaskWrites), through
// the checkpoint store's read API, merges the values into the stored
// rest, and has PostgreSQL normalise the result to jsonb (one query per
// batch), so rendered bytes are exactly what a whole row would have
// returned. Rendered events are
// cached by (run id, seq): they never change, and the live subscribers of
// one run share one rendering.
//
// Checkpoints and their writes go away in three ways. A rollback deletes
// the run with its events (a run's references name only checkpoints and
// writes of its own commits); deleting a thread deletes its events;
// pruning a thread's history (keep_latest, the TTL sweeper) deletes
// checkpoints, and the writes recorded under them, that finished runs'
// events and results may reference, so it calls MaterializeThread first,
// which stores those events whole again (their replay stays
// byte-identical) and forgets those results (a join then answers the
// thread's values), storing whole only a result a pending webhook needs.
// It also stores whole the input of every run that references a __start__
// blob the prune deletes (package runs: a run's row references its input
// checkpoint's blob).
package eventlog
