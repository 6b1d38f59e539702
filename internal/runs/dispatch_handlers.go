package runs

import (
	"net/http"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/dispatch"
	"github.com/weftdev/weft/internal/httpx"
)

// DispatchHistory is a dispatch with every attempt.
type DispatchHistory struct {
	dispatch.Dispatch
	Attempts []dispatch.Attempt `json:"attempts" validate:"required"`
}

// RunDispatches godoc
//
//	@Summary		A run's dispatches
//	@ID				list_run_dispatches
//	@Description	Every delivery of the run to workers, with each attempt's worker, timings, lease, heartbeats, outcome, error and the commits and nacks the fence refused it after it lost its claim (fenced_writes).
//	@Tags			dispatch
//	@Produce		json
//	@Param			thread_id	path		string	true	"Thread ID"	format(uuid)
//	@Param			run_id		path		string	true	"Run ID"	format(uuid)
//	@Success		200			{array}		DispatchHistory
//	@Failure		404			{object}	httpx.ErrorBody
//	@Failure		422			{object}	httpx.ErrorBody
//	@Router			/threads/{thread_id}/runs/{run_id}/dispatches [get]
func (h *Handlers) RunDispatches(w http.ResponseWriter, r *http.Request) error {
	tid, rid, err := PathIDs(r)
	if err != nil {
		return err
	}
	if _, err := h.svc.Get(r.Context(), tid, rid); err != nil {
		return err
	}
	tenant := auth.Tenant(r.Context())
	list, err := dispatch.List(r.Context(), h.svc.db, dispatch.ListParams{Tenant: &tenant, RunID: &rid, Limit: 1000})
	if err != nil {
		return err
	}
	out := make([]DispatchHistory, len(list))
	for i, d := range list {
		out[i].Dispatch = d
		if out[i].Attempts, err = dispatch.Attempts(r.Context(), h.svc.db, d.DispatchID); err != nil {
			return err
		}
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// ListDispatches godoc
//
//	@Summary		Search dispatches
//	@ID				list_dispatches
//	@Description	Newest first; state=dead_letter lists the dead-letter queue.
//	@Tags			dispatch
//	@Produce		json
//	@Param			state		query		string	false	"Dispatch state"	Enums(queued, claimed, acked, cancelled, superseded, dead_letter)
//	@Param			graph_id	query		string	false	"Graph"
//	@Param			limit		query		int		false	"Page size"	default(100)	minimum(1)	maximum(1000)
//	@Param			offset		query		int		false	"Offset"	default(0)	minimum(0)	maximum(1073741824)
//	@Success		200			{array}		dispatch.Dispatch
//	@Failure		422			{object}	httpx.ErrorBody
//	@Router			/dispatches [get]
func (h *Handlers) ListDispatches(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	state, given := httpx.QueryValue(r, "state")
	if given && !dispatch.ValidState(state) { // ?state= too
		return apperr.Errorf(apperr.Invalid, "Invalid state %q", state)
	}
	limit, err := httpx.QueryInt(r, "limit", 100, 1, 1000)
	if err != nil {
		return err
	}
	offset, err := httpx.QueryInt(r, "offset", 0, 0, 1<<30)
	if err != nil {
		return err
	}
	list, err := dispatch.List(r.Context(), h.svc.db, dispatch.ListParams{State: state, GraphID: q.Get("graph_id"), Limit: limit, Offset: offset})
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, list)
	return nil
}

// RetryDispatch godoc
//
//	@Summary		Requeue a dead letter
//	@ID				retry_dispatch
//	@Description	Puts a dead_letter dispatch back in the queue with a fresh attempt budget; its run becomes pending again. 409 for any other state.
//	@Tags			dispatch
//	@Produce		json
//	@Param			dispatch_id	path		string	true	"Dispatch ID"	format(uuid)
//	@Success		200			{object}	dispatch.Dispatch
//	@Failure		404			{object}	httpx.ErrorBody
//	@Failure		409			{object}	httpx.ErrorBody
//	@Failure		422			{object}	httpx.ErrorBody
//	@Router			/dispatches/{dispatch_id}/retry [post]
func (h *Handlers) RetryDispatch(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathUUID(r, "dispatch_id", "dispatch")
	if err != nil {
		return err
	}
	d, err := h.svc.Retry(r.Context(), id)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, d)
	return nil
}
