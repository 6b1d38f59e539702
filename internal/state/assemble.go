package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/pregel"
)

// CheckpointRef is the Checkpoint object of the API (reference §5.1).
type CheckpointRef struct {
	ThreadID     string `json:"thread_id" validate:"required"`
	NS           string `json:"checkpoint_ns" validate:"required"`
	CheckpointID string `json:"checkpoint_id" validate:"required"`
	// CheckpointMap is null for a LangGraph.js graph's checkpoint, as
	// LangGraph.js's server sends it, and absent for a Python graph's, as
	// the Python server sends none.
	CheckpointMap json.RawMessage `json:"checkpoint_map,omitempty" swaggertype:"object" extensions:"x-nullable"`
}

// languageOf is the language whose official server a read of a thread of
// g answers as (graph.Graph.Language; "" for Weft's own graphs and an
// unknown one: Weft's superset of both servers' fields).
func languageOf(g *graph.Graph) string {
	if g == nil {
		return ""
	}
	return g.Language
}

// refOf is the reference to checkpoint c of a thread of graph g (nil: not
// known) as the official server of g's language shows it.
func refOf(c checkpoints.Config, g *graph.Graph) *CheckpointRef {
	r := &CheckpointRef{ThreadID: c.ThreadID, NS: c.NS, CheckpointID: c.CheckpointID}
	if languageOf(g) != graph.LanguagePython {
		r.CheckpointMap = jsonNull
	}
	return r
}

var jsonNull = json.RawMessage("null")

// checkpointMap is {namespace: checkpoint id} of a subgraph checkpoint c
// whose metadata md names its parents' checkpoints ("parents").
func checkpointMap(md map[string]any, c checkpoints.Config) json.RawMessage {
	m := map[string]any{}
	if parents, ok := md["parents"].(map[string]any); ok {
		maps.Copy(m, parents)
	}
	m[c.NS] = c.CheckpointID
	return jsonv.Must(m)
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
	// Interrupts are the pending interrupts (the tasks', for a Python
	// graph); absent for a LangGraph.js graph, as its server sends none.
	Interrupts json.RawMessage `json:"interrupts,omitempty" swaggertype:"array,object"`
	// Deprecated duplicates the official Python server still emits
	// (parent_checkpoint_id null on a Python graph's first checkpoint, as
	// it sends it); absent for a LangGraph.js graph, as its server sends
	// neither.
	CheckpointID       *string         `json:"checkpoint_id,omitempty"`
	ParentCheckpointID json.RawMessage `json:"parent_checkpoint_id,omitempty" swaggertype:"string" extensions:"x-nullable"`
	// MessagesWindow describes the window shown in place of a list
	// channel's value; only in a state read that asked for one
	// (messages_window), absent otherwise.
	MessagesWindow *StateWindow `json:"messages_window,omitempty"`

	// verbatim names the keys of Values whose value is JSON text the read
	// found in encoding/json's output form (checkpoints.Tuple.Verbatim):
	// AppendJSON copies them as they are.
	verbatim map[string]json.RawMessage
}

// AppendJSON appends the state's JSON, byte for byte what json.Marshal
// writes for it (httpx.Appender), copying the stored JSON of its values
// instead of re-scanning it: a long message list is one copy, where
// encoding/json would validate and compact every byte of it again.
func (s *ThreadState) AppendJSON(dst []byte) ([]byte, error) {
	rest := *s
	rest.Values = nil
	b, err := json.Marshal(&rest)
	if err != nil {
		return dst, err
	}
	// values is the first field: the rest follows `{"values":null`.
	const head = `{"values":null`
	if !bytes.HasPrefix(b, []byte(head)) {
		return dst, fmt.Errorf("thread state: encoding starts %.20q, not %q", b, head)
	}
	need := len(b) + 2
	for k, raw := range s.verbatim {
		need += len(k) + len(raw) + 4
	}
	dst = slices.Grow(dst, need) // one allocation for a long list, not one per doubling
	dst = append(dst, head[:len(head)-len("null")]...)
	values, ok := s.Values.(map[string]any)
	if !ok || values == nil {
		if dst, err = jsonv.AppendMarshal(dst, s.Values); err != nil {
			return dst, err
		}
		return append(dst, b[len(head):]...), nil
	}
	keys := slices.Sorted(maps.Keys(values)) // encoding/json's order
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return dst, err
		}
		dst = append(append(dst, kb...), ':')
		if raw, ok := values[k].(json.RawMessage); ok && sameBytes(raw, s.verbatim[k]) {
			dst = append(dst, raw...)
		} else if dst, err = jsonv.AppendMarshal(dst, values[k]); err != nil {
			return dst, err
		}
	}
	dst = append(dst, '}')
	return append(dst, b[len(head):]...), nil
}

// Task is a task scheduled for the next superstep of a checkpoint.
type Task struct {
	ID         string          `json:"id" validate:"required"`
	Name       string          `json:"name" validate:"required"`
	Path       []any           `json:"path" validate:"required"`
	Error      *string         `json:"error" validate:"required" extensions:"x-nullable"`
	Interrupts []any           `json:"interrupts" validate:"required"`
	Checkpoint *TaskCheckpoint `json:"checkpoint" validate:"required" extensions:"x-nullable"`
	State      *SubgraphState  `json:"state" validate:"required" extensions:"x-nullable"`
	Result     map[string]any  `json:"result" validate:"required" extensions:"x-nullable"`
}

