package checkpoints_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	. "github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/migrations"
)

// The schema must be LangGraph's exactly (langgraph_schema.sql plus the
// Python saver's v5..v9), with the migration table at v = 0..9.
func TestMigrationMatchesLangGraphSchema(t *testing.T) {
	t.Parallel()
	db := pgtest.Pool(t)
	ctx := context.Background()

	rows, _ := db.Query(ctx, `SELECT v FROM checkpoint_migrations ORDER BY v`)
	vs, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(vs, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
		t.Errorf("checkpoint_migrations = %v", vs)
	}

	rows, _ = db.Query(ctx, `
		SELECT table_name || '.' || column_name || ' ' || data_type || ' ' ||
		       CASE is_nullable WHEN 'YES' THEN 'null' ELSE 'not null' END ||
		       coalesce(' default ' || column_default, '')
		FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name LIKE 'checkpoint%'
		ORDER BY table_name, ordinal_position`)
	cols, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"checkpoint_blobs.thread_id text not null",
		"checkpoint_blobs.checkpoint_ns text not null default ''::text",
		"checkpoint_blobs.channel text not null",
		"checkpoint_blobs.version text not null",
		"checkpoint_blobs.type text not null",
		"checkpoint_blobs.blob bytea null",
		"checkpoint_migrations.v integer not null",
		"checkpoint_writes.thread_id text not null",
		"checkpoint_writes.checkpoint_ns text not null default ''::text",
		"checkpoint_writes.checkpoint_id text not null",
		"checkpoint_writes.task_id text not null",
		"checkpoint_writes.idx integer not null",
		"checkpoint_writes.channel text not null",
		"checkpoint_writes.type text null",
		"checkpoint_writes.blob bytea not null",
		"checkpoint_writes.task_path text not null default ''::text",
		"checkpoints.thread_id text not null",
		"checkpoints.checkpoint_ns text not null default ''::text",
		"checkpoints.checkpoint_id text not null",
		"checkpoints.parent_checkpoint_id text null",
		"checkpoints.type text null",
		"checkpoints.checkpoint jsonb not null",
		"checkpoints.metadata jsonb not null default '{}'::jsonb",
	}
	if !slices.Equal(cols, want) {
		t.Errorf("columns:\n got  %s\n want %s", strings.Join(cols, "\n      "), strings.Join(want, "\n      "))
	}

	rows, _ = db.Query(ctx, `
		SELECT tablename || ' ' || indexname || ' ' || regexp_replace(indexdef, '^.* USING ', '')
		FROM pg_indexes WHERE schemaname = current_schema() AND tablename LIKE 'checkpoint%'
		ORDER BY tablename, indexname`)
	idx, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	wantIdx := []string{
		"checkpoint_blobs checkpoint_blobs_pkey btree (thread_id, checkpoint_ns, channel, version)",
		"checkpoint_blobs checkpoint_blobs_thread_id_idx btree (thread_id)",
		"checkpoint_migrations checkpoint_migrations_pkey btree (v)",
		"checkpoint_writes checkpoint_writes_pkey btree (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)",
		"checkpoint_writes checkpoint_writes_thread_id_idx btree (thread_id)",
		"checkpoints checkpoints_pkey btree (thread_id, checkpoint_ns, checkpoint_id)",
		"checkpoints checkpoints_thread_id_idx btree (thread_id)",
	}
	if !slices.Equal(idx, wantIdx) {
		t.Errorf("indexes:\n got  %s\n want %s", strings.Join(idx, "\n      "), strings.Join(wantIdx, "\n      "))
	}
	var fks int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND conrelid::regclass::text LIKE 'checkpoint%'`).Scan(&fks); err != nil || fks != 0 {
		t.Errorf("foreign keys on checkpoint tables: %d (%v)", fks, err)
	}

	// The down migration drops exactly the four tables (tried in a
	// transaction that is rolled back), once 014's views of them are gone.
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	for _, name := range []string{"014_thread_elements.down.sql", "002_checkpoints.down.sql"} {
		down, err := migrations.FS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, string(down)); err != nil {
			t.Fatalf("down migration %s: %v", name, err)
		}
	}
	var left int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE 'checkpoint%'`).Scan(&left); err != nil || left != 0 {
		t.Errorf("tables left after down: %d (%v)", left, err)
	}
}

