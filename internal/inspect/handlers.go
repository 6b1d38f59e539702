package inspect

import (
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/postgres"
)

// Handlers serves the /inspect routes.
type Handlers struct{ db postgres.DBTX }

// NewHandlers returns the inspect handlers reading db.
func NewHandlers(db postgres.DBTX) *Handlers { return &Handlers{db: db} }

// maxStorageIDs bounds GET /inspect/threads/storage: a page of threads.
const maxStorageIDs = 100

// ThreadStorage godoc
//
//	@Summary		Storage of threads
//	@ID				inspect_thread_storage
//	@Description	For each given thread (in the order given; unknown ids are left out): its rows and bytes in checkpoints, checkpoint_blobs, checkpoint_writes and run_events, their total, and its counts of direct children and runs. Bytes are pg_column_size of the data columns (as stored, after compression; no row headers or indexes). Reads every row of those threads: pass a page of threads (1 to 100 ids).
//	@Tags			inspect
//	@Produce		json
//	@Param			thread_id	query		[]string	true	"Thread ids (repeated, comma list or JSON array), 1 to 100"
//	@Success		200			{array}		ThreadStorage
//	@Failure		422			{object}	httpx.ErrorBody
//	@Router			/inspect/threads/storage [get]
func (h *Handlers) ThreadStorage(w http.ResponseWriter, r *http.Request) error {
	list := httpx.QueryList(r.URL.Query()["thread_id"])
	if len(list) == 0 || len(list) > maxStorageIDs {
		return apperr.Errorf(apperr.Invalid, "Invalid query parameter thread_id: give 1 to %d thread ids", maxStorageIDs)
	}
	ids := make([]uuid.UUID, len(list))
	for i, s := range list {
		id, err := httpx.ParseUUID(s, "thread")
		if err != nil {
			return err
		}
		ids[i] = id
	}
	out, err := ThreadStorageList(r.Context(), h.db, ids)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// Checkpoints godoc
//
//	@Summary		A thread's checkpoint tree
//	@ID				inspect_checkpoints
//	@Description	A page of the thread's checkpoints in one namespace, newest first across every branch (keyset-paged like history: before = the next cursor), each without values: parent, step, source, run_id, the channels it changed and counts of the pending writes recorded under it (errors, interrupts, resumes). Also the head (latest checkpoint), the namespace's total and the thread's namespaces. A page costs O(limit).
//	@Tags			inspect
//	@Produce		json
//	@Param			thread_id		path		string	true	"Thread ID"	format(uuid)
//	@Param			limit			query		int		false	"Page size"	default(100)	minimum(1)	maximum(1000)
//	@Param			before			query		string	false	"Only checkpoints older than this checkpoint id (the previous page's next)"
//	@Param			checkpoint_ns	query		string	false	"Namespace (default: the root graph)"
//	@Success		200				{object}	CheckpointPage
//	@Failure		404				{object}	httpx.ErrorBody
//	@Failure		422				{object}	httpx.ErrorBody
//	@Router			/inspect/threads/{thread_id}/checkpoints [get]
func (h *Handlers) Checkpoints(w http.ResponseWriter, r *http.Request) error {
	tid, err := h.thread(r)
	if err != nil {
		return err
	}
	limit, err := httpx.QueryInt(r, "limit", 100, 1, 1000)
	if err != nil {
		return err
	}
	before, err := textParam("before", r.URL.Query().Get("before"), true)
	if err != nil {
		return err
	}
	ns, err := textParam("checkpoint_ns", r.URL.Query().Get("checkpoint_ns"), true)
	if err != nil {
		return err
	}
	page, err := CheckpointNodeList(r.Context(), h.db, tid.String(), ns, before, limit)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, page)
	return nil
}

// Checkpoint godoc
//
//	@Summary		One checkpoint as stored
//	@ID				inspect_checkpoint
//	@Description	The checkpoint's raw fields (channel_versions, versions_seen, updated_channels, metadata), its parent's channel_versions and the channels whose version changed, the blob behind each channel version (type and bytes), its pending writes decoded (task id and path, idx, channel, type, bytes, value — including __error__, __interrupt__, __resume__ and the writes of tasks that failed) and its children (forks when several).
//	@Tags			inspect
//	@Produce		json
//	@Param			thread_id		path		string	true	"Thread ID"	format(uuid)
//	@Param			checkpoint_id	path		string	true	"Checkpoint ID"
//	@Param			checkpoint_ns	query		string	false	"Namespace (default: the root graph)"
//	@Success		200				{object}	CheckpointDetail
//	@Failure		404				{object}	httpx.ErrorBody
//	@Failure		422				{object}	httpx.ErrorBody
//	@Router			/inspect/threads/{thread_id}/checkpoints/{checkpoint_id} [get]
func (h *Handlers) Checkpoint(w http.ResponseWriter, r *http.Request) error {
	tid, err := h.thread(r)
	if err != nil {
		return err
	}
	id, err := textParam("checkpoint_id", httpx.PathParam(r, "checkpoint_id"), false)
	if err != nil {
		return err
	}
	ns, err := textParam("checkpoint_ns", r.URL.Query().Get("checkpoint_ns"), true)
	if err != nil {
		return err
	}
	d, err := CheckpointDetailGet(r.Context(), h.db, tid.String(), ns, id)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, d)
	return nil
}

