// Package isolation holds the adversarial tenant isolation suite (its
// tests): the real server with two tenants, A owning a full set of
// resources (threads with history, a child and a copy, finished, streamed,
// stateless and pending runs, an assistant with versions, crons, store
// items), and B walking every operation of api/openapi.yaml with A's ids,
// forged ids, A's metadata filters, namespaces and prefixes.
//
// What the suite holds to (docs/tenants.md):
//
//   - A's id, to B, is exactly a forged id: the same status and, ids
//     aside, the same body (a 404 where the id names the resource), so
//     existence never leaks;
//   - no response to B (lists, searches, counts, SSE streams, protocol
//     commands, inspect pages, system endpoints) holds A's marker or an id
//     of A's that B did not send itself;
//   - B's writes (prune, cancel all, store puts on the same namespace and
//     key, delete by A's ids) leave A's rows as they were, and A sees
//     everything it had afterwards.
//
// The walk iterates the spec: an operation without a case fails the suite,
// as does a case for an operation the spec lacks. The worker API
// (/dispatch/…) is cross-tenant by design and listed with that reason.
//
// TestSuiteCatchesMutant builds the server with the weft_tenant_mutant tag
// (the thread read without its tenant predicate, internal/threads) and
// requires the suite to fail with a leak: a suite that passes whatever the
// SQL says proves nothing.
package isolation
