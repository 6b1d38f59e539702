package wire

import (
	"github.com/google/uuid"
)

// ClaimRequest is the body of POST /dispatch/claim.
type ClaimRequest struct {
	// WorkerID names the worker in the dispatch audit (required; 1 to 200
	// characters once trimmed of ASCII whitespace).
	WorkerID string `json:"worker_id" validate:"required" example:"js-worker-1"`
	// GraphIDs limits the claim to runs of these graphs (empty: any).
	GraphIDs []string `json:"graph_ids"`
	// Limit is how many runs to claim at most (1..32; absent or 0: 1).
	Limit int `json:"limit" minimum:"0" maximum:"32"`
	// WaitMS long-polls up to this long for work (0..30000, default 0).
	WaitMS int `json:"wait_ms" minimum:"0" maximum:"30000"`
}

// Claimed is a claimed dispatch and its run.
type Claimed struct {
	Dispatch Dispatch `json:"dispatch"`
	Run      Run      `json:"run"`
	// ClaimToken is the fence to present with every later operation.
	ClaimToken uuid.UUID `json:"claim_token"`
	// ThreadEmpty is true when the run's thread had no checkpoint when it
	// was claimed (a new thread): the worker may skip reading one. The run
	// holds its thread, so this stays true until the run writes.
	ThreadEmpty bool `json:"-"`
	// Traceparent is the W3C traceparent of the span that created the run
	// (absent when tracing was off): the worker's run span continues that
	// trace, and its requests carry it.
	Traceparent string `json:"traceparent,omitempty" example:"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"`
}

// ClaimedRun is one claimed run in the answer to POST /dispatch/claim.
type ClaimedRun struct {
	Claimed
	// ThreadEmpty is true when the run's thread had no checkpoint when it
	// was claimed (a new thread): the worker may skip reading one.
	ThreadEmpty bool `json:"thread_empty,omitempty"`
}

// FenceRequest presents a claim.
type FenceRequest struct {
	ClaimToken string `json:"claim_token" validate:"required" format:"uuid"`
	// Error is the failure, for nack.
	Error string `json:"error,omitempty"`
}

// HeartbeatResponse is the answer to a heartbeat.
type HeartbeatResponse struct {
	LeaseExpiresAt Time `json:"lease_expires_at" validate:"required" swaggertype:"string" format:"date-time"`
	// Cancel is "interrupt" or "rollback" when the run must stop, "" otherwise.
	Cancel string `json:"cancel" validate:"required"`
}

// NackResponse is the answer to a nack.
type NackResponse struct {
	State string `json:"state" validate:"required" enums:"queued,dead_letter,cancelled"`
}

// Cancellation is a stop requested for a claimed run: its dispatch and the
// action (interrupt or rollback).
type Cancellation struct {
	DispatchID uuid.UUID `json:"dispatch_id" validate:"required" db:"dispatch_id" format:"uuid"`
	Cancel     string    `json:"cancel" validate:"required" db:"cancel_action" enums:"interrupt,rollback"`
}

// CancellationsRequest is the body of POST /dispatch/cancellations.
type CancellationsRequest struct {
	// WorkerID is the worker whose claimed runs to watch (the worker_id of
	// its claims; 1 to 200 characters once trimmed of ASCII whitespace).
	WorkerID string `json:"worker_id" validate:"required" example:"js-worker-1"`
	// Known are dispatches whose cancellation the worker already has: they
	// are left out, so the call waits for a new one.
	Known []uuid.UUID `json:"known" validate:"max=1000" swaggertype:"array,string" format:"uuid"`
	// WaitMS long-polls up to this long for a cancellation (0..30000,
	// default 0).
	WaitMS int `json:"wait_ms" minimum:"0" maximum:"30000"`
}
