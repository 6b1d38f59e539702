package assistants

import (
	"context"
	"fmt"
	"strings"

	"github.com/weftdev/weft/internal/apperr"
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

// sortColumns maps sort_by to its ORDER BY expression; names and graph ids
// sort case-insensitively.
var sortColumns = map[string]string{
	"assistant_id": "assistant_id", "graph_id": "lower(graph_id)", "name": "lower(name)",
	"created_at": "created_at", "updated_at": "updated_at",
}

// selectable are the fields a search may select: the enums of
// SearchRequest.Select, which the OpenAPI document declares.
var selectable = func() map[string]bool {
	m := map[string]bool{}
	for _, f := range httpx.Enums[SearchRequest]("Select") {
		m[f] = true
	}
	return m
}()

// Validate checks p and fills its defaults.
func (p *SearchParams) Validate() error {
	if p.Limit < 1 || p.Limit > 1000 {
		return apperr.Errorf(apperr.Invalid, "Invalid limit %d: must be between 1 and 1000", p.Limit)
	}
	if p.Offset < 0 {
		return apperr.Errorf(apperr.Invalid, "Invalid offset %d: must not be negative", p.Offset)
	}
	if p.SortBy == "" {
		p.SortBy = "created_at"
	}
	if _, ok := sortColumns[p.SortBy]; !ok {
		return apperr.Errorf(apperr.Invalid, "Invalid sort_by %q: must be one of assistant_id, graph_id, name, created_at, updated_at", p.SortBy)
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

// where renders f as a WHERE clause with numbered arguments.
func (f *Filter) where(ctx context.Context) (string, []any) {
	var conds []string
	var args []any
	add := func(cond string, arg any) {
		args = append(args, arg)
		conds = append(conds, fmt.Sprintf(cond, len(args)))
	}
	// The tenant's own assistants and the shared (system) ones.
	add("(tenant_id = $%d OR shared)", auth.Tenant(ctx))
	if f.Metadata != nil {
		add("metadata @> $%d", jsonArg(f.Metadata))
	}
	if f.GraphID != "" {
		add("graph_id = $%d", f.GraphID)
	}
	if f.Name != "" {
		// strpos, not ILIKE: % and _ in the name are not wildcards.
		add("strpos(lower(name), lower($%d)) > 0", f.Name)
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// Search passes the assistants of one page to emit, in order, reading them
// row by row. emit returns stop to end the page early (the handler's byte
// cap). n is how many were emitted, more whether further matches follow.
func (s *Store) Search(ctx context.Context, p SearchParams, emit func(*Assistant) (stop bool, err error)) (n int, more bool, err error) {
	where, args := p.where(ctx)
	dir := strings.ToUpper(p.SortOrder)
	order := fmt.Sprintf("%s %s, assistant_id %s", sortColumns[p.SortBy], dir, dir)
	if p.SortBy == "assistant_id" {
		order = "assistant_id " + dir
	}
	args = append(args, p.Limit+1, p.Offset)
	rows, err := s.db.Query(ctx, fmt.Sprintf(`SELECT %s FROM assistants%s ORDER BY %s LIMIT $%d OFFSET $%d`,
		columns, where, order, len(args)-1, len(args)), args...)
	if err != nil {
		return 0, false, err
	}
	return postgres.EmitPage(rows, p.Limit, emit)
}

// Count returns how many assistants match f.
func (s *Store) Count(ctx context.Context, f Filter) (int64, error) {
	where, args := f.where(ctx)
	var n int64
	err := s.db.QueryRow(ctx, `SELECT count(*) FROM assistants`+where, args...).Scan(&n)
	return n, err
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
