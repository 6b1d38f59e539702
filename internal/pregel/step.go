package pregel

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/checkpoints"
)

// InputTask is the name LangGraph files a run's input under (versions_seen
// key of the input checkpoint).
const InputTask = "__input__"

// TaskWrites is what one task produced in a superstep: the channels that
// triggered it (consumed when the step is applied) and its writes, in order.
type TaskWrites struct {
	Name     string
	Triggers []string
	Writes   []checkpoints.Write
}

// ErrStepConflict reports two writes to a last-value channel in one step.
var ErrStepConflict = errors.New("invalid concurrent update")

// Clone returns a copy of cp whose maps can be changed without touching cp
// (channel values themselves are shared; they are never mutated in place).
func Clone(cp *checkpoints.Checkpoint) checkpoints.Checkpoint {
	out := checkpoints.Checkpoint{V: 4, ChannelValues: map[string]any{}, ChannelVersions: map[string]string{},
		VersionsSeen: map[string]map[string]string{}}
	if cp == nil {
		return out
	}
	maps.Copy(out.ChannelValues, cp.ChannelValues)
	maps.Copy(out.ChannelVersions, cp.ChannelVersions)
	for node, seen := range cp.VersionsSeen {
		out.VersionsSeen[node] = maps.Clone(seen)
	}
	return out
}

// ApplyWrites is LangGraph's apply_writes: the checkpoint that results from
// base (nil for an empty thread) once tasks' writes are applied. Every task
// records the versions of its triggers in versions_seen; writes are grouped
// by channel and reduced in task order through g's reducers (a last-value
// channel written twice in one step is an ErrStepConflict error; internal
// channels keep the last write); when any task had triggers, every trigger
// channel that still holds a value and was not written is consumed (its
// value cleared). Every channel that changed gets version. The result has
// no ID or TS; the second value names the changed channels and their new
// version (what CheckpointPut writes blobs for).
func ApplyWrites(g *graph.Graph, base *checkpoints.Checkpoint, tasks []TaskWrites, version string) (checkpoints.Checkpoint, map[string]string, error) {
	cp := Clone(base)
	bump := false
	for _, t := range tasks {
		seen := cp.VersionsSeen[t.Name]
		if seen == nil {
			seen = map[string]string{}
			cp.VersionsSeen[t.Name] = seen
		}
		for _, trig := range t.Triggers {
			bump = true
			if v, ok := cp.ChannelVersions[trig]; ok {
				seen[trig] = v
			}
		}
	}
	var order []string
	byChan := map[string][]any{}
	for _, t := range tasks {
		for _, w := range t.Writes {
			switch w.Channel {
			case checkpoints.ChannelError, checkpoints.ChannelInterrupt, checkpoints.ChannelResume,
				checkpoints.ChannelScheduled, TasksChannel:
				continue
			}
			if _, seen := byChan[w.Channel]; !seen {
				order = append(order, w.Channel)
			}
			byChan[w.Channel] = append(byChan[w.Channel], w.Value)
		}
	}
	changed := map[string]string{}
	for _, ch := range order {
		vals := byChan[ch]
		c, isState := g.Channel(ch)
		if !isState {
			if triggerOf(ch) == "" {
				return cp, nil, fmt.Errorf("%w: graph %q has no channel %q", graph.ErrInvalidUpdate, g.ID, ch)
			}
			cp.ChannelValues[ch] = vals[len(vals)-1]
			changed[ch] = version
			continue
		}
		if !c.Reduces() && len(vals) > 1 {
			return cp, nil, fmt.Errorf("%w: channel %q can receive only one value per step (%d writes); give it a reducer",
				ErrStepConflict, ch, len(vals))
		}
		cur := graph.State{}
		if v, ok := cp.ChannelValues[ch]; ok {
			m, err := checkpoints.Materialize(v)
			if err != nil {
				return cp, nil, err
			}
			cur[ch] = m
		}
		for _, v := range vals {
			next, err := g.Apply(cur, graph.State{ch: v})
			if err != nil {
				return cp, nil, err
			}
			cur = next
		}
		cp.ChannelValues[ch] = cur[ch]
		changed[ch] = version
	}
	if bump {
		for ch := range cp.ChannelValues {
			if _, written := changed[ch]; !written && triggerOf(ch) != "" {
				delete(cp.ChannelValues, ch)
				changed[ch] = version
			}
		}
	}
	for ch := range changed {
		cp.ChannelVersions[ch] = version
	}
	return cp, changed, nil
}

