package threads

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/crypt"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/postgres"
)

// Filter selects threads for Search and Count. Zero fields do not filter.
type Filter struct {
	Metadata       map[string]any // JSONB containment
	Values         map[string]any // JSONB containment on the state values
	IDs            []uuid.UUID
	Status         string
	ParentThreadID *uuid.UUID // only direct children of this thread
	RootOnly       bool       // only threads without a parent
	ResourceID     *string
}

// SearchParams are Filter plus paging and ordering.
type SearchParams struct {
	Filter
	Limit     int    // 1..1000, default 10
	Offset    int    // >= 0
	SortBy    string // thread_id|status|created_at|updated_at|state_updated_at (default updated_at)
	SortOrder string // asc|desc (default desc)
}

// sorts are the orders a search may ask for: the enums of
// SearchRequest.SortBy, which the OpenAPI document declares.
var sorts = httpx.Sort{By: httpx.Enums[SearchRequest]("SortBy"), Default: "updated_at"}

// Validate checks the filter's values and fills defaults.
func (p *SearchParams) Validate() (err error) {
	if err := p.Filter.validate(); err != nil {
		return err
	}
	if p.Limit == 0 {
		p.Limit = 10
	}
	if err := httpx.CheckLimit(p.Limit); err != nil {
		return err
	}
	if err := httpx.CheckOffset(p.Offset); err != nil {
		return err
	}
	// The 422 quotes sort_order lower-cased.
	p.SortBy, p.SortOrder, err = sorts.Check(p.SortBy, strings.ToLower(p.SortOrder))
	return err
}

func (f *Filter) validate() error {
	if f.Status != "" && !validStatus(f.Status) {
		return apperr.Errorf(apperr.Invalid, "Invalid status %q: must be one of idle, busy, interrupted, error", f.Status)
	}
	if f.RootOnly && f.ParentThreadID != nil {
		return apperr.Errorf(apperr.Invalid, "root_only and parent_thread_id cannot be combined")
	}
	f.ResourceID = normalizeText(f.ResourceID)
	return nil
}

// checkEncrypted refuses a search by values while encryption at rest is
// on: the column holds ciphertext, so containment could never match.
func (f *Filter) checkEncrypted(ctx context.Context) error {
	if f.Values != nil && crypt.FromContext(ctx) != nil {
		return apperr.Errorf(apperr.Invalid, "Search by values is not available: thread values are encrypted at rest (LANGGRAPH_AES_KEY); filter by metadata instead")
	}
	return nil
}

// where renders the filter as a WHERE clause with numbered arguments.
func (f *Filter) where(ctx context.Context) *postgres.Where {
	var w postgres.Where
	w.Add("tenant_id = $%d", auth.Tenant(ctx))
	if f.Metadata != nil {
		w.Add("metadata @> $%d", jsonObject(f.Metadata))
	}
	if f.Values != nil {
		// The stored values hold every channel but the referenced ones: a
		// filter on none of those is decided on them alone, without
		// rendering the lists.
		w.Add(`(CASE WHEN values_refs IS NULL OR NOT values_refs ?| $%d::text[] THEN "values"
			ELSE weft_thread_values(thread_id, "values", values_refs) END) @> $%d`,
			slices.Collect(maps.Keys(f.Values)), jsonObject(f.Values))
	}
	if f.IDs != nil {
		w.Add("thread_id = ANY($%d)", f.IDs)
	}
	if f.Status != "" {
		w.Add("status = $%d", f.Status)
	}
	if f.ParentThreadID != nil {
		w.Add("parent_thread_id = $%d", *f.ParentThreadID)
	}
	if f.ResourceID != nil {
		w.Add("resource_id = $%d", *f.ResourceID)
	}
	if f.RootOnly {
		w.Add("parent_thread_id IS NULL")
	}
	return &w
}

// Search passes the threads of one page to emit, in order, reading them
// row by row (one page is never held in memory at once). emit returns stop
// to end the page early (the handler's byte cap). n is how many threads
// were emitted, more whether further matches follow them.
func (s *Store) Search(ctx context.Context, p SearchParams, emit func(*Thread) (stop bool, err error)) (n int, more bool, err error) {
	if err := p.Filter.checkEncrypted(ctx); err != nil {
		return 0, false, err
	}
	q, args := p.where(ctx).Page(threadColumns, "threads", postgres.OrderBy(p.SortBy, p.SortOrder, "thread_id", true), p.Limit, p.Offset)
	rows, err := s.db.Query(ctx, q, args...)
	if err != nil {
		return 0, false, err
	}
	return postgres.EmitPage(rows, p.Limit, openingEmit(ctx, emit))
}

// Count returns how many threads match f.
func (s *Store) Count(ctx context.Context, f Filter) (int64, error) {
	if err := f.validate(); err != nil {
		return 0, err
	}
	if err := f.checkEncrypted(ctx); err != nil {
		return 0, err
	}
	return f.where(ctx).Count(ctx, s.db, "threads")
}
