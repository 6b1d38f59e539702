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
// The package imports none of the packages that serve or use the protocol
// (coordinator, workerapi, executor, workerclient), so each of them may
// import it. It does import the packages that own the records the protocol
// carries whole and the rest of the API answers too: LangGraph's checkpoint
// and pending write (checkpoints.Checkpoint, Metadata, Write; and serde's
// envelope marker, for Event), the run and its status (runs.Run,
// runs.Status), the dispatch (dispatch.Dispatch), a subgraph's schemas
// (assistants.SubgraphSchemas) and the API's time (httpx.Time). Copying
// their JSON shapes here instead would give the OpenAPI document two
// schemas for each of those records, which could drift apart, and cost a
// conversion of every checkpoint and write on every commit, on both sides.
package wire
