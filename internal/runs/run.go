package runs

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/wire"
)

// Status is a run's status (reference API §6.1): wire.RunStatus, as the
// worker protocol carries it.
type Status = wire.RunStatus

// Run statuses.
const (
	StatusPending     = wire.RunPending
	StatusRunning     = wire.RunRunning
	StatusSuccess     = wire.RunSuccess
	StatusError       = wire.RunError
	StatusTimeout     = wire.RunTimeout
	StatusInterrupted = wire.RunInterrupted
)

// statuses are the statuses a run can have.
var statuses = []string{string(StatusPending), string(StatusRunning), string(StatusSuccess), string(StatusError),
	string(StatusTimeout), string(StatusInterrupted)}

// Multitask strategies (reference API §6.3).
const (
	StrategyReject    = "reject"
	StrategyEnqueue   = "enqueue"
	StrategyInterrupt = "interrupt"
	StrategyRollback  = "rollback"
)

// Cancel actions.
const (
	ActionInterrupt = "interrupt"
	ActionRollback  = "rollback"
)

// Run is the Run object of the API (reference §6.1): wire.Run, as the
// worker protocol carries it whole (a claimed run).
type Run = wire.Run

// Columns are the columns of a Run, in the order RowToStructByName reads
// them.
var Columns = ColumnsOf("")

// ColumnsOf is Columns qualified by a table alias ("" for none). The
// metadata and kwargs columns are the whole documents: a row leaves out
// what every run stores alike (runMetadata, storedKwargs) and, once its
// input checkpoint is committed, the input it holds (InputRefSet), and the
// functions of migrations 022 and 024 put them back.
func ColumnsOf(alias string) string {
	q := ""
	if alias != "" {
		q = alias + "."
	}
	return strings.ReplaceAll(`$run_id, $thread_id, $assistant_id, $created_at, $updated_at, $status,
	weft_run_metadata($metadata, $assistant_id) AS metadata, weft_run_kwargs($kwargs, $thread_id) AS kwargs, $multitask_strategy,
	$attempt, $webhook_state, $webhook_attempts, $webhook_last_status, $webhook_last_error, $graph_id, $error, $result,
	$result_ref, $temporary, $traceparent, $tenant_id`, "$", q)
}

// kwargsDefaults are the kwargs fields a run's row leaves out when they
// hold these values, as weft_run_kwargs fills them in.
var kwargsDefaults = map[string]string{"command": "null", "webhook": "null", "resumable": "false", "subgraphs": "false",
	"temporary": "false", "feedback_keys": "null", "on_disconnect": `"continue"`, "interrupt_after": "null",
	"interrupt_before": "null"}

// storedKwargs is the kwargs document k as a run's row stores it: without
// the fields that hold their default (kwargsDefaults).
func storedKwargs(k Kwargs) []byte {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(jsonv.Must(k), &doc); err != nil {
		panic(err) // a Kwargs always marshals to an object
	}
	for key, d := range kwargsDefaults {
		if string(doc[key]) == d {
			delete(doc, key)
		}
	}
	return jsonv.Must(doc)
}

// Command is a run's command (reference §6.2): resume an interrupt, update
// the state, jump to nodes.
type Command struct {
	Resume json.RawMessage `json:"resume,omitempty" swaggertype:"object"`
	Update json.RawMessage `json:"update,omitempty" swaggertype:"object"`
	Goto   json.RawMessage `json:"goto,omitempty" swaggertype:"object"`
}

// Kwargs is what a run executes with, stored on the run (its "kwargs").
type Kwargs struct {
	Input           json.RawMessage `json:"input"`
	Command         *Command        `json:"command"`
	Config          map[string]any  `json:"config"`
	Context         map[string]any  `json:"context"`
	CheckpointID    string          `json:"checkpoint_id,omitempty"`
	StreamMode      []string        `json:"stream_mode"`
	InterruptBefore []string        `json:"interrupt_before"`
	InterruptAfter  []string        `json:"interrupt_after"`
	Subgraphs       bool            `json:"subgraphs"`
	Resumable       bool            `json:"resumable"`
	OnDisconnect    string          `json:"on_disconnect"`
	Webhook         *string         `json:"webhook"`
	FeedbackKeys    []string        `json:"feedback_keys"`
	Temporary       bool            `json:"temporary"`
	Durability      string          `json:"durability,omitempty"`
}

// StreamModes are the stream modes a run may ask for: those of LangGraph's
// API, and LangGraph.js's "tools" (its tool calls' progress).
var StreamModes = []string{"values", "messages", "messages-tuple", "tasks", "checkpoints", "updates", "events", "debug", "custom", "tools"}

// StreamModeList is a request's stream_mode: a mode or a list of modes,
// each one of StreamModes.
type StreamModeList StringList

// UnmarshalJSON reads a StringList and checks its modes.
func (l *StreamModeList) UnmarshalJSON(b []byte) error {
	if err := (*StringList)(l).UnmarshalJSON(b); err != nil {
		return err
	}
	for _, m := range *l {
		if !slices.Contains(StreamModes, m) {
			return apperr.Errorf(apperr.Invalid, "Invalid request body: field \"stream_mode\": %q is no stream mode (one of %s)", m, strings.Join(StreamModes, ", "))
		}
	}
	return nil
}

// NodeList is a request's interrupt_before / interrupt_after: "*" (every
// node) or a list of node names.
type NodeList StringList

// UnmarshalJSON reads a StringList whose one string, if given alone, is "*".
func (l *NodeList) UnmarshalJSON(b []byte) error {
	var s *string
	if json.Unmarshal(b, &s) == nil && s != nil && *s != "*" {
		return &json.UnmarshalTypeError{Value: `a string other than "*"`, Type: reflect.TypeFor[[]string]()}
	}
	return (*StringList)(l).UnmarshalJSON(b)
}

// StringList is a field that takes a string or a list of strings ("*" or
// ["a","b"]).
type StringList []string

// UnmarshalJSON accepts a string, a list of strings (none null) or null.
func (l *StringList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		*l = nil
		return nil
	}
	var s string
	if json.Unmarshal(b, &s) == nil {
		*l = StringList{s}
		return nil
	}
	var items []*string
	if err := json.Unmarshal(b, &items); err != nil || slices.Contains(items, nil) {
		return &json.UnmarshalTypeError{Value: "non-string", Type: reflect.TypeFor[[]string]()}
	}
	*l = make(StringList, len(items))
	for i, it := range items {
		(*l)[i] = *it
	}
	return nil
}
