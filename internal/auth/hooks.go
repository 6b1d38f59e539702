package auth

import (
	"context"
	"errors"
	"net/http"
	"strings"
)

// Authenticator decides who a request is. It returns an *Error (401 for a
// missing or bad credential) or another error (a failure of its own,
// answered 500 and logged).
type Authenticator interface {
	Authenticate(r *http.Request) (Principal, error)
}

// AuthenticatorFunc adapts a function to Authenticator (the Authenticate
// hook of a Go program embedding Weft).
type AuthenticatorFunc func(r *http.Request) (Principal, error)

// Authenticate calls f.
func (f AuthenticatorFunc) Authenticate(r *http.Request) (Principal, error) { return f(r) }

// AuthorizeFunc is the per-resource authorize hook of a Go program
// embedding Weft, called for every request to a guarded route after its
// scope was checked. It returns Allow(), Deny(reason) (403) or
// Filter(metadata) (the request only sees rows whose metadata contains
// it). An error is a 500, logged.
type AuthorizeFunc func(ctx context.Context, req Request) (Decision, error)

// Request is what an authorize hook decides on.
type Request struct {
	// Principal is the authenticated caller (zero when auth is off).
	Principal Principal
	// Resource is what the route touches: "threads" (threads, their runs
	// and state), "assistants", "crons", "store", "worker" (the worker
	// API), "admin" (the queue across tenants, metrics) or "system" (/info,
	// /openapi.yaml).
	Resource string
	// Action is one of "create", "read", "update", "delete", "search"
	// (search, count, list), "create_run" (start a run) and "copy".
	Action string
	// ID is the id in the route's path (thread, assistant or cron id; the
	// run id for /runs/{run_id}), "" when the route has none.
	ID string
	// Method and Path are the HTTP request's.
	Method, Path string
	// Query is the request's raw query and Body its JSON body (nil when
	// none), for hooks that decide on the request's value.
	Query string
	Body  []byte
}

// Decision is an authorize hook's answer. The zero value allows.
type Decision struct {
	// Deny refuses the request with 403 {"detail": Reason}.
	Deny   bool
	Reason string
	// Filters restrict the request to rows whose metadata contains them
	// (PostgreSQL jsonb @>): thread reads, updates and deletes of another
	// row answer 404, searches and counts leave other rows out, and a
	// created thread gets them merged into its metadata. Routes that cannot
	// apply filters refuse the request (403) instead of ignoring them.
	Filters map[string]any
	// Body sets fields of the request's JSON body (a hook stamping an
	// owner into what is created or updated: {"metadata": ...}).
	Body map[string]any
}

// Allow is the Decision that lets the request through.
func Allow() Decision { return Decision{} }

// Deny is the Decision that refuses the request (403) with reason.
func Deny(reason string) Decision { return Decision{Deny: true, Reason: reason} }

// Filter is the Decision that lets the request through restricted to rows
// whose metadata contains filters.
func Filter(filters map[string]any) Decision { return Decision{Filters: filters} }

// Error is an authentication or authorization failure shown to the client:
// Status (401 or 403; 503 when a key server cannot be reached) with
// {"detail": Detail}.
type Error struct {
	Status int
	Detail string
}

func (e *Error) Error() string { return e.Detail }

// Unauthorized is a 401 with detail.
func Unauthorized(detail string) *Error {
	return &Error{Status: http.StatusUnauthorized, Detail: detail}
}

// Forbidden is a 403 with detail.
func Forbidden(detail string) *Error { return &Error{Status: http.StatusForbidden, Detail: detail} }

// AsError returns err's *Error, if it is (or wraps) one.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

type filtersKey struct{}

// WithFilters returns ctx carrying the metadata filters of an authorize
// decision.
func WithFilters(ctx context.Context, f map[string]any) context.Context {
	return context.WithValue(ctx, filtersKey{}, f)
}

// Filters are the metadata filters the request's authorize decision added
// (nil: none). Handlers that search threads merge them into the metadata
// containment of their query (see MergeFilters).
func Filters(ctx context.Context) map[string]any {
	f, _ := ctx.Value(filtersKey{}).(map[string]any)
	return f
}

// Credential is the credential a request carries: the x-api-key header
// (what the LangGraph SDKs' apiKey option sends), else the token of an
// "Authorization: Bearer" header. "" when neither is there.
func Credential(r *http.Request) string {
	if k := strings.TrimSpace(r.Header.Get("X-Api-Key")); k != "" {
		return k
	}
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(token)
	}
	return ""
}

// errMissing is the 401 of a request without a credential.
var errMissing = Unauthorized("Missing credentials: send an API key in the x-api-key header or a token as Authorization: Bearer")
