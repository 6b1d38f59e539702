package workerapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/coordinator"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/runs"
)

// ClaimRequest is the body of POST /dispatch/claim.
type ClaimRequest struct {
	// WorkerID names the worker in the dispatch audit (required).
	WorkerID string `json:"worker_id" example:"js-worker-1"`
	// GraphIDs limits the claim to runs of these graphs (empty: any).
	GraphIDs []string `json:"graph_ids"`
	// Limit is how many runs to claim at most (1..32, default 1).
	Limit int `json:"limit"`
	// WaitMS long-polls up to this long for work (0..30000, default 0).
	WaitMS int `json:"wait_ms"`
}

// Claim godoc
//
//	@Summary		Claim runs (worker API)
//	@Description	Claims up to limit queued runs, oldest first and one per thread, each with a claim_token and a lease. Every later call on a dispatch presents the token and is refused with 409 once the lease is lost. With wait_ms the call waits for work (long poll); an empty list means none came.
//	@Tags			worker
//	@Accept			json
//	@Produce		json
//	@Param			body	body		ClaimRequest	true	"Claim"
//	@Success		200		{array}		ClaimedRun
//	@Failure		422		{object}	httpx.ErrorBody
//	@Router			/dispatch/claim [post]
func (h *Handlers) Claim(w http.ResponseWriter, r *http.Request) error {
	var req ClaimRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	req.WorkerID = strings.TrimSpace(req.WorkerID)
	if req.WorkerID == "" || len(req.WorkerID) > 200 {
		return apperr.Errorf(apperr.Invalid, "worker_id is required (at most 200 characters)")
	}
	if req.Limit == 0 {
		req.Limit = 1
	}
	if req.Limit < 1 || req.Limit > 32 {
		return apperr.Errorf(apperr.Invalid, "Invalid limit: must be 1..32")
	}
	if req.WaitMS < 0 || req.WaitMS > 30000 {
		return apperr.Errorf(apperr.Invalid, "Invalid wait_ms: must be 0..30000")
	}
	var graphs []string
	if len(req.GraphIDs) > 0 {
		graphs = req.GraphIDs
	}
	got, err := h.coord.ClaimWait(r.Context(), req.WorkerID, graphs, req.Limit, time.Duration(req.WaitMS)*time.Millisecond)
	if err != nil {
		return err
	}
	out := make([]ClaimedRun, len(got))
	for i := range got {
		out[i] = ClaimedRun{Claimed: got[i], ThreadEmpty: got[i].ThreadEmpty}
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// ClaimedRun is one claimed run in the answer to POST /dispatch/claim.
type ClaimedRun struct {
	coordinator.Claimed
	// ThreadEmpty is true when the run's thread had no checkpoint when it
	// was claimed (a new thread): the worker may skip reading one.
	ThreadEmpty bool `json:"thread_empty,omitempty"`
}

// FenceRequest presents a claim.
type FenceRequest struct {
	ClaimToken string `json:"claim_token" format:"uuid"`
	// Error is the failure, for nack.
	Error string `json:"error,omitempty"`
}

// HeartbeatResponse is the answer to a heartbeat.
type HeartbeatResponse struct {
	LeaseExpiresAt httpx.Time `json:"lease_expires_at" swaggertype:"string" format:"date-time"`
	// Cancel is "interrupt" or "rollback" when the run must stop, "" otherwise.
	Cancel string `json:"cancel"`
}

func (h *Handlers) fence(r *http.Request, dst any, token func() string) (uuid.UUID, uuid.UUID, error) {
	id, err := httpx.PathUUID(r, "dispatch_id", "dispatch")
	if err != nil {
		return id, uuid.Nil, err
	}
	if err := httpx.DecodeJSON(r, dst); err != nil {
		return id, uuid.Nil, err
	}
	tok, err := httpx.ParseUUID(token(), "claim token")
	return id, tok, err
}

// Heartbeat godoc
//
//	@Summary		Renew a claim's lease (worker API)
//	@Description	Extends the lease; the answer says whether the run was asked to stop. 409 once the lease is lost.
//	@Tags			worker
//	@Accept			json
//	@Produce		json
//	@Param			dispatch_id	path		string			true	"Dispatch ID"	format(uuid)
//	@Param			body		body		FenceRequest	true	"Claim"
//	@Success		200			{object}	HeartbeatResponse
//	@Failure		409			{object}	httpx.ErrorBody	"fenced"
//	@Failure		422			{object}	httpx.ErrorBody
//	@Router			/dispatch/{dispatch_id}/heartbeat [post]
func (h *Handlers) Heartbeat(w http.ResponseWriter, r *http.Request) error {
	var req FenceRequest
	id, tok, err := h.fence(r, &req, func() string { return req.ClaimToken })
	if err != nil {
		return err
	}
	exp, cancel, err := h.coord.Heartbeat(r.Context(), id, tok)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, HeartbeatResponse{LeaseExpiresAt: httpx.Time{Time: exp}, Cancel: cancel})
	return nil
}

// NackResponse is the answer to a nack.
type NackResponse struct {
	State string `json:"state" enums:"queued,dead_letter,cancelled"`
}

// Nack godoc
//
//	@Summary		Give a run back after a failure (worker API)
//	@Description	The dispatch is queued again after an exponential backoff with jitter (the run pending again), or dead-lettered at its last attempt (the run error). 409 once the lease is lost.
//	@Tags			worker
//	@Accept			json
//	@Produce		json
//	@Param			dispatch_id	path		string			true	"Dispatch ID"	format(uuid)
//	@Param			body		body		FenceRequest	true	"Claim and error"
//	@Success		200			{object}	NackResponse
//	@Failure		409			{object}	httpx.ErrorBody	"fenced"
//	@Failure		422			{object}	httpx.ErrorBody
//	@Router			/dispatch/{dispatch_id}/nack [post]
func (h *Handlers) Nack(w http.ResponseWriter, r *http.Request) error {
	var req FenceRequest
	id, tok, err := h.fence(r, &req, func() string { return req.ClaimToken })
	if err != nil {
		return err
	}
	state, err := h.coord.Nack(r.Context(), id, tok, req.Error)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, NackResponse{State: string(state)})
	return nil
}

