package runs

import (
	"encoding/json"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/jsonv"
)

// Handlers serves the run routes and the dispatch history of runs.
type Handlers struct{ svc *Service }

// NewHandlers returns the run handlers.
func NewHandlers(svc *Service) *Handlers { return &Handlers{svc: svc} }

// Path is the URL path of a run: under its thread, or under /runs for a
// stateless run (temporary).
func Path(threadID, runID uuid.UUID, temporary bool) string {
	if temporary {
		return "/runs/" + runID.String()
	}
	return "/threads/" + threadID.String() + "/runs/" + runID.String()
}

// CreateFromRequest decodes a run-creating request's body and creates the
// run on threadID (uuid.Nil: a stateless run).
func (s *Service) CreateFromRequest(r *http.Request, threadID uuid.UUID) (*Run, error) {
	var req CreateRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return nil, err
	}
	req.headers = r.Header
	return s.Create(r.Context(), threadID, &req)
}

// CreateStateful godoc
//
//	@Summary		Create a run on a thread
//	@ID				create_run
//	@Description	Queues a run (status pending) and returns it at once. On a busy thread multitask_strategy decides: reject → 409, enqueue (default) → runs one after the other, interrupt / rollback → the inflight runs are cancelled first. Content-Location names the run.
//	@Tags			runs
//	@Accept			json
//	@Produce		json
//	@Param			thread_id	path		string			true	"Thread ID"	format(uuid)
//	@Param			body		body		CreateRequest	true	"Run"
//	@Success		200			{object}	Run
//	@Failure		400			{object}	httpx.ErrorBody
//	@Failure		404			{object}	httpx.ErrorBody	"thread, assistant (an unknown assistant UUID) or checkpoint not found"
//	@Failure		409			{object}	httpx.ErrorBody	"thread busy and multitask_strategy reject"
//	@Failure		422			{object}	httpx.ErrorBody	"invalid body, or an assistant_id that is neither a UUID nor a registered graph name"
//	@Router			/threads/{thread_id}/runs [post]
func (h *Handlers) CreateStateful(w http.ResponseWriter, r *http.Request) error {
	tid, err := httpx.PathUUID(r, "thread_id", "thread")
	if err != nil {
		return err
	}
	run, err := h.svc.CreateFromRequest(r, tid)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Location", Path(run.ThreadID, run.RunID, false))
	httpx.WriteJSON(w, http.StatusOK, run)
	return nil
}

// CreateStateless godoc
//
//	@Summary		Create a stateless run
//	@ID				run_stateless
//	@Description	Runs on a new temporary thread, deleted after the run unless on_completion is keep.
//	@Tags			runs
//	@Accept			json
//	@Produce		json
//	@Param			body	body		CreateRequest	true	"Run"
//	@Success		200		{object}	Run
//	@Failure		400		{object}	httpx.ErrorBody
//	@Failure		404		{object}	httpx.ErrorBody
//	@Failure		422		{object}	httpx.ErrorBody
//	@Router			/runs [post]
func (h *Handlers) CreateStateless(w http.ResponseWriter, r *http.Request) error {
	run, err := h.svc.CreateFromRequest(r, uuid.Nil)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Location", Path(run.ThreadID, run.RunID, true))
	httpx.WriteJSON(w, http.StatusOK, run)
	return nil
}

// waitKeepAlive is how often a waiting response writes a newline.
const waitKeepAlive = 5 * time.Second

// writeResult waits for run to end and writes the result document. The
// status and headers go out first; while waiting, a newline every few
// seconds keeps proxies from closing the connection (leading whitespace is
// valid JSON).
func (h *Handlers) writeResult(w http.ResponseWriter, r *http.Request, run *Run) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	done := make(chan struct{})
	var final *Run
	var err error
	go func() {
		defer close(done)
		final, err = h.svc.Join(r.Context(), run.ThreadID, run.RunID)
	}()
	tick := time.NewTicker(waitKeepAlive)
	defer tick.Stop()
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		case <-tick.C:
			_, _ = w.Write([]byte("\n"))
			if flusher != nil {
				flusher.Flush()
			}
		}
	}
	var body json.RawMessage
	var temporary *Run // deleted once its result is written
	switch {
	case apperr.CodeOf(err) == apperr.NotFound:
		body = jsonv.Must(map[string]any{"__error__": map[string]any{"error": "RunDeleted", "message": "The run was rolled back"}})
	case err != nil:
		if r.Context().Err() != nil {
			return nil
		}
		h.svc.log.Error("wait for run", "run_id", run.RunID, "error", err)
		body = jsonv.Must(map[string]any{"__error__": map[string]any{"error": "InternalError", "message": "waiting for the run failed"}})
	default:
		if body, err = h.svc.Result(r.Context(), final); err != nil {
			h.svc.log.Error("run result", "run_id", run.RunID, "error", err)
			body = jsonv.Must(map[string]any{"__error__": map[string]any{"error": "InternalError", "message": "reading the result failed"}})
		}
		if final.Temporary {
			temporary = final
		}
	}
	_, _ = w.Write(append(body, '\n')) // Result's documents are compact
	if temporary != nil {
		h.svc.DeleteTemporaryLater(r.Context(), temporary)
	}
	return nil
}

