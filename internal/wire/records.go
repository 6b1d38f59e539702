package wire

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// The records the protocol carries whole, which the rest of the API
// answers too. Their owners alias them (runs.Run = Run, dispatch.Dispatch
// = Dispatch, checkpoints.Checkpoint = Checkpoint, …), so each is one Go
// type and one schema; the `@name` after each declaration keeps the
// schema's public name, its owner's (see the package documentation).

// Time is a timestamp in the official server's wire form: ISO 8601 with
// microseconds and a numeric offset ("2024-07-25T15:35:44.184703+00:00").
type Time struct{ time.Time }

// TimeLayout is the wire layout of Time.
const TimeLayout = "2006-01-02T15:04:05.000000-07:00"

// MarshalJSON writes the wire form, or null for the zero time.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + t.UTC().Format(TimeLayout) + `"`), nil
}

// UnmarshalJSON accepts RFC 3339 with or without fractional seconds.
func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		t.Time = time.Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return err
	}
	t.Time = v
	return nil
}

// Scan implements sql.Scanner so a timestamptz column scans straight into a
// Time (NULL gives the zero time, written as null).
func (t *Time) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		t.Time = time.Time{}
	case time.Time:
		t.Time = v
	default:
		return fmt.Errorf("httpx.Time: cannot scan %T", src)
	}
	return nil
}

// RunStatus is a run's status (reference API §6.1).
type RunStatus string // @name runs.Status

// Run statuses (runs.StatusPending, …).
const (
	RunPending     RunStatus = "pending"
	RunRunning     RunStatus = "running"
	RunSuccess     RunStatus = "success"
	RunError       RunStatus = "error"
	RunTimeout     RunStatus = "timeout"
	RunInterrupted RunStatus = "interrupted"
)

// Run is the Run object of the API (reference §6.1).
type Run struct {
	RunID             uuid.UUID       `db:"run_id" json:"run_id" validate:"required" format:"uuid"`
	ThreadID          uuid.UUID       `db:"thread_id" json:"thread_id" validate:"required" format:"uuid"`
	AssistantID       uuid.UUID       `db:"assistant_id" json:"assistant_id" validate:"required" format:"uuid"`
	CreatedAt         Time            `db:"created_at" json:"created_at" validate:"required" swaggertype:"string" format:"date-time"`
	UpdatedAt         Time            `db:"updated_at" json:"updated_at" validate:"required" swaggertype:"string" format:"date-time"`
	Status            RunStatus       `db:"status" json:"status" validate:"required" enums:"pending,running,success,error,timeout,interrupted"`
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
} // @name runs.Run

// Finished reports whether the run has ended.
func (r *Run) Finished() bool { return r.Status != RunPending && r.Status != RunRunning }

// DispatchState is a dispatch's state.
type DispatchState string // @name dispatch.State

// Dispatch states (dispatch.Queued, …); see package dispatch's
// documentation.
const (
	DispatchQueued     DispatchState = "queued"
	DispatchClaimed    DispatchState = "claimed"
	DispatchAcked      DispatchState = "acked"
	DispatchCancelled  DispatchState = "cancelled"
	DispatchSuperseded DispatchState = "superseded"
	DispatchDeadLetter DispatchState = "dead_letter"
)

// Dispatch is one row of run_dispatches.
type Dispatch struct {
	DispatchID     uuid.UUID     `db:"dispatch_id" json:"dispatch_id" validate:"required" format:"uuid"`
	RunID          uuid.UUID     `db:"run_id" json:"run_id" validate:"required" format:"uuid"`
	ThreadID       uuid.UUID     `db:"thread_id" json:"thread_id" validate:"required" format:"uuid"`
	GraphID        string        `db:"graph_id" json:"graph_id" validate:"required"`
	State          DispatchState `db:"state" json:"state" validate:"required" enums:"queued,claimed,acked,cancelled,superseded,dead_letter"`
	Priority       int           `db:"priority" json:"priority" validate:"required"`
	AvailableAt    Time          `db:"available_at" json:"available_at" validate:"required" swaggertype:"string" format:"date-time"`
	Attempt        int           `db:"attempt" json:"attempt" validate:"required"`
	MaxAttempts    int           `db:"max_attempts" json:"max_attempts" validate:"required"`
	Epoch          int64         `db:"epoch" json:"epoch" validate:"required"`
	ClaimToken     *uuid.UUID    `db:"claim_token" json:"-"`
	ClaimedBy      *string       `db:"claimed_by" json:"claimed_by" validate:"required" extensions:"x-nullable"`
	ClaimedAt      Time          `db:"claimed_at" json:"claimed_at" validate:"required" swaggertype:"string" format:"date-time" extensions:"x-nullable"`
	LeaseExpiresAt Time          `db:"lease_expires_at" json:"lease_expires_at" validate:"required" swaggertype:"string" format:"date-time" extensions:"x-nullable"`
	CancelAction   *string       `db:"cancel_action" json:"cancel_action" validate:"required" extensions:"x-nullable" enums:"interrupt,rollback"`
	LastError      *string       `db:"last_error" json:"last_error" validate:"required" extensions:"x-nullable"`
	CreatedAt      Time          `db:"created_at" json:"created_at" validate:"required" swaggertype:"string" format:"date-time"`
	UpdatedAt      Time          `db:"updated_at" json:"updated_at" validate:"required" swaggertype:"string" format:"date-time"`
	FinishedAt     Time          `db:"finished_at" json:"finished_at" validate:"required" swaggertype:"string" format:"date-time" extensions:"x-nullable"`
} // @name dispatch.Dispatch

