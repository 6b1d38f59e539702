package threads

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/httpx"
)

// Handlers serves the /threads routes.
type Handlers struct {
	store *Store
	// Supersteps applies POST /threads' supersteps to the new thread inside
	// its creating transaction (the state package provides it). Without it,
	// supersteps are refused.
	Supersteps func(ctx context.Context, tx pgx.Tx, threadID uuid.UUID, raw json.RawMessage) error
}

// NewHandlers returns the HTTP handlers of the threads API.
func NewHandlers(store *Store) *Handlers { return &Handlers{store: store} }

// nullableString is a JSON string field that tells "absent" from null.
type nullableString struct {
	Set   bool
	Value *string
}

// UnmarshalJSON records that the field was present.
func (n *nullableString) UnmarshalJSON(b []byte) error {
	n.Set = true
	if string(b) == "null" {
		n.Value = nil
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return &json.UnmarshalTypeError{Value: "non-string", Type: reflect.TypeFor[string]()}
	}
	n.Value = &s
	return nil
}

// optionalUUID parses a nullable id field: null or blank → nil.
func optionalUUID(s *string, field string) (*uuid.UUID, error) {
	s = normalizeText(s)
	if s == nil {
		return nil, nil
	}
	id, err := uuid.Parse(*s)
	if err != nil {
		return nil, apperr.Errorf(apperr.Invalid, "Invalid %s: must be a UUID, got %q", field, *s)
	}
	return &id, nil
}

// CreateRequest is the body of POST /threads.
type CreateRequest struct {
	ThreadID       string         `json:"thread_id" format:"uuid"`
	Metadata       map[string]any `json:"metadata"`
	IfExists       string         `json:"if_exists" enums:"raise,do_nothing"`
	ParentThreadID *string        `json:"parent_thread_id" format:"uuid"`
	ResourceID     *string        `json:"resource_id"`
	// TTL makes the thread expire: minutes, or {"ttl": minutes, "strategy":
	// "delete" | "keep_latest"}, counted from its last activity.
	TTL TTLRequest `json:"ttl" swaggertype:"object"`
	// Supersteps are update_state calls applied to the new thread in its
	// creating transaction: [{updates: [{values, as_node}]}]; they need
	// metadata.graph_id.
	Supersteps json.RawMessage `json:"supersteps" swaggertype:"array,object"`
}

// Create godoc
//
//	@Summary		Create a thread
//	@ID				create_thread
//	@Description	Creates a thread, optionally under a parent thread. if_exists=do_nothing returns an existing thread of the same id unchanged.
//	@Tags			threads
//	@Accept			json
//	@Produce		json
//	@Param			body	body		CreateRequest	false	"Thread to create"
//	@Success		200		{object}	Thread
//	@Failure		400		{object}	httpx.ErrorBody	"supersteps that cannot apply (a thread without a graph: set metadata.graph_id; an unknown as_node)"
//	@Failure		409		{object}	httpx.ErrorBody	"thread exists"
//	@Failure		422		{object}	httpx.ErrorBody	"malformed body, missing parent"
//	@Router			/threads [post]
func (h *Handlers) Create(w http.ResponseWriter, r *http.Request) error {
	var req CreateRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	// A caller restricted by an authorize hook's filters creates threads
	// it can see: the filters are written into the metadata.
	p := CreateParams{Metadata: auth.Stamp(req.Metadata, auth.Filters(r.Context())), IfExists: req.IfExists,
		ResourceID: req.ResourceID, TTL: req.TTL}
	if req.ThreadID != "" {
		id, err := httpx.ParseUUID(req.ThreadID, "thread")
		if err != nil {
			return err
		}
		p.ThreadID = id
	}
	if req.IfExists != "" && req.IfExists != "raise" && req.IfExists != "do_nothing" {
		return apperr.Errorf(apperr.Invalid, "Invalid if_exists %q: must be raise or do_nothing", req.IfExists)
	}
	if len(req.Supersteps) > 0 && string(req.Supersteps) != "null" && string(req.Supersteps) != "[]" {
		if h.Supersteps == nil {
			return apperr.Errorf(apperr.BadRequest, "supersteps are not supported by this server")
		}
		raw := req.Supersteps
		p.Init = func(ctx context.Context, tx pgx.Tx, id uuid.UUID) error { return h.Supersteps(ctx, tx, id, raw) }
	}
	parent, err := optionalUUID(req.ParentThreadID, "parent_thread_id")
	if err != nil {
		return err
	}
	p.ParentThreadID = parent
	t, err := h.store.Create(r.Context(), p)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, t)
	return nil
}