// respondWhenDone names the run (Content-Location, and Location: its join
// URL) and writes its result when it ends; with cancel, the run is
// cancelled if the client goes away first (on_disconnect: cancel).
func (h *Handlers) respondWhenDone(w http.ResponseWriter, r *http.Request, run *Run, cancel bool) error {
	p := Path(run.ThreadID, run.RunID, false)
	w.Header().Set("Content-Location", p)
	w.Header().Set("Location", p+"/join")
	done := h.svc.CancelOnDisconnect(r.Context(), run, cancel)
	defer func() { done(r.Context().Err() != nil) }()
	return h.writeResult(w, r, run)
}

func onDisconnectCancel(run *Run) bool {
	var k Kwargs
	_ = jsonv.Decode(run.Kwargs, &k)
	return k.OnDisconnect == "cancel"
}

// WaitStateful godoc
//
//	@Summary		Create a run and wait for its result
//	@ID				wait_run
//	@Description	Creates a run like POST /threads/{thread_id}/runs, then answers 200 with the final values, or {"__error__": {error, message}} for a failed run (reference §7.1). Newlines may precede the JSON while the run executes. Location is the run's join URL.
//	@Tags			runs
//	@Accept			json
//	@Produce		json
//	@Param			thread_id	path		string			true	"Thread ID"	format(uuid)
//	@Param			body		body		CreateRequest	true	"Run"
//	@Success		200			{object}	object
//	@Failure		400			{object}	httpx.ErrorBody
//	@Failure		404			{object}	httpx.ErrorBody
//	@Failure		409			{object}	httpx.ErrorBody
//	@Failure		422			{object}	httpx.ErrorBody
//	@Router			/threads/{thread_id}/runs/wait [post]
func (h *Handlers) WaitStateful(w http.ResponseWriter, r *http.Request) error {
	tid, err := httpx.PathUUID(r, "thread_id", "thread")
	if err != nil {
		return err
	}
	run, err := h.svc.CreateFromRequest(r, tid)
	if err != nil {
		return err
	}
	return h.respondWhenDone(w, r, run, onDisconnectCancel(run))
}

// WaitStateless godoc
//
//	@Summary		Create a stateless run and wait for its result
//	@ID				wait_run_stateless
//	@Tags			runs
//	@Accept			json
//	@Produce		json
//	@Param			body	body		CreateRequest	true	"Run"
//	@Success		200		{object}	object
//	@Failure		400		{object}	httpx.ErrorBody
//	@Failure		404		{object}	httpx.ErrorBody
//	@Failure		422		{object}	httpx.ErrorBody
//	@Router			/runs/wait [post]
func (h *Handlers) WaitStateless(w http.ResponseWriter, r *http.Request) error {
	run, err := h.svc.CreateFromRequest(r, uuid.Nil)
	if err != nil {
		return err
	}
	return h.respondWhenDone(w, r, run, onDisconnectCancel(run))
}

