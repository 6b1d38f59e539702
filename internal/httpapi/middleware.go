package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/httpx"
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
// request when it ends: info below 400, warn for 4xx, error for 5xx.
func logRequests(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			id := r.Header.Get("X-Request-Id")
			if id == "" || len(id) > 128 {
				id = uuid.NewString()
			}
			w.Header().Set("X-Request-Id", id)
			r = r.WithContext(context.WithValue(r.Context(), requestIDKey, id))
			sw := &statusWriter{ResponseWriter: w}
			defer func() {
				if p := recover(); p != nil {
					if p == http.ErrAbortHandler {
						panic(p)
					}
					log.Error("panic", "request_id", id, "panic", p, "stack", string(debug.Stack()))
					if sw.status == 0 {
						httpx.WriteJSON(sw, http.StatusInternalServerError, httpx.ErrorBody{Detail: "Internal Server Error"})
					}
				}
				level := slog.LevelInfo
				switch {
				case sw.status >= 500 && sw.status != http.StatusServiceUnavailable:
					level = slog.LevelError
				case sw.status >= 400: // 503 too: a database outage, logged once by the server
					level = slog.LevelWarn
				}
				// LogAttrs with typed attributes: no boxing of the values, and
				// nothing at all is built when the level is off.
				if ctx := r.Context(); log.Enabled(ctx, level) {
					log.LogAttrs(ctx, level, "request", slog.String("request_id", id),
						slog.String("method", r.Method), slog.String("path", r.URL.Path),
						slog.Int("status", sw.status), slog.Int("bytes", sw.bytes),
						slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000))
				}
			}()
			next.ServeHTTP(sw, r)
		})
	}
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
