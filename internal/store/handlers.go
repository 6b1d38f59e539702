package store

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/dispatch"
	"github.com/weftdev/weft/internal/httpx"
)

// Handlers serves the /store routes.
type Handlers struct {
	store *Store
}

// NewHandlers returns the HTTP handlers of the store API.
func NewHandlers(store *Store) *Handlers { return &Handlers{store: store} }

// Headers a worker sends with the store requests of a run it executes (the
// JS worker's WeftStore does): the run's store is its tenant's, whatever
// tenant the worker's own credentials name.
const (
	HeaderDispatchID = "X-Weft-Dispatch-Id"
	HeaderClaimToken = "X-Weft-Claim-Token"
)

// scope is the context a store request acts in: the request's own, or,
// with the run headers, the tenant of the run of a dispatch the caller
// holds the current claim of (409 when it does not).
func (h *Handlers) scope(r *http.Request) (context.Context, error) {
	ctx := r.Context()
	rawID, rawToken := r.Header.Get(HeaderDispatchID), r.Header.Get(HeaderClaimToken)
	if rawID == "" && rawToken == "" {
		return ctx, nil
	}
	id, err := uuid.Parse(rawID)
	if err != nil {
		return nil, apperr.Errorf(apperr.Invalid, "Invalid %s header: must be a dispatch id (UUID)", HeaderDispatchID)
	}
	token, err := uuid.Parse(rawToken)
	if err != nil {
		return nil, apperr.Errorf(apperr.Invalid, "Invalid %s header: must be the dispatch's claim token (UUID)", HeaderClaimToken)
	}
	tenant, err := dispatch.ClaimTenant(ctx, h.store.db, id, token)
	if err != nil {
		return nil, err
	}
	return auth.WithTenant(ctx, tenant), nil
}

// PutRequest is the body of PUT /store/items.
type PutRequest struct {
	// Namespace is the item's path of labels (1 to 64; a label is
	// non-empty and has no "."; at most 1024 bytes joined by ".").
	Namespace []string `json:"namespace" validate:"required,min=1,max=64" example:"users,u1,memories"`
	// Key is the item's key (non-empty, at most 1024 bytes).
	Key string `json:"key" validate:"required" minLength:"1" example:"favourite-colour"`
	// Value must be a JSON object.
	Value json.RawMessage `json:"value" validate:"required" swaggertype:"object"`
	// Index is false (not indexed: never returned by a semantic search),
	// null / absent (the fields of the server's index) or a list of field
	// paths to embed instead ("title", "a.b", "items[*].text", "$"). It is
	// validated and otherwise ignored when the server has no index.
	Index json.RawMessage `json:"index" swaggertype:"array,string" extensions:"x-nullable"`
	// TTL is the item's time to live in minutes (> 0); null or absent: the
	// item never expires.
	TTL *float64 `json:"ttl" extensions:"x-nullable"`
}

