package pregel

import (
	"testing"

	"github.com/weftdev/weft/internal/checkpoints"
)

// Task ids are LangGraph's: these are the task_id values LangGraph's JS
// executor wrote for the docs example (reference/checkpoint/ROWS.md,
// Appendix A).
func TestTaskIDIsLangGraphs(t *testing.T) {
	cases := []struct {
		checkpoint string
		step       int
		node       string
		want       string
	}{
		{"1f1e6647-53d0-6f50-ffff-fc553257d448", -1, "__start__", "bc5739de-63b4-544d-83b5-bae96d5b6dbf"},
		{"1f1e6647-53e9-65f0-8000-6c8f663c4f6c", 0, "node_a", "c81d2f69-f9b8-5090-a4c5-04a4208dd009"},
		{"1f1e6647-53f5-6940-8001-c217b744a452", 1, "node_b", "89254060-84b8-50ad-88d2-f6b3df4dfd7b"},
		{"1f1e6647-54b4-6020-8002-bc33c555e6ce", 2, "review", "f43bb4c5-186e-50cd-85f1-fb647571fe86"},
	}
	for _, c := range cases {
		got := TaskID(checkpoints.Config{CheckpointID: c.checkpoint}, c.step, c.node, []any{PullPath, c.node})
		if got != c.want {
			t.Errorf("TaskID(%s, step %d, %s) = %s, want %s", c.checkpoint, c.step, c.node, got, c.want)
		}
	}
}

// Python graphs' task ids are Python LangGraph's (langgraph 1.x,
// pregel/_algo.py _xxhash_str): these are the ids its own code computes
// for the same checkpoint, namespace, step, node and trigger or Send index.
func TestPythonTaskIDIsPythonLangGraphs(t *testing.T) {
	cases := []struct {
		cfg  checkpoints.Config
		step int
		node string
		path []any
		want string
	}{
		{checkpoints.Config{CheckpointID: "1f0cc2a1-6d3e-6f0a-bfff-2a1c3e5d7f90"}, -1, "__start__", []any{PullPath, "__start__"},
			"91b63623-40ae-a635-5f68-b6aacc423cdc"},
		{checkpoints.Config{CheckpointID: "1f0cc2a1-6d41-6b52-8000-9d8e7f6a5b4c"}, 0, "ask", []any{PullPath, "ask"},
			"dc294640-5ed8-dba3-991e-74041644a759"},
		{checkpoints.Config{CheckpointID: "1f0cc2a1-6d41-6b52-8001-0a0b0c0d0e0f", NS: "deep:0b9e6f4c-2d1a-5e3b-8c7d-6a5b4c3d2e1f"}, 2, "prepare",
			[]any{PullPath, "prepare"}, "487aec00-93f7-04e5-3e8f-62ff11239872"},
		{checkpoints.Config{CheckpointID: "1f0cc2a1-6d41-6b52-8002-aaaaaaaaaaaa"}, 1, "worker", []any{PushPath, 1},
			"5ef448e3-75de-151f-195f-ff98a01ac335"},
	}
	// LangGraph.js hashes a push task's index as a string (uuid5 of
	// ["worker","2","worker","__pregel_push","1"]): the namespace the run's
	// Send checkpoints under.
	if got := TaskID(cases[3].cfg, 1, "worker", []any{PushPath, 1}); got != "10e18cba-9231-5561-9d56-70db3d87faa6" {
		t.Errorf("TaskID of a push task = %s, want LangGraph.js's 10e18cba-9231-5561-9d56-70db3d87faa6", got)
	}
	for _, c := range cases {
		if got := PythonTaskID(c.cfg, c.step, c.node, c.path); got != c.want {
			t.Errorf("PythonTaskID(%+v, step %d, %s, %v) = %s, want %s", c.cfg, c.step, c.node, c.path, got, c.want)
		}
		if js := TaskID(c.cfg, c.step, c.node, c.path); js == c.want {
			t.Errorf("TaskID (LangGraph.js's rule) gave Python's id %s", js)
		}
	}
}
