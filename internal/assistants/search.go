package assistants

import (
	"context"
	"strings"

	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/postgres"
)

// Filter selects assistants for Search and Count. Zero fields do not
// filter.
type Filter struct {
	Metadata map[string]any // JSONB containment
	GraphID  string         // exact
	Name     string         // case-insensitive substring
}

// SearchParams are Filter plus paging and ordering.
type SearchParams struct {
	Filter
	Limit     int    // 1..1000
	Offset    int    // >= 0
	SortBy    string // assistant_id|graph_id|name|created_at|updated_at (default created_at)
	SortOrder string // asc|desc (default desc)
}

// sorts are the orders a search may ask for: the enums of
// SearchRequest.SortBy, which the OpenAPI document declares.
var sorts = httpx.Sort{By: httpx.Enums[SearchRequest]("SortBy"), Default: "created_at"}

// sortExprs are the ORDER BY expressions of the sort_by values that are
// not a column as they are: names and graph ids sort case-insensitively.
var sortExprs = map[string]string{"graph_id": "lower(graph_id)", "name": "lower(name)"}

// selectable are the fields a search may select: the enums of
// SearchRequest.Select, which the OpenAPI document declares.
var selectable = httpx.Enums[SearchRequest]("Select")

// Validate checks p and fills its defaults.
func (p *SearchParams) Validate() (err error) {
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

// where renders f as a WHERE clause with numbered arguments.
func (f *Filter) where(ctx context.Context) *postgres.Where {
	var w postgres.Where
	// The tenant's own assistants and the shared (system) ones.
	w.Add("(tenant_id = $%d OR shared)", auth.Tenant(ctx))
	if f.Metadata != nil {
		w.Add("metadata @> $%d", jsonArg(f.Metadata))
	}
	if f.GraphID != "" {
		w.Add("graph_id = $%d", f.GraphID)
	}
	if f.Name != "" {
		// strpos, not ILIKE: % and _ in the name are not wildcards.
		w.Add("strpos(lower(name), lower($%d)) > 0", f.Name)
	}
	return &w
}

// Search passes the assistants of one page to emit, in order, reading them
// row by row. emit returns stop to end the page early (the handler's byte
// cap). n is how many were emitted, more whether further matches follow.
func (s *Store) Search(ctx context.Context, p SearchParams, emit func(*Assistant) (stop bool, err error)) (n int, more bool, err error) {
	expr := p.SortBy
	if e, ok := sortExprs[p.SortBy]; ok {
		expr = e
	}
	q, args := p.where(ctx).Page(columns, "assistants", postgres.OrderBy(expr, p.SortOrder, "assistant_id", false), p.Limit, p.Offset)
	rows, err := s.db.Query(ctx, q, args...)
	if err != nil {
		return 0, false, err
	}
	return postgres.EmitPage(rows, p.Limit, emit)
}

// Count returns how many assistants match f.
func (s *Store) Count(ctx context.Context, f Filter) (int64, error) {
	return f.where(ctx).Count(ctx, s.db, "assistants")
}

// project keeps the selected fields of a.
func (a *Assistant) project(fields []string) map[string]any {
	all := map[string]any{
		"assistant_id": a.AssistantID, "graph_id": a.GraphID, "name": a.Name, "description": a.Description,
		"config": a.Config, "context": a.Context, "metadata": a.Metadata, "version": a.Version,
		"created_at": a.CreatedAt, "updated_at": a.UpdatedAt,
	}
	out := make(map[string]any, len(fields))
	for _, f := range fields {
		out[f] = all[f]
	}
	return out
}