// Get godoc
//
//	@Summary	Get a thread
//	@ID			get_thread
//	@Tags		threads
//	@Produce	json
//	@Param		thread_id	path		string		true	"Thread ID"	format(uuid)
//	@Param		include		query		string		false	"Extra fields, comma-separated: ttl (other values are ignored, as on LangGraph's server; a repeated parameter or a JSON array is read too)"
//	@Success	200			{object}	Thread
//	@Failure	404			{object}	httpx.ErrorBody
//	@Failure	422			{object}	httpx.ErrorBody
//	@Router		/threads/{thread_id} [get]
func (h *Handlers) Get(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathUUID(r, "thread_id", "thread")
	if err != nil {
		return err
	}
	t, err := h.store.Get(r.Context(), id)
	if err != nil {
		return err
	}
	if slices.Contains(httpx.QueryList(r.URL.Query()["include"]), "ttl") {
		t.attachTTL()
	}
	httpx.WriteJSON(w, http.StatusOK, t)
	return nil
}

// PatchRequest is the body of PATCH /threads/{thread_id}. Absent fields stay
// unchanged; parent_thread_id null (or blank) makes the thread a root.
type PatchRequest struct {
	Metadata       map[string]any `json:"metadata"`
	ParentThreadID nullableString `json:"parent_thread_id" swaggertype:"string" format:"uuid" extensions:"x-nullable"`
	ResourceID     nullableString `json:"resource_id" swaggertype:"string" extensions:"x-nullable"`
	// TTL replaces the thread's ttl (same forms as on create); null or
	// absent keeps it. Every patch restarts the ttl clock.
	TTL TTLRequest `json:"ttl" swaggertype:"object"`
}

// Patch godoc
//
//	@Summary		Update a thread
//	@ID				patch_thread
//	@Description	Merges metadata (shallow) and optionally moves the thread under another parent, re-validating the hierarchy.
//	@Tags			threads
//	@Accept			json
//	@Produce		json
//	@Param			thread_id	path		string			true	"Thread ID"	format(uuid)
//	@Param			body		body		PatchRequest	false	"Changes"
//	@Success		200			{object}	Thread
//	@Failure		404			{object}	httpx.ErrorBody
//	@Failure		422			{object}	httpx.ErrorBody	"malformed body, missing parent, self-parent or cycle"
//	@Router			/threads/{thread_id} [patch]
func (h *Handlers) Patch(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathUUID(r, "thread_id", "thread")
	if err != nil {
		return err
	}
	var req PatchRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	p := PatchParams{Metadata: req.Metadata, SetParent: req.ParentThreadID.Set,
		SetResource: req.ResourceID.Set, ResourceID: req.ResourceID.Value, TTL: req.TTL}
	if p.ParentThreadID, err = optionalUUID(req.ParentThreadID.Value, "parent_thread_id"); err != nil {
		return err
	}
	t, err := h.store.Patch(r.Context(), id, p)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, t)
	return nil
}

