package messagelog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/checkpoints/cptest"
	"github.com/weftdev/weft/internal/checkpoints/serde"
	"github.com/weftdev/weft/internal/postgres/pgtest"
)

// TestListViewProperty writes random list edits (appends, replacements,
// removals, repeated elements, reorders, short and long lists, forks)
// and checks, at every checkpoint, that a ListView reads exactly the
// whole read's elements for random ranges of positions, and that seqs and
// positions map onto each other.
func TestListViewProperty(t *testing.T) {
	t.Parallel()
	db := pgtest.Pool(t)
	ctx := context.Background()
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 5))
			thread := fmt.Sprintf("view-%d", seed)
			lines := []*cptest.Line{cptest.NewLine(t, db, thread, "")}
			var written []checkpoints.Config
			nextID := 0
			for op := 0; op < 80; op++ {
				l := lines[r.IntN(len(lines))]
				if op > 5 && r.IntN(8) == 0 {
					l = l.Fork(cptest.MustGet(t, db, written[r.IntN(len(written))]))
					lines = append(lines, l)
				}
				msgs, _ := l.CP.ChannelValues["messages"].([]any)
				msgs = slices.Clone(msgs)
				content := func() string {
					if r.IntN(6) == 0 {
						return "same"
					}
					return strings.Repeat(string(rune('a'+r.IntN(26))), 10+r.IntN(150))
				}
				switch k := r.IntN(10); {
				case k < 6 || len(msgs) == 0:
					for range 1 + r.IntN(3) {
						nextID++
						if r.IntN(5) == 0 {
							msgs = append(msgs, "repeated") // identical elements share a seq
						} else {
							msgs = append(msgs, map[string]any{"id": fmt.Sprint("m", nextID), "content": content()})
						}
					}
				case k < 7:
					i := r.IntN(len(msgs))
					msgs[i] = map[string]any{"id": fmt.Sprint("r", op), "content": content()}
				case k < 8:
					i := r.IntN(len(msgs))
					msgs = slices.Delete(msgs, i, i+1)
				case k < 9:
					r.Shuffle(len(msgs), func(i, j int) { msgs[i], msgs[j] = msgs[j], msgs[i] })
				default:
					msgs = msgs[len(msgs)/2:]
				}
				written = append(written, l.Put("loop", map[string]any{"messages": msgs}))
			}
			compact := 0
			for _, cfg := range written {
				whole := cptest.MustGet(t, db, cfg).Checkpoint.ChannelValues["messages"]
				var elems []json.RawMessage
				_, data, err := serde.Encode(whole)
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(data, &elems); err != nil {
					t.Fatal(err)
				}
				v, err := CheckpointListView(ctx, db, cfg, "messages")
				if err != nil {
					t.Fatal(err)
				}
				if v.Compact {
					compact++
				}
				if v.Len() != len(elems) || v.Config != cfg {
					t.Fatalf("%s: view of %d elements at %+v, want %d at %+v", cfg.CheckpointID, v.Len(), v.Config, len(elems), cfg)
				}
				for range 4 {
					from := r.IntN(len(elems) + 1)
					to := from + r.IntN(len(elems)-from+1)
					recs, err := v.Records(ctx, db, from, to)
					if err != nil {
						t.Fatal(err)
					}
					if len(recs) != to-from {
						t.Fatalf("records %d..%d: %d", from, to, len(recs))
					}
					for i, rec := range recs {
						if string(rec.Value) != string(elems[from+i]) || rec.Seq != v.SeqAt(from+i) {
							t.Fatalf("%s position %d: seq %d %s, want seq %d %s", cfg.CheckpointID, from+i, rec.Seq, rec.Value, v.SeqAt(from+i), elems[from+i])
						}
						if v.Compact && (rec.Step == nil || rec.RunID != nil) {
							t.Fatalf("position %d: step %v run %v, want the step of its first checkpoint and no run", from+i, rec.Step, rec.RunID)
						}
					}
				}
				for i := range elems {
					s := v.SeqAt(i)
					j := v.IndexOf(s)
					if j < i || v.SeqAt(j) != s {
						t.Fatalf("%s: IndexOf(SeqAt(%d) = %d) = %d", cfg.CheckpointID, i, s, j)
					}
				}
				if v.IndexOf(1<<40) != -1 {
					t.Fatal("IndexOf of an unknown seq is not -1")
				}
			}
			if compact == 0 || compact == len(written) {
				t.Fatalf("%d of %d checkpoints compact: want both kinds", compact, len(written))
			}
		})
	}
}

// TestListViewReadsOnlyItsElements checks that a window of a long list
// reads its elements and no others: with every other element of the log
// deleted, the window still reads, and the whole read fails.
func TestListViewReadsOnlyItsElements(t *testing.T) {
	t.Parallel()
	db := pgtest.Pool(t)
	ctx := context.Background()
	l := cptest.NewLine(t, db, "only", "")
	var msgs []any
	for i := range 300 {
		msgs = append(msgs, map[string]any{"id": fmt.Sprint(i), "content": strings.Repeat("x", 100)})
	}
	cfg := l.Put("loop", map[string]any{"messages": msgs, "other": "kept"})
	v, err := CheckpointListView(ctx, db, checkpoints.Config{ThreadID: "only"}, "messages")
	if err != nil || !v.Compact || v.Len() != 300 || v.Config != cfg {
		t.Fatalf("view %+v, %v", v, err)
	}
	if _, err := db.Exec(ctx, `DELETE FROM thread_elements WHERE thread_id = 'only' AND seq < $1`, v.SeqAt(290)); err != nil {
		t.Fatal(err)
	}
	recs, err := v.Records(ctx, db, 290, 300)
	if err != nil || len(recs) != 10 || !strings.Contains(string(recs[0].Value), `"id":"290"`) {
		t.Fatalf("window: %v %v", recs, err)
	}
	if _, err := v.Records(ctx, db, 289, 300); !errors.Is(err, checkpoints.ErrElementMissing) {
		t.Fatalf("a deleted element read as %v", err)
	}
	tu, err := checkpoints.GetTupleWithout(ctx, db, cfg, "messages")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := checkpoints.Materialize(tu.Checkpoint.ChannelValues["other"])
	if _, ok := tu.Checkpoint.ChannelValues["messages"]; ok || other != "kept" || tu.Checkpoint.ChannelVersions["messages"] == "" {
		t.Fatalf("tuple without messages: %v %v", tu.Checkpoint.ChannelValues, tu.Checkpoint.ChannelVersions)
	}
	if _, err := checkpoints.GetTuple(ctx, db, cfg); !errors.Is(err, checkpoints.ErrElementMissing) {
		t.Fatalf("whole read after the deletion: %v", err)
	}
	tv, err := TupleListView(ctx, db, tu, "messages")
	if err != nil || tv.Len() != 300 || !tv.Compact {
		t.Fatalf("tuple view %+v %v", tv, err)
	}
	// Not a list; unknown checkpoint; unset channel.
	if _, err := CheckpointListView(ctx, db, cfg, "other"); apperr.CodeOf(err) != apperr.BadRequest {
		t.Fatalf("a string channel: %v", err)
	}
	if _, err := CheckpointListView(ctx, db, checkpoints.Config{ThreadID: "only", CheckpointID: "nope"}, "messages"); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("unknown checkpoint: %v", err)
	}
	if v, err := CheckpointListView(ctx, db, cfg, "unset"); err != nil || v.Len() != 0 {
		t.Fatalf("unset channel: %+v %v", v, err)
	}
}
