package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/weftdev/weft/internal/jsonv"
)

// NodeFunc is the body of a node. It receives the run's context and the
// current state and returns a partial update: a State whose keys are channel
// names, reduced into the state by the executor with Graph.Apply (nil or an
// empty State writes nothing).
//
// Contract:
//   - It must honour ctx: when ctx is cancelled it stops promptly and returns
//     ctx.Err() (or an error wrapping it); the executor discards its update.
//   - It may call in.Interrupt to ask for human input; when that returns an
//     error the node must return it (or an error wrapping it) unchanged and
//     without side effects it cannot repeat, because the node is re-run from
//     the start on resume (see NodeInput.Interrupt).
//   - It must not mutate in.Values (NewNodeInput gives it a private copy, so
//     doing so is merely useless) and must be safe to run concurrently with
//     other nodes and other runs.
//   - Any other error fails the run.
type NodeFunc func(ctx context.Context, in NodeInput) (State, error)

// ErrInterrupted is wrapped by every *Interrupt, so an executor can test a
// node's error with errors.Is(err, ErrInterrupted) and then retrieve the
// payload with errors.As.
var ErrInterrupted = errors.New("graph: interrupted")

// Interrupt is the error NodeInput.Interrupt returns when no resume value is
// available yet. It carries the payload the client sees in the thread's
// "interrupts" / "__interrupt__" ({"value": Value, "id": …}; the id is minted
// by the executor).
type Interrupt struct {
	// Value is the JSON-compatible payload passed to NodeInput.Interrupt.
	Value any
	// Index is the position of this Interrupt call within the node's
	// execution (0 for the first call); the next resume value the executor
	// supplies for this node answers it.
	Index int
}

// Error implements error.
func (i *Interrupt) Error() string {
	return fmt.Sprintf("graph: interrupted (interrupt %d of this node)", i.Index)
}

// Unwrap returns ErrInterrupted.
func (i *Interrupt) Unwrap() error { return ErrInterrupted }

// CommandFunc is the body of a node that decides where the graph goes
// next, like a LangGraph node returning Command(update=..., goto=...). It
// follows NodeFunc's contract; its Command's Update is reduced like a
// NodeFunc's update and its Goto adds nodes to run next.
type CommandFunc func(ctx context.Context, in NodeInput) (Command, error)

// Command is what a CommandFunc node returns: a partial update, and where
// to go after it.
type Command struct {
	// Update is reduced into the state exactly like a NodeFunc's return
	// value (nil writes nothing).
	Update State
	// Goto names nodes to run in the next superstep, in addition to the
	// nodes the node's edges lead to (static edges still fire, as in
	// LangGraph). Each must be listed in the node's Ends; END is allowed
	// when listed and schedules nothing; duplicates are ignored. A name not
	// in Ends fails the node with an ErrInvalidGraph error.
	Goto []string
}

// RunInfo identifies the run and the task a node executes in. Outside a
// server run the ids are empty (Invoke fills GraphID, Node and Step only).
type RunInfo struct {
	RunID, ThreadID, AssistantID, GraphID string
	// Node is the name of the node being executed.
	Node string
	// Step is the superstep (the checkpoint metadata's "step" of the
	// checkpoint the step writes).
	Step int
}

// NodeInput is what a node receives. Build it with NewNodeInput; the zero
// value has no state and interrupts on every Interrupt call.
type NodeInput struct {
	// Values is the current state, with channel defaults filled in when the
	// executor built it from Graph.Values. It is the node's private copy.
	Values State
	// Config is the run's config as the API carries it (a JSON object):
	// "configurable", "tags", "metadata", "recursion_limit", ... The server
	// gives a node the assistant's config with the run's config merged over
	// it (run keys win; "configurable" is merged one level deep). Nil when
	// the run has none. Read it through Configurable for the usual case.
	// Nodes must not modify it.
	Config map[string]any
	// Context is the run's context (LangGraph's runtime context, the run's
	// "context" over the assistant's), nil when there is none. Nodes must
	// not modify it.
	Context map[string]any
	// Run identifies the run and task (see RunInfo).
	Run RunInfo

	resume []any
	calls  *int // Interrupt calls so far; shared by copies of this input
	stream func(kind string, data any)
	thread ThreadReader // the thread's stored records (Window); nil without a store
}

