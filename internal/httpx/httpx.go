// Package httpx holds the small helpers every Weft handler uses: lenient
// JSON decoding (empty body = {}, unknown fields ignored, 422 on malformed
// input, 413 over the size limit), JSON and error responses in the
// {"detail": "..."} shape the LangGraph SDKs read, path and query parsing,
// and the wire form of timestamps (Time, an alias of wire.Time, declared
// in the worker protocol's leaf package, which carries timestamps too).
package httpx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/wire"
)

// ErrorBody is the JSON body of every error response.
type ErrorBody struct {
	Detail string `json:"detail" validate:"required" example:"Thread 0b9e... not found"`
}

var statusOf = map[apperr.Code]int{
	apperr.NotFound:   http.StatusNotFound,
	apperr.Conflict:   http.StatusConflict,
	apperr.Invalid:    http.StatusUnprocessableEntity,
	apperr.BadRequest: http.StatusBadRequest,
	apperr.TooLarge:   http.StatusRequestEntityTooLarge,
}

// StatusClientClosedRequest (499, nginx's convention) is the status logged
// for a request whose client went away before it was answered: the client
// reads nothing, so it is no server error to count or alert on.
const StatusClientClosedRequest = 499

// WriteError writes err as {"detail": ...}. An *apperr.Error gets its
// mapped status and message; a database that cannot be reached right now
// (postgres.IsUnavailable) is a 503 with Retry-After (see
// WriteUnavailable); an error caused by the client going away (the
// request's context cancelled) is a 499, logged at debug level; anything
// else is logged and answered with a bare 500 whose body reveals nothing.
func WriteError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	var ae *apperr.Error
	if errors.As(err, &ae) {
		if ae.Code == apperr.Unavailable {
			WriteUnavailable(w, ae.Message)
			return
		}
		WriteJSON(w, statusOf[ae.Code], ErrorBody{Detail: ae.Message})
		return
	}
	if postgres.IsUnavailable(err) {
		log.DebugContext(r.Context(), "database unavailable", "method", r.Method, "path", r.URL.Path, "error", err)
		WriteUnavailable(w, DetailUnavailable)
		return
	}
	if r.Context().Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		// The client left (a worker killed mid-request, a caller that gave
		// up): what failed was its own request being abandoned.
		log.DebugContext(r.Context(), "request abandoned by its client", "method", r.Method, "path", r.URL.Path, "error", err)
		WriteJSON(w, StatusClientClosedRequest, ErrorBody{Detail: "Client closed the request"})
		return
	}
	if msg, ok := postgres.DataException(err); ok {
		// PostgreSQL refused a value the client sent (a NUL character in a
		// string, a number beyond its range): the transaction rolled back,
		// nothing changed.
		WriteJSON(w, http.StatusUnprocessableEntity, ErrorBody{Detail: "Invalid value in the request: " + msg})
		return
	}
	log.ErrorContext(r.Context(), "internal error", "method", r.Method, "path", r.URL.Path, "error", err)
	WriteJSON(w, http.StatusInternalServerError, ErrorBody{Detail: "Internal Server Error"})
}

// DetailUnavailable is the detail of a 503 for a database outage.
const DetailUnavailable = "Database unavailable, retry shortly"

// RetryAfterSeconds is the Retry-After of a 503: the database is usually
// back (a restart, a failover) within seconds, and the server reconnects by
// itself.
const RetryAfterSeconds = 1

// WriteUnavailable answers 503 Service Unavailable with Retry-After and
// detail. The request's transaction did not commit (save the rare
// connection lost during its COMMIT, see postgres.IsUnavailable), so a
// client retrying it, as the SDKs do for a 503, is right.
func WriteUnavailable(w http.ResponseWriter, detail string) {
	w.Header().Set("Retry-After", strconv.Itoa(RetryAfterSeconds))
	WriteJSON(w, http.StatusServiceUnavailable, ErrorBody{Detail: detail})
}

// HandlerFunc is an HTTP handler that returns its error instead of writing
// it; Handle turns it into an http.HandlerFunc.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Handle adapts h: a returned error is written by WriteError (logged when it
// is not a client error). h must not have written a response when it
// returns an error.
func Handle(log *slog.Logger, h HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			WriteError(w, r, log, err)
		}
	}
}

// Appender is a value that encodes itself: AppendJSON appends to dst
// exactly what json.Marshal would return for it, faster (a ThreadState
// copies its stored JSON values instead of re-scanning them). WriteJSON
// and ArrayPage use it.
type Appender interface {
	AppendJSON(dst []byte) ([]byte, error)
}

