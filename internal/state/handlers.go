package state

import (
	"encoding/json"
	"net/http"
	"reflect"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/httpx"
)

// Handlers serves the thread state routes.
type Handlers struct {
	svc *Service
}

// NewHandlers returns the HTTP handlers of the state API.
func NewHandlers(svc *Service) *Handlers { return &Handlers{svc: svc} }

// CheckpointInput addresses a checkpoint in a request; thread_id is ignored
// (the path names the thread).
type CheckpointInput struct {
	ThreadID     string `json:"thread_id" extensions:"x-nullable"`
	NS           string `json:"checkpoint_ns" extensions:"x-nullable"`
	CheckpointID string `json:"checkpoint_id" extensions:"x-nullable"`
}

// checkpointID is a checkpoint id given as a string, as a Checkpoint-shaped
// object {checkpoint_id}, or as a config {configurable: {checkpoint_id}}
// (the JS SDK sends the last form for history's before).
type checkpointID string

// UnmarshalJSON accepts the three forms.
func (c *checkpointID) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*c = ""
		return nil
	}
	var s string
	if json.Unmarshal(b, &s) == nil {
		*c = checkpointID(s)
		return nil
	}
	var obj struct {
		CheckpointID *string `json:"checkpoint_id"`
		Configurable *struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"configurable"`
	}
	if err := httpx.UnmarshalStrict(b, &obj); apperr.CodeOf(err) != "" {
		return err
	} else if err != nil || (obj.CheckpointID == nil && obj.Configurable == nil) {
		return &json.UnmarshalTypeError{Value: "non-checkpoint", Type: reflect.TypeFor[string]()}
	}
	if obj.CheckpointID != nil {
		*c = checkpointID(*obj.CheckpointID)
	}
	if *c == "" && obj.Configurable != nil {
		*c = checkpointID(obj.Configurable.CheckpointID)
	}
	return nil
}

// checkID validates a checkpoint id: LangGraph ids are UUID-shaped (v6,
// with a variant byte that is not RFC 4122 for step -1, so only the shape is
// checked).
func checkID(id string) error {
	if id == "" {
		return nil
	}
	if len(id) != 36 || id[8] != '-' || id[13] != '-' || id[18] != '-' || id[23] != '-' {
		return apperr.Errorf(apperr.Invalid, "Invalid checkpoint ID: must be a UUID, got %q", id)
	}
	for i, c := range id {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			continue
		}
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return apperr.Errorf(apperr.Invalid, "Invalid checkpoint ID: must be a UUID, got %q", id)
		}
	}
	return nil
}

func (h *Handlers) getAt(w http.ResponseWriter, r *http.Request, cfg checkpoints.Config, subgraphs bool, win *WindowParams) error {
	id, err := httpx.PathUUID(r, "thread_id", "thread")
	if err == nil {
		err = checkID(cfg.CheckpointID)
	}
	if err != nil {
		return err
	}
	if !subgraphs {
		if subgraphs, err = httpx.QueryBool(r, "subgraphs", false); err != nil {
			return err
		}
	}
	if r.Method == http.MethodGet {
		if win, err = windowQuery(r); err != nil {
			return err
		}
	}
	st, err := h.svc.GetWindowed(r.Context(), id, cfg, subgraphs, win)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, st)
	return nil
}

// GetState godoc
//
//	@Summary		Get a thread's state
//	@ID				get_latest_thread_state
//	@Description	The latest root checkpoint as a ThreadState; a thread without checkpoints gives the empty state (checkpoint null). With messages_window=k the list channel window_channel (default messages) shows only its last k elements, read without the rest of the list, and the state gains messages_window {channel, total, before, seqs, compact[, summary]}: before is the seq to page on with GET /threads/{thread_id}/messages?before=. Without messages_window the response is unchanged.
//	@Tags			state
//	@Produce		json
//	@Param			thread_id	path		string	true	"Thread ID"	format(uuid)
//	@Param			subgraphs	query		bool	false	"Also fill in the state of pending tasks that run a subgraph (task.state)"
//	@Param			messages_window	query		int		false	"Opt-in: show only the last k elements of window_channel, read without the rest, and describe the window in messages_window"	minimum(1)	maximum(1000)
//	@Param			window_channel	query		string	false	"The list channel messages_window applies to"	default(messages)	maxlength(256)
//	@Param			summary			query		bool	false	"With messages_window: also return the widest summary that ends before the window (messages_window.summary)"
//	@Success		200			{object}	ThreadState
//	@Failure		404			{object}	httpx.ErrorBody
//	@Failure		422			{object}	httpx.ErrorBody
//	@Router			/threads/{thread_id}/state [get]
func (h *Handlers) GetState(w http.ResponseWriter, r *http.Request) error {
	return h.getAt(w, r, checkpoints.Config{}, false, nil)
}

// GetStateAt godoc
//
//	@Summary	Get a thread's state at a checkpoint (deprecated form)
//	@ID			get_thread_state_at_checkpoint
//	@Tags		state
//	@Produce	json
//	@Param		thread_id		path		string	true	"Thread ID"	format(uuid)
//	@Param		checkpoint_id	path		string	true	"Checkpoint ID"
//	@Param		subgraphs		query		bool	false	"Also fill in the state of pending tasks that run a subgraph (task.state)"
//	@Param		messages_window	query		int		false	"Opt-in: show only the last k elements of window_channel (see GET /threads/{thread_id}/state)"	minimum(1)	maximum(1000)
//	@Param		window_channel	query		string	false	"The list channel messages_window applies to"	default(messages)	maxlength(256)
//	@Param		summary			query		bool	false	"With messages_window: also return the widest summary that ends before the window"
//	@Success	200				{object}	ThreadState
//	@Failure	404				{object}	httpx.ErrorBody
//	@Failure	422				{object}	httpx.ErrorBody
//	@Router		/threads/{thread_id}/state/{checkpoint_id} [get]
func (h *Handlers) GetStateAt(w http.ResponseWriter, r *http.Request) error {
	return h.getAt(w, r, checkpoints.Config{CheckpointID: chi.URLParam(r, "checkpoint_id")}, false, nil)
}

// StateCheckpointRequest is the body of POST /threads/{id}/state/checkpoint.
type StateCheckpointRequest struct {
	Checkpoint *CheckpointInput `json:"checkpoint" validate:"required"`
	Subgraphs  bool             `json:"subgraphs"`
	// MessagesWindow opts in to a window of the last k elements of
	// WindowChannel (see GET /threads/{thread_id}/state).
	MessagesWindow *int `json:"messages_window" minimum:"1" maximum:"1000"`
	// WindowChannel is the list channel the window applies to.
	WindowChannel string `json:"window_channel" default:"messages" maxLength:"256"`
	// Summary also returns the summary that goes with the window.
	Summary bool `json:"summary"`
}

// PostStateAt godoc
//
//	@Summary	Get a thread's state at a checkpoint
//	@ID			post_thread_state_at_checkpoint
//	@Tags		state
//	@Accept		json
//	@Produce	json
//	@Param		thread_id	path		string					true	"Thread ID"	format(uuid)
//	@Param		body		body		StateCheckpointRequest	true	"Checkpoint"
//	@Success	200			{object}	ThreadState
//	@Failure	404			{object}	httpx.ErrorBody
//	@Failure	422			{object}	httpx.ErrorBody
//	@Router		/threads/{thread_id}/state/checkpoint [post]
func (h *Handlers) PostStateAt(w http.ResponseWriter, r *http.Request) error {
	var req StateCheckpointRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	if req.Checkpoint == nil {
		return apperr.Errorf(apperr.Invalid, "Invalid request body: field \"checkpoint\" is required")
	}
	win, err := windowBody(&req)
	if err != nil {
		return err
	}
	return h.getAt(w, r, checkpoints.Config{NS: req.Checkpoint.NS, CheckpointID: req.Checkpoint.CheckpointID}, req.Subgraphs, win)
}

// baseCheckpoint names the checkpoint a change applies to: checkpoint_id, or
// checkpoint.checkpoint_id; neither means the latest.
type baseCheckpoint struct {
	CheckpointID checkpointID     `json:"checkpoint_id" swaggertype:"string"`
	Checkpoint   *CheckpointInput `json:"checkpoint"`
}

func (b baseCheckpoint) baseID() (string, error) {
	id := string(b.CheckpointID)
	if id == "" && b.Checkpoint != nil {
		id = b.Checkpoint.CheckpointID
	}
	return id, checkID(id)
}

// ns is the namespace of the checkpoint a change applies to:
// checkpoint.checkpoint_ns ("" = the root graph; a subgraph's namespace,
// as a pending task's checkpoint names it, changes the subgraph's state).
func (b baseCheckpoint) ns() string {
	if b.Checkpoint == nil {
		return ""
	}
	return b.Checkpoint.NS
}

// UpdateRequest is the body of POST /threads/{id}/state (update_state).
type UpdateRequest struct {
	// Values: an object, a list of objects applied in order, or null.
	Values json.RawMessage `json:"values" swaggertype:"object"`
	AsNode string          `json:"as_node"`
	baseCheckpoint
}

// UpdateResponse is what update_state returns: the new checkpoint, also as
// "configurable" and "checkpoint_id" but for a LangGraph.js graph's (whose
// server answers the checkpoint alone).
type UpdateResponse struct {
	Checkpoint   CheckpointRef  `json:"checkpoint" validate:"required"`
	Configurable *CheckpointRef `json:"configurable,omitempty"`
	CheckpointID string         `json:"checkpoint_id,omitempty"`
}

// UpdateState godoc
//
//	@Summary		Update a thread's state
//	@ID				update_thread_state
//	@Description	Writes a new checkpoint whose values are the base's with the given values applied through the graph's reducers, as if as_node (default: the node that ran last) had written them; next is computed from the graph's edges out of as_node. The base is the latest checkpoint, or checkpoint_id / checkpoint; an older base forks the thread. checkpoint.checkpoint_ns names a subgraph's namespace (a pending task's checkpoint): the update then applies to that subgraph's latest (or checkpoint_id) checkpoint through the subgraph's own reducers and edges, and the parent's state, with its pending task, is left as it is. as_node "__copy__" forks without changes.
//	@Tags			state
//	@Accept			json
//	@Produce		json
//	@Param			thread_id	path		string			true	"Thread ID"	format(uuid)
//	@Param			body		body		UpdateRequest	false	"Update"
//	@Success		200			{object}	UpdateResponse
//	@Failure		400			{object}	httpx.ErrorBody	"thread has no registered graph, unknown or ambiguous as_node"
//	@Failure		404			{object}	httpx.ErrorBody
//	@Failure		409			{object}	httpx.ErrorBody	"thread busy"
//	@Failure		422			{object}	httpx.ErrorBody	"malformed body or an update the reducers reject"
//	@Router			/threads/{thread_id}/state [post]
func (h *Handlers) UpdateState(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathUUID(r, "thread_id", "thread")
	if err != nil {
		return err
	}
	var req UpdateRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	base, err := req.baseID()
	if err != nil {
		return err
	}
	cfg, err := h.svc.Update(r.Context(), id, UpdateParams{Values: req.Values, AsNode: req.AsNode, CheckpointID: base, NS: req.ns()})
	if err != nil {
		return err
	}
	g := h.svc.graphOfThread(r.Context(), id)
	ref := refOf(cfg, g)
	out := UpdateResponse{Checkpoint: *ref}
	if languageOf(g) == graph.LanguageJS {
		out.Checkpoint.CheckpointMap = nil // the new checkpoint's configurable, as LangGraph.js's server answers it
	} else {
		out.Configurable, out.CheckpointID = ref, cfg.CheckpointID
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// PatchStateRequest is the body of PATCH /threads/{id}/state.
type PatchStateRequest struct {
	Metadata map[string]any `json:"metadata"`
	baseCheckpoint
}

// PatchState godoc
//
//	@Summary	Merge metadata into a checkpoint's metadata
//	@ID			patch_thread_state
//	@Tags		state
//	@Accept		json
//	@Param		thread_id	path	string				true	"Thread ID"	format(uuid)
//	@Param		body		body	PatchStateRequest	false	"Metadata (merged into the latest checkpoint's, or checkpoint_id's)"
//	@Success	204
//	@Failure	404	{object}	httpx.ErrorBody
//	@Failure	422	{object}	httpx.ErrorBody
//	@Router		/threads/{thread_id}/state [patch]
func (h *Handlers) PatchState(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathUUID(r, "thread_id", "thread")
	if err != nil {
		return err
	}
	var req PatchStateRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	base, err := req.baseID()
	if err != nil {
		return err
	}
	if err := h.svc.PatchMetadata(r.Context(), id, base, req.Metadata); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// HistoryRequest is the body of POST /threads/{id}/history.
type HistoryRequest struct {
	// Limit: absent or null means 10; 0 is refused like any value outside 1..1000.
	Limit *int `json:"limit" default:"10" minimum:"1" maximum:"1000"`
	// Before: a checkpoint id, {checkpoint_id} or {configurable: {checkpoint_id}}.
	Before     checkpointID     `json:"before" swaggertype:"string"`
	Metadata   map[string]any   `json:"metadata"`
	Checkpoint *CheckpointInput `json:"checkpoint"`
}

// MaxHistoryPageBytes caps a history page: states are added until the
// encoded page reaches it (the state that passes it is the last; a page
// always holds at least one), so a large limit over large checkpoints
// cannot build a huge response. A page cut short says so with
// X-Pagination-Next: the checkpoint id to pass as before.
const MaxHistoryPageBytes = 4 << 20

func (h *Handlers) history(w http.ResponseWriter, r *http.Request, req HistoryRequest) error {
	id, err := httpx.PathUUID(r, "thread_id", "thread")
	if err != nil {
		return err
	}
	limit, err := httpx.Limit(req.Limit, 10)
	if err != nil {
		return err
	}
	if err := checkID(string(req.Before)); err != nil {
		return err
	}
	p := HistoryParams{Limit: limit, Before: string(req.Before), Metadata: req.Metadata, MaxBytes: MaxHistoryPageBytes}
	if req.Checkpoint != nil {
		if err := checkID(req.Checkpoint.CheckpointID); err != nil {
			return err
		}
		p.NS = req.Checkpoint.NS
	}
	// The page holds at most the byte cap plus one state.
	var page httpx.ArrayPage
	last := ""
	more, err := h.svc.History(r.Context(), id, p, func(st *ThreadState) (int, error) {
		before := page.Len()
		size, err := page.Add(st)
		last = st.Checkpoint.CheckpointID
		return size - before, err
	})
	if err != nil {
		return err
	}
	if more {
		w.Header().Set("X-Pagination-Next", last)
	}
	page.Write(w)
	return nil
}

// GetHistory godoc
//
//	@Summary		List a thread's checkpoints, newest first
//	@ID				get_thread_history
//	@Description	Keyset pages: continue with before = the last checkpoint id of a page. A page also ends early once its encoded size passes 4 MiB (it always holds at least one state); X-Pagination-Next then names the checkpoint to pass as before. limit=0 is refused (422) like any value outside 1..1000.
//	@Tags			state
//	@Produce		json
//	@Param			thread_id	path		string	true	"Thread ID"	format(uuid)
//	@Param			limit		query		int		false	"Page size"	default(10)	minimum(1)	maximum(1000)
//	@Param			before		query		string	false	"Only checkpoints older than this checkpoint id"
//	@Success		200			{array}		ThreadState
//	@Header			200			{string}	X-Pagination-Next	"set when the page was cut short by its size cap: the checkpoint id to pass as before"
//	@Failure		404			{object}	httpx.ErrorBody
//	@Failure		422			{object}	httpx.ErrorBody
//	@Router		/threads/{thread_id}/history [get]
func (h *Handlers) GetHistory(w http.ResponseWriter, r *http.Request) error {
	limit, err := httpx.QueryInt(r, "limit", 10, 1, 1000)
	if err != nil {
		return err
	}
	return h.history(w, r, HistoryRequest{Limit: &limit, Before: checkpointID(r.URL.Query().Get("before"))})
}

// PostHistory godoc
//
//	@Summary		List a thread's checkpoints, newest first
//	@ID				get_thread_history_post
//	@Description	Keyset pages: before names the newest checkpoint to exclude (continue with the last checkpoint id of a page); metadata filters by containment; checkpoint.checkpoint_ns lists a subgraph namespace. A page also ends early once its encoded size passes 4 MiB (it always holds at least one state); X-Pagination-Next then names the checkpoint to pass as before. "limit": 0 is refused (422) like any value outside 1..1000; an absent or null limit means 10.
//	@Tags			state
//	@Accept			json
//	@Produce		json
//	@Param			thread_id	path		string			true	"Thread ID"	format(uuid)
//	@Param			body		body		HistoryRequest	false	"Page"
//	@Success		200			{array}		ThreadState
//	@Header			200			{string}	X-Pagination-Next	"set when the page was cut short by its size cap: the checkpoint id to pass as before"
//	@Failure		404			{object}	httpx.ErrorBody
//	@Failure		422			{object}	httpx.ErrorBody
//	@Router			/threads/{thread_id}/history [post]
func (h *Handlers) PostHistory(w http.ResponseWriter, r *http.Request) error {
	var req HistoryRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	return h.history(w, r, req)
}

// Copy godoc
//
//	@Summary	Copy a thread with its whole history
//	@ID			copy_thread_post
//	@Tags		threads
//	@Produce	json
//	@Param		thread_id	path		string	true	"Thread ID"	format(uuid)
//	@Success	200			{object}	threads.Thread
//	@Failure	409			{object}	httpx.ErrorBody	"the thread is not there (or not the caller's), as the official servers answer"
//	@Failure	422			{object}	httpx.ErrorBody
//	@Router		/threads/{thread_id}/copy [post]
func (h *Handlers) Copy(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathUUID(r, "thread_id", "thread")
	if err != nil {
		return err
	}
	t, err := h.svc.Copy(r.Context(), id)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, t)
	return nil
}

// PruneRequest is the body of POST /threads/prune.
type PruneRequest struct {
	ThreadIDs []string `json:"thread_ids" validate:"required,max=1000" format:"uuid"`
	Strategy  string   `json:"strategy" enums:"delete,keep_latest" default:"delete"`
}

// MaxPruneIDs bounds thread_ids of one POST /threads/prune (more is a
// 422), so one request's work stays bounded: each thread is pruned in its
// own short transaction, and repeated ids count once.
const MaxPruneIDs = 1000

// PruneResponse is the answer of POST /threads/prune.
type PruneResponse struct {
	PrunedCount int `json:"pruned_count" validate:"required"`
}

// Prune godoc
//
//	@Summary		Prune threads
//	@ID				prune_threads
//	@Description	delete (default) deletes the threads (their children become roots); keep_latest keeps each thread and its latest checkpoint and deletes the rest of its history. Unknown ids are skipped, repeated ids count once; pruned_count counts the threads pruned. At most 1000 thread_ids per request (422 beyond).
//	@Tags			threads
//	@Accept			json
//	@Produce		json
//	@Param			body	body		PruneRequest	true	"Threads and strategy"
//	@Success		200		{object}	PruneResponse
//	@Failure		422		{object}	httpx.ErrorBody
//	@Router			/threads/prune [post]
func (h *Handlers) Prune(w http.ResponseWriter, r *http.Request) error {
	var req PruneRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	if req.ThreadIDs == nil {
		return apperr.Errorf(apperr.Invalid, "Invalid request body: field \"thread_ids\" is required")
	}
	if req.Strategy == "" {
		req.Strategy = PruneDelete
	}
	if req.Strategy != PruneDelete && req.Strategy != PruneKeepLatest {
		return apperr.Errorf(apperr.Invalid, "Invalid strategy %q: must be delete or keep_latest", req.Strategy)
	}
	if len(req.ThreadIDs) > MaxPruneIDs {
		return apperr.Errorf(apperr.Invalid, "Too many thread_ids: %d given, at most %d per request; send the rest in further requests",
			len(req.ThreadIDs), MaxPruneIDs)
	}
	ids := make([]uuid.UUID, 0, len(req.ThreadIDs))
	seen := make(map[uuid.UUID]bool, len(req.ThreadIDs))
	for _, s := range req.ThreadIDs {
		id, err := httpx.ParseUUID(s, "thread")
		if err != nil {
			return err
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	n, err := h.svc.Prune(r.Context(), ids, req.Strategy)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, PruneResponse{PrunedCount: n})
	return nil
}
