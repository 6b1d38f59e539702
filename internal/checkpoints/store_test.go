package checkpoints_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftdev/weft/internal/apperr"
	. "github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/postgres/pgtest"
)

func msg(typ, id, content string) map[string]any {
	return map[string]any{"type": typ, "id": id, "content": content}
}

func TestPutGetRoundTripSharesBlobsAndSkipsEmpty(t *testing.T) {
	t.Parallel()
	db := pgtest.Pool(t)
	ctx := context.Background()
	l := newLine(t, db, "t1", "")
	c0 := l.Put("input", map[string]any{"__start__": map[string]any{"foo": ""}})
	c1 := l.Put("loop", map[string]any{"foo": "", "messages": []any{msg("human", "m1", "hi")}, "branch:to:a": nil}, "__start__")
	c2 := l.Put("loop", map[string]any{"messages": []any{msg("human", "m1", "hi"), msg("ai", "m2", "hello")}}, "branch:to:a")
	c3 := l.Put("update", map[string]any{"bar": []any{json.Number("1"), "x"}})

	got := mustGet(t, db, Config{ThreadID: "t1"})
	if got.Config != c3 || got.Parent == nil || *got.Parent != c2 {
		t.Fatalf("latest = %+v parent %+v, want %+v parent %+v", got.Config, got.Parent, c3, c2)
	}
	jsonEqual(t, "latest values", got.Checkpoint.ChannelValues, map[string]any{
		"foo":      "", // written at c1, read through the shared blob
		"messages": []any{msg("human", "m1", "hi"), msg("ai", "m2", "hello")},
		"bar":      []any{1, "x"},
	})
	if got.Checkpoint.V != 4 || got.Checkpoint.TS == "" || got.Checkpoint.ID != c3.CheckpointID {
		t.Errorf("checkpoint header = v%d ts %q id %q", got.Checkpoint.V, got.Checkpoint.TS, got.Checkpoint.ID)
	}
	if !maps.Equal(got.Checkpoint.ChannelVersions, l.CP.ChannelVersions) {
		t.Errorf("versions = %v, want %v", got.Checkpoint.ChannelVersions, l.CP.ChannelVersions)
	}
	if s, ok := got.Metadata.Step(); !ok || s != 2 || got.Metadata["source"] != "update" {
		t.Errorf("metadata = %v", got.Metadata)
	}

	// An older checkpoint reads its own versions; a JSON null is a value.
	first := mustGet(t, db, c1)
	jsonEqual(t, "c1 values", first.Checkpoint.ChannelValues, map[string]any{
		"foo": "", "messages": []any{msg("human", "m1", "hi")}, "branch:to:a": nil,
	})
	if _, ok := first.Checkpoint.ChannelValues["branch:to:a"]; !ok {
		t.Error("null value missing from c1")
	}
	if _, ok := first.Checkpoint.ChannelValues["__start__"]; ok {
		t.Error("empty channel __start__ read as a value")
	}
	if root := mustGet(t, db, c0); root.Parent != nil {
		t.Errorf("first checkpoint has parent %+v", root.Parent)
	}

	// One blob row per written version with a value; foo was written once.
	// The consumed __start__ got a version and no row (a stock saver's
	// "empty" row reads the same: state.TestJSSaverRowsReadAndFork).
	if n := countRows(t, db, "checkpoint_blobs", "t1"); n != 6 {
		t.Errorf("blob rows = %d, want 6", n)
	}
	var rows int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM checkpoint_blobs WHERE thread_id = 't1' AND channel = '__start__' AND version = $1`,
		c1CheckpointVersion(t, db, c1, "__start__")).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 0 {
		t.Errorf("%d blob rows for the consumed __start__ version, want none", rows)
	}
	// The jsonb column holds no channel_values and string versions.
	var hasValues bool
	var versionType string
	if err := db.QueryRow(ctx, `SELECT checkpoint ? 'channel_values', jsonb_typeof(checkpoint->'channel_versions'->'foo')
		FROM checkpoints WHERE thread_id = 't1' AND checkpoint_id = $1`, c3.CheckpointID).Scan(&hasValues, &versionType); err != nil {
		t.Fatal(err)
	}
	if hasValues || versionType != "string" {
		t.Errorf("stored checkpoint: channel_values present=%v, version type %s", hasValues, versionType)
	}
}

func c1CheckpointVersion(t *testing.T, db *pgxpool.Pool, c Config, ch string) string {
	t.Helper()
	var v string
	if err := db.QueryRow(context.Background(), `SELECT checkpoint->'channel_versions'->>$3 FROM checkpoints WHERE thread_id = $1 AND checkpoint_id = $2`,
		c.ThreadID, c.CheckpointID, ch).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestPutMetadataAndUpsert(t *testing.T) {
	t.Parallel()
	db := pgtest.Pool(t)
	cp := Checkpoint{ID: NewCheckpointID(-1)}
	cfg := mustPut(t, db, Config{ThreadID: "t"}, cp, Metadata{"source": "in\x00put", "k\x00": []any{"a\x00b"}, "step": -1}, nil)
	got := mustGet(t, db, cfg)
	jsonEqual(t, "metadata", got.Metadata, map[string]any{"source": "input", "k": []any{"ab"}, "step": -1})
	// Re-putting the same id replaces checkpoint and metadata.
	cp.ChannelVersions = map[string]string{"x": "1"}
	cp.ChannelValues = map[string]any{"x": "v"}
	mustPut(t, db, Config{ThreadID: "t"}, cp, Metadata{"source": "loop"}, map[string]string{"x": "1"})
	got = mustGet(t, db, cfg)
	jsonEqual(t, "after upsert", []any{got.Metadata, got.Checkpoint.ChannelValues}, []any{map[string]any{"source": "loop"}, map[string]any{"x": "v"}})
	if n := countRows(t, db, "checkpoints", "t"); n != 1 {
		t.Errorf("rows = %d", n)
	}
	// Merging metadata replaces top-level keys and keeps the others.
	if err := MergeMetadata(context.Background(), db, cfg, Metadata{"source": "fork", "note": "n\x00b"}); err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, "merged metadata", mustGet(t, db, cfg).Metadata, map[string]any{"source": "fork", "note": "nb"})
	if err := MergeMetadata(context.Background(), db, Config{ThreadID: "t", CheckpointID: "nope"}, Metadata{"a": 1}); apperr.CodeOf(err) != apperr.NotFound {
		t.Errorf("merge into a missing checkpoint: %v", err)
	}
	if _, err := Put(context.Background(), db, Config{ThreadID: "t"}, Checkpoint{}, nil, nil); apperr.CodeOf(err) != apperr.Invalid {
		t.Errorf("put without id: %v", err)
	}
}

func TestWritesSpecialUpsertNormalKept(t *testing.T) {
	t.Parallel()
	db := pgtest.Pool(t)
	ctx := context.Background()
	cfg := newLine(t, db, "w", "").Put("input", map[string]any{"__start__": "go"})
	put := func(ws ...Write) {
		t.Helper()
		if err := PutWrites(ctx, db, cfg, ws); err != nil {
			t.Fatal(err)
		}
	}
	put(Write{TaskID: "b", Channel: "items", Value: []any{"b0"}, Idx: 0, TaskPath: "~__pregel_pull, b"},
		Write{TaskID: "b", Channel: "branch:to:c", Value: nil, Idx: 1},
		Write{TaskID: "a", Channel: "__interrupt__", Value: []any{map[string]any{"id": "i1", "value": "q1"}}, Idx: 0})
	// A retry of the normal writes changes nothing; the interrupt is replaced.
	put(Write{TaskID: "b", Channel: "items", Value: []any{"OTHER"}, Idx: 0},
		Write{TaskID: "a", Channel: "__interrupt__", Value: []any{map[string]any{"id": "i2", "value": "q2"}}, Idx: 5})
	// Duplicates within one call: the later special write wins.
	put(Write{TaskID: "a", Channel: "__error__", Value: map[string]any{"message": "first"}},
		Write{TaskID: "a", Channel: "__error__", Value: map[string]any{"message": "boom"}},
		Write{TaskID: "00000000-0000-0000-0000-000000000000", Channel: "__resume__", Value: "yes"},
		Write{TaskID: "a", Channel: "__resume__", Value: []any{"yes"}})
	put(Write{TaskID: "a", Channel: "__scheduled__", Value: nil})
	if err := PutWrites(ctx, db, Config{ThreadID: "w"}, nil); apperr.CodeOf(err) != apperr.Invalid {
		t.Errorf("writes without checkpoint id: %v", err)
	}

	got := mustGet(t, db, cfg).PendingWrites
	want := []Write{ // ordered by task_path, task_id, idx
		{TaskID: "00000000-0000-0000-0000-000000000000", Channel: "__resume__", Value: "yes", Idx: -4},
		{TaskID: "a", Channel: "__resume__", Value: []any{"yes"}, Idx: -4},
		{TaskID: "a", Channel: "__interrupt__", Value: []any{map[string]any{"id": "i2", "value": "q2"}}, Idx: -3},
		{TaskID: "a", Channel: "__scheduled__", Value: nil, Idx: -2},
		{TaskID: "a", Channel: "__error__", Value: map[string]any{"message": "boom"}, Idx: -1},
		{TaskID: "b", Channel: "branch:to:c", Value: nil, Idx: 1},
		{TaskID: "b", Channel: "items", Value: []any{"b0"}, Idx: 0, TaskPath: "~__pregel_pull, b"},
	}
	jsonEqual(t, "pending writes", got, want)

	// The writes of some tasks, each task's in idx order, decoded alike; a
	// task without writes (or under another checkpoint) has none.
	b := TaskKey{NS: cfg.NS, CheckpointID: cfg.CheckpointID, TaskID: "b"}
	missing := TaskKey{NS: cfg.NS, CheckpointID: cfg.CheckpointID, TaskID: "none"}
	other := TaskKey{NS: "sub", CheckpointID: cfg.CheckpointID, TaskID: "b"}
	byTask, err := TaskWrites(ctx, db, "w", []TaskKey{b, missing, b, other})
	if err != nil {
		t.Fatal(err)
	}
	if len(byTask) != 1 {
		t.Fatalf("writes of %d tasks, want 1: %v", len(byTask), byTask)
	}
	jsonEqual(t, "writes of task b", byTask[b], []Write{want[6], want[5]})
}

func TestListPagesFiltersNamespaces(t *testing.T) {
	t.Parallel()
	db := pgtest.Pool(t)
	root := newLine(t, db, "l", "")
	var rootIDs []string
	for i := range 5 {
		src := "loop"
		if i == 0 {
			src = "input"
		}
		rootIDs = append(rootIDs, root.Put(src, map[string]any{"n": i}).CheckpointID)
	}
	sub := newLine(t, db, "l", "child:1")
	s0 := sub.Put("input", map[string]any{"x": 1}).CheckpointID
	s1 := sub.Put("loop", map[string]any{"x": 2}).CheckpointID
	other := newLine(t, db, "other", "")
	other.Put("input", map[string]any{"n": 99})
	slices.Reverse(rootIDs) // newest first

	cfg := Config{ThreadID: "l"}
	if got := ids(mustList(t, db, cfg, ListOptions{})); !slices.Equal(got, rootIDs) {
		t.Errorf("root list = %v, want %v", got, rootIDs)
	}
	// Keyset pages of 2 walk the whole history exactly once.
	var walked []string
	before := ""
	for {
		page := mustList(t, db, cfg, ListOptions{Limit: 2, Before: before})
		if len(page) == 0 {
			break
		}
		if len(page) > 2 {
			t.Fatalf("page of %d", len(page))
		}
		walked = append(walked, ids(page)...)
		before = page[len(page)-1].Config.CheckpointID
	}
	if !slices.Equal(walked, rootIDs) {
		t.Errorf("paged = %v, want %v", walked, rootIDs)
	}
	if got := ids(mustList(t, db, cfg, ListOptions{Filter: map[string]any{"source": "input"}})); !slices.Equal(got, rootIDs[4:]) {
		t.Errorf("filter source=input = %v", got)
	}
	if got := ids(mustList(t, db, cfg, ListOptions{Filter: map[string]any{"step": 2}})); !slices.Equal(got, rootIDs[1:2]) {
		t.Errorf("filter step=2 = %v", got)
	}
	if got := ids(mustList(t, db, cfg, ListOptions{Filter: map[string]any{"source": "loop"}, Before: rootIDs[1], Limit: 2})); !slices.Equal(got, rootIDs[2:4]) {
		t.Errorf("filter+before+limit = %v", got)
	}
	if got := ids(mustList(t, db, Config{ThreadID: "l", NS: "child:1"}, ListOptions{})); !slices.Equal(got, []string{s1, s0}) {
		t.Errorf("namespace list = %v", got)
	}
	all := mustList(t, db, cfg, ListOptions{AllNamespaces: true})
	wantAll := append([]string{s1, s0}, rootIDs...)
	if got := ids(all); !slices.Equal(got, wantAll) {
		t.Errorf("all namespaces = %v, want %v", got, wantAll)
	}
	if all[0].Config.NS != "child:1" || all[0].Parent == nil || all[0].Parent.NS != "child:1" {
		t.Errorf("namespace not carried: %+v", all[0])
	}
	if got := ids(mustList(t, db, Config{ThreadID: "l", CheckpointID: rootIDs[2]}, ListOptions{})); !slices.Equal(got, rootIDs[2:3]) {
		t.Errorf("by id = %v", got)
	}
	if got := mustList(t, db, Config{ThreadID: "nope"}, ListOptions{}); got == nil || len(got) != 0 {
		t.Errorf("unknown thread = %#v", got)
	}
	if _, err := List(context.Background(), db, Config{}, ListOptions{}); apperr.CodeOf(err) != apperr.Invalid {
		t.Errorf("list without thread: %v", err)
	}
}

func TestGetTupleLatestAcrossBranchesAndNotFound(t *testing.T) {
	t.Parallel()
	db := pgtest.Pool(t)
	main := newLine(t, db, "b", "")
	c0 := main.Put("input", map[string]any{"v": "0"})
	main.Put("loop", map[string]any{"v": "1"})
	main.Put("loop", map[string]any{"v": "2"})
	fork := main.Fork(mustGet(t, db, c0))
	f1 := fork.Put("fork", map[string]any{"v": "fork"})
	if got := mustGet(t, db, Config{ThreadID: "b"}); got.Config != f1 || string(got.Checkpoint.ChannelValues["v"].(json.RawMessage)) != `"fork"` {
		t.Errorf("latest = %+v %v, want the fork %+v", got.Config, got.Checkpoint.ChannelValues, f1)
	}
	c3 := main.Put("loop", map[string]any{"v": "3"})
	if got := mustGet(t, db, Config{ThreadID: "b"}); got.Config != c3 {
		t.Errorf("latest = %+v, want %+v", got.Config, c3)
	}
	for _, cfg := range []Config{{ThreadID: "none"}, {ThreadID: "b", CheckpointID: "1f000000-0000-6000-8000-000000000000"}, {ThreadID: "b", NS: "sub"}} {
		if _, err := GetTuple(context.Background(), db, cfg); apperr.CodeOf(err) != apperr.NotFound {
			t.Errorf("get %+v: err %v, want not_found", cfg, err)
		}
	}
}

// The fork bug of the stock JS saver (ROWS.md §3) at store level: two
// siblings from one parent, each writing the same channels, must never
// share a version, and each must read its own values.
func TestForkSiblingsNeverCollide(t *testing.T) {
	t.Parallel()
	db := pgtest.Pool(t)
	main := newLine(t, db, "f", "")
	main.Put("input", map[string]any{"__start__": map[string]any{"foo": ""}})
	p := main.Put("loop", map[string]any{"foo": "a", "bar": []any{"a"}}, "__start__")
	parent := mustGet(t, db, p)
	a := main.Fork(parent).Put("loop", map[string]any{"foo": "b", "bar": []any{"a", "b"}})
	b := main.Fork(parent).Put("update", map[string]any{"foo": "fork", "bar": []any{"a", "f"}})

	ta, tb := mustGet(t, db, a), mustGet(t, db, b)
	for _, ch := range []string{"foo", "bar"} {
		if ta.Checkpoint.ChannelVersions[ch] == tb.Checkpoint.ChannelVersions[ch] {
			t.Errorf("siblings share version %s of %s", ta.Checkpoint.ChannelVersions[ch], ch)
		}
		if CompareVersions(ta.Checkpoint.ChannelVersions[ch], parent.Checkpoint.ChannelVersions[ch]) <= 0 {
			t.Errorf("%s version did not grow", ch)
		}
	}
	jsonEqual(t, "sibling a", ta.Checkpoint.ChannelValues, map[string]any{"foo": "b", "bar": []any{"a", "b"}})
	jsonEqual(t, "sibling b", tb.Checkpoint.ChannelValues, map[string]any{"foo": "fork", "bar": []any{"a", "f"}})
	jsonEqual(t, "parent", mustGet(t, db, p).Checkpoint.ChannelValues, map[string]any{"foo": "a", "bar": []any{"a"}})
	if got := mustGet(t, db, Config{ThreadID: "f"}); got.Config != b {
		t.Errorf("latest = %v, want the later sibling", got.Config)
	}
}

// The same fork on the JS saver's own rows (Appendix A): forking the step-1
// checkpoint with versions from NextVersion keeps the fork's values, where
// the stock saver's fork (minted integer 4) reads the other branch.
func TestForkOnJSRowsKeepsForkValues(t *testing.T) {
	t.Parallel()
	db := pgtest.Pool(t)
	loadFixture(t, db, "js_appendix_a.jsonl")
	step1 := mustGet(t, db, Config{ThreadID: "1", CheckpointID: "1f1e6647-53f5-6940-8001-c217b744a452"})
	l := newLine(t, db, "1", "").Fork(step1)
	fork := l.Put("update", map[string]any{"foo": "fork", "bar": []any{"a", "f"}, "branch:to:node_b": nil})
	got := mustGet(t, db, fork)
	jsonEqual(t, "fork values", got.Checkpoint.ChannelValues, map[string]any{"foo": "fork", "bar": []any{"a", "f"}, "branch:to:node_b": nil})
	if v := got.Checkpoint.ChannelVersions["foo"]; VersionCounter(v) != 4 || v == "4" {
		t.Errorf("fork version of foo = %q", v)
	}
	stock := mustGet(t, db, Config{ThreadID: "1", CheckpointID: "1f1e6647-546d-6350-8002-a18ddc94f362"})
	jsonEqual(t, "stock fork (the JS bug, read as written)", stock.Checkpoint.ChannelValues, map[string]any{"foo": "b", "bar": []any{"a", "b"}})
}

func TestThreadDelete(t *testing.T) {
	t.Parallel()
	db := pgtest.Pool(t)
	ctx := context.Background()
	for _, th := range []string{"d1", "d2", "keep"} {
		for _, ns := range []string{"", "sub:1"} {
			c := newLine(t, db, th, ns).Put("input", map[string]any{"x": th})
			if err := PutWrites(ctx, db, c, []Write{{TaskID: "t", Channel: "x", Value: 1}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := DeleteThread(ctx, db, "d1", "d2", "unknown"); err != nil {
		t.Fatal(err)
	}
	if err := DeleteThread(ctx, db); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"checkpoints", "checkpoint_blobs", "checkpoint_writes"} {
		for _, th := range []string{"d1", "d2"} {
			if n := countRows(t, db, table, th); n != 0 {
				t.Errorf("%s of %s: %d rows left", table, th, n)
			}
		}
		if n := countRows(t, db, table, "keep"); n != 2 {
			t.Errorf("%s of keep: %d rows, want 2", table, n)
		}
	}
}

func TestThreadCopy(t *testing.T) {
	t.Parallel()
	db := pgtest.Pool(t)
	ctx := context.Background()
	loadFixture(t, db, "js_appendix_a.jsonl")
	newLine(t, db, "1", "sub:1").Put("input", map[string]any{"s": 1})
	// Checkpoints naming their thread in metadata (as runs' do) name the copy there.
	if _, err := db.Exec(ctx, `UPDATE checkpoints SET metadata = metadata || '{"thread_id": "1"}' WHERE thread_id = '1'`); err != nil {
		t.Fatal(err)
	}
	if err := CopyThread(ctx, db, "1", "copy"); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"checkpoints", "checkpoint_blobs", "checkpoint_writes"} {
		if a, b := countRows(t, db, table, "1"), countRows(t, db, table, "copy"); a != b || a == 0 {
			t.Errorf("%s: original %d rows, copy %d", table, a, b)
		}
	}
	orig := mustList(t, db, Config{ThreadID: "1"}, ListOptions{AllNamespaces: true})
	cp := mustList(t, db, Config{ThreadID: "copy"}, ListOptions{AllNamespaces: true})
	for i := range orig {
		orig[i].Config.ThreadID = "copy"
		orig[i].Metadata["thread_id"] = "copy"
		if orig[i].Parent != nil {
			orig[i].Parent.ThreadID = "copy"
		}
	}
	jsonEqual(t, "copied history", cp, orig)
	if err := CopyThread(ctx, db, "1", "copy"); apperr.CodeOf(err) != apperr.Conflict {
		t.Errorf("copy onto a thread with checkpoints: %v, want conflict", err)
	}
	if err := CopyThread(ctx, db, "1", "1"); apperr.CodeOf(err) != apperr.Invalid {
		t.Errorf("copy onto itself: %v", err)
	}
	if err := CopyThread(ctx, db, "empty", "empty2"); err != nil {
		t.Errorf("copy of a thread without checkpoints: %v", err)
	}
}

func TestMaterializeDecodesRawValues(t *testing.T) {
	t.Parallel()
	db := pgtest.Pool(t)
	line := newLine(t, db, "raw", "")
	c := line.Put("input", map[string]any{"plain": []any{"a", 1}, "msg": map[string]any{"lc": 1, "type": "constructor",
		"id": []any{"langchain_core", "messages", "HumanMessage"}, "kwargs": map[string]any{"content": "hi", "id": "m1"}}})
	got := mustGet(t, db, c)
	if _, raw := got.Checkpoint.ChannelValues["plain"].(json.RawMessage); !raw {
		t.Fatalf("plain JSON value was decoded eagerly: %T", got.Checkpoint.ChannelValues["plain"])
	}
	v, err := Materialize(got.Checkpoint.ChannelValues["plain"])
	if err != nil || fmt.Sprint(v) != "[a 1]" {
		t.Fatalf("Materialize = %v, %v", v, err)
	}
	// A value holding a LangChain envelope is decoded and normalised.
	msg, ok := got.Checkpoint.ChannelValues["msg"].(map[string]any)
	if !ok || msg["type"] != "human" || msg["content"] != "hi" {
		t.Fatalf("msg = %#v", got.Checkpoint.ChannelValues["msg"])
	}
	if v, _ := Materialize(msg); !reflect.DeepEqual(v, msg) {
		t.Fatalf("Materialize changed a decoded value")
	}
}
