// Package auth decides who a request is and what it may touch: API keys,
// JWT bearer tokens and the hooks of Go programs embedding Weft. It puts a
// Principal in the request's context; every store reads the tenant from it
// (Tenant) and filters by it in the statement itself.
package auth

import "context"

// Principal is the authenticated caller of a request.
type Principal struct {
	// Identity names the caller (a key id, a JWT subject); "" when auth is off.
	Identity string
	// Tenant owns every row the caller creates and is the only tenant whose
	// rows it can read. "" is the default tenant: the one every request
	// belongs to when auth is off.
	Tenant string
	// Scopes are what the caller may do ("worker", "admin", tenant data).
	Scopes []string
	// User is what the authenticator said of the caller beyond these (a JS
	// project's auth.path user object), handed back to its authorize hook.
	User any
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal ctx carries, if any.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// Tenant is the tenant of ctx's principal: "" (the default tenant) when the
// request carries none.
func Tenant(ctx context.Context) string {
	p, _ := FromContext(ctx)
	return p.Tenant
}
