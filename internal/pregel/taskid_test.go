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