// Batch godoc
//
//	@Summary		Create several stateless runs
//	@ID				run_batch_stateless
//	@Description	Checks every run first (a refused one is named by its index, runs[i], and nothing is created), then creates them in order. 1 to 100 runs.
//	@Tags			runs
//	@Accept			json
//	@Produce		json
//	@Param			body	body		[]CreateRequest	true	"Runs"
//	@Success		200		{array}		Run
//	@Failure		400		{object}	httpx.ErrorBody	"a run POST /runs refuses with 400 (a checkpoint_id or a resume without a thread, a graph no worker serves)"
//	@Failure		404		{object}	httpx.ErrorBody	"an unknown assistant"
//	@Failure		422		{object}	httpx.ErrorBody	"not 1 to 100 runs, or a run POST /runs refuses with 422"
//	@Router		/runs/batch [post]
func (h *Handlers) Batch(w http.ResponseWriter, r *http.Request) error {
	var reqs []CreateRequest
	if err := httpx.DecodeJSONArray(r, &reqs); err != nil {
		return err
	}
	if len(reqs) == 0 || len(reqs) > 100 {
		return apperr.Errorf(apperr.Invalid, "Invalid batch: must hold 1 to 100 runs")
	}
	for i := range reqs {
		reqs[i].headers = r.Header
		if _, err := h.svc.validate(r.Context(), &reqs[i], true); err != nil {
			if ae, ok := err.(*apperr.Error); ok {
				return apperr.Errorf(ae.Code, "runs[%d]: %s", i, ae.Message)
			}
			return err
		}
	}
	out := make([]*Run, 0, len(reqs))
	for i := range reqs {
		run, err := h.svc.Create(r.Context(), uuid.Nil, &reqs[i])
		if err != nil {
			return err
		}
		out = append(out, run)
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// PathIDs reads the thread_id and run_id path parameters.
func PathIDs(r *http.Request) (uuid.UUID, uuid.UUID, error) {
	tid, err := httpx.PathUUID(r, "thread_id", "thread")
	if err != nil {
		return tid, uuid.Nil, err
	}
	rid, err := httpx.PathUUID(r, "run_id", "run")
	return tid, rid, err
}

// List godoc
//
//	@Summary	List a thread's runs
//	@ID			list_runs_http
//	@Description	Newest first. A page also ends early once its encoded size passes 4 MiB (it always holds at least one run); X-Pagination-Next then gives the offset to continue from.
//	@Tags		runs
//	@Produce	json
//	@Param		thread_id	path		string	true	"Thread ID"	format(uuid)
//	@Param		limit		query		int		false	"Page size"	default(10)	minimum(1)	maximum(1000)
//	@Param		offset		query		int		false	"Offset"	default(0)	minimum(0)	maximum(1073741824)
//	@Param		status		query		string	false	"Only runs with this status"	Enums(pending, running, success, error, timeout, interrupted)
//	@Param		select		query		[]string	false	"Only these fields of each run (repeated, comma list or JSON array)"	Enums(assistant_id, attempt, created_at, kwargs, langsmith_session_name, metadata, multitask_strategy, run_id, status, thread_id, updated_at, webhook_attempts, webhook_last_error, webhook_last_status, webhook_state)
//	@Success	200			{array}		Run
//	@Failure	404			{object}	httpx.ErrorBody
//	@Failure	422			{object}	httpx.ErrorBody
//	@Router		/threads/{thread_id}/runs [get]
func (h *Handlers) List(w http.ResponseWriter, r *http.Request) error {
	tid, err := httpx.PathUUID(r, "thread_id", "thread")
	if err != nil {
		return err
	}
	limit, err := httpx.QueryInt(r, "limit", 10, 1, 1000)
	if err != nil {
		return err
	}
	offset, err := httpx.QueryInt(r, "offset", 0, 0, 1<<30)
	if err != nil {
		return err
	}
	status, err := httpx.QueryEnum(r, "status", "", statuses...)
	if err != nil {
		return err
	}
	fields, err := httpx.QueryStrings(r, "select", slices.Sorted(maps.Keys(runFields))...)
	if err != nil {
		return err
	}
	// Runs are encoded one by one into one buffer, written once complete;
	// the page ends early once it passes MaxRunsPageBytes (it always holds
	// at least one run), and X-Pagination-Next then gives the next offset.
	var page httpx.ArrayPage
	cut := false
	err = h.svc.List(r.Context(), tid, status, limit, offset, func(run *Run) (bool, error) {
		var v any = run
		if len(fields) > 0 {
			if v, err = projectRun(run, fields); err != nil {
				return false, err
			}
		}
		size, err := page.Add(v)
		cut = size > MaxRunsPageBytes && page.Count() < limit
		return !cut, err
	})
	if err != nil {
		return err
	}
	if cut {
		w.Header().Set("X-Pagination-Next", strconv.Itoa(offset+page.Count()))
	}
	page.Write(w)
	return nil
}

// runFields are the fields of a Run, for select, and LangGraph's
// langsmith_session_name (always null: Weft names no LangSmith session).
var runFields = func() map[string]bool {
	m := map[string]bool{"langsmith_session_name": true}
	t := reflect.TypeFor[Run]()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			m[name] = true
		}
	}
	return m
}()