// Delete godoc
//
//	@Summary		Delete a thread
//	@ID				delete_thread
//	@Description	Deletes a thread and what belongs to it. strategy decides its children: detach (default) makes them roots, reject refuses (409) while children exist, cascade deletes the whole subtree.
//	@Tags			threads
//	@Param			thread_id	path	string	true	"Thread ID"	format(uuid)
//	@Param			strategy	query	string	false	"What happens to children"	Enums(detach, reject, cascade)	default(detach)
//	@Success		204
//	@Failure		404	{object}	httpx.ErrorBody
//	@Failure		409	{object}	httpx.ErrorBody	"reject strategy and the thread has children"
//	@Failure		422	{object}	httpx.ErrorBody
//	@Router			/threads/{thread_id} [delete]
func (h *Handlers) Delete(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathUUID(r, "thread_id", "thread")
	if err != nil {
		return err
	}
	s, err := httpx.QueryEnum(r, "strategy", string(DeleteDetach), string(DeleteDetach), string(DeleteReject), string(DeleteCascade))
	if err != nil {
		return err
	}
	strategy, err := ParseDeleteStrategy(s)
	if err != nil {
		return err
	}
	if _, err := h.store.Delete(r.Context(), id, strategy); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// SearchRequest is the body of POST /threads/search (and, without the
// paging fields, of POST /threads/count).
type SearchRequest struct {
	Metadata       map[string]any `json:"metadata"`
	Values         map[string]any `json:"values"`
	IDs            []string       `json:"ids" format:"uuid"`
	Status         string         `json:"status" enums:"idle,busy,interrupted,error"`
	ParentThreadID *string        `json:"parent_thread_id" format:"uuid"`
	RootOnly       bool           `json:"root_only"`
	ResourceID     *string        `json:"resource_id"`
	// Limit: absent or null means 10; 0 is refused (422) like any value outside 1..1000.
	Limit     *int     `json:"limit" default:"10" minimum:"1" maximum:"1000"`
	Offset    int      `json:"offset" default:"0" minimum:"0"`
	SortBy    string   `json:"sort_by" enums:"thread_id,status,created_at,updated_at,state_updated_at"`
	SortOrder string   `json:"sort_order" enums:"asc,desc"`
	Select    []string `json:"select" enums:"thread_id,created_at,updated_at,state_updated_at,metadata,config,context,status,values,interrupts,error,parent_thread_id,resource_id"`
	// Extract: alias → path into a thread's values, metadata, config or
	// interrupts, with .key and [index] steps (values.messages[-1].content);
	// each thread of the page gets the value at each path under
	// "extracted" (null where the path leads nowhere). At most 10 aliases,
	// each an identifier (letters, digits, underscores; not a digit first)
	// that is not the name of a thread field.
	Extract map[string]string `json:"extract"`
}

// filter is the store filter of req, restricted by the authorize
// decision's metadata filters of ctx (auth.Filters); none is false when
// they contradict the request's own metadata filter, so nothing matches.
func (req *SearchRequest) filter(ctx context.Context) (f Filter, none bool, err error) {
	md, ok := auth.MergeFilters(req.Metadata, auth.Filters(ctx))
	if !ok {
		return f, true, nil
	}
	f = Filter{Metadata: md, Values: req.Values, Status: req.Status,
		RootOnly: req.RootOnly, ResourceID: req.ResourceID}
	if req.IDs != nil {
		f.IDs = make([]uuid.UUID, 0, len(req.IDs))
		for _, s := range req.IDs {
			id, err := httpx.ParseUUID(s, "thread")
			if err != nil {
				return f, false, err
			}
			f.IDs = append(f.IDs, id)
		}
	}
	f.ParentThreadID, err = optionalUUID(req.ParentThreadID, "parent_thread_id")
	return f, false, err
}

// params checks req whole (a count too holds its paging fields to the
// bounds search does: what the schema declares holds on both routes) and
// returns the search it asks for; none as for filter.
func (req *SearchRequest) params(ctx context.Context) (p SearchParams, none bool, err error) {
	f, none, err := req.filter(ctx)
	if err != nil {
		return p, false, err
	}
	if err := httpx.CheckSelect(req.Select, selectable); err != nil {
		return p, false, err
	}
	if err := checkExtract(req.Extract); err != nil {
		return p, false, err
	}
	limit, err := httpx.Limit(req.Limit, 10)
	if err != nil {
		return p, false, err
	}
	p = SearchParams{Filter: f, Limit: limit, Offset: req.Offset, SortBy: req.SortBy, SortOrder: req.SortOrder}
	if err := p.Validate(); err != nil {
		return p, false, err
	}
	return p, none, nil
}

// Search godoc
//
//	@Summary		Search threads
//	@ID				search_threads
//	@Description	Filters by metadata / values containment, ids, status, parent or roots; ordered by sort_by (default updated_at desc). "limit": 0 is refused (422) like any value outside 1..1000; an absent or null limit means 10. A page also ends early once its encoded size passes 4 MiB (it always holds at least one thread). Sets X-Pagination-Total and, when more matches follow the page, X-Pagination-Next = offset + the page's length (the offset to continue from).
//	@Tags			threads
//	@Accept			json
//	@Produce		json
//	@Param			body	body		SearchRequest	false	"Filters"
//	@Success		200		{array}		Thread
//	@Header			200		{integer}	X-Pagination-Total	"a lower bound of the match count, not the exact total: offset + page length, plus 1 when more matches follow (then X-Pagination-Next is set); exact only on the last page. POST /threads/count gives the exact count."
//	@Header			200		{integer}	X-Pagination-Next	"offset of the next page (offset + the page's length); absent on the last page"
//	@Failure		422		{object}	httpx.ErrorBody
//	@Router			/threads/search [post]
func (h *Handlers) Search(w http.ResponseWriter, r *http.Request) error {
	var req SearchRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	p, none, err := req.params(r.Context())
	if err != nil {
		return err
	}
	if none {
		httpx.SetPagination(w, p.Offset, 0, 0, false)
		httpx.WriteJSON(w, http.StatusOK, []any{})
		return nil
	}
	// The page ends early once it passes MaxSearchPageBytes.
	var page httpx.ArrayPage
	n, more, err := h.store.Search(r.Context(), p, func(t *Thread) (bool, error) {
		if req.Extract != nil {
			var err error
			if t.Extracted, err = t.extract(req.Extract); err != nil {
				return false, err
			}
		}
		var v any = t
		if len(req.Select) > 0 {
			v = t.project(req.Select)
		}
		size, err := page.Add(v)
		return size >= MaxSearchPageBytes, err
	})
	if err != nil {
		return err
	}
	httpx.SetPagination(w, p.Offset, n, n, more)
	page.Write(w)
	return nil
}

// MaxSearchPageBytes caps a page of POST /threads/search: threads are
// added until the encoded page reaches it (the thread that passes it is the
// last; a page holds at least one), and the pagination headers then point
// at the next offset, so large thread values cannot build a huge response.
const MaxSearchPageBytes = 4 << 20

// Count godoc
//
//	@Summary	Count threads
//	@ID			count_threads
//	@Tags		threads
//	@Accept		json
//	@Produce	json
//	@Param		body	body		SearchRequest	false	"Filters (limit, offset, sort_by, sort_order, select and extract are checked as by search, then ignored)"
//	@Success	200		{integer}	int
//	@Failure	422		{object}	httpx.ErrorBody
//	@Router		/threads/count [post]
func (h *Handlers) Count(w http.ResponseWriter, r *http.Request) error {
	var req SearchRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	p, none, err := req.params(r.Context())
	if err != nil || none {
		if err == nil {
			httpx.WriteJSON(w, http.StatusOK, 0)
		}
		return err
	}
	n, err := h.store.Count(r.Context(), p.Filter)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, n)
	return nil
}

