package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Where builds the WHERE clause of a search and numbers its arguments: each
// condition is added with its arguments, which become $1, $2, … in order.
// The zero value has no conditions.
type Where struct {
	conds []string
	args  []any
}

// Add appends a condition and its arguments. Each %d in cond stands, in
// order, for the placeholder number of one of args, as in
// w.Add("metadata @> $%d", m) (a literal % is written %%); a condition
// without arguments has no %d.
func (w *Where) Add(cond string, args ...any) {
	nums := make([]any, len(args))
	for i := range args {
		nums[i] = len(w.args) + i + 1
	}
	w.args = append(w.args, args...)
	if len(nums) > 0 {
		cond = fmt.Sprintf(cond, nums...)
	}
	w.conds = append(w.conds, cond)
}

// Clause is " WHERE c1 AND c2 …" ("" without conditions) and its arguments.
func (w *Where) Clause() (string, []any) {
	if len(w.conds) == 0 {
		return "", w.args
	}
	return " WHERE " + strings.Join(w.conds, " AND "), w.args
}

// Page is the query for one page of a search, and its arguments: SELECT
// columns FROM table, the clause, ORDER BY order, LIMIT limit+1 (the row
// past the page that tells EmitPage more follow) OFFSET offset.
func (w *Where) Page(columns, table, order string, limit, offset int) (string, []any) {
	where, args := w.Clause()
	args = append(slices.Clip(args), limit+1, offset)
	return fmt.Sprintf(`SELECT %s FROM %s%s ORDER BY %s LIMIT $%d OFFSET $%d`,
		columns, table, where, order, len(args)-1, len(args)), args
}

// Count counts the rows of table that the clause matches.
func (w *Where) Count(ctx context.Context, db DBTX, table string) (int64, error) {
	where, args := w.Clause()
	var n int64
	err := db.QueryRow(ctx, `SELECT count(*) FROM `+table+where, args...).Scan(&n)
	return n, err
}

// OrderBy is the ORDER BY list of a search sorted by expr in direction dir
// (asc or desc, any case) with the key column breaking ties in the same
// direction — just the key when the search is sorted by it (expr == key).
// nullsLast puts NULLs of expr last in either direction.
func OrderBy(expr, dir, key string, nullsLast bool) string {
	dir = strings.ToUpper(dir)
	if expr == key {
		return key + " " + dir
	}
	if nullsLast {
		return fmt.Sprintf("%s %s NULLS LAST, %s %s", expr, dir, key, dir)
	}
	return fmt.Sprintf("%s %s, %s %s", expr, dir, key, dir)
}
