package checkpoints_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	. "github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/postgres/pgtest"
)

// countingDB counts the queries a read sends.
type countingDB struct {
	*pgxpool.Pool
	n int
}

func (c *countingDB) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	c.n++
	return c.Pool.Query(ctx, sql, args...)
}

func (c *countingDB) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	c.n++
	return c.Pool.QueryRow(ctx, sql, args...)
}

// deltaThread writes a thread whose "messages" is a delta channel, as
// LangGraph's DeltaChannel stores it: versions bumped with empty blobs,
// the deltas as writes, a snapshot at c3, and a fork from c1 (c5).
func deltaThread(t *testing.T, db *pgxpool.Pool, thread string) []Config {
	t.Helper()
	ctx := context.Background()
	write := func(c Config, task string, v any) {
		if err := PutWrites(ctx, db, c, []Write{{TaskID: task, Channel: "messages", Value: v}}); err != nil {
			t.Fatal(err)
		}
	}
	l := newLine(t, db, thread, "")
	c0 := l.Put("input", map[string]any{"__start__": map[string]any{}})
	write(c0, "t0", []any{msg("human", "1", "a")})
	c1 := l.Put("loop", nil, "messages")
	write(c1, "t1", []any{msg("ai", "2", "b")})
	c2 := l.Put("loop", nil, "messages")
	write(c2, "t2", []any{msg("remove", "1", ""), msg("human", "3", "c")})
	c3 := l.Put("loop", map[string]any{"messages": map[string]any{"lc": 2, "type": "delta_snapshot",
		"value": []any{msg("ai", "2", "b"), msg("human", "3", "c")}}})
	write(c3, "t3", []any{msg("remove", "__remove_all__", ""), msg("human", "4", "d")})
	c4 := l.Put("loop", nil, "messages")
	tu1 := mustGet(t, db, c1)
	c5 := l.Fork(tu1).Put("loop", nil, "messages")
	return []Config{c0, c1, c2, c3, c4, c5}
}

func contents(v any) []string {
	l, ok := v.([]any)
	if !ok {
		return nil
	}
	out := []string{}
	for _, m := range l {
		out = append(out, m.(map[string]any)["content"].(string))
	}
	return out
}