// Commit godoc
//
//	@Summary		Commit a run's progress (worker API)
//	@Description	The commit coordinator: checkpoints (with their blobs), pending writes, run events and, with end, the run's outcome, in one transaction behind the claim's fence (409 once the lease is lost). Idempotent on commit_id (default: the last checkpoint's id): a retried commit returns the first result and writes nothing.
//	@Tags			worker
//	@Accept			json
//	@Produce		json
//	@Param			dispatch_id	path		string			true	"Dispatch ID"	format(uuid)
//	@Param			body		body		coordinator.CommitRequest	true	"What to commit"
//	@Success		200			{object}	coordinator.CommitResult
//	@Failure		409			{object}	httpx.ErrorBody	"fenced"
//	@Failure		422			{object}	httpx.ErrorBody
//	@Router			/dispatch/{dispatch_id}/commit [post]
func (h *Handlers) Commit(w http.ResponseWriter, r *http.Request) error {
	var req coordinator.CommitRequest
	id, err := httpx.PathUUID(r, "dispatch_id", "dispatch")
	if err != nil {
		return err
	}
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	return h.commit(w, r, id, &req)
}

func (h *Handlers) commit(w http.ResponseWriter, r *http.Request, id uuid.UUID, req *coordinator.CommitRequest) error {
	if req.ClaimToken == uuid.Nil {
		return apperr.Errorf(apperr.Invalid, "claim_token is required")
	}
	if req.End != nil {
		switch req.End.Status {
		case runs.StatusSuccess, runs.StatusError, runs.StatusInterrupted:
		default:
			return apperr.Errorf(apperr.Invalid, "Invalid end.status %q: must be success, error or interrupted", req.End.Status)
		}
	}
	for _, b := range req.Writes {
		if b.CheckpointID == "" {
			return apperr.Errorf(apperr.Invalid, "Every write batch needs a checkpoint_id")
		}
	}
	if err := serializedValues(req); err != nil {
		return err
	}
	normalizeWorkerEvents(req)
	res, err := h.coord.Commit(r.Context(), id, req)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, res)
	return nil
}

// AckRequest ends a claimed run (worker API).
type AckRequest struct {
	ClaimToken uuid.UUID `json:"claim_token"`
	coordinator.End
}

// Ack godoc
//
//	@Summary		End a run (worker API)
//	@Description	Acknowledges the claim with the run's outcome (status success, error with error {error, message}, or interrupted; result is what wait/join return): a commit with only an end. Idempotent; 409 once the lease is lost.
//	@Tags			worker
//	@Accept			json
//	@Produce		json
//	@Param			dispatch_id	path		string		true	"Dispatch ID"	format(uuid)
//	@Param			body		body		AckRequest	true	"Claim and outcome"
//	@Success		200			{object}	coordinator.CommitResult
//	@Failure		409			{object}	httpx.ErrorBody	"fenced"
//	@Failure		422			{object}	httpx.ErrorBody
//	@Router			/dispatch/{dispatch_id}/ack [post]
func (h *Handlers) Ack(w http.ResponseWriter, r *http.Request) error {
	var req AckRequest
	id, err := httpx.PathUUID(r, "dispatch_id", "dispatch")
	if err != nil {
		return err
	}
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	end := req.End
	return h.commit(w, r, id, &coordinator.CommitRequest{ClaimToken: req.ClaimToken, CommitID: "end", End: &end})
}
