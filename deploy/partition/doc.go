// Package partition is Weft's network-partition suite (tests only): it
// spreads a deployment over Linux network namespaces — PostgreSQL, three
// servers, two Python workers and a JS worker, Toxiproxy in front of the
// database and the servers, and the client — and, under a steady load,
// cuts and slows the links between them one fault after another:
//
//	(a) a worker cut off mid-run beyond its lease: another worker finishes
//	    the run, and the first one's late call is refused with 409;
//	(b) a server cut from PostgreSQL: 503 at once, nothing acknowledged
//	    lost, serving again when the link returns;
//	(c) a client cut mid-stream: it resumes through another server with
//	    Last-Event-ID and receives every event once;
//	(d) every link slowed, then PostgreSQL unreachable for 10 s.
//
// Then it checks, as cmd/weft-soak does, that every acknowledged run ended
// exactly once, no step was committed twice, every stream completed and no
// dispatch is left claimed, and prints a report per fault. It needs root,
// iproute2, the PostgreSQL server binaries, node with worker-js's
// node_modules and the Python suites' virtualenv; see docs/production.md
// ("Network partitions").
package partition
