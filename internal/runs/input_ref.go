package runs

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/postgres"
)

// InputRefMinBytes is the default size of a run's input (its JSON as jsonb
// prints it) from which the run's row stores it by reference to its input
// checkpoint: a reference costs about 70 bytes (the key and a version), so
// a smaller input is kept whole.
const InputRefMinBytes = 128

// InputRefSet stores run runID's input by reference to the __start__ blob
// of version version in thread threadID (kwargs.input_ref = version in
// place of kwargs.input), when a read of that blob gives exactly the
// stored input and it holds at least minBytes (migration 024's
// weft_run_input_ref; otherwise nothing changes). Call it with the put of
// the run's input checkpoint (LangGraph's: root namespace, metadata source
// "input" and the run's id, __start__ among its new versions), after it in
// the same transaction, and never with encryption at rest (the input is
// sealed; the blob cannot be read in SQL). weft_run_kwargs renders the
// input on every read of the run (Columns).
func InputRefSet(ctx context.Context, db postgres.DBTX, runID, threadID uuid.UUID, version string, minBytes int) error {
	if _, err := db.Exec(ctx, `SELECT weft_run_input_ref($1, $2, $3, $4)`, runID, threadID, version, minBytes); err != nil {
		return fmt.Errorf("run %s input ref: %w", runID, err)
	}
	return nil
}
