package threads

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/httpx"
)

// Status is a thread's run status.
type Status string

// Thread statuses (reference API §4.2).
const (
	StatusIdle        Status = "idle"
	StatusBusy        Status = "busy"
	StatusInterrupted Status = "interrupted"
	StatusError       Status = "error"
)

func validStatus(s string) bool {
	switch Status(s) {
	case StatusIdle, StatusBusy, StatusInterrupted, StatusError:
		return true
	}
	return false
}

// Thread is the Thread object of the Agent Server API (reference §4.1) plus
// parent_thread_id and resource_id.
type Thread struct {
	ThreadID       uuid.UUID       `db:"thread_id" json:"thread_id" validate:"required" format:"uuid"`
	CreatedAt      httpx.Time      `db:"created_at" json:"created_at" validate:"required" swaggertype:"string" format:"date-time"`
	UpdatedAt      httpx.Time      `db:"updated_at" json:"updated_at" validate:"required" swaggertype:"string" format:"date-time"`
	StateUpdatedAt httpx.Time      `db:"state_updated_at" json:"state_updated_at" validate:"required" swaggertype:"string" format:"date-time" extensions:"x-nullable"`
	Metadata       json.RawMessage `db:"metadata" json:"metadata" validate:"required" swaggertype:"object"`
	Status         Status          `db:"status" json:"status" validate:"required" enums:"idle,busy,interrupted,error"`
	Config         json.RawMessage `db:"config" json:"config" validate:"required" swaggertype:"object"`
	Values         json.RawMessage `db:"values" json:"values" validate:"required" swaggertype:"object" extensions:"x-nullable"`
	Interrupts     json.RawMessage `db:"interrupts" json:"interrupts" validate:"required" swaggertype:"object"`
	Error          json.RawMessage `db:"error" json:"error" validate:"required" swaggertype:"object" extensions:"x-nullable"`
	ParentThreadID *uuid.UUID      `db:"parent_thread_id" json:"parent_thread_id" validate:"required" swaggertype:"string" format:"uuid" extensions:"x-nullable"`
	ResourceID     *string         `db:"resource_id" json:"resource_id" validate:"required" extensions:"x-nullable"`
	// ActiveRunID is the thread's current run: the oldest one pending or
	// running (null when none); LatestRunID is the run created last.
	ActiveRunID *uuid.UUID `db:"active_run_id" json:"active_run_id" validate:"required" swaggertype:"string" format:"uuid" extensions:"x-nullable"`
	LatestRunID *uuid.UUID `db:"latest_run_id" json:"latest_run_id" validate:"required" swaggertype:"string" format:"uuid" extensions:"x-nullable"`
	// TTL is present only when asked for with ?include=ttl and the thread
	// has a ttl.
	TTL *TTL `db:"-" json:"ttl,omitempty"`
	// Extracted is present only in a search with extract: the value at
	// each of its paths, by alias (null where the path leads nowhere).
	Extracted map[string]any `db:"-" json:"extracted,omitempty"`

	TTLMinutes  *float64   `db:"ttl_minutes" json:"-"`
	TTLStrategy *string    `db:"ttl_strategy" json:"-"`
	ExpiresAt   *time.Time `db:"expires_at" json:"-"`
}

// ValuesSQL is the thread's values projection as every reader selects it
// from a row of threads: "values" with the lists its values_refs names
// merged back (migration 023); a row without references is read as it is,
// without a function call.
const ValuesSQL = `CASE WHEN values_refs IS NULL THEN "values" ELSE weft_thread_values(thread_id, "values", values_refs) END`

// threadColumns lists the columns of Thread in scan order.
const threadColumns = `thread_id, created_at, updated_at, state_updated_at, metadata, status, config,
	` + ValuesSQL + ` AS "values", interrupts, error, parent_thread_id, resource_id, active_run_id, latest_run_id,
	ttl_minutes, ttl_strategy, expires_at`

// selectable are the fields a search may project with select: the enums
// of SearchRequest.Select, which the OpenAPI document declares.
var selectable = httpx.Enums[SearchRequest]("Select")

// project returns only the named fields of t (the search select option).
func (t *Thread) project(fields []string) map[string]any {
	all := map[string]any{
		"thread_id": t.ThreadID, "created_at": t.CreatedAt, "updated_at": t.UpdatedAt,
		"state_updated_at": t.StateUpdatedAt, "metadata": t.Metadata, "config": t.Config,
		"context": json.RawMessage(`{}`), "status": t.Status, "values": t.Values,
		"interrupts": t.Interrupts, "error": t.Error, "parent_thread_id": t.ParentThreadID,
		"resource_id": t.ResourceID,
	}
	out := make(map[string]any, len(fields)+1)
	for _, f := range fields {
		out[f] = all[f]
	}
	if t.Extracted != nil {
		out["extracted"] = t.Extracted
	}
	return out
}

// normalizeText trims s; blank becomes nil.
func normalizeText(s *string) *string {
	if s == nil {
		return nil
	}
	v := strings.TrimSpace(*s)
	if v == "" {
		return nil
	}
	return &v
}
