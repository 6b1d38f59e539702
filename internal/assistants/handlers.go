package assistants

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"reflect"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/threads"
)

// Handlers serves the assistant routes.
type Handlers struct {
	store   *Store
	threads *threads.Store
}

// NewHandlers returns the assistant handlers; ts deletes an assistant's
// threads on DELETE ?delete_threads=true.
func NewHandlers(s *Store, ts *threads.Store) *Handlers { return &Handlers{store: s, threads: ts} }

// CreateRequest is the body of POST /assistants.
type CreateRequest struct {
	GraphID string `json:"graph_id" validate:"required" example:"foo_bar"`
	// AssistantID is the new assistant's id (absent: a new random UUID).
	// null or "" is refused, not read as absent.
	AssistantID optionalID     `json:"assistant_id" swaggertype:"string" format:"uuid"`
	Config      map[string]any `json:"config"`
	Context     map[string]any `json:"context"`
	Metadata    map[string]any `json:"metadata"`
	Name        string         `json:"name"`
	Description *string        `json:"description"`
	IfExists    string         `json:"if_exists" enums:"raise,do_nothing" default:"raise"`
}

// optionalID is a string field that may be absent but not null: a client
// that sends "assistant_id": null meant an id it did not have, and gets a
// 422 rather than an assistant at a new random id (which a retry would
// then create again).
type optionalID struct {
	set, null bool
	value     string
}

// UnmarshalJSON records that the field was present, and whether as null.
func (o *optionalID) UnmarshalJSON(b []byte) error {
	*o = optionalID{set: true}
	if string(bytes.TrimSpace(b)) == "null" {
		o.null = true
		return nil
	}
	if err := json.Unmarshal(b, &o.value); err != nil {
		return &json.UnmarshalTypeError{Value: "non-string", Type: reflect.TypeFor[string]()}
	}
	return nil
}

// Create godoc
//
//	@Summary		Create an assistant
//	@ID				create_assistant
//	@Description	Creates an assistant (version 1) for a graph of the catalog. name defaults to graph_id, assistant_id to a new UUID. config.configurable and context are kept mirrored: the non-empty one is copied to the other; both non-empty and different is a 400. if_exists: raise (409 when the id exists) or do_nothing (the existing assistant is returned unchanged).
//	@Tags			assistants
//	@Accept			json
//	@Produce		json
//	@Param			body	body		CreateRequest	true	"Assistant"
//	@Success		200		{object}	Assistant
//	@Failure		400		{object}	httpx.ErrorBody	"config.configurable and context differ"
//	@Failure		404		{object}	httpx.ErrorBody	"unknown graph"
//	@Failure		409		{object}	httpx.ErrorBody	"the assistant exists"
//	@Failure		422		{object}	httpx.ErrorBody
//	@Router			/assistants [post]
func (h *Handlers) Create(w http.ResponseWriter, r *http.Request) error {
	var req CreateRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	p := CreateParams{GraphID: req.GraphID, Config: req.Config, Context: req.Context, Metadata: req.Metadata,
		Name: req.Name, Description: req.Description, IfExists: req.IfExists}
	if req.AssistantID.null {
		return apperr.Errorf(apperr.Invalid, "Invalid request body: field \"assistant_id\" must be a UUID, got null (omit the field for a new id)")
	}
	if req.AssistantID.set {
		id, err := httpx.ParseUUID(req.AssistantID.value, "assistant")
		if err != nil {
			return err
		}
		if err := CheckClientID(id); err != nil {
			return err
		}
		p.AssistantID = id
	}
	a, err := h.store.Create(r.Context(), p)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, a)
	return nil
}

