//go:build !weft_tenant_mutant

package threads

// threadGetSQL reads one thread of the caller's tenant ($2). The tenant
// test lives in its own file so that the isolation suite can prove it
// notices a missing predicate: built with the weft_tenant_mutant tag (tests
// only, see internal/isolation), tenant_mutant.go drops it.
const threadGetSQL = `SELECT ` + threadColumns + ` FROM threads WHERE thread_id = $1 AND tenant_id = $2`
