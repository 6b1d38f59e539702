// The trace context of a claimed run: Weft's claim carries the W3C
// traceparent of the request that created the run, and the run continues
// that trace here. With @opentelemetry/api installed (an optional
// dependency: this worker does not require it) the run gets a span of its
// own, a child of the claim's traceparent, in whatever tracer provider the
// program registered; its commits and heartbeats then carry that span's
// traceparent. Without it they carry the claim's traceparent unchanged, so
// Weft's spans of those requests still join the run's trace.

let api = null;
try {
  api = await import("@opentelemetry/api");
} catch {
  // not installed: forward the claim's traceparent as it is
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The parts of a W3C traceparent, or null when it is not one. */
export function parseTraceparent(tp) {
  const m = typeof tp === "string" ? TRACEPARENT.exec(tp.trim()) : null;
  if (!m || /^0+$/.test(m[1]) || /^0+$/.test(m[2])) return null;
  return { traceId: m[1], spanId: m[2], flags: parseInt(m[3], 16) };
}

/**
 * startRunSpan starts the run's span under the claim's traceparent (when
 * @opentelemetry/api is available) and returns {traceparent, end(err?)}:
 * traceparent is what the run's requests to Weft carry ("" when the claim
 * had none), end ends the span.
 */
export function startRunSpan(traceparent, attributes = {}) {
  const parent = parseTraceparent(traceparent);
  if (!parent) return { traceparent: "", end() {} };
  if (!api) return { traceparent, end() {} };
  const { trace, context, SpanKind, SpanStatusCode } = api;
  const ctx = trace.setSpanContext(context.active(), {
    traceId: parent.traceId,
    spanId: parent.spanId,
    traceFlags: parent.flags,
    isRemote: true,
  });
  const span = trace.getTracer("weft-worker").startSpan("weft.run", { kind: SpanKind.CONSUMER, attributes }, ctx);
  const sc = span.spanContext();
  const own = trace.isSpanContextValid(sc)
    ? `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 1) === 1 ? "01" : "00"}`
    : traceparent;
  return {
    traceparent: own,
    end(err) {
      if (err) {
        span.recordException(err);
        span.setStatus({ code: SpanStatusCode.ERROR, message: String(err?.message ?? err) });
      }
      span.end();
    },
  };
}