// Put godoc
//
//	@Summary		Put an item
//	@ID				put_item
//	@Description	Inserts the item, or replaces the value and ttl of the item with this namespace and key (keeping its created_at, bumping updated_at). ttl (minutes) makes it expire that long after the put, or after its last read with refresh_ttl. With a semantic index configured (WEFT_STORE_INDEX), the texts the index's fields (or the put's own index paths) select are embedded in the background: the put answers at once, the item is readable at once, and a semantic search finds it once its embeddings are stored; index false keeps it out of semantic search. Without an index, index is validated and ignored.
//	@Tags			store
//	@Accept			json
//	@Param			body	body	PutRequest	true	"Item to store"
//	@Success		204
//	@Failure		409	{object}	httpx.ErrorBody	"a worker run's X-Weft-Dispatch-Id and X-Weft-Claim-Token name no current claim (the run's store acts for the run's tenant)"
//	@Failure		422	{object}	httpx.ErrorBody	"missing or invalid namespace, key, value, index or ttl; index paths selecting too many texts"
//	@Router			/store/items [put]
func (h *Handlers) Put(w http.ResponseWriter, r *http.Request) error {
	ctx, err := h.scope(r)
	if err != nil {
		return err
	}
	var req PutRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	if req.Namespace == nil {
		return apperr.Errorf(apperr.Invalid, "Invalid request body: namespace is required")
	}
	if err := checkNamespace("namespace", req.Namespace, false); err != nil {
		return err
	}
	if err := checkKey(req.Key); err != nil {
		return err
	}
	value, err := objectField("value", req.Value, true)
	if err != nil {
		return err
	}
	noIndex, paths, err := checkIndex(req.Index)
	if err != nil {
		return err
	}
	if t := req.TTL; t != nil && (!(*t > 0) || math.IsInf(*t, 0) || *t > MaxTTLMinutes) {
		return apperr.Errorf(apperr.Invalid, "Invalid ttl %v: minutes must be > 0 and at most %d, or null", *t, MaxTTLMinutes)
	}
	if err := h.store.Put(ctx, PutParams{Namespace: req.Namespace, Key: req.Key, Value: value, TTL: req.TTL,
		NoIndex: noIndex, IndexPaths: paths}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// objectField returns raw when it is a JSON object, nil when it is absent or
// null and not required, and a 422 otherwise.
func objectField(field string, raw json.RawMessage, required bool) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		if required {
			return nil, apperr.Errorf(apperr.Invalid, "Invalid request body: %s is required and must be a JSON object", field)
		}
		return nil, nil
	case raw[0] != '{':
		return nil, apperr.Errorf(apperr.Invalid, "Invalid request body: %s must be a JSON object", field)
	}
	return raw, nil
}

// checkIndex accepts what LangGraph's put takes as index: false (noIndex),
// null or absent (nil paths: the index's fields) or a list of valid field
// paths (at most MaxIndexPaths).
func checkIndex(raw json.RawMessage) (noIndex bool, paths []string, err error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return false, nil, nil
	case string(raw) == "false":
		return true, nil, nil
	}
	if raw[0] != '[' || json.Unmarshal(raw, &paths) != nil {
		return false, nil, apperr.Errorf(apperr.Invalid, "Invalid request body: index must be false, null or a list of field paths (strings)")
	}
	if len(paths) > MaxIndexPaths {
		return false, nil, apperr.Errorf(apperr.Invalid, "Invalid index: %d field paths, at most %d are allowed", len(paths), MaxIndexPaths)
	}
	if err := checkPaths(paths); err != nil {
		return false, nil, apperr.Errorf(apperr.Invalid, "Invalid index: %v", err)
	}
	if paths == nil {
		paths = []string{} // index: [] embeds nothing
	}
	return false, paths, nil
}

// Get godoc
//
//	@Summary		Get an item
//	@ID				get_item
//	@Description	Returns the item, or JSON null when it does not exist or has expired (not a 404: the SDKs map null to "absent"). The namespace is its labels joined by "." (what the JS SDK sends), repeated namespace= keys (one label each), or a JSON array of labels; empty is the root, where no item can be. refresh_ttl (default true) makes an item with a ttl expire ttl minutes from now.
//	@Tags			store
//	@Produce		json
//	@Param			namespace	query		string	false	"Namespace labels joined by dots (or repeated namespace= keys)"
//	@Param			key			query		string	true	"Item key"	minLength(1)
//	@Param			refresh_ttl	query		bool	false	"Push the expiry of an item with a ttl forward (default true)"
//	@Success		200			{object}	Item	"the item, or null when absent or expired"
//	@Failure		400			{object}	httpx.ErrorBody	"key missing"
//	@Failure		409			{object}	httpx.ErrorBody	"a worker run's X-Weft-Dispatch-Id and X-Weft-Claim-Token name no current claim (the run's store acts for the run's tenant)"
//	@Failure		422			{object}	httpx.ErrorBody	"invalid namespace, key or refresh_ttl"
//	@Router			/store/items [get]
func (h *Handlers) Get(w http.ResponseWriter, r *http.Request) error {
	ctx, err := h.scope(r)
	if err != nil {
		return err
	}
	ns, err := queryNamespace(r)
	if err != nil {
		return err
	}
	keys, ok := r.URL.Query()["key"]
	if !ok {
		return apperr.Errorf(apperr.BadRequest, "Missing required query parameter key")
	}
	if len(keys) != 1 {
		return apperr.Errorf(apperr.Invalid, "Invalid query parameter key: given %d times", len(keys))
	}
	if err := checkKey(keys[0]); err != nil {
		return err
	}
	refresh, err := httpx.QueryBool(r, "refresh_ttl", !h.store.noRefresh)
	if err != nil {
		return err
	}
	item, err := h.store.Get(ctx, ns, keys[0], refresh)
	if err != nil {
		return err
	}
	if item == nil {
		httpx.WriteJSON(w, http.StatusOK, nil) // null
		return nil
	}
	httpx.WriteJSON(w, http.StatusOK, item)
	return nil
}