// Appendix A of ROWS.md, rows inserted exactly as the JS saver wrote them:
// integer versions, 'empty' blobs, writes with the default task_path.
func TestReadJSRowsAppendixA(t *testing.T) {
	t.Parallel()
	db := pgtest.Pool(t)
	loadFixture(t, db, "js_appendix_a.jsonl")

	history := mustList(t, db, Config{ThreadID: "1"}, ListOptions{})
	// "Final history (newest first)" of ROWS.md; the store shows the
	// channels themselves (__start__, branch:to:*), not the graph's view.
	want := []struct {
		id, parent string
		values     map[string]any
	}{
		{"1f1e6647-546d-6350-8002-a18ddc94f362", "1f1e6647-53f5-6940-8001-c217b744a452", map[string]any{"foo": "b", "bar": []any{"a", "b"}}},
		{"1f1e6647-545c-61e0-8003-569cd852848f", "1f1e6647-53fa-6760-8002-371ea28e3300", map[string]any{"foo": "x", "bar": []any{"a", "b", "c"}}},
		{"1f1e6647-53fa-6760-8002-371ea28e3300", "1f1e6647-53f5-6940-8001-c217b744a452", map[string]any{"foo": "b", "bar": []any{"a", "b"}}},
		{"1f1e6647-53f5-6940-8001-c217b744a452", "1f1e6647-53e9-65f0-8000-6c8f663c4f6c", map[string]any{"foo": "a", "bar": []any{"a"}, "branch:to:node_b": nil}},
		{"1f1e6647-53e9-65f0-8000-6c8f663c4f6c", "1f1e6647-53d0-6f50-ffff-fc553257d448", map[string]any{"foo": "", "branch:to:node_a": nil}},
		{"1f1e6647-53d0-6f50-ffff-fc553257d448", "", map[string]any{"__start__": map[string]any{"foo": ""}}},
	}
	if len(history) != len(want) {
		t.Fatalf("history has %d checkpoints: %v", len(history), ids(history))
	}
	for i, w := range want {
		h := history[i]
		if h.Config.CheckpointID != w.id || (w.parent == "") != (h.Parent == nil) || (h.Parent != nil && h.Parent.CheckpointID != w.parent) {
			t.Errorf("history[%d] = %s parent %+v, want %s parent %s", i, h.Config.CheckpointID, h.Parent, w.id, w.parent)
		}
		jsonEqual(t, "values of "+w.id, h.Checkpoint.ChannelValues, w.values)
	}
	if latest := mustGet(t, db, Config{ThreadID: "1"}); latest.Config.CheckpointID != want[0].id {
		t.Errorf("latest = %s, want the fork", latest.Config.CheckpointID)
	}

	step2 := history[2]
	jsonEqual(t, "integer versions as text", step2.Checkpoint.ChannelVersions,
		map[string]string{"bar": "4", "foo": "4", "__start__": "2", "branch:to:node_a": "3", "branch:to:node_b": "4"})
	jsonEqual(t, "versions_seen", step2.Checkpoint.VersionsSeen, map[string]any{
		"node_a": map[string]string{"branch:to:node_a": "2"}, "node_b": map[string]string{"branch:to:node_b": "3"},
		"__input__": map[string]string{}, "__start__": map[string]string{"__start__": "1"},
	})
	if step2.Checkpoint.V != 4 || step2.Checkpoint.TS != "2026-11-22T11:04:16.342Z" {
		t.Errorf("header = %+v", step2.Checkpoint)
	}
	jsonEqual(t, "metadata", step2.Metadata, map[string]any{"step": 2, "source": "loop", "parents": map[string]any{}})
	jsonEqual(t, "update writes under the updated checkpoint", step2.PendingWrites, []Write{
		{TaskID: "44a67838-5ccf-58bc-b2dc-7e7220013559", Channel: "foo", Value: "x", Idx: 0},
		{TaskID: "44a67838-5ccf-58bc-b2dc-7e7220013559", Channel: "bar", Value: []any{"c"}, Idx: 1},
	})
	jsonEqual(t, "input writes", history[5].PendingWrites, []Write{
		{TaskID: "bc5739de-63b4-544d-83b5-bae96d5b6dbf", Channel: "foo", Value: "", Idx: 0},
		{TaskID: "bc5739de-63b4-544d-83b5-bae96d5b6dbf", Channel: "branch:to:node_a", Value: nil, Idx: 1},
	})

	// Thread 2: Send fan-out, interrupt (-3) and resume (-4) writes.
	interrupted := mustGet(t, db, Config{ThreadID: "2", CheckpointID: "1f1e6647-54b4-6020-8002-bc33c555e6ce"})
	jsonEqual(t, "thread 2 values", interrupted.Checkpoint.ChannelValues, map[string]any{
		"items": []any{"plan", "work:1", "work:2"}, "__pregel_tasks": []any{}, "branch:to:review": nil,
	})
	jsonEqual(t, "interrupt and resume writes", interrupted.PendingWrites, []Write{
		{TaskID: "00000000-0000-0000-0000-000000000000", Channel: "__resume__", Value: "yes", Idx: -4},
		{TaskID: "f43bb4c5-186e-50cd-85f1-fb647571fe86", Channel: "__resume__", Value: []any{"yes"}, Idx: -4},
		{TaskID: "f43bb4c5-186e-50cd-85f1-fb647571fe86", Channel: "__interrupt__", Value: []any{map[string]any{"id": "bf673b9825d09ccc24d15951266ba311", "value": map[string]any{"question": "approve?"}}}, Idx: -3},
		{TaskID: "f43bb4c5-186e-50cd-85f1-fb647571fe86", Channel: "items", Value: []any{"review:yes"}, Idx: 1},
	})
	sends := mustGet(t, db, Config{ThreadID: "2", CheckpointID: "1f1e6647-54aa-63e0-8000-7778381efa1c"})
	jsonEqual(t, "send writes", sends.PendingWrites[1:], []Write{
		{TaskID: "fb9208f7-0d95-5620-8240-8dfa65d82fc0", Channel: "__pregel_tasks", Value: map[string]any{"node": "work", "args": map[string]any{"x": 1}}, Idx: 1},
		{TaskID: "fb9208f7-0d95-5620-8240-8dfa65d82fc0", Channel: "__pregel_tasks", Value: map[string]any{"node": "work", "args": map[string]any{"x": 2}}, Idx: 2},
	})
	// Thread 3: a failed node's __error__ (-1) next to a sibling's write.
	failed := mustGet(t, db, Config{ThreadID: "3"})
	jsonEqual(t, "error writes", failed.PendingWrites, []Write{
		{TaskID: "1e7f2faf-8867-5928-966f-619c6fef8d59", Channel: "__error__", Value: map[string]any{"message": "boom 1", "name": "Error"}, Idx: -1},
		{TaskID: "b903e28b-efae-5923-b0e1-8eea70d0b618", Channel: "__error__", Value: map[string]any{"message": "This operation was aborted", "name": "AbortError"}, Idx: -1},
		{TaskID: "b903e28b-efae-5923-b0e1-8eea70d0b618", Channel: "items", Value: []any{"ok"}, Idx: 0},
	})
}

