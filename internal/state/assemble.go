package state

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/graph"
)

// CheckpointRef is the Checkpoint object of the API (reference §5.1).
type CheckpointRef struct {
	ThreadID      string         `json:"thread_id"`
	NS            string         `json:"checkpoint_ns"`
	CheckpointID  string         `json:"checkpoint_id"`
	CheckpointMap map[string]any `json:"checkpoint_map"`
}

func refOf(c checkpoints.Config) *CheckpointRef {
	return &CheckpointRef{ThreadID: c.ThreadID, NS: c.NS, CheckpointID: c.CheckpointID}
}

// ThreadState is one checkpoint as the API shows it (reference §5.1).
type ThreadState struct {
	Values           any            `json:"values" swaggertype:"object"`
	Next             []string       `json:"next"`
	Checkpoint       *CheckpointRef `json:"checkpoint"`
	Metadata         map[string]any `json:"metadata"`
	CreatedAt        *string        `json:"created_at"`
	ParentCheckpoint *CheckpointRef `json:"parent_checkpoint"`
	Tasks            []Task         `json:"tasks"`
	Interrupts       []any          `json:"interrupts"`
	// Deprecated duplicates the official Python server still emits.
	CheckpointID       *string `json:"checkpoint_id,omitempty"`
	ParentCheckpointID *string `json:"parent_checkpoint_id,omitempty"`
}

// Task is a task scheduled for the next superstep of a checkpoint.
type Task struct {
	ID         string         `json:"id"`
	Name       string         `json:"name"`
	Path       []any          `json:"path"`
	Error      *string        `json:"error"`
	Interrupts []any          `json:"interrupts"`
	Checkpoint *CheckpointRef `json:"checkpoint"`
	State      any            `json:"state"`
	Result     map[string]any `json:"result"`
}

// emptyState is the state of a thread without checkpoints (reference §5.1).
func emptyState() *ThreadState {
	return &ThreadState{Values: map[string]any{}, Next: []string{}, Tasks: []Task{}, Interrupts: []any{}}
}

// Channel names LangGraph uses for its own bookkeeping.
const (
	branchPrefix = "branch:to:"
	tasksChannel = "__pregel_tasks"
	pullPath     = "__pregel_pull"
	pushPath     = "__pregel_push"
)

// isStateChannel tells user state channels from LangGraph's internal ones
// (__start__, __pregel_tasks, branch:to:x, legacy start:x / x:inbox ...).
func isStateChannel(name string) bool {
	return !strings.HasPrefix(name, "__") && !strings.Contains(name, ":")
}

// stateValues returns the user-visible values of a checkpoint: the graph's
// channels (with their defaults) when the graph is known, else every
// non-internal channel.
func stateValues(raw map[string]any, g *graph.Graph) map[string]any {
	out := map[string]any{}
	if g != nil {
		for _, c := range g.Channels {
			if v, ok := raw[c.Name]; ok {
				out[c.Name] = v
			}
		}
		return g.Values(out)
	}
	for k, v := range raw {
		if isStateChannel(k) {
			out[k] = v
		}
	}
	return out
}

// triggerOf returns the node a trigger channel schedules ("" if none):
// "branch:to:<node>" triggers <node>, "__start__" triggers the start node.
func triggerOf(channel string) string {
	switch {
	case channel == graph.START:
		return graph.START
	case strings.HasPrefix(channel, branchPrefix):
		return channel[len(branchPrefix):]
	}
	return ""
}

// triggerChannel is the inverse of triggerOf.
func triggerChannel(node string) string {
	if node == graph.START {
		return graph.START
	}
	return branchPrefix + node
}

