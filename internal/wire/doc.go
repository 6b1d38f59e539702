// Package wire is the worker protocol: the request and response bodies of
// the worker API (/dispatch/…), in one place for the three parties that
// speak it. The server's handlers (package workerapi) decode requests into
// these types and the commit coordinator applies them; the Go worker
// client (package workerclient) sends and decodes the same types; and the
// OpenAPI document (api/openapi.yaml, `make openapi`) is generated from
// their JSON tags, swag tags and comments, so the schemas the JS and
// Python workers are written against are these types' (wire.CommitRequest,
// wire.ClaimedRun, …). internal/a2a/wire.go is the same for A2A.
//
//	POST /dispatch/graphs                     GraphRegistration → GraphRegistered
//	POST /dispatch/graphs/errors              GraphLoadError
//	POST /dispatch/claim                      ClaimRequest → []ClaimedRun
//	POST /dispatch/{id}/heartbeat             FenceRequest → HeartbeatResponse
//	POST /dispatch/{id}/commit                CommitRequest → CommitResult
//	POST /dispatch/{id}/ack                   AckRequest → CommitResult
//	POST /dispatch/{id}/nack                  FenceRequest → NackResponse
//	POST /dispatch/cancellations              CancellationsRequest → []Cancellation
//	POST /dispatch/checkpoints/get|list       CheckpointReadRequest → RawTuple | []RawTuple
//	POST /dispatch/checkpoints/delta-history  DeltaHistoryRequest → map[channel]RawDeltaHistory
//
// plus UpdateStateKey, the run metadata key that hands an update_state of
// a worker's graph to a worker.
//
// # What it holds and what it does not
//
// Only the shapes: no validation (the handlers check what a request may
// hold and answer 422), no defaults, no I/O. What one side adds to a
// commit that never travels (the in-process executor's thread projection,
// the writes under the run's own checkpoints) is the coordinator's
// (coordinator.Commit), not a field here.
//
// # Dependencies
//
// The package is a leaf: it imports no Weft package at all (not even the
// lowest layer, jsonv and apperr, which it has no use for), only the
// standard library and uuid, so the server, the Go worker client, the
// executor and the document generator may all import it, and none of the
// domain packages drags its store, its SQL or its dependencies into a
// worker.
//
// The records the protocol carries whole, and the rest of the API answers
// too, are therefore declared here (records.go) and aliased by the packages
// that own them: LangGraph's checkpoint, metadata and pending write
// (checkpoints.Checkpoint = Checkpoint, Metadata, Write), the run and its
// status (runs.Run = Run, runs.Status = RunStatus), the dispatch and its
// state (dispatch.Dispatch = Dispatch, dispatch.State = DispatchState), a
// subgraph's schemas (assistants.SubgraphSchemas = SubgraphSchemas) and the
// API's time (httpx.Time = Time). An alias is one Go type: no copy of a
// JSON shape that could drift, no conversion of every checkpoint and write
// on every commit; the owners keep their constants (runs.StatusSuccess =
// RunSuccess, dispatch.Queued = DispatchQueued, …), their SQL and the
// behaviour that needs their dependencies (runs.Open decrypts a run).
//
// Each of those declarations ends in a swag `// @name owner.Type` comment,
// so the OpenAPI document still has one schema per record under its
// public name (runs.Run, runs.Status, dispatch.Dispatch, dispatch.State,
// checkpoints.Checkpoint, checkpoints.Write, assistants.SubgraphSchemas),
// whether an operation names the record through its owner's alias or
// through this package. Event's test for a LangChain envelope copies
// serde.LCMarker (lcMarker) rather than import serde.
package wire
