package auth

import (
	"fmt"
	"slices"
	"strings"
)

// Scopes a credential can carry. A request needs the scope of the resource
// its route touches (see the route table in package httpapi):
//
//   - ScopeTenant: all of the tenant's data — threads (with their runs and
//     state), assistants, the store and crons. Each of those is also a scope
//     of its own (ScopeThreads, ScopeAssistants, ScopeStore, ScopeCrons) for
//     a narrower credential.
//   - ScopeWorker: the worker API (/dispatch/…) and nothing else.
//   - ScopeAdmin: the run queue across tenants (/dispatches, /metrics) and
//     key management.
//
// No scope implies another: an operator's key that should also read threads
// carries "tenant,admin".
const (
	ScopeTenant     = "tenant"
	ScopeThreads    = "threads"
	ScopeAssistants = "assistants"
	ScopeStore      = "store"
	ScopeCrons      = "crons"
	ScopeWorker     = "worker"
	ScopeAdmin      = "admin"
)

// KnownScopes are the scopes API keys may be created with.
var KnownScopes = []string{ScopeTenant, ScopeThreads, ScopeAssistants, ScopeStore, ScopeCrons, ScopeWorker, ScopeAdmin}

// tenantData are the scopes ScopeTenant stands for.
var tenantData = []string{ScopeThreads, ScopeAssistants, ScopeStore, ScopeCrons}

// Has tells whether p may use scope: p carries it, or it is tenant data and
// p carries ScopeTenant.
func (p Principal) Has(scope string) bool {
	if slices.Contains(p.Scopes, scope) {
		return true
	}
	return slices.Contains(tenantData, scope) && slices.Contains(p.Scopes, ScopeTenant)
}

// ParseScopes splits a comma or space separated list of scopes, checking
// each against KnownScopes; duplicates are dropped.
func ParseScopes(s string) ([]string, error) {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		if !slices.Contains(KnownScopes, f) {
			return nil, fmt.Errorf("unknown scope %q (known: %s)", f, strings.Join(KnownScopes, ", "))
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no scope given (known: %s)", strings.Join(KnownScopes, ", "))
	}
	return out, nil
}

// HasTenantData tells whether scopes grant any tenant data.
func HasTenantData(scopes []string) bool {
	return slices.ContainsFunc(scopes, func(s string) bool { return s == ScopeTenant || slices.Contains(tenantData, s) })
}