// human and ai are messages of the JS saver as LangChain.js's toDict shows
// them: the serialized fields and "type" (no id when it had none, no name).
func human(id any, content string) map[string]any {
	m := map[string]any{"type": "human", "content": content,
		"additional_kwargs": map[string]any{}, "response_metadata": map[string]any{}}
	if id != nil {
		m["id"] = id
	}
	return m
}

func ai(id any, content string) map[string]any {
	m := map[string]any{"type": "ai", "content": content,
		"additional_kwargs": map[string]any{}, "response_metadata": map[string]any{},
		"tool_calls": []any{}, "invalid_tool_calls": []any{}}
	if id != nil {
		m["id"] = id
	}
	return m
}

// Appendix B: lc:1 LangChain messages written by the JS saver read back as
// plain message dicts, in blobs and writes, nested at any depth.
func TestReadJSRowsChatMessages(t *testing.T) {
	t.Parallel()
	db := pgtest.Pool(t)
	loadFixture(t, db, "js_appendix_b_chat.jsonl")
	latest := mustGet(t, db, Config{ThreadID: "chat"})
	jsonEqual(t, "messages", latest.Checkpoint.ChannelValues, map[string]any{"messages": []any{
		human("5a3e4f5e-d100-4d9a-990c-dec8a394f721", "hello 1"),
		ai("0472225c-8059-4cc9-9f19-92d35f8688b0", "echo: hello 1"),
		human("87420136-f1c9-4f68-9f4e-75e1772445d7", "hello 2"),
		ai("79adf675-1084-486c-8711-38caff51d7af", "echo: hello 2"),
	}})
	input := mustGet(t, db, Config{ThreadID: "chat", CheckpointID: "1f1e6645-e1dd-6ed0-8002-3f994af6b92d"})
	jsonEqual(t, "input in __start__ (a dict holding a list)", input.Checkpoint.ChannelValues["__start__"],
		map[string]any{"messages": []any{human(nil, "hello 2")}})
	jsonEqual(t, "input write", input.PendingWrites[0].Value, []any{human(nil, "hello 2")})
}

