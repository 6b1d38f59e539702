// Package metrics holds one server process's Prometheus metrics
// (client_golang): a registry of its own (no package-level global; the
// server creates it and passes the *Metrics down), the Go runtime and
// process collectors, and the counters, gauges and histograms of runs,
// claims, commits, fences, leases, dead letters, webhooks, SSE streams
// and HTTP requests, plus the database pool's statistics and the queue's
// depth, both read at scrape time. docs/operations.md lists every metric.
//
// Every method is a no-op on a nil *Metrics. Event counters with fixed
// label values have their children created in New, so counting an event
// on a hot path is an atomic add; HTTP series are cached per (method,
// route template, status).
package metrics