// queryNamespace reads the namespace query parameter in the encodings the
// SDKs use: one value of labels joined by "." (JS), repeated keys with one
// label each (Python's httpx with a list), or a JSON array of labels. No
// value, or an empty one, is the root (no labels).
func queryNamespace(r *http.Request) ([]string, error) {
	vals := r.URL.Query()["namespace"]
	var ns []string
	switch {
	case len(vals) == 0 || len(vals) == 1 && vals[0] == "":
		return []string{}, nil
	case len(vals) > 1:
		ns = vals
	case strings.HasPrefix(vals[0], "[") && json.Unmarshal([]byte(vals[0]), &ns) == nil:
	default:
		ns = strings.Split(vals[0], ".")
	}
	if err := checkNamespace("namespace", ns, true); err != nil {
		return nil, err
	}
	return ns, nil
}

// DeleteRequest is the body of DELETE /store/items.
type DeleteRequest struct {
	// Namespace of the item; absent or [] is the root, where no item can be.
	Namespace []string `json:"namespace" validate:"max=64" example:"users,u1,memories"`
	Key       string   `json:"key" validate:"required" minLength:"1" example:"favourite-colour"`
}

// Delete godoc
//
//	@Summary		Delete an item
//	@ID				delete_item
//	@Description	Deletes the item with this namespace and key (a JSON body, as the SDKs send it). Deleting an item that does not exist is not an error.
//	@Tags			store
//	@Accept			json
//	@Param			body	body	DeleteRequest	true	"Item to delete"
//	@Success		204
//	@Failure		409	{object}	httpx.ErrorBody	"a worker run's X-Weft-Dispatch-Id and X-Weft-Claim-Token name no current claim (the run's store acts for the run's tenant)"
//	@Failure		422	{object}	httpx.ErrorBody	"missing key, invalid namespace"
//	@Router			/store/items [delete]
func (h *Handlers) Delete(w http.ResponseWriter, r *http.Request) error {
	ctx, err := h.scope(r)
	if err != nil {
		return err
	}
	var req DeleteRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	if err := checkNamespace("namespace", req.Namespace, true); err != nil {
		return err
	}
	if err := checkKey(req.Key); err != nil {
		return err
	}
	if err := h.store.Delete(ctx, req.Namespace, req.Key); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// SearchRequest is the body of POST /store/items/search.
type SearchRequest struct {
	// NamespacePrefix: items whose namespace starts with these labels; [] or
	// absent: every item.
	NamespacePrefix []string `json:"namespace_prefix" validate:"max=64" example:"users,u1"`
	// Filter: a JSON object the item's value must contain (value @> filter:
	// equal scalars, objects containing the given keys, arrays containing
	// the given elements).
	Filter json.RawMessage `json:"filter" swaggertype:"object" extensions:"x-nullable"`
	// Limit: absent or null means 10; 0 is refused (422) like any value outside 1..1000.
	Limit  *int `json:"limit" default:"10" minimum:"1" maximum:"1000"`
	Offset int  `json:"offset" default:"0" minimum:"0"`
	// Query: with a semantic index configured, the text whose embedding the
	// items are ranked by (cosine similarity, best first, in score; items not
	// embedded yet are left out). Without an index, a case-insensitive
	// substring that one of the value's strings, numbers or booleans (at any
	// depth, not the keys) must contain; results stay ordered by updated_at
	// with a null score. Empty or absent: a listing.
	Query *string `json:"query" extensions:"x-nullable"`
	// RefreshTTL (default true): the returned items with a ttl expire ttl
	// minutes from now.
	RefreshTTL *bool `json:"refresh_ttl" extensions:"x-nullable"`
}

// SearchResponse is the body of a POST /store/items/search answer.
type SearchResponse struct {
	Items []SearchItem `json:"items" validate:"required"`
}

// Search godoc
//
//	@Summary		Search items
//	@ID				search_items
//	@Description	Lists live items under a namespace prefix, newest update first, each with "score": null. filter keeps the items whose value contains it (JSON containment). With a semantic index configured (WEFT_STORE_INDEX), a query is embedded (synchronously) and the items under the prefix and filter are ranked by the cosine similarity of their best indexed field to it, best first, score being that similarity; items whose embeddings are not stored yet (just put, or the endpoint failing) and items put with index false are left out. If the embeddings endpoint fails the answer is 503 with Retry-After (422 when it refuses the query itself). Without an index, query is a case-insensitive substring match over the value's strings, numbers and booleans (not its keys) that filters and does not rank. refresh_ttl (default true) makes the returned items with a ttl expire ttl minutes from now.
//	@Tags			store
//	@Accept			json
//	@Produce		json
//	@Param			body	body		SearchRequest	false	"Search"
//	@Success		200		{object}	SearchResponse
//	@Failure		409		{object}	httpx.ErrorBody	"a worker run's X-Weft-Dispatch-Id and X-Weft-Claim-Token name no current claim (the run's store acts for the run's tenant)"
//	@Failure		422		{object}	httpx.ErrorBody	"invalid prefix, filter, limit, offset or query; the embeddings endpoint refused the query"
//	@Failure		503		{object}	httpx.ErrorBody	"semantic search: the embeddings endpoint failed (unreachable, 5xx, 429, bad answer); retry later"
//	@Router			/store/items/search [post]
func (h *Handlers) Search(w http.ResponseWriter, r *http.Request) error {
	ctx, err := h.scope(r)
	if err != nil {
		return err
	}
	var req SearchRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	if err := checkNamespace("namespace_prefix", req.NamespacePrefix, true); err != nil {
		return err
	}
	filter, err := objectField("filter", req.Filter, false)
	if err != nil {
		return err
	}
	limit, err := pageLimit(req.Limit, 10, req.Offset)
	if err != nil {
		return err
	}
	p := SearchParams{Prefix: req.NamespacePrefix, Filter: filter, Limit: limit, Offset: req.Offset,
		Refresh: (req.RefreshTTL == nil && !h.store.noRefresh) || (req.RefreshTTL != nil && *req.RefreshTTL)}
	if req.Query != nil {
		p.Query = *req.Query
	}
	if p.Query != "" && h.store.Indexed() {
		if p.Vector, err = h.embedQuery(ctx, p.Query); err != nil {
			return err
		}
	}
	items, err := h.store.Search(ctx, p)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, SearchResponse{Items: items})
	return nil
}