// InputWrites are the tasks whose writes make the input checkpoint of a run
// with new input on top of base: every task still pending on base is
// discarded (its triggers consumed, no writes), and the input is written to
// the __start__ channel, as LangGraph does when a thread gets new input.
func InputWrites(pending []Task, input map[string]any) []TaskWrites {
	out := make([]TaskWrites, 0, len(pending)+1)
	for _, t := range pending {
		if t.Name != graph.START {
			out = append(out, TaskWrites{Name: t.Name, Triggers: []string{TriggerChannel(t.Name)}})
		}
	}
	return append(out, TaskWrites{Name: InputTask, Writes: []checkpoints.Write{{Channel: graph.START, Value: input}}})
}

// Decoded returns cp with its channel values decoded
// (checkpoints.Materialize) into a new map, cp itself unchanged: a
// checkpoint read from the store holds undecoded JSON text, which each of
// Values and ApplyWrites would otherwise decode again at every step of a
// run (on a long thread, the whole conversation each time).
func Decoded(cp checkpoints.Checkpoint) (checkpoints.Checkpoint, error) {
	vals := make(map[string]any, len(cp.ChannelValues))
	for k, v := range cp.ChannelValues {
		m, err := checkpoints.Materialize(v)
		if err != nil {
			return cp, fmt.Errorf("channel %q: %w", k, err)
		}
		vals[k] = m
	}
	cp.ChannelValues = vals
	return cp, nil
}

// Values returns the decoded user-visible values of a checkpoint (channel
// defaults filled in): what nodes receive and what "values" events show.
func Values(cp *checkpoints.Checkpoint, g *graph.Graph) (graph.State, error) {
	vals := StateValues(cp.ChannelValues, g)
	for k, v := range vals {
		m, err := checkpoints.Materialize(v)
		if err != nil {
			return nil, err
		}
		vals[k] = m
	}
	return vals, nil
}

// TaskOutcome is the result of running one task.
type TaskOutcome struct {
	// Writes are the task's writes (state updates, then the trigger
	// channels of the nodes it routes to), or its __interrupt__ / __error__
	// write; a resumed task also records its __resume__ answers.
	Writes TaskWrites
	// Update is the node's state update (nil unless it succeeded).
	Update graph.State
	// Interrupts are the interrupts it raised ({"value","id"}), if any.
	Interrupts []any
	// Err is the node's error (nil on success or interrupt).
	Err error
}

// Env is the run-level part of what a node receives besides the state.
type Env struct {
	// Config and Context are the run's (see graph.NodeInput).
	Config, Context map[string]any
	// Run identifies the run; RunTask fills in Node.
	Run graph.RunInfo
	// Stream receives what the node streams while it runs (nil: dropped).
	Stream func(kind string, data any)
	// Thread reads the thread's stored records for NodeInput.Window (nil:
	// none).
	Thread graph.ThreadReader
}

