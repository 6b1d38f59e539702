package checkpoints_test

import (
	"context"
	"maps"
	"testing"

	. "github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/checkpoints/metabase"
	"github.com/weftdev/weft/internal/postgres/pgtest"
)

// A checkpoint's run-wide metadata is stored once per thread: the rows hold
// their own keys and the base's key, and every read (Weft's, a filter, the
// langgraph view LangGraph's savers read, a copy) sees the whole metadata.
func TestMetadataBaseStoredOncePerThread(t *testing.T) {
	t.Parallel()
	db := pgtest.Pool(t)
	ctx := context.Background()
	run := map[string]any{"thread_id": "t1", "assistant_id": "a0a0a0a0-0000-5000-8000-000000000000", "graph_id": "agent",
		"created_by": "system", "run_attempt": 1, "user_id": "", "user_tier": "pro"}
	var cfgs []Config
	parent := ""
	for step := -1; step < 3; step++ {
		md := Metadata{"source": "loop", "step": step, "parents": map[string]any{}, "run_id": "r1"}
		maps.Copy(md, run)
		cp := Checkpoint{V: 4, ID: NewCheckpointID(step), ChannelVersions: map[string]string{}, VersionsSeen: map[string]map[string]string{}}
		cfg, err := Put(ctx, db, Config{ThreadID: "t1", CheckpointID: parent}, cp, md, nil)
		if err != nil {
			t.Fatal(err)
		}
		cfgs, parent = append(cfgs, cfg), cfg.CheckpointID
	}
	var bases int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM thread_checkpoint_metadata WHERE thread_id = 't1'`).Scan(&bases); err != nil {
		t.Fatal(err)
	}
	if bases != 1 {
		t.Errorf("%d bases for 4 checkpoints of one run, want 1", bases)
	}
	var raw map[string]any
	if err := db.QueryRow(ctx, `SELECT metadata FROM checkpoints WHERE thread_id = 't1' AND checkpoint_id = $1`,
		cfgs[0].CheckpointID).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if _, ok := raw[metabase.Key]; !ok || raw["thread_id"] != nil || raw["run_id"] != "r1" {
		t.Errorf("stored row metadata = %v, want its own keys and %s", raw, metabase.Key)
	}
	whole := func(step int) map[string]any {
		md := map[string]any{"source": "loop", "step": float64(step), "parents": map[string]any{}, "run_id": "r1"}
		for k, v := range run {
			if n, ok := v.(int); ok {
				v = float64(n)
			}
			md[k] = v
		}
		return md
	}
	got := mustGet(t, db, cfgs[3])
	jsonEqual(t, "read metadata", got.Metadata, whole(2))
	list, err := List(ctx, db, Config{ThreadID: "t1"}, ListOptions{Filter: map[string]any{"user_tier": "pro", "step": 1}})
	if err != nil || len(list) != 1 || list[0].Config != cfgs[2] {
		t.Fatalf("filter on a base key and an own key: %v, %v", list, err)
	}
	var viewed map[string]any
	if err := db.QueryRow(ctx, `SELECT metadata FROM langgraph.checkpoints WHERE thread_id = 't1' AND checkpoint_id = $1`,
		cfgs[1].CheckpointID).Scan(&viewed); err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, "langgraph view metadata", viewed, whole(0))

	// A copy's metadata names the copy; deleting a thread takes its bases.
	if err := CopyThread(ctx, db, "t1", "t2"); err != nil {
		t.Fatal(err)
	}
	copied := mustGet(t, db, Config{ThreadID: "t2", CheckpointID: cfgs[3].CheckpointID})
	if copied.Metadata["thread_id"] != "t2" || copied.Metadata["user_tier"] != "pro" {
		t.Errorf("copy's metadata = %v", copied.Metadata)
	}
	if err := DeleteThread(ctx, db, "t1"); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `SELECT count(*) FROM thread_checkpoint_metadata WHERE thread_id = 't1'`).Scan(&bases); err != nil {
		t.Fatal(err)
	}
	if bases != 0 {
		t.Errorf("%d bases left after the thread's delete", bases)
	}
}

// Small run-wide metadata stays in the row: a base must be worth its key.
func TestMetadataBaseOnlyWhenWorthIt(t *testing.T) {
	row, shared := metabase.Split(map[string]any{"source": "loop", "step": 1, "run_id": "r"})
	if shared != nil || len(row) != 3 {
		t.Errorf("only own keys: row %v shared %v", row, shared)
	}
	row, shared = metabase.Split(map[string]any{"source": "loop", "graph_id": "g"})
	if len(row) != 1 || shared["graph_id"] != "g" {
		t.Errorf("split = %v / %v", row, shared)
	}
}
