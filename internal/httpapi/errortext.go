package httpapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"strings"

	"github.com/weftdev/weft/internal/httpx"
)

// textErrors answers errors as LangGraph.js's server does: the detail as a
// plain-text body instead of {"detail": ...}. The JS SDK puts the body in
// its error message ("HTTP 404: Assistant not found: …" rather than
// `HTTP 404: {"detail":…}`), and code written against that server matches
// on it. A client that asks for JSON (Accept: application/json, as Weft's
// own workers and web UI do) still gets the JSON body, and so does the
// worker API. Only {"detail": string} bodies of 4xx/5xx answers change:
// streams, successes and any other error shape pass through untouched.
func textErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/dispatch/") || acceptsJSON(r.Header.Values("Accept")) {
			next.ServeHTTP(w, r)
			return
		}
		hold := func(code int, h http.Header) bool {
			return code >= 400 && strings.HasPrefix(h.Get("Content-Type"), "application/json")
		}
		rw := &rewriteWriter{ResponseWriter: w, hold: hold}
		next.ServeHTTP(rw, r)
		if !rw.held {
			return
		}
		body := rw.body.Bytes()
		if detail, ok := detailOf(body); ok {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			body = []byte(detail)
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rw.status)
		_, _ = w.Write(body)
	})
}

// missingAs answers a route's 404 (a thread or run that is not there or
// not the caller's, whether the auth guard or the handler found it so) by
// write, with the 404's detail: the official servers answer some routes'
// missing resources otherwise (a copy's 409, a joined stream's error
// event).
func missingAs(write func(w http.ResponseWriter, detail string)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rw := &rewriteWriter{ResponseWriter: w, hold: func(code int, _ http.Header) bool { return code == http.StatusNotFound }}
			next.ServeHTTP(rw, r)
			if rw.held {
				detail, ok := detailOf(rw.body.Bytes())
				if !ok {
					detail = http.StatusText(http.StatusNotFound)
				}
				w.Header().Del("Content-Length")
				write(w, detail)
			}
		})
	}
}

// conflictIfMissing is a 409 with the 404's detail: POST
// /threads/{thread_id}/copy of a thread that is not there (or not the
// caller's), as both official servers answer it.
func conflictIfMissing(w http.ResponseWriter, detail string) {
	httpx.WriteJSON(w, http.StatusConflict, httpx.ErrorBody{Detail: detail})
}

// streamErrorIfMissing opens the event stream and sends one error event
// "404: <detail>" in it, as the official servers answer a joined run
// stream whose thread or run is not there (or not the caller's): the SDKs
// yield it as an "error" part instead of throwing.
func streamErrorIfMissing(w http.ResponseWriter, detail string) {
	data, _ := json.Marshal(map[string]string{"error": "NotFoundError", "message": "404: " + detail})
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "private, no-cache")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("event: error\ndata: " + string(data) + "\n\n"))
}

func detailOf(body []byte) (string, bool) {
	var e struct {
		Detail *string `json:"detail"`
	}
	if json.Unmarshal(body, &e) != nil || e.Detail == nil {
		return "", false
	}
	return *e.Detail, true
}

// acceptsJSON tells whether an Accept header names application/json
// itself (a wildcard does not count: it is what every client sends by
// default).
func acceptsJSON(values []string) bool {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			media, _, _ := strings.Cut(part, ";")
			if strings.EqualFold(strings.TrimSpace(media), "application/json") {
				return true
			}
		}
	}
	return false
}

// rewriteWriter holds back an answer whose status and headers hold
// accepts, for its middleware to rewrite once the handler returns;
// every other answer goes straight through (streams keep flushing).
type rewriteWriter struct {
	http.ResponseWriter
	hold   func(code int, h http.Header) bool
	held   bool
	status int
	body   bytes.Buffer
}

func (w *rewriteWriter) WriteHeader(code int) {
	if w.status != 0 {
		return
	}
	w.status = code
	if w.held = w.hold(code, w.Header()); !w.held {
		w.ResponseWriter.WriteHeader(code)
	}
}

func (w *rewriteWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.held {
		return w.body.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

func (w *rewriteWriter) Flush() {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK) // what a flush before any header sends
	}
	if !w.held {
		_ = http.NewResponseController(w.ResponseWriter).Flush()
	}
}

// Hijack hands the connection over (WebSocket upgrades).
func (w *rewriteWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

func (w *rewriteWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