// Stream kinds a node can send while it runs.
const (
	StreamCustom       = "custom"        // any JSON, for the "custom" stream mode
	StreamMessageChunk = "message_chunk" // a chunk of an AI message, for "messages-tuple"
)

// WithStream returns in with fn receiving what the node streams (the
// executor's hook); without one, streaming does nothing.
func WithStream(in NodeInput, fn func(kind string, data any)) NodeInput {
	in.stream = fn
	return in
}

// Custom sends data to the run's "custom" stream mode while the node runs,
// like LangGraph's stream writer. data must be JSON-compatible.
func (in NodeInput) Custom(data any) {
	if in.stream != nil {
		in.stream(StreamCustom, data)
	}
}

// MessageChunk streams a piece of an AI message as it is produced (the
// "messages-tuple" stream mode): chunk is a message dict whose content is
// the new text; every chunk of one message carries its id, and the node's
// update should end with the whole message under the same id.
func (in NodeInput) MessageChunk(chunk map[string]any) {
	if in.stream != nil {
		in.stream(StreamMessageChunk, chunk)
	}
}

// NewNodeInput returns the input for one execution of a node: a deep copy of
// values (pass Graph.Values(raw) so defaults are filled) and the resume values
// supplied so far for this node's pending interrupts, in order: resume[i]
// answers the node's (i+1)-th Interrupt call. Pass nil on a first run.
func NewNodeInput(values State, resume []any) NodeInput {
	v, _ := jsonv.Clone(values).(State)
	if v == nil {
		v = State{}
	}
	return NodeInput{Values: v, resume: slices.Clone(resume), calls: new(int)}
}

// Configurable returns Config["configurable"] when it is an object, else
// an empty map: the per-assistant and per-run settings a node reads (model
// name, system prompt, user id, ...). The map is the input's own; do not
// modify it.
func (in NodeInput) Configurable() map[string]any {
	if c, ok := in.Config["configurable"].(map[string]any); ok {
		return c
	}
	return map[string]any{}
}

// Call runs the node's body with in and returns its result as a Command: a
// Func's update becomes the Command's Update, a CommandFunc's Command is
// returned as it is. Executors call nodes through it.
func (n Node) Call(ctx context.Context, in NodeInput) (Command, error) {
	if n.Command != nil {
		return n.Command(ctx, in)
	}
	if n.Func == nil {
		return Command{}, fmt.Errorf("%w: node %q has no body", ErrInvalidGraph, n.Name)
	}
	upd, err := n.Func(ctx, in)
	return Command{Update: upd}, err
}

// Interrupt pauses the run for human input, like LangGraph's interrupt().
//
// Protocol: the i-th call (counting from 0) within one execution of the node
// returns (resume[i], nil) when the executor supplied that resume value;
// otherwise it returns (nil, *Interrupt{Value: value, Index: i}), which wraps
// ErrInterrupted and which the node must return as its error. The executor
// then discards the node's update, records the interrupt in the checkpoint
// (the node stays in "next"), and ends the run as interrupted. When a client
// resumes (command.resume = R) the executor appends R to this node's resume
// values and runs the node again from the start with them: earlier Interrupt
// calls now return their answers in order and the first unanswered one returns
// R. Calls must therefore happen in the same order on every execution, and
// work before an Interrupt call is repeated on resume. Copies of a NodeInput
// share one call counter; Interrupt is not safe for concurrent use.
func (in NodeInput) Interrupt(value any) (resume any, err error) {
	i := 0
	if in.calls != nil {
		i = *in.calls
		*in.calls++
	}
	if i < len(in.resume) {
		return in.resume[i], nil
	}
	return nil, &Interrupt{Value: value, Index: i}
}
