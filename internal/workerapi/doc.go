// Package workerapi is the worker HTTP API (/dispatch/…): how an external
// worker — the JS worker for LangGraph.js graphs, the Python worker, a Go
// program running package workerclient, or any other language — registers
// its graphs, claims runs, keeps them, reads the thread's checkpoints and
// commits progress. Every call is a thin layer over the coordinator and
// the checkpoint store; the same fence guards it as the in-process pool.
//
// The package holds the handlers: they validate (422), call the domain and
// answer. The request and response bodies are package wire's (the worker
// protocol, shared with the Go worker client and the OpenAPI document).
//
//	POST /dispatch/graphs             register a graph: catalog entry (drawing, JSON Schemas,
//	                                  subgraphs) and its system assistant
//	POST /dispatch/claim              claim runs of named graphs (long poll), each with a claim
//	                                  token, a lease, and whether its thread is new
//	POST /dispatch/{id}/heartbeat     renew the lease; answers a requested cancellation
//	POST /dispatch/{id}/commit        the coordinator's commit (checkpoints, writes, events, end)
//	POST /dispatch/{id}/ack           end the run (a commit with only an end)
//	POST /dispatch/{id}/nack          give the run back for a retry
//	POST /dispatch/cancellations      wait for cancellations of the worker's runs (long poll)
//	POST /dispatch/checkpoints/get    a checkpoint as stored (blobs and pending writes as rows)
//	POST /dispatch/checkpoints/list   checkpoints as stored, newest first
//	POST /dispatch/checkpoints/delta-history  delta channels' writes along the parent chain (getDeltaChannelHistory)
//
// A stale worker gets 409 on every call of a dispatch it no longer holds.
//
// # A worker's session
//
//	register graphs ─▶ claim (long poll) ─▶ run: (checkpoints/get|list)? ─▶ commit* ─▶ ack (or a commit with end)
//	                      ▲                    │ heartbeat every third of the lease; a cancellation answered
//	                      │                    │ (heartbeat, commit, or the open cancellations call) stops it
//	                      └── nack (retry) ◀───┤ lease lost: 409 on its next call, the worker drops the run
//
// # Invariants
//
//   - The package owns no table and writes none itself: every write goes
//     through the coordinator (fence, commit, end), so a remote worker and
//     the in-process pool obey the same rules. Its reads are of the
//     checkpoint rows as stored (checkpoints.go: one query per page, in the
//     raw form a remote saver decodes) and of the graphs catalog.
//   - A claim answers thread_empty for a thread without checkpoints, so a
//     worker starting a new thread makes no checkpoint read.
//   - A commit is applied once: a retried request with the same commit key
//     returns the first answer (coordinator).
//   - Values an external worker sends are normalized to the message shape
//     state reads show (events.go), so a stream looks the same whatever
//     ran the graph.
//
// # Graphs of external workers
//
// The server has no definition of such a graph: run creation checks node
// and state-key names against a stand-in built from the catalog
// (assistants.WorkerGraph), the in-process pool never claims its runs (it
// claims only compiled-in graphs), and state reads order next and tasks by
// the drawing's node order. A graph id compiled into the server cannot be
// registered (409).
//
// # update_state of a worker graph
//
// Only the graph's own runtime can apply an update through its reducers
// and edges, so Handlers (a state.ExternalUpdater) hands it to a worker as
// a run carrying the update (update.go): the worker applies it with
// LangGraph's own updateState, the run answers the new checkpoint and is
// deleted. LangGraph's refusal is a 400, no worker within 30 s a 409.
package workerapi