// WriteJSON writes v as JSON with the given status, followed by a newline
// (as json.Encoder writes it).
func WriteJSON(w http.ResponseWriter, status int, v any) {
	if a, ok := v.(Appender); ok {
		if b, err := a.AppendJSON(nil); err == nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write(append(b, '\n'))
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// DecodeJSON decodes the request body into dst (a pointer to a struct or
// map). It never looks at Content-Type. An empty body leaves dst untouched
// (the SDKs send bodiless POSTs meaning {}); a body of JSON null is no
// object (a 422: neither official SDK sends one, they send no body); unknown
// fields are ignored, but field names are exact: a key that repeats another
// or differs from a field's name only in case is a 422 (fields.go);
// malformed JSON, a non-object body, a body that is not
// valid UTF-8, nests deeper than MaxJSONDepth or holds a number beyond
// float64 (1e400), or a field of the wrong type is a 422 naming the problem; a body over the limit set by the router is a
// 413.
func DecodeJSON(r *http.Request, dst any) error {
	return decodeBody(r, dst, '{', "a JSON object")
}

// DecodeJSONArray is DecodeJSON for a body that must be a JSON array.
func DecodeJSONArray(r *http.Request, dst any) error {
	return decodeBody(r, dst, '[', "a JSON array")
}

func decodeBody(r *http.Request, dst any, open byte, what string) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return apperr.Errorf(apperr.TooLarge, "Request body exceeds the limit of %d bytes", tooBig.Limit)
		}
		return apperr.Errorf(apperr.Invalid, "Could not read request body: %v", err)
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil
	}
	if body[0] != open {
		return apperr.Errorf(apperr.Invalid, "Request body must be %s (or left out)", what)
	}
	if err := jsonv.Check(body); err != nil {
		return apperr.Errorf(apperr.Invalid, "Invalid request body: %v", err)
	}
	if err := checkValues(body, reflect.TypeOf(dst)); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			field := typeErr.Field
			if field == "" {
				field = "body"
			}
			return apperr.Errorf(apperr.Invalid, "Invalid request body: field %q must be %s, got %s", field, describeType(typeErr.Type.String()), typeErr.Value)
		}
		var appErr *apperr.Error
		if errors.As(err, &appErr) { // a field's UnmarshalJSON (UnmarshalStrict)
			return appErr
		}
		var fieldErr *FieldError
		if errors.As(err, &fieldErr) {
			return apperr.Errorf(apperr.Invalid, "Invalid request body: %s", fieldErr.Error())
		}
		return apperr.Errorf(apperr.Invalid, "Invalid JSON in request body")
	}
	if dec.More() {
		return apperr.Errorf(apperr.Invalid, "Invalid JSON in request body: trailing data after the object")
	}
	return nil
}

// MaxJSONDepth is how deeply arrays and objects may nest in a request body
// (jsonv.MaxDepth).
const MaxJSONDepth = jsonv.MaxDepth

// FieldError is returned by custom UnmarshalJSON methods of request fields
// to produce a precise 422 message.
type FieldError struct {
	Field, Problem string
}

func (e *FieldError) Error() string { return fmt.Sprintf("field %q %s", e.Field, e.Problem) }

func describeType(goType string) string {
	switch {
	case strings.HasPrefix(goType, "map["), strings.HasPrefix(goType, "struct"):
		return "an object"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case goType == "string", goType == "*string":
		return "a string"
	case goType == "bool", goType == "*bool":
		return "a boolean"
	case strings.Contains(goType, "int"), strings.Contains(goType, "float"):
		return "a number"
	}
	return goType
}

// PathUUID parses the chi URL parameter name as a UUID; a malformed one is
// a 422 "Invalid <what> ID: must be a UUID" (the official server's wording).
func PathUUID(r *http.Request, name, what string) (uuid.UUID, error) {
	s := chi.URLParam(r, name)
	if u, err := url.PathUnescape(s); err == nil {
		s = u // chi hands over the raw segment when the client escaped it
	}
	return ParseUUID(s, what)
}

// ParseUUID parses s as a UUID, with the same 422 as PathUUID.
func ParseUUID(s, what string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil || len(s) != 36 && len(s) != 32 {
		return uuid.Nil, apperr.Errorf(apperr.Invalid, "Invalid %s ID: must be a UUID, got %q", what, s)
	}
	return id, nil
}

// ParseBool reads the boolean encodings the SDKs send (true/True/1/yes,
// false/False/0/no). An empty value gives def.
func ParseBool(s string, def bool) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "":
		return def, nil
	case "true", "1", "yes", "on":
		return true, nil
	case "false", "0", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("not a boolean: %q", s)
}

