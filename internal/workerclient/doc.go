// Package workerclient is the Go worker: a Go program's graphs served as an
// external worker of a Weft server elsewhere, over the worker API
// (/dispatch/…) the JS and Python workers use, with the executor the
// in-process pool uses. weft.RunWorker is its public face.
//
//	Run: register the graphs (retried while the server cannot be reached)
//	     ─▶ claim (long poll, up to Concurrency at once) ─▶ each run: executor.Attempt over remoteIO
//	     one long-polling cancellations call open while anything runs
//
// It holds the worker's loop (worker.go), remoteIO, the executor.IO that
// reads the thread's checkpoints as stored (decoded with
// checkpoints.TupleFromStored) and sends commits, heartbeats and nacks
// (remote_io.go), and the HTTP client of the worker API (client.go). The
// bodies it sends and decodes are package wire's, as the server's
// handlers (package workerapi) decode and send them; it does not import
// the server's handlers.
//
// # Invariants
//
//   - Every commit carries a key of its attempt (dispatch, attempt,
//     sequence), so a retried request is applied once and a stale
//     attempt's commit never passes for a later one's.
//   - A 409 (the claim is lost) stops the run at once: dispatch.ErrFenced.
//   - Only idempotent requests are retried (commits, nacks, checkpoint
//     reads; a network error or a 5xx), up to 4 times.
//   - When its context ends the worker stops claiming, stops its runs
//     after their current step, gives them back (nack) and returns nil.
package workerclient