// projectRun returns only the named fields of run.
func projectRun(run *Run, fields []string) (map[string]json.RawMessage, error) {
	b, err := json.Marshal(run)
	if err != nil {
		return nil, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	out := make(map[string]json.RawMessage, len(fields))
	for _, f := range fields {
		out[f] = all[f]
	}
	return out, nil
}

// MaxRunsPageBytes caps a page of GET /threads/{thread_id}/runs: a run
// carries its input, so a large limit over large inputs could otherwise
// build a huge response.
const MaxRunsPageBytes = 4 << 20

// Get godoc
//
//	@Summary	Get a run
//	@ID			get_run_http
//	@Tags		runs
//	@Produce	json
//	@Param		thread_id	path		string	true	"Thread ID"	format(uuid)
//	@Param		run_id		path		string	true	"Run ID"	format(uuid)
//	@Success	200			{object}	Run
//	@Failure	404			{object}	httpx.ErrorBody
//	@Failure	422			{object}	httpx.ErrorBody
//	@Router		/threads/{thread_id}/runs/{run_id} [get]
func (h *Handlers) Get(w http.ResponseWriter, r *http.Request) error {
	tid, rid, err := PathIDs(r)
	if err != nil {
		return err
	}
	run, err := h.svc.Get(r.Context(), tid, rid)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, run)
	return nil
}

// GetStateless godoc
//
//	@Summary		Get a run by id
//	@ID				get_run_stateless
//	@Description	Any run, stateless ones included (the Content-Location of POST /runs names this URL). A stateless run goes with its temporary thread once that is deleted.
//	@Tags			runs
//	@Produce		json
//	@Param			run_id	path		string	true	"Run ID"	format(uuid)
//	@Success		200		{object}	Run
//	@Failure		404		{object}	httpx.ErrorBody
//	@Failure		422		{object}	httpx.ErrorBody
//	@Router			/runs/{run_id} [get]
func (h *Handlers) GetStateless(w http.ResponseWriter, r *http.Request) error {
	rid, err := httpx.PathUUID(r, "run_id", "run")
	if err != nil {
		return err
	}
	run, err := h.svc.Get(r.Context(), uuid.Nil, rid)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, run)
	return nil
}

