package checkpoints_test

import (
	"context"
	"fmt"
	"testing"

	. "github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/checkpoints/cptest"
	"github.com/weftdev/weft/internal/postgres/pgtest"
)

var benchSizes = []int{10, 100, 1000}

// BenchmarkGetTuple reads one checkpoint with its values and writes
// (three queries) from threads of 10, 100 and 1000 checkpoints: the latest
// (whose messages value holds n messages, so its decode cost grows with n)
// and the oldest (one message: the lookup cost alone, which must not grow
// with the thread).
func BenchmarkGetTuple(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("checkpoints=%d", n), func(b *testing.B) {
			db := pgtest.Pool(b)
			idsOf := cptest.WriteChat(b, db, n)
			ctx := context.Background()
			for _, c := range []struct {
				name string
				cfg  Config
			}{{"latest", Config{ThreadID: "bench"}}, {"oldest", Config{ThreadID: "bench", CheckpointID: idsOf[0]}}} {
				b.Run(c.name, func(b *testing.B) {
					for b.Loop() {
						if _, err := GetTuple(ctx, db, c.cfg); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}

// BenchmarkList reads a history page of 10 checkpoints (keyset: three
// queries for the page) from threads of 10, 100 and 1000 checkpoints: the
// newest page (values of ~n messages each) and the oldest page (Before =
// the 11th checkpoint: small values, the paging cost alone, which must not
// grow with the thread).
func BenchmarkList(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("checkpoints=%d", n), func(b *testing.B) {
			db := pgtest.Pool(b)
			idsOf := cptest.WriteChat(b, db, n)
			ctx := context.Background()
			for _, c := range []struct {
				name string
				opt  ListOptions
			}{{"newest10", ListOptions{Limit: 10}}, {"oldest10", ListOptions{Limit: 10, Before: idsOf[min(10, n-1)]}}} {
				b.Run(c.name, func(b *testing.B) {
					for b.Loop() {
						page, err := List(ctx, db, Config{ThreadID: "bench"}, c.opt)
						if err != nil || len(page) == 0 {
							b.Fatal(len(page), err)
						}
					}
				})
			}
		})
	}
}
