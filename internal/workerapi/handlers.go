package workerapi

import (
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/coordinator"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/runs"
	"github.com/weftdev/weft/internal/wire"
)

// blank is the whitespace a worker's free-text fields are trimmed of:
// ASCII's alone, so the rule is one a JSON Schema pattern states the same
// way in every regex dialect (api/openapi.yaml).
const blank = " \t\n\v\f\r"

// workerID checks and trims a worker_id: 1 to 200 characters once trimmed
// of blank.
func workerID(s string) (string, error) {
	s = strings.Trim(s, blank)
	if s == "" || utf8.RuneCountInString(s) > 200 {
		return "", apperr.Errorf(apperr.Invalid, "worker_id is required: 1 to 200 characters")
	}
	return s, nil
}

// Claim godoc
//
//	@Summary		Claim runs (worker API)
//	@ID				claim_dispatches
//	@Description	Claims up to limit queued runs, oldest first and one per thread, each with a claim_token and a lease. Every later call on a dispatch presents the token and is refused with 409 once the lease is lost. With wait_ms the call waits for work (long poll); an empty list means none came.
//	@Tags			worker
//	@Accept			json
//	@Produce		json
//	@Param			body	body		wire.ClaimRequest	true	"Claim"
//	@Success		200		{array}		wire.ClaimedRun
//	@Failure		422		{object}	httpx.ErrorBody
//	@Router			/dispatch/claim [post]
func (h *Handlers) Claim(w http.ResponseWriter, r *http.Request) error {
	var req wire.ClaimRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	var err error
	if req.WorkerID, err = workerID(req.WorkerID); err != nil {
		return err
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
	out := make([]wire.ClaimedRun, len(got))
	for i := range got {
		out[i] = wire.ClaimedRun{Claimed: got[i], ThreadEmpty: got[i].ThreadEmpty}
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
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
//	@ID				heartbeat_dispatch
//	@Description	Extends the lease; the answer says whether the run was asked to stop. 409 once the lease is lost.
//	@Tags			worker
//	@Accept			json
//	@Produce		json
//	@Param			dispatch_id	path		string			true	"Dispatch ID"	format(uuid)
//	@Param			body		body		wire.FenceRequest	true	"Claim"
//	@Success		200			{object}	wire.HeartbeatResponse
//	@Failure		409			{object}	httpx.ErrorBody	"fenced"
//	@Failure		422			{object}	httpx.ErrorBody
//	@Router			/dispatch/{dispatch_id}/heartbeat [post]
func (h *Handlers) Heartbeat(w http.ResponseWriter, r *http.Request) error {
	var req wire.FenceRequest
	id, tok, err := h.fence(r, &req, func() string { return req.ClaimToken })
	if err != nil {
		return err
	}
	exp, cancel, err := h.coord.Heartbeat(r.Context(), id, tok)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, wire.HeartbeatResponse{LeaseExpiresAt: httpx.Time{Time: exp}, Cancel: cancel})
	return nil
}

// Nack godoc
//
//	@Summary		Give a run back after a failure (worker API)
//	@ID				nack_dispatch
//	@Description	The dispatch is queued again after an exponential backoff with jitter (the run pending again), or dead-lettered at its last attempt (the run error). 409 once the lease is lost.
//	@Tags			worker
//	@Accept			json
//	@Produce		json
//	@Param			dispatch_id	path		string			true	"Dispatch ID"	format(uuid)
//	@Param			body		body		wire.FenceRequest	true	"Claim and error"
//	@Success		200			{object}	wire.NackResponse
//	@Failure		409			{object}	httpx.ErrorBody	"fenced"
//	@Failure		422			{object}	httpx.ErrorBody
//	@Router			/dispatch/{dispatch_id}/nack [post]
func (h *Handlers) Nack(w http.ResponseWriter, r *http.Request) error {
	var req wire.FenceRequest
	id, tok, err := h.fence(r, &req, func() string { return req.ClaimToken })
	if err != nil {
		return err
	}
	state, err := h.coord.Nack(r.Context(), id, tok, req.Error)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, wire.NackResponse{State: string(state)})
	return nil
}

// Commit godoc
//
//	@Summary		Commit a run's progress (worker API)
//	@ID				commit_dispatch
//	@Description	The commit coordinator: checkpoints (with their blobs), pending writes, run events and, with end, the run's outcome, in one transaction behind the claim's fence (409 once the lease is lost). Idempotent on commit_id (default: the last checkpoint's id): a retried commit returns the first result and writes nothing.
//	@Tags			worker
//	@Accept			json
//	@Produce		json
//	@Param			dispatch_id	path		string			true	"Dispatch ID"	format(uuid)
//	@Param			body		body		wire.CommitRequest	true	"What to commit"
//	@Success		200			{object}	wire.CommitResult
//	@Failure		409			{object}	httpx.ErrorBody	"fenced"
//	@Failure		422			{object}	httpx.ErrorBody
//	@Router			/dispatch/{dispatch_id}/commit [post]
func (h *Handlers) Commit(w http.ResponseWriter, r *http.Request) error {
	var req wire.CommitRequest
	id, err := httpx.PathUUID(r, "dispatch_id", "dispatch")
	if err != nil {
		return err
	}
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	return h.commit(w, r, id, &req)
}

func (h *Handlers) commit(w http.ResponseWriter, r *http.Request, id uuid.UUID, req *wire.CommitRequest) error {
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
	res, err := h.coord.Commit(r.Context(), id, &coordinator.Commit{CommitRequest: *req})
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, res)
	return nil
}

// Ack godoc
//
//	@Summary		End a run (worker API)
//	@ID				ack_dispatch
//	@Description	Acknowledges the claim with the run's outcome (status success, error with error {error, message}, or interrupted; result is what wait/join return): a commit with only an end. Idempotent; 409 once the lease is lost.
//	@Tags			worker
//	@Accept			json
//	@Produce		json
//	@Param			dispatch_id	path		string		true	"Dispatch ID"	format(uuid)
//	@Param			body		body		wire.AckRequest	true	"Claim and outcome"
//	@Success		200			{object}	wire.CommitResult
//	@Failure		409			{object}	httpx.ErrorBody	"fenced"
//	@Failure		422			{object}	httpx.ErrorBody
//	@Router			/dispatch/{dispatch_id}/ack [post]
func (h *Handlers) Ack(w http.ResponseWriter, r *http.Request) error {
	var req wire.AckRequest
	id, err := httpx.PathUUID(r, "dispatch_id", "dispatch")
	if err != nil {
		return err
	}
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	end := req.End
	return h.commit(w, r, id, &wire.CommitRequest{ClaimToken: req.ClaimToken, CommitID: "end", End: &end})
}