// humanMessageHex is a HumanMessage as Python's JsonPlusSerializer writes it
// (ext 5, pydantic v2), copied from the serde tests.
const humanMessageHex = "c75d0594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616e" +
	"ac48756d616e4d65737361676583a7636f6e74656e74a26869a474797065a568756d616ea26964a26d31" +
	"b36d6f64656c5f76616c69646174655f6a736f6e"

// Python-style rows: primitives inline in checkpoint->'channel_values',
// msgpack blobs and writes, string versions, task_path set.
func TestReadPythonRows(t *testing.T) {
	t.Parallel()
	db := pgtest.Pool(t)
	ctx := context.Background()
	msgs, err := hex.DecodeString("91" + humanMessageHex) // [HumanMessage]
	if err != nil {
		t.Fatal(err)
	}
	v1 := "00000000000000000000000000000001.0.6217427521553424"
	v2 := "00000000000000000000000000000002.0.1301473402417853"
	cp := map[string]any{
		"v": 4, "id": "1f0a0b0c-0d0e-6f00-8001-0123456789ab", "ts": "2025-06-01T10:00:00.123456+00:00",
		"channel_values":   map[string]any{"foo": "inline", "n": 3, "flag": true, "none": nil},
		"channel_versions": map[string]any{"foo": v1, "n": v1, "flag": v1, "none": v1, "messages": v2, "raw": v2},
		"versions_seen":    map[string]any{"agent": map[string]any{"messages": v1}},
		"updated_channels": []any{"messages"},
	}
	cpJSON, _ := json.Marshal(cp)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, checkpoint, metadata) VALUES ('py', '', $1, $2, '{"source":"loop","step":1,"parents":{}}')`,
			[]any{cp["id"], string(cpJSON)}},
		{`INSERT INTO checkpoint_blobs VALUES ('py', '', 'messages', $1, 'msgpack', $2), ('py', '', 'raw', $1, 'bytes', '\x0102ff'::bytea)`, []any{v2, msgs}},
		{`INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
		  VALUES ('py', '', $1, 'task-1', '~__pregel_pull, agent', 0, 'messages', 'msgpack', $2),
		         ('py', '', $1, 'task-1', '~__pregel_pull, agent', 1, 'done', 'null', '')`, []any{cp["id"], msgs}},
	} {
		if _, err := db.Exec(ctx, q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
	got := mustGet(t, db, Config{ThreadID: "py"})
	hm := map[string]any{"type": "human", "content": "hi", "id": "m1", "name": nil,
		"additional_kwargs": map[string]any{}, "response_metadata": map[string]any{}}
	jsonEqual(t, "values", got.Checkpoint.ChannelValues, map[string]any{
		"foo": "inline", "n": 3, "flag": true, "none": nil, "messages": []any{hm}, "raw": "AQL/",
	})
	if got.Checkpoint.ChannelVersions["messages"] != v2 || got.Checkpoint.VersionsSeen["agent"]["messages"] != v1 {
		t.Errorf("versions = %v / %v", got.Checkpoint.ChannelVersions, got.Checkpoint.VersionsSeen)
	}
	if !slices.Equal(got.Checkpoint.UpdatedChannels, []string{"messages"}) || got.Checkpoint.TS != cp["ts"] {
		t.Errorf("checkpoint = %+v", got.Checkpoint)
	}
	jsonEqual(t, "writes", got.PendingWrites, []Write{
		{TaskID: "task-1", Channel: "messages", Value: []any{hm}, Idx: 0, TaskPath: "~__pregel_pull, agent"},
		{TaskID: "task-1", Channel: "done", Value: nil, Idx: 1, TaskPath: "~__pregel_pull, agent"},
	})
	// Weft continues the Python thread: its new version sorts after v2.
	next := NextVersion(v2)
	if VersionCounter(next) != 3 || CompareVersions(next, v2) <= 0 {
		t.Errorf("NextVersion(%s) = %s", v2, next)
	}
}
