package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/metrics"
	"github.com/weftdev/weft/internal/runs"
	"github.com/weftdev/weft/internal/tracing"
)

type ctxKey int

const requestIDKey ctxKey = 0

// RequestID returns the id of the request in ctx ("" outside one).
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// statusWriter records the status and size of a response. It forwards
// Flush so streaming handlers keep working.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logRequests gives each request an id (X-Request-Id, kept when the client
// sends a sane one), recovers panics as a 500, and logs one line per
// request when it ends: info below 400 (debug for the worker API's
// /dispatch/ routes), warn for 4xx, error for 5xx. It
// also counts the request in m by route template (nil m: not counted) and,
// with a tracer, serves it in a server span continuing the caller's
// traceparent (probes and scrapes excepted), whose trace id the log line
// carries. With hdr, the line carries the request headers hdr logs
// (HeaderPolicy.Logs) as the group req_header.
func logRequests(log *slog.Logger, m *metrics.Metrics, tr trace.Tracer, hdr *runs.HeaderPolicy) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			id := r.Header.Get("X-Request-Id")
			if id == "" || len(id) > 128 {
				id = uuid.NewString()
			}
			w.Header().Set("X-Request-Id", id)
			ctx := context.WithValue(r.Context(), requestIDKey, id)
			var span trace.Span = noop.Span{}
			if tr != nil && traced(r.URL.Path) {
				ctx, span = tr.Start(tracing.Extract(ctx, r.Header), r.Method, trace.WithSpanKind(trace.SpanKindServer))
			}
			r = r.WithContext(ctx)
			sw := &statusWriter{ResponseWriter: w}
			defer func() {
				if p := recover(); p != nil {
					if p == http.ErrAbortHandler {
						span.End()
						panic(p)
					}
					log.Error("panic", "request_id", id, "panic", p, "stack", string(debug.Stack()))
					if sw.status == 0 {
						httpx.WriteJSON(sw, http.StatusInternalServerError, httpx.ErrorBody{Detail: "Internal Server Error"})
					}
				}
				route := ""
				if rc := chi.RouteContext(r.Context()); rc != nil {
					route = rc.RoutePattern()
				}
				status := sw.status
				if status == 0 {
					status = http.StatusOK // net/http's answer to a handler that wrote nothing
				}
				m.ObserveHTTP(r.Method, route, status, time.Since(start))
				if span.IsRecording() {
					if route == "" {
						route = "unmatched"
					}
					span.SetName(r.Method + " " + route)
					span.SetAttributes(attribute.String("http.request.method", r.Method), attribute.String("http.route", route),
						attribute.String("url.path", r.URL.Path), attribute.Int("http.response.status_code", status),
						attribute.String("weft.request_id", id))
					if status >= 500 {
						span.SetStatus(codes.Error, http.StatusText(status))
					}
				}
				span.End()
				level := slog.LevelInfo
				switch {
				case sw.status >= 500 && sw.status != http.StatusServiceUnavailable:
					level = slog.LevelError
				case sw.status == httpx.StatusClientClosedRequest: // nobody reads the answer
					level = slog.LevelInfo
				case sw.status >= 400: // 503 too: a database outage, logged once by the server
					level = slog.LevelWarn
				case strings.HasPrefix(route, "/dispatch/"):
					// The worker API's traffic (claims, commits, heartbeats: a
					// few per run, and a long poll per idle worker every few
					// seconds) is debug; the run's own request is logged.
					level = slog.LevelDebug
				}
				// LogAttrs with typed attributes: no boxing of the values, and
				// nothing at all is built when the level is off.
				if ctx := r.Context(); log.Enabled(ctx, level) {
					ms := float64(time.Since(start).Microseconds()) / 1000
					headers := loggedHeaders(r.Header, hdr) // empty (left out) without hdr
					if sc := span.SpanContext(); sc.IsValid() {
						log.LogAttrs(ctx, level, "request", slog.String("request_id", id),
							slog.String("method", r.Method), slog.String("path", r.URL.Path),
							slog.Int("status", sw.status), slog.Int("bytes", sw.bytes),
							slog.Float64("duration_ms", ms), slog.String("trace_id", sc.TraceID().String()), headers)
					} else {
						log.LogAttrs(ctx, level, "request", slog.String("request_id", id),
							slog.String("method", r.Method), slog.String("path", r.URL.Path),
							slog.Int("status", sw.status), slog.Int("bytes", sw.bytes),
							slog.Float64("duration_ms", ms), headers)
					}
				}
			}()
			next.ServeHTTP(sw, r)
		})
	}
}

// loggedHeaders is the req_header group of a request's log line: the
// headers of h that hdr logs, by lowercase name, the first value each (an
// empty Attr, which handlers leave out, when none or hdr is nil).
func loggedHeaders(h http.Header, hdr *runs.HeaderPolicy) slog.Attr {
	if hdr == nil {
		return slog.Attr{}
	}
	var attrs []slog.Attr
	for name, values := range h {
		if key := strings.ToLower(name); len(values) > 0 && hdr.Logs(key) {
			attrs = append(attrs, slog.String(key, values[0]))
		}
	}
	if len(attrs) == 0 {
		return slog.Attr{}
	}
	slices.SortFunc(attrs, func(a, b slog.Attr) int { return strings.Compare(a.Key, b.Key) })
	return slog.Attr{Key: "req_header", Value: slog.GroupValue(attrs...)}
}

// limitBody caps request bodies; httpx.DecodeJSON turns the overflow into a 413.
func limitBody(max int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Body = http.MaxBytesReader(w, r.Body, max)
			next.ServeHTTP(w, r)
		})
	}
}

// traced says whether requests to path get a span: not health probes and
// metric scrapes, which would be most of a trace store's traces.
func traced(path string) bool {
	switch path {
	case "/metrics", "/ok", "/livez":
		return false
	}
	return true
}