// RunTask executes task (a pending pull task of g) on values, the state
// before the step, with the resume answers collected for it and env. The
// START task writes the input held in startInput. Routing follows
// LangGraph: the task's next nodes are computed on the pre-step state plus
// its own update, followed by the targets of a Command's Goto.
func RunTask(ctx context.Context, g *graph.Graph, task Task, values graph.State, startInput any, resume []any,
	env Env) TaskOutcome {
	tw := TaskWrites{Name: task.Name, Triggers: []string{TriggerChannel(task.Name)}}
	out := TaskOutcome{}
	var update graph.State
	var gotoNodes []string
	if task.Name == graph.START {
		m, ok := startInput.(map[string]any)
		if startInput != nil && !ok {
			out.Err = fmt.Errorf("%w: input must be an object", graph.ErrInvalidUpdate)
		}
		update = m
	} else {
		node, ok := g.Node(task.Name)
		if !ok {
			out.Err = fmt.Errorf("%w: graph %q has no node %q", graph.ErrUnknownNode, g.ID, task.Name)
		} else {
			var cmd graph.Command
			cmd, out.Err = callNode(ctx, node, values, resume, env)
			update, gotoNodes = cmd.Update, cmd.Goto
		}
	}
	if len(resume) > 0 {
		tw.Writes = append(tw.Writes, checkpoints.Write{TaskID: task.ID, Channel: checkpoints.ChannelResume, Value: slices.Clone(resume)})
	}
	var intr *graph.Interrupt
	switch {
	case errors.As(out.Err, &intr):
		out.Err = nil
		out.Interrupts = []any{map[string]any{"value": intr.Value, "id": InterruptID(task.ID, intr.Index)}}
		tw.Writes = append(tw.Writes, checkpoints.Write{TaskID: task.ID, Channel: checkpoints.ChannelInterrupt, Value: out.Interrupts})
	case out.Err != nil:
		tw.Writes = append(tw.Writes, checkpoints.Write{TaskID: task.ID, Channel: checkpoints.ChannelError,
			Value: map[string]any{"error": ErrorClass(out.Err), "message": out.Err.Error()}})
	default:
		after, err := g.Apply(values, update)
		var next []string
		if err == nil {
			next, err = g.NextAfter(task.Name, after, gotoNodes)
		}
		if err != nil {
			out.Err = err
			tw.Writes = append(tw.Writes, checkpoints.Write{TaskID: task.ID, Channel: checkpoints.ChannelError,
				Value: map[string]any{"error": ErrorClass(err), "message": err.Error()}})
			break
		}
		out.Update = update
		for _, k := range slices.Sorted(maps.Keys(update)) {
			tw.Writes = append(tw.Writes, checkpoints.Write{TaskID: task.ID, Channel: k, Value: update[k]})
		}
		for _, n := range next {
			tw.Writes = append(tw.Writes, checkpoints.Write{TaskID: task.ID, Channel: TriggerChannel(n)})
		}
	}
	idx := 0
	for i := range tw.Writes {
		if _, special := checkpoints.WriteIdx(tw.Writes[i].Channel, 0); !special {
			tw.Writes[i].Idx = idx
			idx++
		}
	}
	out.Writes = tw
	return out
}

// callNode runs a node, turning a panic into an error so one bad node
// cannot take the worker down.
func callNode(ctx context.Context, node graph.Node, values graph.State, resume []any, env Env) (cmd graph.Command, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("node %q panicked: %v", node.Name, p)
		}
	}()
	in := graph.WithThreadReader(graph.WithStream(graph.NewNodeInput(values, resume), env.Stream), env.Thread)
	in.Config, in.Context, in.Run = env.Config, env.Context, env.Run
	in.Run.Node = node.Name
	return node.Call(ctx, in)
}

// InterruptID is the id of the index-th interrupt raised by task taskID: 32
// hex digits, stable across retries of the task (so a resume addressed to
// it finds it again).
func InterruptID(taskID string, index int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s:%d", taskID, index))
	return hex.EncodeToString(sum[:16])
}

// ErrorClass names an error the way the Agent Server's error objects do
// ({"error": <class>, "message": …}).
func ErrorClass(err error) string {
	switch {
	case errors.Is(err, ErrRecursion):
		return "GraphRecursionError"
	case errors.Is(err, graph.ErrInvalidUpdate), errors.Is(err, ErrStepConflict):
		return "InvalidUpdateError"
	case errors.Is(err, context.DeadlineExceeded):
		return "TimeoutError"
	}
	return "NodeError"
}

// ErrRecursion is the error of a run that exceeded its recursion limit.
var ErrRecursion = errors.New("recursion limit reached")

// ShouldInterrupt returns the tasks that a static breakpoint list (nodes, or
// ["*"] for all) stops at, LangGraph's should_interrupt: only when some
// channel changed since the last static interrupt (versions_seen of
// __interrupt__), so resuming with null input does not stop at the same
// breakpoint again.
func ShouldInterrupt(cp *checkpoints.Checkpoint, nodes []string, tasks []Task) []string {
	if len(nodes) == 0 {
		return nil
	}
	seen := cp.VersionsSeen[InterruptNode]
	updated := false
	for ch, v := range cp.ChannelVersions {
		if checkpoints.CompareVersions(v, seen[ch]) > 0 {
			updated = true
			break
		}
	}
	if !updated {
		return nil
	}
	var out []string
	for _, t := range tasks {
		if t.Name != graph.START && (slices.Contains(nodes, "*") || slices.Contains(nodes, t.Name)) {
			out = append(out, t.Name)
		}
	}
	return out
}

// MarkInterruptSeen records every channel version as seen by the static
// interrupt (versions_seen["__interrupt__"]), what LangGraph does when a run
// resumes past a breakpoint.
func MarkInterruptSeen(cp *checkpoints.Checkpoint) {
	cp.VersionsSeen[InterruptNode] = maps.Clone(cp.ChannelVersions)
}
