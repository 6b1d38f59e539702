package checkpoints_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	. "github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/checkpoints/serde"
	"github.com/weftdev/weft/internal/postgres/pgtest"
)

// TestCompactListsProperty drives random sequences of list edits through
// Put — appends, replacing a message by id, RemoveMessage,
// REMOVE_ALL/Overwrite, a summary replacing old messages, a reorder, an
// emptied list, repeated elements, forks from any earlier checkpoint and a
// subgraph namespace — and then reads every checkpoint back three ways (one
// getTuple each, history pages, and LangGraph's own view of the blobs in
// schema "langgraph"): each value must be exactly the JSON the plain
// encoding stores, byte for byte.
func TestCompactListsProperty(t *testing.T) {
	t.Parallel()
	db := pgtest.Pool(t)
	ctx := context.Background()
	for seed := uint64(1); seed <= 8; seed++ {
		// Odd seeds forget the per-process list cache before every put, so
		// each put reads its parent's list from the database.
		cold := seed%2 == 1
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 16))
			thread := fmt.Sprintf("prop-%d", seed)
			type written struct {
				cfg    Config
				values map[string]any
			}
			var all []written
			lines := []*line{newLine(t, db, thread, ""), newLine(t, db, thread, "sub:"+thread)}
			nextID := 0
			msg := func(content string) map[string]any {
				nextID++
				return map[string]any{"id": fmt.Sprint("m", nextID), "type": []string{"human", "ai"}[nextID%2], "content": content}
			}
			text := func() string {
				if r.IntN(8) == 0 {
					return "repeated" // identical elements in one list and across lists
				}
				b := make([]byte, 20+r.IntN(200))
				for i := range b {
					b[i] = "abcdefghij \"\\é"[r.IntN(14)]
				}
				return string(b)
			}
			for op := 0; op < 120; op++ {
				if cold {
					ListMetasClear()
				}
				l := lines[r.IntN(len(lines))]
				if op > 5 && r.IntN(10) == 0 { // fork from any earlier checkpoint of this namespace
					var same []written
					for _, w := range all {
						if w.cfg.NS == l.Cfg.NS {
							same = append(same, w)
						}
					}
					if len(same) > 0 {
						l = l.Fork(mustGet(t, db, same[r.IntN(len(same))].cfg))
						lines = append(lines, l)
					}
				}
				msgs, _ := l.CP.ChannelValues["messages"].([]any)
				msgs = slices.Clone(msgs)
				switch k := r.IntN(20); {
				case k < 9 || len(msgs) == 0: // a turn: one to three new messages
					for range 1 + r.IntN(3) {
						msgs = append(msgs, msg(text()))
					}
				case k < 11: // replace a message by id
					i := r.IntN(len(msgs))
					m := map[string]any{"id": msgs[i].(map[string]any)["id"], "type": "ai", "content": text()}
					msgs[i] = m
				case k < 13: // RemoveMessage
					i := r.IntN(len(msgs))
					msgs = slices.Delete(msgs, i, i+1)
				case k < 14: // REMOVE_ALL / Overwrite
					msgs = []any{msg(text())}
				case k < 16: // a summary replaces the oldest messages
					n := r.IntN(len(msgs)) + 1
					msgs = append([]any{msg("summary of " + fmt.Sprint(n))}, msgs[n:]...)
				case k < 17: // a reorder no reducer makes: storage must not care
					r.Shuffle(len(msgs), func(i, j int) { msgs[i], msgs[j] = msgs[j], msgs[i] })
				case k < 18:
					msgs = []any{}
				default: // the step writes another channel only
					log, _ := l.CP.ChannelValues["log"].([]any)
					l.Put("loop", map[string]any{"log": append(slices.Clone(log), "x", "x", fmt.Sprint(op))})
					all = append(all, written{l.Cfg, l.CP.ChannelValues})
					continue
				}
				l.Put("loop", map[string]any{"messages": msgs, "count": len(msgs)})
				all = append(all, written{l.Cfg, l.CP.ChannelValues})
			}
			encoded := func(v any) string {
				_, data, err := serde.Encode(v)
				if err != nil {
					t.Fatal(err)
				}
				return string(data)
			}
			for _, w := range all {
				got := mustGet(t, db, w.cfg)
				for ch, want := range w.values {
					if g, w := encoded(got.Checkpoint.ChannelValues[ch]), encoded(want); g != w {
						t.Fatalf("checkpoint %s channel %s:\n got  %s\n want %s", got.Config.CheckpointID, ch, g, w)
					}
				}
				// LangGraph's own view of the same blobs.
				for ch, want := range w.values {
					var typ string
					var blob []byte
					err := db.QueryRow(ctx, `SELECT b.type, b.blob FROM checkpoints c
						JOIN langgraph.checkpoint_blobs b ON b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns
						  AND b.channel = $4 AND b.version = c.checkpoint -> 'channel_versions' ->> $4
						WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = $3`,
						w.cfg.ThreadID, w.cfg.NS, w.cfg.CheckpointID, ch).Scan(&typ, &blob)
					if err != nil {
						t.Fatalf("view of %s %s: %v", w.cfg.CheckpointID, ch, err)
					}
					if typ != serde.TypeJSON || string(blob) != encoded(want) {
						t.Fatalf("langgraph view of %s %s: %s %s, want json %s", w.cfg.CheckpointID, ch, typ, blob, encoded(want))
					}
				}
			}
			// History pages read the same values (elements shared by a page
			// fetched once).
			for _, ns := range []string{"", "sub:" + thread} {
				byID := map[string]written{}
				for _, w := range all {
					if w.cfg.NS == ns {
						byID[w.cfg.CheckpointID] = w
					}
				}
				hist := mustList(t, db, Config{ThreadID: thread, NS: ns}, ListOptions{})
				if len(hist) != len(byID) {
					t.Fatalf("ns %q: history has %d checkpoints, want %d", ns, len(hist), len(byID))
				}
				for _, h := range hist {
					for ch, want := range byID[h.Config.CheckpointID].values {
						if g, w := encoded(h.Checkpoint.ChannelValues[ch]), encoded(want); g != w {
							t.Fatalf("history %s channel %s:\n got  %s\n want %s", h.Config.CheckpointID, ch, g, w)
						}
					}
				}
			}
			// Every distinct element is stored at most once per thread unless
			// appended anew after a fork (never once per checkpoint).
			var elements, blobsPlain int
			if err := db.QueryRow(ctx, `SELECT count(*) FROM thread_elements WHERE thread_id = $1`, thread).Scan(&elements); err != nil {
				t.Fatal(err)
			}
			if err := db.QueryRow(ctx, `SELECT count(*) FROM checkpoint_blobs WHERE thread_id = $1 AND type = 'json' AND length(blob) >= $2`, thread, CompactMinBytes).Scan(&blobsPlain); err != nil {
				t.Fatal(err)
			}
			if blobsPlain != 0 {
				t.Fatalf("%d long list blobs stored whole", blobsPlain)
			}
			if elements > nextID+len(all)*3 {
				t.Fatalf("%d elements for %d messages written", elements, nextID)
			}
		})
	}
}

