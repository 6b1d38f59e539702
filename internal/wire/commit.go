package wire

import (
	"bytes"
	"encoding/json"

	"github.com/google/uuid"
)

// CheckpointPut is one checkpoint a commit writes: the saver's put.
type CheckpointPut struct {
	// Parent is the parent checkpoint id ("" for a thread's first).
	Parent string `json:"parent_checkpoint_id"`
	NS     string `json:"checkpoint_ns"`
	// Checkpoint holds at least the values of the channels in NewVersions.
	Checkpoint Checkpoint `json:"checkpoint" validate:"required"`
	Metadata   Metadata   `json:"metadata" swaggertype:"object"`
	// NewVersions names the channels this checkpoint changed (blob rows).
	NewVersions map[string]string `json:"new_versions"`
	// Complete says Checkpoint holds the value of every channel that has
	// one (not only the changed ones). An end whose commit carries the
	// run's last root checkpoint complete projects the thread from it
	// without reading it back, in one round trip.
	Complete bool `json:"complete,omitempty"`
}

// WriteBatch is pending writes under one checkpoint: the saver's put_writes.
type WriteBatch struct {
	NS           string  `json:"checkpoint_ns"`
	CheckpointID string  `json:"checkpoint_id" validate:"required" minLength:"1"`
	Writes       []Write `json:"writes"`
}

// Event is one entry of a run's event log.
type Event struct {
	Event string `json:"event" example:"values"`
	Data  any    `json:"data" swaggertype:"object"`
}

// UnmarshalJSON decodes an event an external worker commits. Data that
// cannot hold a LangChain envelope (its text has no "lc" key and no \u
// escape that could spell one) stays the JSON text it came as and is
// stored as it is, sparing a decode and re-encode of every event; other
// data is decoded (numbers as json.Number, as request bodies are) for the
// worker API to normalise (serde.NormalizeLC). JSON null is nil.
func (e *Event) UnmarshalJSON(b []byte) error {
	var raw struct {
		Event string          `json:"event"`
		Data  json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	e.Event, e.Data = raw.Event, nil
	switch {
	case len(raw.Data) == 0 || string(raw.Data) == "null":
	case bytes.Contains(raw.Data, lcMarker) || bytes.Contains(raw.Data, []byte(`\u`)):
		dec := json.NewDecoder(bytes.NewReader(raw.Data))
		dec.UseNumber()
		return dec.Decode(&e.Data)
	default:
		e.Data = raw.Data
	}
	return nil
}

// End ends the run.
type End struct {
	// Status is success, error or interrupted (a requested cancellation
	// turns success into interrupted, and rollback deletes the run).
	Status RunStatus `json:"status" validate:"required" enums:"success,error,interrupted"`
	// Error is {"error": class, "message": text} for an error.
	Error map[string]any `json:"error,omitempty"`
	// Result is what wait/join return: the final values (with
	// "__interrupt__" when the run paused on an interrupt).
	Result any `json:"result,omitempty" swaggertype:"object"`
}

// CommitRequest is one atomic write of a run's progress. Everything in it
// is applied in one transaction, or nothing is.
type CommitRequest struct {
	ClaimToken uuid.UUID `json:"claim_token" validate:"required" swaggertype:"string" format:"uuid"`
	// CommitID makes the commit idempotent; it defaults to the id of the
	// last checkpoint. A commit whose key was applied already returns the
	// first result and writes nothing.
	CommitID    string          `json:"commit_id,omitempty"`
	Checkpoints []CheckpointPut `json:"checkpoints"`
	Writes      []WriteBatch    `json:"writes"`
	Events      []Event         `json:"events"`
	End         *End            `json:"end,omitempty"`
}

// CommitResult is what a commit returns.
type CommitResult struct {
	CheckpointIDs []string `json:"checkpoint_ids" validate:"required"`
	// LastSeq is the sequence number of the run's last event.
	LastSeq int64 `json:"last_seq" validate:"required"`
	// Cancel is the cancellation requested for the run ("interrupt",
	// "rollback") that the worker must honour, "" when none.
	Cancel string `json:"cancel,omitempty"`
	// Replayed is true when the commit key had been applied already.
	Replayed bool `json:"replayed" validate:"required"`
}

// AckRequest ends a claimed run (worker API).
type AckRequest struct {
	ClaimToken uuid.UUID `json:"claim_token" validate:"required" swaggertype:"string" format:"uuid"`
	End
}

// lcMarker is serde.LCMarker ("lc" as a JSON key), which appears in every
// LangChain serialization envelope's JSON: Event's data without it has
// none to normalise. Copied, not imported, so that wire stays a leaf.
var lcMarker = []byte(`"lc"`)
