package runs

import (
	"context"
	"fmt"

	"github.com/weftdev/weft/internal/crypt"
)

// Encryption at rest (package crypt) of a run's row: the input and command
// inside kwargs, and the result (the final values), are sealed as jsonb
// envelopes. The rest of kwargs (config, context, stream modes, webhook,
// checkpoint id…) stays plain: SQL reads some of it (the webhook URL, the
// config a thread inherits), and it is configuration rather than content.

// SealedKwargs are the kwargs fields that hold a run's content.
var SealedKwargs = []string{"input", "command"}

// SealKwargs is a kwargs document as stored: its input and command sealed
// with ctx's keyring (unchanged when encryption is off).
func SealKwargs(ctx context.Context, doc []byte) ([]byte, error) {
	return crypt.FromContext(ctx).SealFields(doc, SealedKwargs...)
}

// OpenKwargs is a stored kwargs document with its input and command
// decrypted (plaintext rows pass through).
func OpenKwargs(ctx context.Context, doc []byte) ([]byte, error) {
	return crypt.FromContext(ctx).OpenFields(doc, SealedKwargs...)
}

// Open decrypts the run's kwargs (input, command) and result when they
// were stored encrypted.
func Open(ctx context.Context, r *Run) error {
	var err error
	if r.Kwargs, err = OpenKwargs(ctx, r.Kwargs); err != nil {
		return fmt.Errorf("run %s: %w", r.RunID, err)
	}
	if r.Result, err = crypt.FromContext(ctx).OpenJSON(r.Result); err != nil {
		return fmt.Errorf("run %s result: %w", r.RunID, err)
	}
	return nil
}
