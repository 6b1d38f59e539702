// Package tracing is Weft's OpenTelemetry tracing: the tracer provider the
// standard OTEL_* environment asks for (OTLP over HTTP; off, with no
// provider and no cost, when nothing asks for it), and the W3C Trace
// Context helpers that carry a trace from the request that created a run
// to the worker that executes it and to the run's webhook.
//
// # Spans
//
//	HTTP request (server; name "METHOD /route/{template}")
//	└ run attempt "weft.run" (its parent: the traceparent stored with the run at creation)
//	  ├ "weft.superstep" (one per step)
//	  │ ├ "weft.node NAME" (one per task that ran)
//	  │ └ "weft.commit" (coordinator; for a remote worker under its client
//	  │    span "POST /dispatch/{dispatch_id}/commit" and the server's HTTP span)
//	  └ heartbeats, checkpoint reads and nacks of a remote worker (client spans)
//	webhook delivery "weft.webhook" (client; parent: the run's traceparent)
//
// # Carrying the context
//
// Run creation stores the traceparent of the creating request's span with
// the run (runs.traceparent); the in-process executor starts the attempt
// span under it; a worker API claim returns it (claimed run's
// "traceparent"), so a remote worker continues the trace and sends
// traceparent headers with its requests; a webhook POST carries a
// traceparent header.
//
// Nothing here is global: the provider is built by the server (or injected
// through server.Config.TracerProvider, as tests do) and its tracer passed
// down; a nil tracer means tracing is off, and Start then returns at once.
package tracing