// MaxQueryBytes bounds a semantic search's query.
const MaxQueryBytes = 64 << 10

// embedQuery embeds a search query. The endpoint refusing the query is the
// client's mistake (422); the endpoint failing is a 503, never a 500.
func (h *Handlers) embedQuery(ctx context.Context, query string) ([]float32, error) {
	if len(query) > MaxQueryBytes {
		return nil, apperr.Errorf(apperr.Invalid, "Invalid query: %d bytes, at most %d are allowed", len(query), MaxQueryBytes)
	}
	vec, err := h.store.EmbedQuery(ctx, query)
	ee, ok := isEmbedError(err)
	switch {
	case !ok:
		return vec, err
	case ee.InputRefused():
		return nil, apperr.Errorf(apperr.Invalid, "Invalid query: the embeddings endpoint refused it (HTTP %d: %s)", ee.Status, ee.Message)
	default:
		return nil, apperr.Errorf(apperr.Unavailable, "Semantic search is unavailable: %v; retry shortly", ee)
	}
}

// pageLimit validates a limit (nil: def) in 1..1000 and a non-negative
// offset.
func pageLimit(limit *int, def, offset int) (int, error) {
	n := def
	if limit != nil {
		n = *limit
	}
	if n < 1 || n > 1000 {
		return 0, apperr.Errorf(apperr.Invalid, "Invalid limit %d: must be between 1 and 1000", n)
	}
	if offset < 0 {
		return 0, apperr.Errorf(apperr.Invalid, "Invalid offset %d: must not be negative", offset)
	}
	return n, nil
}

