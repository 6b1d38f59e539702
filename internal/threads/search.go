package threads

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/crypt"
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

var sortColumns = map[string]string{
	"thread_id": "thread_id", "status": "status", "created_at": "created_at",
	"updated_at": "updated_at", "state_updated_at": "state_updated_at",
}

// Validate checks the filter's values and fills defaults.
func (p *SearchParams) Validate() error {
	if err := p.Filter.validate(); err != nil {
		return err
	}
	if p.Limit == 0 {
		p.Limit = 10
	}
	if p.Limit < 1 || p.Limit > 1000 {
		return apperr.Errorf(apperr.Invalid, "Invalid limit %d: must be between 1 and 1000", p.Limit)
	}
	if p.Offset < 0 {
		return apperr.Errorf(apperr.Invalid, "Invalid offset %d: must not be negative", p.Offset)
	}
	if p.SortBy == "" {
		p.SortBy = "updated_at"
	}
	if _, ok := sortColumns[p.SortBy]; !ok {
		return apperr.Errorf(apperr.Invalid, "Invalid sort_by %q: must be one of thread_id, status, created_at, updated_at, state_updated_at", p.SortBy)
	}
	p.SortOrder = strings.ToLower(p.SortOrder)
	if p.SortOrder == "" {
		p.SortOrder = "desc"
	}
	if p.SortOrder != "asc" && p.SortOrder != "desc" {
		return apperr.Errorf(apperr.Invalid, "Invalid sort_order %q: must be asc or desc", p.SortOrder)
	}
	return nil
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
func (f *Filter) where(ctx context.Context) (string, []any) {
	var conds []string
	var args []any
	add := func(cond string, arg any) {
		args = append(args, arg)
		conds = append(conds, fmt.Sprintf(cond, len(args)))
	}
	add("tenant_id = $%d", auth.Tenant(ctx))
	if f.Metadata != nil {
		add("metadata @> $%d", jsonObject(f.Metadata))
	}
	if f.Values != nil {
		// The stored values hold every channel but the referenced ones: a
		// filter on none of those is decided on them alone, without
		// rendering the lists.
		args = append(args, slices.Collect(maps.Keys(f.Values)), jsonObject(f.Values))
		conds = append(conds, fmt.Sprintf(`(CASE WHEN values_refs IS NULL OR NOT values_refs ?| $%d::text[] THEN "values"
			ELSE weft_thread_values(thread_id, "values", values_refs) END) @> $%d`, len(args)-1, len(args)))
	}
	if f.IDs != nil {
		add("thread_id = ANY($%d)", f.IDs)
	}
	if f.Status != "" {
		add("status = $%d", f.Status)
	}
	if f.ParentThreadID != nil {
		add("parent_thread_id = $%d", *f.ParentThreadID)
	}
	if f.ResourceID != nil {
		add("resource_id = $%d", *f.ResourceID)
	}
	if f.RootOnly {
		conds = append(conds, "parent_thread_id IS NULL")
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// Search passes the threads of one page to emit, in order, reading them
// row by row (one page is never held in memory at once). emit returns stop
// to end the page early (the handler's byte cap). n is how many threads
// were emitted, more whether further matches follow them.
func (s *Store) Search(ctx context.Context, p SearchParams, emit func(*Thread) (stop bool, err error)) (n int, more bool, err error) {
	if err := p.Filter.checkEncrypted(ctx); err != nil {
		return 0, false, err
	}
	where, args := p.where(ctx)
	dir := strings.ToUpper(p.SortOrder)
	order := fmt.Sprintf("%s %s NULLS LAST, thread_id %s", sortColumns[p.SortBy], dir, dir)
	if p.SortBy == "thread_id" {
		order = "thread_id " + dir
	}
	args = append(args, p.Limit+1, p.Offset)
	rows, err := s.db.Query(ctx, fmt.Sprintf(`SELECT %s FROM threads%s ORDER BY %s LIMIT $%d OFFSET $%d`,
		threadColumns, where, order, len(args)-1, len(args)), args...)
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
	where, args := f.where(ctx)
	var n int64
	err := s.db.QueryRow(ctx, `SELECT count(*) FROM threads`+where, args...).Scan(&n)
	return n, err
}