// SubgraphSchemas are the JSON Schemas of one subgraph, the value of each
// namespace in GET /assistants/{id}/subgraphs.
type SubgraphSchemas struct {
	InputSchema   any `json:"input_schema"`
	OutputSchema  any `json:"output_schema"`
	StateSchema   any `json:"state_schema"`
	ConfigSchema  any `json:"config_schema"`
	ContextSchema any `json:"context_schema"`
	// Raw is the entry exactly as a worker registered it (a JSON object),
	// served as is: each LangGraph server has its own shape (Python's
	// input_schema, …, LangGraph.js's state, input, output, config).
	Raw json.RawMessage `json:"-"`
} // @name assistants.SubgraphSchemas

// UnmarshalJSON keeps a registered entry as it came (it must be a JSON
// object or null) and reads the fields of Python's shape from it.
func (s *SubgraphSchemas) UnmarshalJSON(b []byte) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return fmt.Errorf("subgraph schemas: want a JSON object: %w", err)
	}
	type plain SubgraphSchemas
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*s = SubgraphSchemas(p)
	if obj != nil {
		s.Raw = append(json.RawMessage(nil), b...)
	}
	return nil
}

// MarshalJSON writes the entry as registered when it came from JSON.
func (s SubgraphSchemas) MarshalJSON() ([]byte, error) {
	if len(s.Raw) > 0 {
		return s.Raw, nil
	}
	type plain SubgraphSchemas
	return json.Marshal(plain(s))
}

// Checkpoint is LangGraph's checkpoint object, format v4.
//
// The checkpoints.checkpoint jsonb column holds it without ChannelValues (the
// JS saver's form); the values live in checkpoint_blobs, one row per channel
// version, shared by every checkpoint that still has that version. On read,
// ChannelValues is rebuilt from those blobs plus any values the Python saver
// stored inline in checkpoint->'channel_values' (it inlines primitives).
type Checkpoint struct {
	V  int    `json:"v"`
	ID string `json:"id" validate:"required" minLength:"1"`
	TS string `json:"ts"`
	// ChannelValues holds the full value of every channel that has one. On
	// read, a value may be json.RawMessage (valid JSON not decoded yet);
	// Materialize decodes it.
	ChannelValues map[string]any `json:"channel_values,omitempty"`
	// ChannelVersions maps each channel to the version of its current value.
	// Versions are text: the JS saver's integers read back as "3", Python's
	// and Weft's strings are kept (see NextVersion).
	ChannelVersions map[string]string `json:"channel_versions"`
	// VersionsSeen maps a node (or "__input__", "__interrupt__") to the
	// channel versions it last saw, normalised like ChannelVersions.
	VersionsSeen map[string]map[string]string `json:"versions_seen"`
	// UpdatedChannels lists the channels the step that made this checkpoint
	// wrote (Python LangGraph ≥ 0.3 records it; the JS saver does not).
	UpdatedChannels []string `json:"updated_channels,omitempty"`
} // @name checkpoints.Checkpoint

// Metadata is a checkpoint's metadata: "source" (input, loop, update, fork),
// "step", "parents" (namespace → checkpoint id for subgraphs) and whatever
// the writer adds. Numbers read back as json.Number.
type Metadata map[string]any

// Step returns metadata["step"] as an int, and whether it was present and
// integral.
func (m Metadata) Step() (int, bool) {
	switch v := m["step"].(type) {
	case json.Number:
		i, err := v.Int64()
		return int(i), err == nil
	case int:
		return v, true
	case int64:
		return int(v), true
	case float64:
		return int(v), v == float64(int(v))
	}
	return 0, false
}

// Write is one pending write of a task: a value for a channel, recorded
// under the checkpoint the task started from. Idx is the write's position in
// its task's list; the special channels use fixed negative indexes instead
// (see WriteIdx). TaskPath is Python's task path ("" from the JS saver).
type Write struct {
	TaskID   string `json:"task_id"`
	Channel  string `json:"channel"`
	Value    any    `json:"value"`
	Idx      int    `json:"idx"`
	TaskPath string `json:"task_path,omitempty"`
} // @name checkpoints.Write