// NamespacesRequest is the body of POST /store/namespaces.
type NamespacesRequest struct {
	// Prefix: namespaces starting with these labels; "*" matches any label.
	Prefix []string `json:"prefix" validate:"max=64" example:"users"`
	// Suffix: namespaces ending with these labels; "*" matches any label.
	Suffix []string `json:"suffix" validate:"max=64" example:"memories"`
	// MaxDepth truncates the namespaces to this many labels (then
	// deduplicated); absent or null: whole namespaces.
	MaxDepth *int `json:"max_depth" minimum:"1" extensions:"x-nullable"`
	// Limit: absent or null means 100; values outside 1..1000 are refused.
	Limit  *int `json:"limit" default:"100" minimum:"1" maximum:"1000"`
	Offset int  `json:"offset" default:"0" minimum:"0"`
}

// NamespacesResponse is the body of a POST /store/namespaces answer.
type NamespacesResponse struct {
	Namespaces [][]string `json:"namespaces" validate:"required"`
}

// ListNamespaces godoc
//
//	@Summary		List namespaces
//	@ID				list_namespaces
//	@Description	Lists the distinct namespaces that hold live items, matching prefix and suffix ("*" matches any one label), truncated to max_depth labels and deduplicated, sorted.
//	@Tags			store
//	@Accept			json
//	@Produce		json
//	@Param			body	body		NamespacesRequest	false	"Listing"
//	@Success		200		{object}	NamespacesResponse
//	@Failure		409		{object}	httpx.ErrorBody	"a worker run's X-Weft-Dispatch-Id and X-Weft-Claim-Token name no current claim (the run's store acts for the run's tenant)"
//	@Failure		422		{object}	httpx.ErrorBody	"invalid prefix, suffix, max_depth, limit or offset"
//	@Router			/store/namespaces [post]
func (h *Handlers) ListNamespaces(w http.ResponseWriter, r *http.Request) error {
	ctx, err := h.scope(r)
	if err != nil {
		return err
	}
	var req NamespacesRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	if err := checkNamespace("prefix", req.Prefix, true); err != nil {
		return err
	}
	if err := checkNamespace("suffix", req.Suffix, true); err != nil {
		return err
	}
	p := NamespaceParams{Prefix: req.Prefix, Suffix: req.Suffix, Offset: req.Offset}
	if req.MaxDepth != nil {
		if *req.MaxDepth < 1 {
			return apperr.Errorf(apperr.Invalid, "Invalid max_depth %d: must be at least 1", *req.MaxDepth)
		}
		p.MaxDepth = min(*req.MaxDepth, MaxLabels)
	}
	if p.Limit, err = pageLimit(req.Limit, 100, req.Offset); err != nil {
		return err
	}
	namespaces, err := h.store.ListNamespaces(ctx, p)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, NamespacesResponse{Namespaces: namespaces})
	return nil
}
