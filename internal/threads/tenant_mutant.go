//go:build weft_tenant_mutant

package threads

// threadGetSQL without its tenant predicate: the deliberate leak the
// isolation suite must report (internal/isolation TestSuiteCatchesMutant).
// Never built outside that test.
const threadGetSQL = `SELECT ` + threadColumns + ` FROM threads WHERE thread_id = $1 AND $2::text IS NOT NULL`
