package workerapi

import (
	"net/http"
	"time"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/wire"
)

// Cancellations godoc
//
//	@Summary		Wait for cancellations of a worker's runs (worker API)
//	@ID				list_cancellations
//	@Description	Answers the cancellations requested (cancel, the interrupt and rollback strategies, on_disconnect=cancel) for runs the worker holds, except those in known. With wait_ms the call waits for one (long poll, woken by the request itself): a worker that keeps one such call open learns of a cancellation within milliseconds instead of at its next heartbeat. An empty list means none came.
//	@Tags			worker
//	@Accept			json
//	@Produce		json
//	@Param			body	body		wire.CancellationsRequest	true	"Which worker"
//	@Success		200		{array}		wire.Cancellation
//	@Failure		422		{object}	httpx.ErrorBody
//	@Router			/dispatch/cancellations [post]
func (h *Handlers) Cancellations(w http.ResponseWriter, r *http.Request) error {
	var req wire.CancellationsRequest
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
