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

// NodeInput is what a node receives. Build it with NewNodeInput; the zero
// value has no state and interrupts on every Interrupt call.
type NodeInput struct {
	// Values is the current state, with channel defaults filled in when the
	// executor built it from Graph.Values. It is the node's private copy.
	Values State

	resume []any
	calls  *int // Interrupt calls so far; shared by copies of this input
	stream func(kind string, data any)
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