// TaskCheckpoint is where the state of a pending task that runs a subgraph
// lives, as LangGraph addresses it (the task state's configurable): the
// subgraph's namespace, with no checkpoint id, so that reading or updating
// the state at it means the subgraph's latest checkpoint.
type TaskCheckpoint struct {
	ThreadID string `json:"thread_id" validate:"required"`
	NS       string `json:"checkpoint_ns" validate:"required"`
}

// SubgraphState is the state of a subgraph nested in a pending task
// (task.state, with subgraphs=true), as LangGraph's servers nest it:
// ThreadState's fields without the top level's deprecated checkpoint_id /
// parent_checkpoint_id duplicates and its interrupts list (each task
// carries its own interrupts).
type SubgraphState struct {
	Values           any            `json:"values" swaggertype:"object" validate:"required"`
	Next             []string       `json:"next" validate:"required"`
	Tasks            []Task         `json:"tasks" validate:"required"`
	Metadata         map[string]any `json:"metadata" validate:"required" extensions:"x-nullable"`
	CreatedAt        *string        `json:"created_at" validate:"required" extensions:"x-nullable"`
	Checkpoint       *CheckpointRef `json:"checkpoint" validate:"required" extensions:"x-nullable"`
	ParentCheckpoint *CheckpointRef `json:"parent_checkpoint" validate:"required" extensions:"x-nullable"`
}

func nestedState(s *ThreadState) *SubgraphState {
	return &SubgraphState{Values: s.Values, Next: s.Next, Tasks: s.Tasks, Metadata: s.Metadata,
		CreatedAt: s.CreatedAt, Checkpoint: s.Checkpoint, ParentCheckpoint: s.ParentCheckpoint}
}

// emptyState is the state of a thread without checkpoints (reference §5.1).
func emptyState() *ThreadState {
	return &ThreadState{Values: map[string]any{}, Next: []string{}, Tasks: []Task{}, Interrupts: jsonEmptyList}
}

var jsonEmptyList = json.RawMessage("[]")

// assemble turns a stored checkpoint into the API's ThreadState.
func assemble(t *checkpoints.Tuple, g *graph.Graph) *ThreadState {
	values := pregel.StateValues(t.Checkpoint.ChannelValues, g)
	lang := languageOf(g)
	s := &ThreadState{
		Values:     values,
		Checkpoint: refOf(t.Config, g),
		Metadata:   t.Metadata,
	}
	for k, v := range values {
		if t.Verbatim(k, v) {
			if s.verbatim == nil {
				s.verbatim = map[string]json.RawMessage{}
			}
			s.verbatim[k] = v.(json.RawMessage)
		}
	}
	if s.Metadata == nil {
		s.Metadata = map[string]any{}
	}
	if t.Checkpoint.TS != "" {
		ts := t.Checkpoint.TS
		s.CreatedAt = &ts
	}
	if t.Parent != nil {
		s.ParentCheckpoint = refOf(*t.Parent, g)
	}
	switch lang {
	case graph.LanguageJS:
		// LangGraph.js's snapshot metadata names its thread.
		if _, ok := s.Metadata["thread_id"]; !ok {
			s.Metadata = maps.Clone(s.Metadata)
			s.Metadata["thread_id"] = t.Config.ThreadID
		}
	case graph.LanguagePython:
		s.ParentCheckpointID = jsonNull
		fallthrough
	default:
		id := t.Config.CheckpointID
		s.CheckpointID = &id
		if t.Parent != nil {
			s.ParentCheckpointID = jsonv.Must(t.Parent.CheckpointID)
		}
	}
	if lang != "" && t.Config.NS != "" {
		// LangGraph addresses a subgraph's checkpoint with the map of its
		// parents' checkpoints and its own (Python LangGraph its parent's
		// too; LangGraph.js leaves the parent's out).
		s.Checkpoint.CheckpointMap = checkpointMap(t.Metadata, t.Config)
		if t.Parent != nil && lang == graph.LanguagePython {
			s.ParentCheckpoint.CheckpointMap = checkpointMap(t.Metadata, *t.Parent)
		}
	}
	tasks := pregel.Tasks(t, g)
	s.Tasks = make([]Task, len(tasks))
	s.Next = make([]string, len(tasks))
	interrupts := []any{}
	for i, pt := range tasks {
		s.Tasks[i] = Task{ID: pt.ID, Name: pt.Name, Path: pt.Path, Error: pt.Error, Interrupts: pt.Interrupts, Result: pt.Result}
		s.Next[i] = pt.Name
		interrupts = append(interrupts, pt.Interrupts...) // Python LangGraph's: its tasks'
	}
	switch lang {
	case graph.LanguageJS:
	case graph.LanguagePython:
		s.Interrupts = jsonv.Must(interrupts)
	default: // every interrupt written, a task's or not
		s.Interrupts = jsonv.Must(pregel.AttachWrites(nil, t.PendingWrites))
	}
	return s
}

// sameBytes reports whether a and b are the same bytes in memory (not
// merely equal): a value replaced since it was found verbatim is not.
func sameBytes(a, b []byte) bool {
	return len(a) > 0 && len(a) == len(b) && &a[0] == &b[0]
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
