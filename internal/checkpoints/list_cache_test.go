package checkpoints_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	. "github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/postgres/pgtest"
)

// TestListCache checks the cache of rebuilt lists: a second read of a list
// fetches no element, a list that extends a cached one fetches only its
// new elements (shown by deleting the cached list's elements first: the
// read still succeeds), and a cached list of another database's thread of
// the same id, whose seq ranges match but whose content differs, is never
// used as a prefix (its hash chain does not lead to the header's hash).
func TestListCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	msgs := func(tag string, n int) []any {
		var out []any
		for i := range n {
			out = append(out, map[string]any{"id": fmt.Sprint(tag, i), "content": tag + strings.Repeat(" text", 20)})
		}
		return out
	}
	read := func(db postgres.DBTX, cfg Config) string {
		t.Helper()
		tu, err := GetTuple(ctx, db, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return string(tu.Checkpoint.ChannelValues["messages"].(json.RawMessage))
	}
	want := func(v []any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	dbA := pgtest.Pool(t)
	a := newLine(t, dbA, "cache-shared-id", "")
	a1 := a.Put("loop", map[string]any{"messages": msgs("a", 10)})
	if got := read(dbA, a1); got != want(msgs("a", 10)) {
		t.Fatalf("first read: %s", got)
	}
	// Cached: reads without its elements.
	if _, err := dbA.Exec(ctx, `DELETE FROM thread_elements WHERE thread_id = 'cache-shared-id'`); err != nil {
		t.Fatal(err)
	}
	if got := read(dbA, a1); got != want(msgs("a", 10)) {
		t.Fatalf("cached read: %s", got)
	}
	// Extends the cached list: only the two new elements are read.
	a2 := a.Put("loop", map[string]any{"messages": append(msgs("a", 10), msgs("b", 2)...)})
	var n int
	if err := dbA.QueryRow(ctx, `SELECT count(*) FROM thread_elements WHERE thread_id = 'cache-shared-id'`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d elements after the second put (%v), want the 2 new ones", n, err)
	}
	if got := read(dbA, a2); got != want(append(msgs("a", 10), msgs("b", 2)...)) {
		t.Fatalf("extended read: %s", got)
	}

	// Same thread id, same seq ranges, other content: the cached lists of
	// database A must not stand in for any part of it.
	dbB := pgtest.Pool(t)
	b := newLine(t, dbB, "cache-shared-id", "")
	b1 := b.Put("loop", map[string]any{"messages": msgs("c", 14)})
	if got := read(dbB, b1); got != want(msgs("c", 14)) {
		t.Fatalf("another thread's cached prefix was used: %s", got)
	}
	// And a missing element of a list nobody cached is still an error.
	b2 := b.Put("loop", map[string]any{"messages": append(msgs("c", 14), msgs("d", 3)...)})
	BuiltListsClear()
	if _, err := dbB.Exec(ctx, `DELETE FROM thread_elements WHERE thread_id = 'cache-shared-id' AND seq = 15`); err != nil {
		t.Fatal(err)
	}
	if _, err := GetTuple(ctx, dbB, b2); err == nil || !strings.Contains(err.Error(), ErrElementMissing.Error()) {
		t.Fatalf("read with a missing element: %v", err)
	}
}