// Children godoc
//
//	@Summary	List a thread's direct children
//	@ID			list_thread_children
//	@Tags		threads
//	@Produce	json
//	@Param		thread_id	path	string	true	"Thread ID"	format(uuid)
//	@Param		limit		query	int		false	"Page size"	default(100)	minimum(1)	maximum(1000)
//	@Param		offset		query	int		false	"Offset"	default(0)	minimum(0)	maximum(2147483647)
//	@Success	200			{array}	Thread
//	@Header		200			{integer}	X-Pagination-Total	"a lower bound of the child count: offset + page length, plus 1 when more follow; exact only on the last page"
//	@Header		200			{integer}	X-Pagination-Next	"offset of the next page; absent on the last page"
//	@Failure	404			{object}	httpx.ErrorBody
//	@Failure	422			{object}	httpx.ErrorBody
//	@Router		/threads/{thread_id}/children [get]
func (h *Handlers) Children(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathUUID(r, "thread_id", "thread")
	if err != nil {
		return err
	}
	limit, offset, err := httpx.QueryPage(r, 100, 1<<31-1)
	if err != nil {
		return err
	}
	var page httpx.ArrayPage
	emit := func(t *Thread) (bool, error) {
		size, err := page.Add(t)
		return size >= MaxSearchPageBytes, err // the same cap as search
	}
	var n int
	var more bool
	if filters := auth.Filters(r.Context()); filters != nil {
		// Under an authorize hook's filters: the children that match them,
		// in the same order.
		n, more, err = h.store.Search(r.Context(), SearchParams{Filter: Filter{ParentThreadID: &id, Metadata: filters},
			Limit: limit, Offset: offset, SortBy: "created_at", SortOrder: "asc"}, emit)
	} else {
		n, more, err = h.store.Children(r.Context(), id, limit, offset, emit)
	}
	if err != nil {
		return err
	}
	httpx.SetPagination(w, offset, n, n, more)
	page.Write(w)
	return nil
}