// Runs godoc
//
//	@Summary		A thread's runs with timings
//	@ID				inspect_runs
//	@Description	Newest first, as GET /threads/{thread_id}/runs, with what the Run object leaves out: started_at, finished_at, error, the checkpoint it started from, whether it resumed an interrupt, and its event count. X-Pagination-Next gives the next offset when more follow.
//	@Tags			inspect
//	@Produce		json
//	@Param			thread_id	path		string	true	"Thread ID"	format(uuid)
//	@Param			limit		query		int		false	"Page size"	default(20)	minimum(1)	maximum(1000)
//	@Param			offset		query		int		false	"Offset"	default(0)	minimum(0)	maximum(1073741824)
//	@Success		200			{array}		RunSummary
//	@Header			200			{integer}	X-Pagination-Next	"offset of the next page; absent on the last page"
//	@Failure		404			{object}	httpx.ErrorBody
//	@Failure		422			{object}	httpx.ErrorBody
//	@Router			/inspect/threads/{thread_id}/runs [get]
func (h *Handlers) Runs(w http.ResponseWriter, r *http.Request) error {
	tid, err := h.thread(r)
	if err != nil {
		return err
	}
	limit, offset, err := httpx.QueryPage(r, 20, 1<<30)
	if err != nil {
		return err
	}
	list, err := RunSummaryList(r.Context(), h.db, tid, limit, offset)
	if err != nil {
		return err
	}
	if len(list) > limit {
		list = list[:limit]
		w.Header().Set("X-Pagination-Next", strconv.Itoa(offset+limit))
	}
	httpx.WriteJSON(w, http.StatusOK, list)
	return nil
}

// Run godoc
//
//	@Summary		One run with timings
//	@ID				inspect_run
//	@Description	As an item of GET /inspect/threads/{thread_id}/runs.
//	@Tags			inspect
//	@Produce		json
//	@Param			thread_id	path		string	true	"Thread ID"	format(uuid)
//	@Param			run_id		path		string	true	"Run ID"	format(uuid)
//	@Success		200			{object}	RunSummary
//	@Failure		404			{object}	httpx.ErrorBody
//	@Failure		422			{object}	httpx.ErrorBody
//	@Router			/inspect/threads/{thread_id}/runs/{run_id} [get]
func (h *Handlers) Run(w http.ResponseWriter, r *http.Request) error {
	tid, err := httpx.PathUUID(r, "thread_id", "thread")
	if err != nil {
		return err
	}
	rid, err := httpx.PathUUID(r, "run_id", "run")
	if err != nil {
		return err
	}
	s, err := RunSummaryGet(r.Context(), h.db, tid, rid)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, s)
	return nil
}

// thread reads the thread_id path parameter of a thread that exists.
func (h *Handlers) thread(r *http.Request) (uuid.UUID, error) {
	tid, err := httpx.PathUUID(r, "thread_id", "thread")
	if err != nil {
		return tid, err
	}
	ok, err := threadExists(r.Context(), h.db, tid)
	if err != nil {
		return tid, err
	}
	if !ok {
		return tid, errNoThread(tid.String())
	}
	return tid, nil
}

// maxTextParam bounds checkpoint ids and namespaces given in a request.
const maxTextParam = 512

// textParam checks a checkpoint id or namespace: valid UTF-8 without NUL
// (PostgreSQL text cannot hold one), at most maxTextParam bytes, and not
// empty unless allowed.
func textParam(name, v string, emptyOK bool) (string, error) {
	switch {
	case v == "" && !emptyOK:
		return "", apperr.Errorf(apperr.Invalid, "Invalid %s: must not be empty", name)
	case len(v) > maxTextParam:
		return "", apperr.Errorf(apperr.Invalid, "Invalid %s: longer than %d bytes", name, maxTextParam)
	case !utf8.ValidString(v) || strings.ContainsRune(v, 0):
		return "", apperr.Errorf(apperr.Invalid, "Invalid %s: must be UTF-8 text without NUL", name)
	}
	return v, nil
}
