package messagelog

import (
	"context"
	"fmt"
	"testing"

	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/checkpoints/cptest"
	"github.com/weftdev/weft/internal/postgres/pgtest"
)

var benchSizes = []int{10, 100, 1000}

// BenchmarkListWindow reads what a windowed state read (GET
// /threads/{id}/state?messages_window=20) reads, from threads of 10, 100
// and 1000 turns (one message each; lists of 1 KB or more are stored per
// element): the latest checkpoint without its messages, the list's header
// and its last 20 elements. "window20" must stay flat as the thread grows;
// "whole" (the checkpoint with the whole list) is the contrast.
func BenchmarkListWindow(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			db := pgtest.Pool(b)
			cptest.WriteChat(b, db, n)
			ctx := context.Background()
			b.Run("window20", func(b *testing.B) {
				for b.Loop() {
					t, err := checkpoints.GetTupleWithout(ctx, db, checkpoints.Config{ThreadID: "bench"}, "messages")
					if err != nil {
						b.Fatal(err)
					}
					v, err := TupleListView(ctx, db, t, "messages")
					if err != nil {
						b.Fatal(err)
					}
					recs, err := v.Records(ctx, db, v.Len()-20, v.Len())
					if err != nil || len(recs) != min(20, n) {
						b.Fatal(len(recs), err)
					}
				}
			})
			b.Run("whole", func(b *testing.B) {
				for b.Loop() {
					if _, err := checkpoints.GetTuple(ctx, db, checkpoints.Config{ThreadID: "bench"}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
