package executor

import (
	"context"
	"slices"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/pregel"
	"github.com/weftdev/weft/internal/wire"
)

// The tasks of a step: run in parallel, each with what its node sees of
// the run (env: config, context, ids, the stream of its custom data and
// message chunks), its answers to interrupts, and its span.

// resumeFor returns the answers task gets: those recorded for it, plus the
// run's resume value when the task is waiting on an interrupt (a map keyed
// by interrupt id answers only the interrupts it names).
func (x *execution) resumeFor(t pregel.Task) []any {
	r := t.Resumes()
	if !x.resumed || len(t.Interrupts) == 0 {
		return r
	}
	if m, ok := x.resume.(map[string]any); ok {
		matched := false
		for _, in := range t.Interrupts {
			if im, ok := in.(map[string]any); ok {
				if id, _ := im["id"].(string); id != "" {
					if v, ok := m[id]; ok {
						r = append(r, v)
						matched = true
					}
				}
			}
		}
		if matched {
			return r
		}
	}
	return append(r, x.resume)
}

// messageEvents are, for a run that asked for the messages-tuple stream
// mode, the events of every message a node wrote to a messages channel,
// as [message, metadata] with LangGraph's run metadata.
func (x *execution) messageEvents(t pregel.Task, step int, update graph.State) []wire.Event {
	if !x.wants("messages-tuple") {
		return nil
	}
	var evs []wire.Event
	for _, c := range x.g.Channels {
		msgs, _ := update[c.Name].([]any)
		if c.Kind != graph.Messages || len(msgs) == 0 {
			continue
		}
		md := x.messageMetadata(t, step)
		for _, m := range msgs {
			id, _ := m.(map[string]any)["id"].(string)
			x.streamMu.Lock()
			streamed := x.streamed[id]
			x.streamMu.Unlock()
			if !streamed { // a streamed message was sent chunk by chunk already
				evs = append(evs, wire.Event{Event: "messages", Data: []any{m, md}})
			}
		}
	}
	return evs
}

// messageMetadata is the metadata of a messages-tuple event of task t:
// LangGraph's run metadata.
func (x *execution) messageMetadata(t pregel.Task, step int) map[string]any {
	ns := t.Name + ":" + t.ID
	return map[string]any{"langgraph_node": t.Name, "langgraph_step": step,
		"langgraph_triggers": []string{pregel.TriggerChannel(t.Name)}, "langgraph_path": t.Path,
		"langgraph_checkpoint_ns": ns, "checkpoint_ns": ns, "tags": []any{},
		"run_id": x.run.RunID.String(), "thread_id": x.run.ThreadID.String(),
		"graph_id": x.g.ID, "assistant_id": x.run.AssistantID.String()}
}

// streamer is what task t's node streams to while it runs: custom data
// and message chunks become events at once, and are committed in the
// background (coalesced while a commit is in flight) so that streams see
// them live. With "exit" durability they wait for the end.
func (x *execution) streamer(ctx context.Context, t pregel.Task, step int) func(kind string, data any) {
	return func(kind string, data any) {
		switch kind {
		case graph.StreamCustom:
			x.c.emit("custom", data)
		case graph.StreamMessageChunk:
			if !x.wants("messages-tuple") {
				return // not streamed: no stream of this run can show it
			}
			if m, ok := data.(map[string]any); ok {
				if id, _ := m["id"].(string); id != "" {
					x.streamMu.Lock()
					if x.streamed == nil {
						x.streamed = map[string]bool{}
					}
					x.streamed[id] = true
					x.streamMu.Unlock()
				}
			}
			x.c.emit("messages", []any{data, x.messageMetadata(t, step)})
		default:
			return
		}
		if x.k.Durability != "exit" {
			x.c.flushAsync(ctx)
		}
	}
}

// env is what task t's node sees of the run: its config and context (the
// assistant's merged under the run's at creation) and ids.
func (x *execution) env(ctx context.Context, t pregel.Task, step int) pregel.Env {
	env := pregel.Env{Config: x.k.Config, Context: x.k.Context, Stream: x.streamer(ctx, t, step),
		Run: graph.RunInfo{RunID: x.run.RunID.String(), ThreadID: x.run.ThreadID.String(),
			AssistantID: x.run.AssistantID.String(), GraphID: x.g.ID, Step: step}}
	if l, ok := x.io.(*localIO); ok {
		env.Thread = threadReader{db: l.s.db, thread: x.run.ThreadID.String()}
	}
	return env
}

// outcome is a task's result in this attempt.
type outcome struct {
	pregel.TaskOutcome
	committed bool  // its writes were committed on their own already
	commitErr error // committing them on their own failed
}

// runTasks runs a step's tasks in parallel; tasks that completed in an
// earlier attempt are not run again, their recorded writes are reused. A
// task that finishes while others still run has its writes committed at
// once.
func (x *execution) runTasks(ctx context.Context, base *checkpoints.Tuple, tasks []pregel.Task, values graph.State, step int) []outcome {
	out := make([]outcome, len(tasks))
	var startInput any
	if v, ok := base.Checkpoint.ChannelValues[graph.START]; ok {
		startInput, _ = checkpoints.Materialize(v)
	}
	var todo []int
	for i, t := range tasks {
		if t.Done() {
			writes := slices.DeleteFunc(slices.Clone(t.Writes), func(w checkpoints.Write) bool { return w.Channel == checkpoints.ChannelResume })
			out[i] = outcome{TaskOutcome: pregel.TaskOutcome{Update: t.Result,
				Writes: pregel.TaskWrites{Name: t.Name, Triggers: []string{pregel.TriggerChannel(t.Name)}, Writes: writes}}, committed: true}
			continue
		}
		todo = append(todo, i)
	}
	var mu sync.Mutex
	remaining := len(todo)
	var wg sync.WaitGroup
	for _, i := range todo {
		wg.Go(func() {
			nctx, span := x.startNode(ctx, tasks[i])
			o := pregel.RunTask(nctx, x.g, tasks[i], values, startInput, x.resumeFor(tasks[i]), x.env(nctx, tasks[i], step))
			if o.Err != nil {
				span.RecordError(o.Err)
				span.SetStatus(codes.Error, o.Err.Error())
			} else if len(o.Interrupts) > 0 {
				span.SetAttributes(attribute.Bool("weft.interrupted", true))
			}
			span.End()
			mu.Lock()
			remaining--
			early := remaining > 0 && o.Err == nil && ctx.Err() == nil && x.k.Durability != "exit"
			mu.Unlock()
			out[i] = outcome{TaskOutcome: o}
			if early {
				x.c.addWrites(wire.WriteBatch{CheckpointID: base.Config.CheckpointID, Writes: o.Writes.Writes}, x.owns(base))
				if err := x.c.flush(ctx, "writes:"+base.Config.CheckpointID+":"+tasks[i].ID); err != nil {
					out[i].commitErr = err
				} else {
					out[i].committed = true
				}
			}
		})
	}
	wg.Wait()
	return out
}

// startNode starts task t's span (a child of its step's), or nothing when
// tracing is off.
func (x *execution) startNode(ctx context.Context, t pregel.Task) (context.Context, trace.Span) {
	if x.tracer == nil {
		return ctx, noop.Span{}
	}
	ctx, span := x.tracer.Start(ctx, "weft.node "+t.Name)
	span.SetAttributes(attribute.String("weft.node", t.Name), attribute.String("weft.task_id", t.ID))
	return ctx, span
}
