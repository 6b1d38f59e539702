package state_test

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/pregel"
	"github.com/weftdev/weft/internal/server/servertest"
)

// A pending task that runs a subgraph with checkpoints of its own points at
// its namespace (LangGraph's task state config: thread and namespace, no
// checkpoint id); with subgraphs=true its state is filled in instead.
func TestPendingSubgraphTasks(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	tid := newThread(t, s, "js_subgraph") // a graph this server does not know
	ctx := t.Context()
	put := func(cfg checkpoints.Config, step int, values map[string]any, versions map[string]string) checkpoints.Config {
		t.Helper()
		cp := checkpoints.Checkpoint{ID: checkpoints.NewCheckpointID(step), ChannelValues: values,
			ChannelVersions: versions, VersionsSeen: map[string]map[string]string{}}
		out, err := checkpoints.Put(ctx, s.DB, cfg, cp, checkpoints.Metadata{"source": "loop", "step": step}, versions)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	parent := put(checkpoints.Config{ThreadID: tid}, 1,
		map[string]any{"items": []any{"plan"}, "branch:to:sub": nil}, map[string]string{"items": "2", "branch:to:sub": "2"})
	taskID := pregel.TaskID(parent, 1, "sub", []any{"__pregel_pull", "sub"})
	ns := "sub:" + taskID
	first := put(checkpoints.Config{ThreadID: tid, NS: ns}, 0,
		map[string]any{"items": []any{"plan"}, "branch:to:step1": nil}, map[string]string{"items": "1", "branch:to:step1": "1"})
	sub := put(checkpoints.Config{ThreadID: tid, NS: ns, CheckpointID: first.CheckpointID}, 1,
		map[string]any{"items": []any{"plan", "s1"}, "branch:to:ask": nil}, map[string]string{"items": "2", "branch:to:ask": "2"})

	// The subgraph's pending task is interrupted: LangGraph files the
	// interrupt under the subgraph checkpoint, for the ask task.
	askID := pregel.TaskID(sub, 1, "ask", []any{"__pregel_pull", "ask"})
	intr := []any{map[string]any{"id": "abaaeba943d3b95d816b2cc02c0ad48c", "value": map[string]any{"question": "ok?"}}}
	if err := checkpoints.PutWrites(ctx, s.DB, sub, []checkpoints.Write{{TaskID: askID, Channel: "__interrupt__", Value: intr}}); err != nil {
		t.Fatal(err)
	}

	st := getState(t, s, "/threads/"+tid+"/state")
	wantValues(t, st, `{"items":["plan"]}`, "sub")
	raw := s.Must(http.StatusOK, "GET", "/threads/"+tid+"/state", nil).Map(t)
	task := raw["tasks"].([]any)[0].(map[string]any)
	if task["id"] != taskID || task["state"] != nil ||
		!reflect.DeepEqual(task["checkpoint"], map[string]any{"thread_id": tid, "checkpoint_ns": ns}) {
		t.Fatalf("task = %v", task)
	}

	// Reading the state at the task's checkpoint is the subgraph's latest.
	at := s.Must(http.StatusOK, "POST", "/threads/"+tid+"/state/checkpoint", map[string]any{"checkpoint": task["checkpoint"]}).Map(t)
	if at["checkpoint"].(map[string]any)["checkpoint_id"] != sub.CheckpointID {
		t.Fatalf("state at the task's checkpoint = %v", at)
	}

	raw = s.Must(http.StatusOK, "GET", "/threads/"+tid+"/state?subgraphs=true", nil).Map(t)
	if c := raw["tasks"].([]any)[0].(map[string]any)["checkpoint"]; c != nil {
		t.Fatalf("expanded task checkpoint = %v, want null", c)
	}
	nested, _ := raw["tasks"].([]any)[0].(map[string]any)["state"].(map[string]any)
	wantIntr := `[{"id":"abaaeba943d3b95d816b2cc02c0ad48c","value":{"question":"ok?"}}]`
	if asJSON(nested["tasks"].([]any)[0].(map[string]any)["interrupts"]) != wantIntr {
		t.Fatalf("nested task interrupts = %v", nested["tasks"])
	}
	// Nested as LangGraph's servers nest it: no top-level interrupts list,
	// no deprecated checkpoint_id duplicates.
	for _, k := range []string{"interrupts", "checkpoint_id", "parent_checkpoint_id"} {
		if _, ok := nested[k]; ok {
			t.Fatalf("nested state has %q: %v", k, nested)
		}
	}
	if asJSON(nested["values"]) != `{"items":["plan","s1"]}` || asJSON(nested["next"]) != `["ask"]` ||
		nested["checkpoint"].(map[string]any)["checkpoint_ns"] != ns {
		t.Fatalf("nested state = %v", nested)
	}
	// The same through POST /state/checkpoint {subgraphs: true}.
	raw = s.Must(http.StatusOK, "POST", "/threads/"+tid+"/state/checkpoint",
		map[string]any{"checkpoint": map[string]any{"checkpoint_id": parent.CheckpointID}, "subgraphs": true}).Map(t)
	if raw["tasks"].([]any)[0].(map[string]any)["state"] == nil {
		t.Fatalf("POST /state/checkpoint subgraphs: %v", raw)
	}
	// History links the subgraph too (without expanding it), and lists the
	// subgraph's own history by namespace.
	var h []map[string]any
	s.Must(http.StatusOK, "POST", "/threads/"+tid+"/history", nil).JSON(t, &h)
	if len(h) != 1 {
		t.Fatalf("history = %v", h)
	}
	ht := h[0]["tasks"].([]any)[0].(map[string]any)
	if !reflect.DeepEqual(ht["checkpoint"], map[string]any{"thread_id": tid, "checkpoint_ns": ns}) || ht["state"] != nil {
		t.Fatalf("history task = %v", ht)
	}
	subHist := history(t, s, tid, map[string]any{"checkpoint": map[string]any{"checkpoint_ns": ns}})
	if len(subHist) != 2 || subHist[0].Checkpoint.CheckpointID != sub.CheckpointID || !reflect.DeepEqual(subHist[0].Next, []string{"ask"}) {
		t.Fatalf("subgraph history = %+v", subHist)
	}
}