// Get godoc
//
//	@Summary		Get an assistant
//	@ID				get_assistant
//	@Description	An assistant by id, or a graph's system assistant by graph name.
//	@Tags			assistants
//	@Produce		json
//	@Param			assistant_id	path		string	true	"Assistant ID or graph name"
//	@Success		200				{object}	Assistant
//	@Failure		404				{object}	httpx.ErrorBody
//	@Failure		422				{object}	httpx.ErrorBody
//	@Router			/assistants/{assistant_id} [get]
func (h *Handlers) Get(w http.ResponseWriter, r *http.Request) error {
	a, err := h.store.Resolve(r.Context(), h.store.db, httpx.PathParam(r, "assistant_id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, a)
	return nil
}

// PatchRequest is the body of PATCH /assistants/{assistant_id}; absent or
// null fields stay as they are.
type PatchRequest struct {
	GraphID     *string        `json:"graph_id"`
	Config      map[string]any `json:"config"`
	Context     map[string]any `json:"context"`
	Metadata    map[string]any `json:"metadata"`
	Name        *string        `json:"name" minLength:"1"`
	Description *string        `json:"description"`
}

// Patch godoc
//
//	@Summary		Update an assistant
//	@ID				patch_assistant
//	@Description	Writes a new version (the highest so far + 1) and makes it current. metadata is merged shallowly into the current metadata; graph_id, config, context, name and description replace theirs (config.configurable and context stay mirrored).
//	@Tags			assistants
//	@Accept			json
//	@Produce		json
//	@Param			assistant_id	path		string			true	"Assistant ID or graph name"
//	@Param			body			body		PatchRequest	false	"Fields to change"
//	@Success		200				{object}	Assistant
//	@Failure		400				{object}	httpx.ErrorBody	"config.configurable and context differ"
//	@Failure		404				{object}	httpx.ErrorBody	"unknown assistant or graph"
//	@Failure		409				{object}	httpx.ErrorBody	"a system assistant, shared by every tenant, which only the default tenant changes"
//	@Failure		422				{object}	httpx.ErrorBody
//	@Router			/assistants/{assistant_id} [patch]
func (h *Handlers) Patch(w http.ResponseWriter, r *http.Request) error {
	var req PatchRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	a, err := h.store.Patch(r.Context(), httpx.PathParam(r, "assistant_id"), PatchParams{GraphID: req.GraphID,
		Config: req.Config, Context: req.Context, Metadata: req.Metadata, Name: req.Name, Description: req.Description})
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, a)
	return nil
}

// deleteThreadsPage is how many thread ids DELETE ?delete_threads=true
// reads at a time.
const deleteThreadsPage = 100

// Delete godoc
//
//	@Summary		Delete an assistant
//	@ID				delete_assistant
//	@Description	Deletes the assistant and its versions. delete_threads=true first deletes every thread whose metadata.assistant_id is the assistant (with their runs and checkpoints; their children become roots). Runs already created keep the config they copied; new runs naming the assistant are a 404.
//	@Tags			assistants
//	@Param			assistant_id	path	string	true	"Assistant ID or graph name"
//	@Param			delete_threads	query	boolean	false	"Also delete the assistant's threads"	default(false)
//	@Success		204
//	@Failure		404	{object}	httpx.ErrorBody
//	@Failure		409	{object}	httpx.ErrorBody	"a system assistant, shared by every tenant, which only the default tenant deletes"
//	@Failure		422	{object}	httpx.ErrorBody
//	@Router			/assistants/{assistant_id} [delete]
func (h *Handlers) Delete(w http.ResponseWriter, r *http.Request) error {
	ref := httpx.PathParam(r, "assistant_id")
	withThreads, err := httpx.QueryBool(r, "delete_threads", false)
	if err != nil {
		return err
	}
	if withThreads {
		a, err := h.store.ResolveOwned(r.Context(), h.store.db, ref)
		if err != nil {
			return err
		}
		// Each thread goes in its own transaction through the threads
		// store's delete path (runs and checkpoints with it), like
		// POST /threads/prune; the assistant goes last, so a failure half
		// way leaves it to retry.
		after := uuid.Nil
		for {
			ids, err := h.store.threadsPage(r.Context(), a.AssistantID, after, deleteThreadsPage)
			if err != nil {
				return err
			}
			for _, id := range ids {
				if _, err := h.threads.Delete(r.Context(), id, threads.DeleteDetach); err != nil && apperr.CodeOf(err) != apperr.NotFound {
					return err
				}
			}
			if len(ids) < deleteThreadsPage {
				break
			}
			after = ids[len(ids)-1]
		}
	}
	if err := h.store.Delete(r.Context(), ref); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// SearchRequest is the body of POST /assistants/search (and, without the
// paging fields, of POST /assistants/count).
type SearchRequest struct {
	Metadata map[string]any `json:"metadata"`
	GraphID  string         `json:"graph_id"`
	Name     string         `json:"name"`
	// Limit: absent or null means 10; 0 is refused (422) like any value outside 1..1000.
	Limit     *int     `json:"limit" default:"10" minimum:"1" maximum:"1000"`
	Offset    int      `json:"offset" default:"0" minimum:"0"`
	SortBy    string   `json:"sort_by" enums:"assistant_id,graph_id,name,created_at,updated_at"`
	SortOrder string   `json:"sort_order" enums:"asc,desc"`
	Select    []string `json:"select" enums:"assistant_id,graph_id,name,description,config,context,metadata,version,created_at,updated_at"`
}

func (req *SearchRequest) filter() Filter {
	return Filter{Metadata: req.Metadata, GraphID: req.GraphID, Name: req.Name}
}

// MaxSearchPageBytes caps a page of POST /assistants/search: assistants
// are added until the encoded page reaches it (a page holds at least one),
// and the pagination headers then point at the next offset.
const MaxSearchPageBytes = 4 << 20

// params checks req whole (a count too holds its paging fields to the
// bounds search does) and returns the search it asks for.
func (req *SearchRequest) params() (SearchParams, error) {
	if err := httpx.CheckSelect(req.Select, selectable); err != nil {
		return SearchParams{}, err
	}
	p := SearchParams{Filter: req.filter(), Limit: 10, Offset: req.Offset, SortBy: req.SortBy, SortOrder: req.SortOrder}
	if req.Limit != nil {
		p.Limit = *req.Limit
	}
	return p, p.Validate()
}

// Search godoc
//
//	@Summary		Search assistants
//	@ID				search_assistants
//	@Description	Filters by metadata containment, graph_id (exact) and name (case-insensitive substring); ordered by sort_by (default created_at) and sort_order (default desc); names and graph ids sort case-insensitively. select projects each assistant onto the listed fields. An absent or null limit means 10; values outside 1..1000 are a 422. A page also ends early once its encoded size passes 4 MiB. Sets X-Pagination-Total and, when more matches follow, X-Pagination-Next.
//	@Tags			assistants
//	@Accept			json
//	@Produce		json
//	@Param			body	body		SearchRequest	false	"Filters"
//	@Success		200		{array}		Assistant
//	@Header			200		{integer}	X-Pagination-Total	"a lower bound of the match count: offset + page length, plus 1 when more matches follow (then X-Pagination-Next is set). POST /assistants/count gives the exact count."
//	@Header			200		{integer}	X-Pagination-Next	"offset of the next page; absent on the last page"
//	@Failure		422		{object}	httpx.ErrorBody
//	@Router			/assistants/search [post]
func (h *Handlers) Search(w http.ResponseWriter, r *http.Request) error {
	var req SearchRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	p, err := req.params()
	if err != nil {
		return err
	}
	var page httpx.ArrayPage
	n, more, err := h.store.Search(r.Context(), p, func(a *Assistant) (bool, error) {
		var v any = a
		if len(req.Select) > 0 {
			v = a.project(req.Select)
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

// Count godoc
//
//	@Summary	Count assistants
//	@ID			count_assistants
//	@Tags		assistants
//	@Accept		json
//	@Produce	json
//	@Param		body	body		SearchRequest	false	"Filters (metadata, graph_id, name; limit, offset, sort_by, sort_order and select are checked as by search, then ignored)"
//	@Success	200		{integer}	int
//	@Failure	422		{object}	httpx.ErrorBody
//	@Router		/assistants/count [post]
func (h *Handlers) Count(w http.ResponseWriter, r *http.Request) error {
	var req SearchRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	p, err := req.params()
	if err != nil {
		return err
	}
	n, err := h.store.Count(r.Context(), p.Filter)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, n)
	return nil
}

// VersionsRequest is the body of POST /assistants/{assistant_id}/versions.
type VersionsRequest struct {
	Metadata map[string]any `json:"metadata"`
	// Limit: absent or null means 10; values outside 1..1000 are a 422.
	Limit  *int `json:"limit" default:"10" minimum:"1" maximum:"1000"`
	Offset int  `json:"offset" default:"0" minimum:"0"`
}

// Versions godoc
//
//	@Summary		List an assistant's versions
//	@ID				get_assistant_versions
//	@Description	Newest first, filtered by metadata containment. Sets X-Pagination-Total and, when more versions follow, X-Pagination-Next.
//	@Tags			assistants
//	@Accept			json
//	@Produce		json
//	@Param			assistant_id	path		string			true	"Assistant ID or graph name"
//	@Param			body			body		VersionsRequest	false	"Filter and page"
//	@Success		200				{array}		Version
//	@Failure		404				{object}	httpx.ErrorBody
//	@Failure		422				{object}	httpx.ErrorBody
//	@Router			/assistants/{assistant_id}/versions [post]
func (h *Handlers) Versions(w http.ResponseWriter, r *http.Request) error {
	var req VersionsRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	limit, err := httpx.Limit(req.Limit, 10)
	if err != nil {
		return err
	}
	if err := httpx.CheckOffset(req.Offset); err != nil {
		return err
	}
	list, more, err := h.store.Versions(r.Context(), httpx.PathParam(r, "assistant_id"), req.Metadata, limit, req.Offset)
	if err != nil {
		return err
	}
	httpx.SetPagination(w, req.Offset, limit, len(list), more)
	httpx.WriteJSON(w, http.StatusOK, list)
	return nil
}

// LatestRequest is the body of POST /assistants/{assistant_id}/latest.
type LatestRequest struct {
	// Version is the version to make current; the version query parameter
	// may give it instead (one of the two is needed; both must agree).
	Version *int `json:"version" minimum:"1" maximum:"2147483647"`
}

// SetLatest godoc
//
//	@Summary		Make a version current
//	@ID				set_latest_assistant_version
//	@Description	The version's graph_id, config, context, metadata, name and description become the assistant's. The version is the body's version or the version query parameter (LangGraph's document names the query, its servers read the body): one of them is needed, and when both are given they must be equal (else a 422).
//	@Tags			assistants
//	@Accept			json
//	@Produce		json
//	@Param			assistant_id	path		string			true	"Assistant ID or graph name"
//	@Param			version			query		int				false	"The version (instead of the body's)"	minimum(1)	maximum(2147483647)
//	@Param			body			body		LatestRequest	false	"Version"
//	@Success		200				{object}	Assistant
//	@Failure		404				{object}	httpx.ErrorBody	"unknown assistant or version"
//	@Failure		409				{object}	httpx.ErrorBody	"a system assistant, shared by every tenant, which only the default tenant changes"
//	@Failure		422				{object}	httpx.ErrorBody
//	@Router			/assistants/{assistant_id}/latest [post]
func (h *Handlers) SetLatest(w http.ResponseWriter, r *http.Request) error {
	var req LatestRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	if err := latestFromQuery(r, &req); err != nil {
		return err
	}
	if *req.Version < 1 || *req.Version > math.MaxInt32 {
		return apperr.Errorf(apperr.Invalid, "Invalid version %d: must be a positive 32-bit integer", *req.Version)
	}
	a, err := h.store.SetLatest(r.Context(), httpx.PathParam(r, "assistant_id"), *req.Version)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, a)
	return nil
}