// QueryBool reads query parameter name as a boolean: true or false (also
// 1 or 0, which the JS SDK sends, and the other spellings of ParseBool);
// def when the parameter is absent. Present and empty (?name=), or
// anything else, is a 422.
func QueryBool(r *http.Request, name string, def bool) (bool, error) {
	s, ok := QueryValue(r, name)
	if !ok {
		return def, nil
	}
	b, err := ParseBool(s, def)
	if err != nil || strings.TrimSpace(s) == "" {
		return false, apperr.Errorf(apperr.Invalid, "Invalid query parameter %s %q: must be true or false", name, s)
	}
	return b, nil
}

// QueryInt reads query parameter name as an integer in [min, max], def
// when absent. Present and empty (?name=) is a 422, as is anything else
// but such an integer.
func QueryInt(r *http.Request, name string, def, min, max int) (int, error) {
	s, ok := QueryValue(r, name)
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < min || n > max {
		return 0, apperr.Errorf(apperr.Invalid, "Invalid query parameter %s %q: must be an integer between %d and %d", name, s, min, max)
	}
	return n, nil
}

// QueryValue is query parameter name's (first) value, and whether the
// request has the parameter at all (?name= has it, empty).
func QueryValue(r *http.Request, name string) (string, bool) {
	vals, ok := r.URL.Query()[name]
	if !ok || len(vals) == 0 {
		return "", false
	}
	return vals[0], true
}

// QueryEnum reads query parameter name as one of allowed, def when absent.
// Present and empty (?name=), or any other value, is a 422 naming the
// values allowed.
func QueryEnum(r *http.Request, name, def string, allowed ...string) (string, error) {
	s, ok := QueryValue(r, name)
	if !ok {
		return def, nil
	}
	if slices.Contains(allowed, s) {
		return s, nil
	}
	return "", apperr.Errorf(apperr.Invalid, "Invalid query parameter %s %q: must be one of %s", name, s, strings.Join(allowed, ", "))
}

// QueryStrings reads list query parameter name in every encoding QueryList
// reads (repeated keys, comma lists, JSON arrays), each item one of allowed
// when allowed is given. Absent is nil; empty items are left out (?name=
// is an empty list); an item not allowed is a 422.
func QueryStrings(r *http.Request, name string, allowed ...string) ([]string, error) {
	vals, ok := r.URL.Query()[name]
	if !ok {
		return nil, nil
	}
	var out []string
	for _, v := range vals {
		v = strings.TrimSpace(v)
		var items []string
		if !strings.HasPrefix(v, "[") || json.Unmarshal([]byte(v), &items) != nil {
			items = strings.Split(v, ",")
		}
		for _, it := range items {
			if it = strings.TrimSpace(it); it == "" {
				continue // ?select= is an empty list
			}
			if len(allowed) > 0 && !slices.Contains(allowed, it) {
				return nil, apperr.Errorf(apperr.Invalid, "Invalid query parameter %s %q: must be one of %s", name, it, strings.Join(allowed, ", "))
			}
			out = append(out, it)
		}
	}
	return out, nil
}

// SetPagination sets X-Pagination-Total and, when more rows exist,
// X-Pagination-Next, from a page fetched with limit+1 rows (see the
// reference API §1.6): hasMore tells whether the extra row came back.
func SetPagination(w http.ResponseWriter, offset, limit, pageLen int, hasMore bool) {
	if hasMore {
		w.Header().Set("X-Pagination-Next", strconv.Itoa(offset+limit))
		w.Header().Set("X-Pagination-Total", strconv.Itoa(offset+limit+1))
		return
	}
	w.Header().Set("X-Pagination-Total", strconv.Itoa(offset+pageLen))
}

// Time is a timestamp in the official server's wire form: ISO 8601 with
// microseconds and a numeric offset ("2024-07-25T15:35:44.184703+00:00").
// It is package wire's (the worker protocol carries it too).
type Time = wire.Time

// TimeLayout is the wire layout of Time.
const TimeLayout = wire.TimeLayout

// PathParam returns the chi URL parameter name, unescaped.
func PathParam(r *http.Request, name string) string {
	s := chi.URLParam(r, name)
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// QueryList flattens list query parameters in every encoding the SDKs use:
// repeated keys, comma lists, and JSON arrays (["a","b"]).
func QueryList(values []string) []string {
	var out []string
	for _, v := range values {
		v = strings.TrimSpace(v)
		var list []string
		if strings.HasPrefix(v, "[") && json.Unmarshal([]byte(v), &list) == nil {
			out = append(out, list...)
			continue
		}
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// UnixTransport is an HTTP transport to the server on the unix socket at
// path (a worker's: auth.path, embed functions, http.app), keeping up to
// idle connections open between requests.
func UnixTransport(path string, idle int) *http.Transport {
	return &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
		MaxIdleConns:        idle,
		MaxIdleConnsPerHost: idle,
		IdleConnTimeout:     30 * time.Second,
	}
}
