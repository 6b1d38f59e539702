// Package faults holds Weft's fault tests: the real server on a PostgreSQL
// cluster of the test's own (not the shared one of package pgtest), which
// the test stops and starts under load to check what clients see while the
// database is away (503 with Retry-After, never a 500 or a hang) and that
// nothing a client was told succeeded is lost once it is back.
package faults