// TestCompactListAppendOnly checks the shape of an append-only
// conversation's storage: one range per version, each element stored once.
func TestCompactListAppendOnly(t *testing.T) {
	t.Parallel()
	db := pgtest.Pool(t)
	l := newLine(t, db, "append", "")
	var msgs []any
	for i := range 50 {
		msgs = append(slices.Clone(msgs), map[string]any{"id": fmt.Sprint(i), "content": fmt.Sprint("message ", i, " ", strings.Repeat("x", CompactMinBytes))})
		l.Put("loop", map[string]any{"messages": msgs})
	}
	rows, err := db.Query(context.Background(), `SELECT blob FROM checkpoint_blobs WHERE thread_id = 'append' AND channel = 'messages' ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for rows.Next() {
		var blob []byte
		if err := rows.Scan(&blob); err != nil {
			t.Fatal(err)
		}
		n++
		h, err := ParseListHeader(blob)
		if err != nil {
			t.Fatal(err)
		}
		if want := [][2]int64{{1, int64(n)}}; h.N != n || !slices.Equal(h.R, want) {
			t.Fatalf("version %d: header %+v, want %d elements in %v", n, h, n, want)
		}
	}
	if n != 50 || countRows(t, db, "thread_elements", "append") != 50 {
		t.Fatalf("%d versions, %d elements; want 50 and 50", n, countRows(t, db, "thread_elements", "append"))
	}
	got := mustGet(t, db, l.Cfg).Checkpoint.ChannelValues["messages"]
	if _, data, _ := serde.Encode(got); !bytes.HasSuffix(data, []byte(`"id":"49"}]`)) {
		t.Fatalf("latest messages end %q", data[max(0, len(data)-40):])
	}
}

// TestCompactRetention: prune reclaims the elements only pruned versions
// named, a copy reads the same lists, and a thread delete removes them all.
func TestCompactRetention(t *testing.T) {
	t.Parallel()
	db := pgtest.Pool(t)
	ctx := context.Background()
	long := func(i int) map[string]any {
		return map[string]any{"id": fmt.Sprint(i), "content": fmt.Sprint(i, " ", strings.Repeat("y", CompactMinBytes))}
	}
	l := newLine(t, db, "ret", "")
	var msgs []any
	for i := range 6 {
		msgs = append(slices.Clone(msgs), long(i))
		l.Put("loop", map[string]any{"messages": msgs})
	}
	// A summary replaces the first five: they are named only by older versions.
	l.Put("loop", map[string]any{"messages": []any{long(100), msgs[5]}})
	latest := l.Cfg
	if n := countRows(t, db, "thread_elements", "ret"); n != 7 {
		t.Fatalf("%d elements, want 7", n)
	}
	if err := CopyThread(ctx, db, "ret", "ret-copy"); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := PruneThread(ctx, tx, "ret", latest.CheckpointID, nil); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, db, "thread_elements", "ret"); n != 2 {
		t.Fatalf("%d elements after prune, want 2 (the summary and message 5)", n)
	}
	want, _ := json.Marshal([]any{long(100), long(5)})
	for _, th := range []string{"ret", "ret-copy"} {
		got, _ := json.Marshal(mustGet(t, db, Config{ThreadID: th, CheckpointID: latest.CheckpointID}).Checkpoint.ChannelValues["messages"])
		if !bytes.Equal(got, want) {
			t.Fatalf("%s latest messages differ after prune", th)
		}
	}
	if got := len(mustList(t, db, Config{ThreadID: "ret-copy"}, ListOptions{})); got != 7 {
		t.Fatalf("copy has %d checkpoints, want 7", got)
	}
	if err := DeleteThread(ctx, db, "ret", "ret-copy"); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"thread_elements", "thread_element_seqs"} {
		if n := countRows(t, db, table, "ret") + countRows(t, db, table, "ret-copy"); n != 0 {
			t.Fatalf("%d %s rows after delete", n, table)
		}
	}
}

// TestSplitList: the elements of a list as serde.Encode writes it, split
// where a comma at depth 1 outside strings is; anything else (whitespace,
// an empty element, text after the array, an unclosed one) is not split.
func TestSplitList(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string // nil: not split
	}{
		{`[1,2,3]`, []string{"1", "2", "3"}},
		{`[{"a":"x,]\"y"},[1,[2]],"s\\"]`, []string{`{"a":"x,]\"y"}`, `[1,[2]]`, `"s\\"`}},
		{`[{"k":{"n":[{}]}},"]"]`, []string{`{"k":{"n":[{}]}}`, `"]"`}},
		{`[1, 2]`, nil},
		{`[1,,2]`, nil},
		{`[,1]`, nil},
		{`[]`, nil},
		{`[1]]`, nil},
		{`[[1]`, nil},
		{`[1],[2]`, nil},
		{`{"a":1}`, nil},
	} {
		got, ok := SplitList([]byte(c.in))
		if ok != (c.want != nil) {
			t.Errorf("%s: split %v, want %v (%q)", c.in, ok, c.want != nil, got)
			continue
		}
		if !ok {
			continue
		}
		strs := make([]string, len(got))
		for i, e := range got {
			strs[i] = string(e)
		}
		if !slices.Equal(strs, c.want) {
			t.Errorf("%s: %q, want %q", c.in, strs, c.want)
		}
		if joined := "[" + strings.Join(strs, ",") + "]"; joined != c.in {
			t.Errorf("%s: joined back %s", c.in, joined)
		}
	}
}