// pending lists the tasks a checkpoint schedules next, the way LangGraph's
// Pregel loop decides: a node runs when its trigger channel holds a value
// whose version is newer than the one the node last saw; every Send in
// __pregel_tasks is a task of its own. Pull tasks come in graph node order
// (name order for graphs this server does not know), then push tasks.
func pending(cp *checkpoints.Checkpoint, g *graph.Graph) []Task {
	var pull []string
	for ch := range cp.ChannelValues {
		node := triggerOf(ch)
		if node == "" {
			continue
		}
		seen := cp.VersionsSeen[node][ch]
		if checkpoints.CompareVersions(cp.ChannelVersions[ch], seen) > 0 {
			pull = append(pull, node)
		}
	}
	order := func(n string) int {
		if n == graph.START {
			return -1
		}
		if g != nil {
			for i, node := range g.Nodes {
				if node.Name == n {
					return i
				}
			}
		}
		return 1 << 30
	}
	sort.Slice(pull, func(i, j int) bool {
		oi, oj := order(pull[i]), order(pull[j])
		if oi != oj {
			return oi < oj
		}
		return pull[i] < pull[j]
	})
	tasks := []Task{}
	for _, n := range pull {
		tasks = append(tasks, Task{Name: n, Path: []any{pullPath, n}})
	}
	v, _ := checkpoints.Materialize(cp.ChannelValues[tasksChannel])
	if sends, ok := v.([]any); ok {
		for i, s := range sends {
			if m, ok := s.(map[string]any); ok {
				if n, ok := m["node"].(string); ok {
					tasks = append(tasks, Task{Name: n, Path: []any{pushPath, i}})
				}
			}
		}
	}
	return tasks
}

// assemble turns a stored checkpoint into the API's ThreadState.
func assemble(t *checkpoints.Tuple, g *graph.Graph) *ThreadState {
	s := &ThreadState{
		Values:     stateValues(t.Checkpoint.ChannelValues, g),
		Checkpoint: refOf(t.Config),
		Metadata:   t.Metadata,
		Interrupts: []any{},
	}
	if s.Metadata == nil {
		s.Metadata = map[string]any{}
	}
	id := t.Config.CheckpointID
	s.CheckpointID = &id
	if t.Checkpoint.TS != "" {
		ts := t.Checkpoint.TS
		s.CreatedAt = &ts
	}
	if t.Parent != nil {
		s.ParentCheckpoint = refOf(*t.Parent)
		pid := t.Parent.CheckpointID
		s.ParentCheckpointID = &pid
	}
	step, _ := t.Metadata.Step()
	s.Tasks = pending(&t.Checkpoint, g)
	for i := range s.Tasks {
		task := &s.Tasks[i]
		task.ID = TaskID(t.Config, step, task.Name, task.Path)
		task.Interrupts = []any{}
	}
	attachWrites(s, t.PendingWrites)
	s.Next = make([]string, len(s.Tasks))
	for i, task := range s.Tasks {
		s.Next[i] = task.Name
	}
	return s
}

// attachWrites puts each task's pending writes (interrupts, errors, normal
// writes as its result) on the task, matched by task id. Writes of a task
// id this server cannot derive (rows from other savers) go to the only
// pending task when there is exactly one; their interrupts are listed at
// state level in any case.
func attachWrites(s *ThreadState, writes []checkpoints.Write) {
	byID := map[string]*Task{}
	for i := range s.Tasks {
		byID[s.Tasks[i].ID] = &s.Tasks[i]
	}
	for _, w := range writes {
		task := byID[w.TaskID]
		if task == nil && len(s.Tasks) == 1 && w.TaskID != nullTaskID {
			task = &s.Tasks[0]
		}
		switch w.Channel {
		case checkpoints.ChannelInterrupt:
			list, ok := w.Value.([]any)
			if !ok {
				list = []any{w.Value}
			}
			s.Interrupts = append(s.Interrupts, list...)
			if task != nil {
				task.Interrupts = append(task.Interrupts, list...)
			}
		case checkpoints.ChannelError:
			if task != nil {
				msg := errorText(w.Value)
				task.Error = &msg
			}
		case checkpoints.ChannelResume, checkpoints.ChannelScheduled:
		default:
			if task != nil && isStateChannel(w.Channel) {
				if task.Result == nil {
					task.Result = map[string]any{}
				}
				task.Result[w.Channel] = w.Value
			}
		}
	}
}

const nullTaskID = "00000000-0000-0000-0000-000000000000"

// errorText renders an __error__ write: strings as they are, objects as
// JSON (the JS useStream hook parses the task error as JSON and shows its
// "message").
func errorText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// interruptsByTask is the thread projection of a state's interrupts:
// task id → its interrupts, for tasks that have any.
func interruptsByTask(s *ThreadState) map[string][]any {
	out := map[string][]any{}
	for _, t := range s.Tasks {
		if len(t.Interrupts) > 0 {
			out[t.ID] = slices.Clone(t.Interrupts)
		}
	}
	return out
}
