package postgres

import "github.com/jackc/pgx/v5"

// EmitPage reads rows (a query for limit+1 rows) one at a time into T (by
// column name) and hands each to emit until emit says stop or limit rows
// were emitted, so a page is never held in memory twice. It returns how
// many were emitted and whether more rows follow them; it closes rows.
func EmitPage[T any](rows pgx.Rows, limit int, emit func(*T) (stop bool, err error)) (n int, more bool, err error) {
	defer rows.Close()
	for rows.Next() {
		if n == limit {
			return n, true, nil // the extra row: more follow
		}
		v, err := pgx.RowToStructByName[T](rows)
		if err != nil {
			return n, false, err
		}
		stop, err := emit(&v)
		if err != nil {
			return n, false, err
		}
		n++
		if stop {
			return n, rows.Next(), rows.Err()
		}
	}
	return n, false, rows.Err()
}