// Delete godoc
//
//	@Summary		Delete a run
//	@ID				delete_run
//	@Description	Deletes a finished run with its event log and dispatch history; its checkpoints stay. 409 while it is pending or running.
//	@Tags			runs
//	@Param			thread_id	path	string	true	"Thread ID"	format(uuid)
//	@Param			run_id		path	string	true	"Run ID"	format(uuid)
//	@Success		204
//	@Failure		404	{object}	httpx.ErrorBody
//	@Failure		409	{object}	httpx.ErrorBody
//	@Failure		422	{object}	httpx.ErrorBody
//	@Router			/threads/{thread_id}/runs/{run_id} [delete]
func (h *Handlers) Delete(w http.ResponseWriter, r *http.Request) error {
	tid, rid, err := PathIDs(r)
	if err != nil {
		return err
	}
	if err := h.svc.Delete(r.Context(), tid, rid); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// Join godoc
//
//	@Summary		Wait for a run's result
//	@ID				join_run_http
//	@Description	Answers when the run has ended (at once if it has) with the same body as wait.
//	@Tags			runs
//	@Produce		json
//	@Param			thread_id				path		string	true	"Thread ID"	format(uuid)
//	@Param			run_id					path		string	true	"Run ID"	format(uuid)
//	@Param			cancel_on_disconnect	query		bool	false	"Cancel the run if this client goes away"
//	@Success		200						{object}	object
//	@Failure		404						{object}	httpx.ErrorBody
//	@Failure		422						{object}	httpx.ErrorBody
//	@Router			/threads/{thread_id}/runs/{run_id}/join [get]
func (h *Handlers) Join(w http.ResponseWriter, r *http.Request) error {
	tid, rid, err := PathIDs(r)
	if err != nil {
		return err
	}
	cancelOnDisc, err := httpx.QueryBool(r, "cancel_on_disconnect", false)
	if err != nil {
		return err
	}
	run, err := h.svc.Get(r.Context(), tid, rid)
	if err != nil {
		return err
	}
	return h.respondWhenDone(w, r, run, cancelOnDisc)
}

// cancelAction is the action query parameter: interrupt (the default) or
// rollback.
func cancelAction(r *http.Request) (string, error) {
	return httpx.QueryEnum(r, "action", ActionInterrupt, ActionInterrupt, ActionRollback)
}

// Cancel godoc
//
//	@Summary		Cancel a run
//	@ID				cancel_run_http
//	@Description	action=interrupt (default) stops the run at its next step boundary keeping its checkpoints (status interrupted); rollback also deletes the run and everything it wrote. A pending run ends at once. wait=1 answers when the run has ended: 200 with its result, or 204 when it was rolled back; otherwise 202. Cancelling a finished run changes nothing.
//	@Tags			runs
//	@Produce		json
//	@Param			thread_id	path	string	true	"Thread ID"	format(uuid)
//	@Param			run_id		path	string	true	"Run ID"	format(uuid)
//	@Param			action		query	string	false	"interrupt or rollback"	Enums(interrupt, rollback)	default(interrupt)
//	@Param			wait		query	bool	false	"Wait for the run to end"
//	@Success		200			{object}	object
//	@Success		202
//	@Success		204
//	@Failure		404	{object}	httpx.ErrorBody
//	@Failure		422	{object}	httpx.ErrorBody
//	@Router			/threads/{thread_id}/runs/{run_id}/cancel [post]
func (h *Handlers) Cancel(w http.ResponseWriter, r *http.Request) error {
	tid, rid, err := PathIDs(r)
	if err != nil {
		return err
	}
	wait, err := httpx.QueryBool(r, "wait", false)
	if err != nil {
		return err
	}
	action, err := cancelAction(r)
	if err != nil {
		return err
	}
	if _, err := h.svc.Cancel(r.Context(), tid, rid, action); err != nil {
		return err
	}
	if !wait {
		w.WriteHeader(http.StatusAccepted)
		return nil
	}
	run, err := h.svc.Join(r.Context(), tid, rid)
	switch {
	case apperr.CodeOf(err) == apperr.NotFound:
		w.WriteHeader(http.StatusNoContent)
		return nil
	case err != nil && r.Context().Err() != nil:
		return nil // the client went away
	case err != nil:
		return err
	}
	body, err := h.svc.Result(r.Context(), run)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, body)
	return nil
}

// CancelManyRequest is the body of POST /runs/cancel: thread_id with
// run_ids, or status.
type CancelManyRequest struct {
	ThreadID string   `json:"thread_id" format:"uuid"`
	RunIDs   []string `json:"run_ids" format:"uuid"`
	Status   string   `json:"status" enums:"pending,running,all"`
}

// CancelMany godoc
//
//	@Summary		Cancel several runs
//	@ID				cancel_runs
//	@Description	By run ids on one thread, or every run with a status (pending, running or all). 204; 404 when nothing matched.
//	@Tags			runs
//	@Accept			json
//	@Param			action	query	string				false	"interrupt or rollback"	Enums(interrupt, rollback)
//	@Param			body	body	CancelManyRequest	true	"Which runs"
//	@Success		204
//	@Failure		404	{object}	httpx.ErrorBody
//	@Failure		422	{object}	httpx.ErrorBody
//	@Router			/runs/cancel [post]
func (h *Handlers) CancelMany(w http.ResponseWriter, r *http.Request) error {
	action, err := cancelAction(r)
	if err != nil {
		return err
	}
	var req CancelManyRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	byIDs := req.ThreadID != "" || len(req.RunIDs) > 0
	if byIDs == (req.Status != "") {
		return apperr.Errorf(apperr.Invalid, "Give either thread_id with run_ids, or status")
	}
	var tid uuid.UUID
	ids := []uuid.UUID{}
	if byIDs {
		var err error
		if tid, err = httpx.ParseUUID(req.ThreadID, "thread"); err != nil {
			return err
		}
		if len(req.RunIDs) == 0 {
			return apperr.Errorf(apperr.Invalid, "run_ids must not be empty")
		}
		for _, s := range req.RunIDs {
			id, err := httpx.ParseUUID(s, "run")
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
	} else if req.Status != "pending" && req.Status != "running" && req.Status != "all" {
		return apperr.Errorf(apperr.Invalid, "Invalid status %q: must be pending, running or all", req.Status)
	}
	n, err := h.svc.CancelMany(r.Context(), tid, ids, req.Status, action)
	if err != nil {
		return err
	}
	if n == 0 {
		return apperr.Errorf(apperr.NotFound, "No pending or running run matched")
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
