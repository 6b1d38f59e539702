package workerapi

import (
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/httpx"
)

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

// Cancellations godoc
//
//	@Summary		Wait for cancellations of a worker's runs (worker API)
//	@ID				list_cancellations
//	@Description	Answers the cancellations requested (cancel, the interrupt and rollback strategies, on_disconnect=cancel) for runs the worker holds, except those in known. With wait_ms the call waits for one (long poll, woken by the request itself): a worker that keeps one such call open learns of a cancellation within milliseconds instead of at its next heartbeat. An empty list means none came.
//	@Tags			worker
//	@Accept			json
//	@Produce		json
//	@Param			body	body		CancellationsRequest	true	"Which worker"
//	@Success		200		{array}		coordinator.Cancellation
//	@Failure		422		{object}	httpx.ErrorBody
//	@Router			/dispatch/cancellations [post]
func (h *Handlers) Cancellations(w http.ResponseWriter, r *http.Request) error {
	var req CancellationsRequest
	err := httpx.DecodeJSON(r, &req)
	if err != nil {
		return err
	}
	if req.WorkerID, err = workerID(req.WorkerID); err != nil {
		return err
	}
	if req.WaitMS < 0 || req.WaitMS > 30000 {
		return apperr.Errorf(apperr.Invalid, "Invalid wait_ms: must be 0..30000")
	}
	if len(req.Known) > 1000 {
		return apperr.Errorf(apperr.Invalid, "Invalid known: at most 1000 dispatch ids")
	}
	got, err := h.coord.CancellationsWait(r.Context(), req.WorkerID, req.Known, time.Duration(req.WaitMS)*time.Millisecond)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, got)
	return nil
}
