package threads_test

import (
	"context"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/crypt"
	"github.com/weftdev/weft/internal/threads"
)

// Stored leaves out of the stored values exactly the channels it may
// reference: a JSON list of at least the minimum size whose blob the
// caller named, without \u0000 (which jsonb refuses); nothing with
// encryption at rest or with references off.
func TestStoredReferencesLongListsOnly(t *testing.T) {
	long := make([]any, 30)
	for i := range long {
		long[i] = strings.Repeat("x", 40)
	}
	withNUL := append([]any{"a\x00b"}, long...)
	values := map[string]any{"long": long, "unnamed": long, "short": []any{"x"}, "text": strings.Repeat("y", 2000),
		"nul": withNUL, "n": 1}
	blobs := map[string]string{"long": "v1", "short": "v2", "text": "v3", "nul": "v4", "absent": "v5"}
	st := threads.State{Values: values, Blobs: blobs, Interrupts: []byte(`{}`)}
	ctx := context.Background()

	got, err := threads.NewStore(nil, threads.Config{}).Stored(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Refs) != `{"long":"v1"}` {
		t.Fatalf("refs %s, want only the long list", got.Refs)
	}
	if strings.Contains(string(got.Values), `"long"`) || !strings.Contains(string(got.Values), `"unnamed"`) ||
		!strings.Contains(string(got.Values), `"nul"`) || !strings.Contains(string(got.Values), `"text"`) {
		t.Fatalf("stored values %.300s", got.Values)
	}
	if len(values) != 6 {
		t.Fatal("Stored changed the caller's values")
	}

	// A minimum above the list's size, or references off: whole.
	for _, min := range []int{5000, -1} {
		got, err := threads.NewStore(nil, threads.Config{ValuesRefMinBytes: min}).Stored(ctx, st)
		if err != nil || got.Refs != nil || !strings.Contains(string(got.Values), `"long"`) {
			t.Fatalf("min %d: refs %s, values %.100s, err %v", min, got.Refs, got.Values, err)
		}
	}

	// Encryption at rest: whole and sealed.
	kr, err := crypt.ParseKeyring("0123456789abcdef", "")
	if err != nil {
		t.Fatal(err)
	}
	got, err = threads.NewStore(nil, threads.Config{}).Stored(crypt.WithKeyring(ctx, kr), st)
	if err != nil || got.Refs != nil || !crypt.IsEnvelope(got.Values) || !crypt.IsEnvelope(got.Interrupts) {
		t.Fatalf("with a key: refs %s, values %.100s, interrupts %s, err %v", got.Refs, got.Values, got.Interrupts, err)
	}
	open, err := kr.OpenJSON(got.Values)
	if err != nil || !strings.Contains(string(open), `"long"`) {
		t.Fatalf("with a key the sealed values are %.100s (%v)", open, err)
	}

	// No checkpoint: null.
	got, err = threads.NewStore(nil, threads.Config{}).Stored(ctx, threads.State{Interrupts: []byte(`{}`)})
	if err != nil || string(got.Values) != "null" || got.Refs != nil {
		t.Fatalf("no values: %s %s %v", got.Values, got.Refs, err)
	}
}
