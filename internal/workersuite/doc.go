// Package workersuite holds the suites that test run workers end to end
// through the real server (its tests, package workersuite_test):
//
//	dispatch_test.go        an external worker over HTTP: claim, commit, ack; an
//	                        expired lease fenced; dead letter and retry; concurrent claims
//	worker_commit_test.go   an external worker's end projected from its commit
//	worker_graphs_test.go   graph registration, long-poll claims, checkpoint reads,
//	                        update_state of a worker graph
//	worker_*_test.go        serialized values, writes under the run's own
//	                        checkpoints, task ids per language, state of worker graphs
//	builtin_graphs_test.go  built-in graphs against a worker's graph of the same id
//	crash_test.go           server processes killed mid-run: the run is retried and
//	                        finishes exactly once
//
// They exercise packages workerapi, coordinator, executor and runs
// together, so they live here rather than beside any one of them; each of
// those packages tests its own behaviour beside its code. Every test runs
// on a fresh database (pgtest) with t.Parallel.
package workersuite
