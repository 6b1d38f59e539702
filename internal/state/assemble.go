package state

import (
	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/pregel"
)

// CheckpointRef is the Checkpoint object of the API (reference §5.1).
type CheckpointRef struct {
	ThreadID      string         `json:"thread_id" validate:"required"`
	NS            string         `json:"checkpoint_ns" validate:"required"`
	CheckpointID  string         `json:"checkpoint_id" validate:"required"`
	CheckpointMap map[string]any `json:"checkpoint_map" validate:"required" extensions:"x-nullable"`
}

func refOf(c checkpoints.Config) *CheckpointRef {
	return &CheckpointRef{ThreadID: c.ThreadID, NS: c.NS, CheckpointID: c.CheckpointID}
}

// ThreadState is one checkpoint as the API shows it (reference §5.1).
type ThreadState struct {
	Values           any            `json:"values" swaggertype:"object" validate:"required"`
	Next             []string       `json:"next" validate:"required"`
	Checkpoint       *CheckpointRef `json:"checkpoint" validate:"required" extensions:"x-nullable"`
	Metadata         map[string]any `json:"metadata" validate:"required" extensions:"x-nullable"`
	CreatedAt        *string        `json:"created_at" validate:"required" extensions:"x-nullable"`
	ParentCheckpoint *CheckpointRef `json:"parent_checkpoint" validate:"required" extensions:"x-nullable"`
	Tasks            []Task         `json:"tasks" validate:"required"`
	Interrupts       []any          `json:"interrupts" validate:"required"`
	// Deprecated duplicates the official Python server still emits.
	CheckpointID       *string `json:"checkpoint_id,omitempty"`
	ParentCheckpointID *string `json:"parent_checkpoint_id,omitempty"`
	// MessagesWindow describes the window shown in place of a list
	// channel's value; only in a state read that asked for one
	// (messages_window), absent otherwise.
	MessagesWindow *StateWindow `json:"messages_window,omitempty"`
}

// Task is a task scheduled for the next superstep of a checkpoint.
type Task struct {
	ID         string         `json:"id" validate:"required"`
	Name       string         `json:"name" validate:"required"`
	Path       []any          `json:"path" validate:"required"`
	Error      *string        `json:"error" validate:"required" extensions:"x-nullable"`
	Interrupts []any          `json:"interrupts" validate:"required"`
	Checkpoint *CheckpointRef `json:"checkpoint" validate:"required" extensions:"x-nullable"`
	State      any            `json:"state" validate:"required" extensions:"x-nullable"`
	Result     map[string]any `json:"result" validate:"required" extensions:"x-nullable"`
}

// emptyState is the state of a thread without checkpoints (reference §5.1).
func emptyState() *ThreadState {
	return &ThreadState{Values: map[string]any{}, Next: []string{}, Tasks: []Task{}, Interrupts: []any{}}
}

// assemble turns a stored checkpoint into the API's ThreadState.
func assemble(t *checkpoints.Tuple, g *graph.Graph) *ThreadState {
	s := &ThreadState{
		Values:     pregel.StateValues(t.Checkpoint.ChannelValues, g),
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
	tasks := pregel.Tasks(t, g)
	s.Interrupts = pregel.AttachWrites(nil, t.PendingWrites)
	s.Tasks = make([]Task, len(tasks))
	s.Next = make([]string, len(tasks))
	for i, pt := range tasks {
		s.Tasks[i] = Task{ID: pt.ID, Name: pt.Name, Path: pt.Path, Error: pt.Error, Interrupts: pt.Interrupts, Result: pt.Result}
		s.Next[i] = pt.Name
	}
	return s
}

// interruptsByTask is the thread projection of a state's interrupts:
// task id → its interrupts, for tasks that have any.
func interruptsByTask(s *ThreadState) map[string][]any {
	out := map[string][]any{}
	for _, t := range s.Tasks {
		if len(t.Interrupts) > 0 {
			out[t.ID] = t.Interrupts
		}
	}
	return out
}
