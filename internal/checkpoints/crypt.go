package checkpoints

import (
	"context"
	"fmt"

	"github.com/weftdev/weft/internal/checkpoints/serde"
	"github.com/weftdev/weft/internal/crypt"
)

// The serde boundary with encryption at rest (package crypt): values are
// sealed right after serde.Encode and opened right before decodeValue, in
// LangGraph's EncryptedSerializer format ("json+aes", nonce‖tag‖ciphertext),
// with the keyring ctx carries. "empty" values (no blob) stay as they are.

// encodeValue is serde.Encode sealed with ctx's keyring (unchanged when
// encryption is off).
func encodeValue(ctx context.Context, v any) (string, []byte, error) {
	typ, data, err := serde.Encode(v)
	if err != nil {
		return "", nil, err
	}
	typ, data = crypt.FromContext(ctx).Seal(typ, data)
	return typ, data, nil
}

// openValue decrypts a stored blob of an encrypted type ("T+aes") to T and
// its plaintext, with any key of ctx's keyring; other rows pass through.
func openValue(ctx context.Context, typ string, data []byte) (string, []byte, error) {
	if !crypt.Encrypted(typ) {
		return typ, data, nil
	}
	t, d, err := crypt.FromContext(ctx).Open(typ, data)
	if err != nil {
		return "", nil, fmt.Errorf("type %q: %w", typ, err)
	}
	return t, d, nil
}

// OpenStored is s with its blob decrypted (see openValue): what callers
// that read blob rows themselves (the worker API's raw reads, the
// inspector) apply before TupleFromStored or before sending a blob on.
func OpenStored(ctx context.Context, s StoredValue) (StoredValue, error) {
	t, d, err := openValue(ctx, s.Type, s.Data)
	return StoredValue{Type: t, Data: d}, err
}
