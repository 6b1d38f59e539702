package runs

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/jsonv"
)

// Status is a run's status (reference API §6.1).
type Status string

// Run statuses.
const (
	StatusPending     Status = "pending"
	StatusRunning     Status = "running"
	StatusSuccess     Status = "success"
	StatusError       Status = "error"
	StatusTimeout     Status = "timeout"
	StatusInterrupted Status = "interrupted"
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

// Run is the Run object of the API (reference §6.1).
type Run struct {
	RunID             uuid.UUID       `db:"run_id" json:"run_id" validate:"required" format:"uuid"`
	ThreadID          uuid.UUID       `db:"thread_id" json:"thread_id" validate:"required" format:"uuid"`
	AssistantID       uuid.UUID       `db:"assistant_id" json:"assistant_id" validate:"required" format:"uuid"`
	CreatedAt         httpx.Time      `db:"created_at" json:"created_at" validate:"required" swaggertype:"string" format:"date-time"`
	UpdatedAt         httpx.Time      `db:"updated_at" json:"updated_at" validate:"required" swaggertype:"string" format:"date-time"`
	Status            Status          `db:"status" json:"status" validate:"required" enums:"pending,running,success,error,timeout,interrupted"`
	Metadata          json.RawMessage `db:"metadata" json:"metadata" validate:"required" swaggertype:"object"`
	Kwargs            json.RawMessage `db:"kwargs" json:"kwargs" validate:"required" swaggertype:"object"`
	MultitaskStrategy string          `db:"multitask_strategy" json:"multitask_strategy" validate:"required" enums:"reject,enqueue,interrupt,rollback"`
	// Attempt counts the claims of the run's dispatch (1 on the first).
	Attempt int `db:"attempt" json:"attempt" validate:"required"`
	// WebhookState is the delivery of the run's webhook: null (no webhook,
	// or the run has not ended), pending, delivered or failed.
	WebhookState *string `db:"webhook_state" json:"webhook_state" validate:"required" enums:"pending,delivered,failed" extensions:"x-nullable"`
	// WebhookAttempts counts the POSTs of the webhook so far.
	WebhookAttempts int `db:"webhook_attempts" json:"webhook_attempts" validate:"required"`
	// WebhookLastStatus is the HTTP status of the last attempt (null when
	// none came back).
	WebhookLastStatus *int `db:"webhook_last_status" json:"webhook_last_status" validate:"required" extensions:"x-nullable"`
	// WebhookLastError says why the last attempt failed (null after a 2xx).
	WebhookLastError *string `db:"webhook_last_error" json:"webhook_last_error" validate:"required" extensions:"x-nullable"`

	GraphID string          `db:"graph_id" json:"-"`
	Error   json.RawMessage `db:"error" json:"-"`
	Result  json.RawMessage `db:"result" json:"-"`
	// ResultRef, when set, names the checkpoint values that fill Result
	// (eventlog.RenderResult; Service.Result renders it).
	ResultRef []byte `db:"result_ref" json:"-"`
	Temporary bool   `db:"temporary" json:"-"`
	// Traceparent is the W3C traceparent of the span that created the run
	// (nil when tracing was off): the parent of its workers' run spans.
	Traceparent *string `db:"traceparent" json:"-"`
	// TenantID owns the run (its thread's tenant); workers act for it.
	TenantID string `db:"tenant_id" json:"-"`
}

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

// Finished reports whether the run has ended.
func (r *Run) Finished() bool { return r.Status != StatusPending && r.Status != StatusRunning }

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
