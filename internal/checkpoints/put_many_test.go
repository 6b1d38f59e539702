package checkpoints_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	. "github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/postgres/pgtest"
)

// A commit's checkpoints and writes put in one call read back exactly as
// put one by one: a chain whose messages list crosses the compact
// threshold in the middle (its list statements read what the puts before
// it wrote), a checkpoint put twice, one in a subgraph's namespace, and
// writes of several checkpoints with repeated keys.
func TestPutManyAsOneByOne(t *testing.T) {
	t.Parallel()
	db := pgtest.Pool(t)
	ctx := context.Background()
	var puts []PutItem
	cp := Checkpoint{ChannelValues: map[string]any{}, ChannelVersions: map[string]string{}, VersionsSeen: map[string]map[string]string{}}
	parent := ""
	n := -1
	step := func(ns string, md Metadata, set map[string]any, clear ...string) {
		n++
		c := cp
		c.ID, c.TS = NewCheckpointID(n), fmt.Sprintf("2026-01-01T00:00:%02d.000Z", n)
		c.ChannelValues, c.ChannelVersions = maps.Clone(cp.ChannelValues), maps.Clone(cp.ChannelVersions)
		nv := map[string]string{}
		for ch, v := range set {
			nv[ch] = NextVersion(c.ChannelVersions[ch])
			c.ChannelValues[ch] = v
		}
		for _, ch := range clear {
			nv[ch] = NextVersion(c.ChannelVersions[ch])
			delete(c.ChannelValues, ch)
		}
		maps.Copy(c.ChannelVersions, nv)
		puts = append(puts, PutItem{Config: Config{NS: ns, CheckpointID: parent}, Checkpoint: c, Metadata: md, NewVersions: nv})
		if ns == "" {
			cp, parent = c, c.ID
		}
	}
	msg := func(i int) any {
		return map[string]any{"type": "human", "id": fmt.Sprintf("m%d", i), "content": fmt.Sprintf("message %d %s", i, strings.Repeat("x", 150))}
	}
	var msgs []any
	add := func(k int) []any {
		for range k {
			msgs = append(msgs, msg(len(msgs)))
		}
		return slices.Clone(msgs)
	}
	step("", Metadata{"source": "input", "step": -1}, map[string]any{"__start__": map[string]any{"messages": []any{msg(0)}}})
	step("", Metadata{"source": "loop", "step": 0}, map[string]any{"messages": add(2), "branch:to:a": nil}, "__start__")
	step("", Metadata{"source": "loop", "step": 1}, map[string]any{"messages": add(8)}, "branch:to:a") // past 1 KB: compact
	step("", Metadata{"source": "loop", "step": 2}, map[string]any{"messages": add(1), "count": 3})
	step("sub:1", Metadata{"source": "loop", "step": 0}, map[string]any{"inner": "x"})
	again := puts[len(puts)-1] // put twice in one batch (no list between)
	again.Metadata = Metadata{"source": "loop", "step": 0, "again": true}
	puts = append(puts, again)
	step("", Metadata{"source": "loop", "step": 3}, map[string]any{"count": 4})

	batches := []WritesAt{
		{CheckpointID: puts[1].Checkpoint.ID, Writes: []Write{{TaskID: "t1", Channel: "messages", Value: []any{msg(90)}, Idx: 0},
			{TaskID: "t1", Channel: "__error__", Value: "first"}}},
		{CheckpointID: puts[1].Checkpoint.ID, Writes: []Write{{TaskID: "t1", Channel: "messages", Value: []any{msg(91)}, Idx: 0},
			{TaskID: "t1", Channel: "__error__", Value: "second"}, {TaskID: "t2", Channel: "count", Value: 1, Idx: 0}}},
		{NS: "sub:1", CheckpointID: puts[4].Checkpoint.ID, Writes: []Write{{TaskID: "s1", Channel: "inner", Value: "y", Idx: 0}}},
	}
	for _, thread := range []string{"many", "one"} {
		ps := slices.Clone(puts)
		for i := range ps {
			ps[i].Config.ThreadID = thread
		}
		if thread == "many" {
			if err := PutMany(ctx, db, ps); err != nil {
				t.Fatal(err)
			}
			if err := PutWritesMany(ctx, db, thread, batches); err != nil {
				t.Fatal(err)
			}
			continue
		}
		for _, p := range ps {
			if _, err := Put(ctx, db, p.Config, p.Checkpoint, p.Metadata, p.NewVersions); err != nil {
				t.Fatal(err)
			}
		}
		for _, b := range batches {
			if err := PutWrites(ctx, db, Config{ThreadID: thread, NS: b.NS, CheckpointID: b.CheckpointID}, b.Writes); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := countRows(t, db, "thread_elements", "many"); n == 0 || n != countRows(t, db, "thread_elements", "one") {
		t.Fatalf("%d elements stored by the batch, %d one by one", n, countRows(t, db, "thread_elements", "one"))
	}
	for _, table := range []string{"checkpoints", "checkpoint_blobs", "checkpoint_writes"} {
		if a, b := rowsOf(t, db, table, "many"), rowsOf(t, db, table, "one"); !slices.Equal(a, b) || len(a) == 0 {
			t.Fatalf("%s differ:\nbatch %v\none by one %v", table, a, b)
		}
	}
	for _, p := range puts {
		a := mustGet(t, db, Config{ThreadID: "many", NS: p.Config.NS, CheckpointID: p.Checkpoint.ID})
		b := mustGet(t, db, Config{ThreadID: "one", NS: p.Config.NS, CheckpointID: p.Checkpoint.ID})
		a.Config.ThreadID, b.Config.ThreadID = "", ""
		if a.Parent != nil {
			a.Parent.ThreadID = ""
		}
		if b.Parent != nil {
			b.Parent.ThreadID = ""
		}
		jsonEqual(t, "tuple "+p.Checkpoint.ID, a, b)
	}
}

// rowsOf is every row of table for thread, as text, sorted.
func rowsOf(t testing.TB, db *pgxpool.Pool, table, thread string) []string {
	t.Helper()
	rows, err := db.Query(context.Background(), `SELECT (to_jsonb(x) - 'thread_id')::text FROM `+table+` x WHERE thread_id = $1 ORDER BY 1`, thread)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}