func TestDeltaResolveReplaysTheChainInTwoQueries(t *testing.T) {
	t.Parallel()
	db := pgtest.Pool(t)
	ctx := context.Background()
	cs := deltaThread(t, db, "d1")
	page, err := List(ctx, db, Config{ThreadID: "d1"}, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cdb := &countingDB{Pool: db}
	if err := ResolveDelta(ctx, cdb, page, map[string]string{"messages": DeltaMessages}); err != nil {
		t.Fatal(err)
	}
	if cdb.n != 2 {
		t.Errorf("%d queries for a page of %d checkpoints, want 2", cdb.n, len(page))
	}
	want := map[string][]string{
		cs[0].CheckpointID: nil, // never written: unset
		cs[1].CheckpointID: {"a"},
		cs[2].CheckpointID: {"a", "b"},
		cs[3].CheckpointID: {"b", "c"}, // the snapshot
		cs[4].CheckpointID: {"d"},      // REMOVE_ALL, then d
		cs[5].CheckpointID: {"a", "b"}, // the fork from c1 replays only its own chain
	}
	for _, tu := range page {
		if got := contents(tu.Checkpoint.ChannelValues["messages"]); !reflect.DeepEqual(got, want[tu.Config.CheckpointID]) {
			t.Errorf("step %v: messages %v, want %v", tu.Metadata["step"], got, want[tu.Config.CheckpointID])
		}
	}

	// A reducer Weft does not know: the snapshot shows, elsewhere the marker.
	page, _ = List(ctx, db, Config{ThreadID: "d1"}, ListOptions{})
	if err := ResolveDelta(ctx, db, page, map[string]string{"messages": DeltaUnknown}); err != nil {
		t.Fatal(err)
	}
	for _, tu := range page {
		v := tu.Checkpoint.ChannelValues["messages"]
		switch tu.Config.CheckpointID {
		case cs[0].CheckpointID:
			if v != nil {
				t.Errorf("unset channel shows %v", v)
			}
		case cs[3].CheckpointID:
			if !reflect.DeepEqual(contents(v), []string{"b", "c"}) {
				t.Errorf("snapshot shows %v", v)
			}
		default:
			if m, ok := v.(map[string]any); !ok || m[UnresolvedDeltaKey] != "delta_channel" || m["channel"] != "messages" {
				t.Errorf("step %v shows %v, want the marker", tu.Metadata["step"], v)
			}
		}
	}
}

func TestDeltaHistoryIsLangGraphsWalk(t *testing.T) {
	t.Parallel()
	db := pgtest.Pool(t)
	ctx := context.Background()
	cs := deltaThread(t, db, "d2")
	ids := func(h DeltaHistory) []string {
		out := []string{}
		for _, w := range h.Writes {
			out = append(out, w.TaskID)
		}
		return out
	}
	cdb := &countingDB{Pool: db}
	// c4: from its parent c3, which stores the snapshot: seed + c3's writes.
	h, err := ReadDeltaHistory(ctx, cdb, cs[4], []string{"messages", "other"})
	if err != nil {
		t.Fatal(err)
	}
	if cdb.n > 3 {
		t.Errorf("%d queries, want at most 3", cdb.n)
	}
	if h["messages"].Seed == nil || !reflect.DeepEqual(ids(h["messages"]), []string{"t3"}) {
		t.Errorf("c4: seed %v writes %v", h["messages"].Seed, ids(h["messages"]))
	}
	var seed map[string]any
	if err := json.Unmarshal(h["messages"].Seed.Data, &seed); err != nil || seed["type"] != "delta_snapshot" {
		t.Errorf("seed %s: %v", h["messages"].Seed.Data, err)
	}
	if h["other"].Seed != nil || len(h["other"].Writes) != 0 {
		t.Errorf("other: %+v", h["other"])
	}
	// c2: no snapshot up the chain: every ancestor's writes, oldest first.
	h, _ = ReadDeltaHistory(ctx, db, cs[2], []string{"messages"})
	if h["messages"].Seed != nil || !reflect.DeepEqual(ids(h["messages"]), []string{"t0", "t1"}) {
		t.Errorf("c2: seed %v writes %v", h["messages"].Seed, ids(h["messages"]))
	}
	// The fork c5 (parent c1): c1's and c0's writes only.
	h, _ = ReadDeltaHistory(ctx, db, cs[5], []string{"messages"})
	if !reflect.DeepEqual(ids(h["messages"]), []string{"t0", "t1"}) {
		t.Errorf("c5: writes %v", ids(h["messages"]))
	}
}

// TestPruneKeepsDeltaChannelsReadable: pruning to one checkpoint of a
// delta-format thread stores a snapshot of the messages delta channel at
// the kept version (so the deleted chain is not needed), and keeps the
// chain back to the nearest stored value when the reducer is one Weft
// cannot replay.
func TestPruneKeepsDeltaChannelsReadable(t *testing.T) {
	t.Parallel()
	db := pgtest.Pool(t)
	ctx := context.Background()
	messages := map[string]string{"messages": DeltaMessages}
	read := func(thread string, c Config) []string {
		t.Helper()
		tu := mustGet(t, db, Config{ThreadID: thread, CheckpointID: c.CheckpointID})
		page := []Tuple{*tu}
		if err := ResolveDelta(ctx, db, page, messages); err != nil {
			t.Fatal(err)
		}
		return contents(page[0].Checkpoint.ChannelValues["messages"])
	}
	prune := func(thread string, keep Config, kinds map[string]string) {
		t.Helper()
		tx, err := db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		if err := PruneThread(ctx, tx, thread, keep.CheckpointID, kinds); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}

	cs := deltaThread(t, db, "dp1")
	prune("dp1", cs[2], messages)
	if n := countRows(t, db, "checkpoints", "dp1"); n != 1 {
		t.Fatalf("%d checkpoints after prune, want 1", n)
	}
	if got := read("dp1", cs[2]); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("kept checkpoint reads %v, want [a b]", got)
	}

	cs = deltaThread(t, db, "dp2")
	prune("dp2", cs[2], map[string]string{"messages": DeltaUnknown})
	if n := countRows(t, db, "checkpoints", "dp2"); n != 3 {
		t.Fatalf("%d checkpoints after prune, want 3 (the chain back to the root)", n)
	}
	if got := read("dp2", cs[2]); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("kept checkpoint reads %v, want [a b]", got)
	}

	cs = deltaThread(t, db, "dp3")
	prune("dp3", cs[4], messages)
	if got := read("dp3", cs[4]); !reflect.DeepEqual(got, []string{"d"}) {
		t.Fatalf("kept checkpoint reads %v, want [d]", got)
	}
}
