package executor

import (
	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/pregel"
	"github.com/weftdev/weft/internal/wire"
)

// The checkpoints, tasks and debug stream modes describe the Pregel loop
// itself. Their events are recorded only for runs that asked for one of
// those modes (they cost a few rows per step).

func (x *execution) wants(mode string) bool {
	for _, m := range x.k.StreamMode {
		if m == mode {
			return true
		}
	}
	return false
}

// checkpointEvents are the events of the checkpoints and debug modes for
// t (a checkpoint this run wrote), in the shape of the Agent Server's
// checkpoints event: config, parent_config, values, metadata, next, tasks.
// The caller queues them with the checkpoint (see committer.checkpoint).
func (x *execution) checkpointEvents(t *checkpoints.Tuple, step int) []wire.Event {
	cp, dbg := x.wants("checkpoints"), x.wants("debug")
	if !cp && !dbg {
		return nil
	}
	cfg := func(c *checkpoints.Config) any {
		if c == nil {
			return nil
		}
		return map[string]any{"configurable": map[string]any{"thread_id": c.ThreadID, "checkpoint_ns": c.NS, "checkpoint_id": c.CheckpointID}}
	}
	ref := func(c *checkpoints.Config) any {
		if c == nil {
			return nil
		}
		return map[string]any{"thread_id": c.ThreadID, "checkpoint_ns": c.NS, "checkpoint_id": c.CheckpointID}
	}
	values, _ := pregel.Values(&t.Checkpoint, x.g)
	tasks := pregel.Tasks(t, x.g)
	next, taskList := []string{}, []any{}
	for _, task := range tasks {
		next = append(next, task.Name)
		taskList = append(taskList, map[string]any{"id": task.ID, "name": task.Name, "interrupts": task.Interrupts, "state": nil})
	}
	payload := map[string]any{"config": cfg(&t.Config), "parent_config": cfg(t.Parent), "values": values,
		"metadata": t.Metadata, "next": next, "tasks": taskList,
		"checkpoint": ref(&t.Config), "parent_checkpoint": ref(t.Parent)}
	var evs []wire.Event
	if cp {
		evs = append(evs, wire.Event{Event: "checkpoints", Data: payload})
	}
	if dbg {
		evs = append(evs, wire.Event{Event: "debug", Data: map[string]any{"type": "checkpoint", "timestamp": now(), "step": step, "payload": payload}})
	}
	return evs
}

// recordTaskStart records that task starts in step, with its input.
func (x *execution) recordTaskStart(task pregel.Task, step int, input graph.State) {
	if task.Name == graph.START { // the input mapping is hidden, as in LangGraph
		return
	}
	start := map[string]any{"id": task.ID, "name": task.Name, "input": input,
		"triggers": []string{pregel.TriggerChannel(task.Name)}}
	if x.wants("tasks") {
		x.c.emit("tasks", start)
	}
	if x.wants("debug") {
		x.c.emit("debug", map[string]any{"type": "task", "timestamp": now(), "step": step, "payload": start})
	}
}

// recordTaskResult records how task ended: its writes to state channels,
// its error, its interrupts.
func (x *execution) recordTaskResult(task pregel.Task, step int, o pregel.TaskOutcome) {
	if task.Name == graph.START || !x.wants("tasks") && !x.wants("debug") {
		return
	}
	var errText any
	if o.Err != nil {
		errText = o.Err.Error()
	}
	result := map[string]any{}
	for k, v := range o.Update {
		result[k] = v
	}
	interrupts := o.Interrupts
	if interrupts == nil {
		interrupts = []any{}
	}
	done := map[string]any{"id": task.ID, "name": task.Name, "error": errText, "result": result, "interrupts": interrupts}
	if x.wants("tasks") {
		x.c.emit("tasks", done)
	}
	if x.wants("debug") {
		x.c.emit("debug", map[string]any{"type": "task_result", "timestamp": now(), "step": step, "payload": done})
	}
}
