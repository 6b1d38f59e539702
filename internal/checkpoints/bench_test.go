package checkpoints

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftdev/weft/internal/postgres/pgtest"
)

// benchThread writes a thread of n checkpoints shaped like a chat: every
// checkpoint appends one ~120-byte message to "messages" (so the latest
// value holds n messages, stored as a full copy per version like the JS
// saver does), bumps a "step" counter and carries one pending write. It
// returns the checkpoint ids, oldest first.
func benchThread(b *testing.B, db *pgxpool.Pool, n int) []string {
	b.Helper()
	ctx := context.Background()
	tx, err := db.Begin(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	cfg := Config{ThreadID: "bench"}
	cp := Checkpoint{ChannelValues: map[string]any{}, ChannelVersions: map[string]string{}, VersionsSeen: map[string]map[string]string{}}
	var messages []any
	out := make([]string, 0, n)
	for i := range n {
		typ := []string{"human", "ai"}[i%2]
		messages = append(messages, map[string]any{"type": typ, "id": fmt.Sprintf("msg-%06d", i),
			"content": fmt.Sprintf("message %d: %s", i, strings.Repeat("lorem ipsum ", 8))})
		cp.ID = NewCheckpointID(i - 1)
		cp.ChannelValues = map[string]any{"messages": messages[:len(messages):len(messages)], "step": i}
		nv := map[string]string{"messages": NextVersion(cp.ChannelVersions["messages"]), "step": NextVersion(cp.ChannelVersions["step"])}
		versions := map[string]string{}
		for k, v := range cp.ChannelVersions {
			versions[k] = v
		}
		for k, v := range nv {
			versions[k] = v
		}
		cp.ChannelVersions = versions
		next, err := CheckpointPut(ctx, tx, cfg, cp, Metadata{"source": "loop", "step": i - 1}, nv)
		if err != nil {
			b.Fatal(err)
		}
		if err := CheckpointWritesPut(ctx, tx, next, []Write{{TaskID: "task", Channel: "messages", Value: messages[len(messages)-1:]}}); err != nil {
			b.Fatal(err)
		}
		cfg = next
		out = append(out, next.CheckpointID)
	}
	if err := tx.Commit(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec(ctx, `ANALYZE`); err != nil {
		b.Fatal(err)
	}
	return out
}

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
			idsOf := benchThread(b, db, n)
			ctx := context.Background()
			for _, c := range []struct {
				name string
				cfg  Config
			}{{"latest", Config{ThreadID: "bench"}}, {"oldest", Config{ThreadID: "bench", CheckpointID: idsOf[0]}}} {
				b.Run(c.name, func(b *testing.B) {
					for b.Loop() {
						if _, err := CheckpointGetTuple(ctx, db, c.cfg); err != nil {
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
			idsOf := benchThread(b, db, n)
			ctx := context.Background()
			for _, c := range []struct {
				name string
				opt  ListOptions
			}{{"newest10", ListOptions{Limit: 10}}, {"oldest10", ListOptions{Limit: 10, Before: idsOf[min(10, n-1)]}}} {
				b.Run(c.name, func(b *testing.B) {
					for b.Loop() {
						page, err := CheckpointList(ctx, db, Config{ThreadID: "bench"}, c.opt)
						if err != nil || len(page) == 0 {
							b.Fatal(len(page), err)
						}
					}
				})
			}
		})
	}
}

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
			benchThread(b, db, n)
			ctx := context.Background()
			b.Run("window20", func(b *testing.B) {
				for b.Loop() {
					t, err := CheckpointGetTupleWithout(ctx, db, Config{ThreadID: "bench"}, "messages")
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
					if _, err := CheckpointGetTuple(ctx, db, Config{ThreadID: "bench"}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
