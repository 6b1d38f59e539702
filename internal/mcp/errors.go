package mcp

import (
	"bytes"
	"net/http"
	"strings"

	"github.com/weftdev/weft/internal/httpx"
)

// detailWriter turns the SDK's plain-text HTTP errors (a malformed
// message, a wrong Content-Type or Accept, GET and DELETE) into Weft's
// {"detail": "…"} bodies with the same status and headers, as every other
// 4xx of the API. JSON-RPC errors, which the SDK writes as JSON, pass
// through untouched.
type detailWriter struct {
	http.ResponseWriter
	status int // an error status held back while its text is read
	text   bytes.Buffer
}

func (d *detailWriter) WriteHeader(status int) {
	if status >= 400 && strings.HasPrefix(d.Header().Get("Content-Type"), "text/plain") {
		d.status = status
		return
	}
	d.ResponseWriter.WriteHeader(status)
}

func (d *detailWriter) Write(b []byte) (int, error) {
	if d.status != 0 {
		return d.text.Write(b)
	}
	return d.ResponseWriter.Write(b)
}

func (d *detailWriter) Flush() {
	if d.status != 0 {
		return
	}
	if f, ok := d.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (d *detailWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// finish writes the held-back error, if any.
func (d *detailWriter) finish() {
	if d.status == 0 {
		return
	}
	h := d.Header()
	h.Del("Content-Type")
	h.Del("X-Content-Type-Options")
	httpx.WriteJSON(d.ResponseWriter, d.status, httpx.ErrorBody{Detail: strings.TrimSpace(d.text.String())})
}
