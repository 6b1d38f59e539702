package weft

import (
	"context"

	"github.com/weftdev/weft/internal/auth"
)

// Authentication and authorization for programs embedding Weft (see
// Options.Authenticate and Options.Authorize, and docs/production.md).

// Principal is the authenticated caller of a request: its Identity, the
// Tenant whose rows it reads and writes, and its Scopes (ScopeTenant,
// ScopeWorker, ScopeAdmin, ...).
type Principal = auth.Principal

// AuthRequest is what an Authorize hook decides on: the principal, the
// resource ("threads", "assistants", "crons", "store", "worker", "admin",
// "system") and action ("create", "read", "update", "delete", "search",
// "create_run", "copy", or the worker API's operation), the id in the path,
// the method and the path.
type AuthRequest = auth.Request

// AuthDecision is an Authorize hook's answer: Allow(), Deny(reason) or
// Filter(metadata). The zero value allows.
type AuthDecision = auth.Decision

// AuthError is an authentication failure answered to the client with its
// Status and {"detail": Detail}; Unauthorized builds the 401 one.
type AuthError = auth.Error

// JWTOptions are the settings of Options.Auth "jwt".
type JWTOptions = auth.JWTConfig

// Scopes a Principal can carry (see docs/production.md): tenant data as a
// whole or per resource, the worker API, and the admin operations.
const (
	ScopeTenant     = auth.ScopeTenant
	ScopeThreads    = auth.ScopeThreads
	ScopeAssistants = auth.ScopeAssistants
	ScopeStore      = auth.ScopeStore
	ScopeCrons      = auth.ScopeCrons
	ScopeWorker     = auth.ScopeWorker
	ScopeAdmin      = auth.ScopeAdmin
)

// Allow lets a request through.
func Allow() AuthDecision { return auth.Allow() }

// Deny refuses a request with 403 {"detail": reason}.
func Deny(reason string) AuthDecision { return auth.Deny(reason) }

// Filter lets a request through restricted to the threads and assistants
// whose metadata contains filters (jsonb @>): reads, updates and deletes of
// another one answer 404, searches and counts leave them out, and threads it
// creates get filters merged into their metadata. Store searches and
// namespace listings keep what lies in a namespace the filters contain
// ({"namespace": [...]}). Routes that cannot apply filters (crons, other
// store requests, stateless runs) refuse such a request with 403 rather
// than ignore them.
func Filter(filters map[string]any) AuthDecision { return auth.Filter(filters) }

// Unauthorized is the error an Authenticate hook returns for a missing or
// bad credential: 401 {"detail": detail}.
func Unauthorized(detail string) error { return auth.Unauthorized(detail) }

// PrincipalFromContext returns the principal of the request ctx belongs to
// (false when auth is off).
func PrincipalFromContext(ctx context.Context) (Principal, bool) { return auth.FromContext(ctx) }
