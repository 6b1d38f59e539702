package postgres_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/postgres/pgtest"
)

func TestWhere(t *testing.T) {
	t.Run("render", func(t *testing.T) {
		var none postgres.Where
		if where, args := none.Clause(); where != "" || len(args) != 0 {
			t.Errorf("empty Clause() = %q, %v", where, args)
		}
		var w postgres.Where
		w.Add("tenant_id = $%d", "t1")
		w.Add("a ?| $%d::text[] AND b @> $%d", []string{"k"}, `{"k":1}`)
		w.Add("parent IS NULL")
		w.Add("lower(name) LIKE '%%x' || $%d", "y")
		where, args := w.Clause()
		wantWhere := ` WHERE tenant_id = $1 AND a ?| $2::text[] AND b @> $3 AND parent IS NULL AND lower(name) LIKE '%x' || $4`
		wantArgs := []any{"t1", []string{"k"}, `{"k":1}`, "y"}
		if where != wantWhere || !reflect.DeepEqual(args, wantArgs) {
			t.Errorf("Clause() = %q, %v\nwant %q, %v", where, args, wantWhere, wantArgs)
		}
		q, args := w.Page("id, name", "things", postgres.OrderBy("lower(name)", "asc", "id", false), 10, 20)
		wantQ := `SELECT id, name FROM things` + wantWhere + ` ORDER BY lower(name) ASC, id ASC LIMIT $5 OFFSET $6`
		if q != wantQ || !reflect.DeepEqual(args, append(wantArgs, 11, 20)) {
			t.Errorf("Page() = %q, %v\nwant %q", q, args, wantQ)
		}
		// Page leaves the clause's own arguments as they were.
		if _, args := w.Clause(); len(args) != 4 {
			t.Errorf("after Page, Clause() has %d args, want 4", len(args))
		}
	})
	t.Run("order", func(t *testing.T) {
		for _, tc := range []struct {
			expr, dir string
			nullsLast bool
			want      string
		}{
			{"created_at", "desc", false, "created_at DESC, id DESC"},
			{"end_time", "asc", true, "end_time ASC NULLS LAST, id ASC"},
			{"id", "desc", true, "id DESC"},
		} {
			if got := postgres.OrderBy(tc.expr, tc.dir, "id", tc.nullsLast); got != tc.want {
				t.Errorf("OrderBy(%q, %q, id, %v) = %q, want %q", tc.expr, tc.dir, tc.nullsLast, got, tc.want)
			}
		}
	})
	t.Run("query", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		pool := pgtest.Pool(t)
		if _, err := pool.Exec(ctx, `CREATE TABLE things (id int PRIMARY KEY, name text, tag text);
			INSERT INTO things SELECT i, 'n' || i, CASE WHEN i % 2 = 0 THEN 'even' END FROM generate_series(1, 9) i`); err != nil {
			t.Fatal(err)
		}
		var w postgres.Where
		w.Add("id > $%d", 1)
		w.Add("tag = $%d", "even")
		n, err := w.Count(ctx, pool, "things")
		if err != nil || n != 4 {
			t.Fatalf("Count = %d, %v; want 4", n, err)
		}
		type thing struct {
			ID   int    `db:"id"`
			Name string `db:"name"`
		}
		q, args := w.Page("id, name", "things", postgres.OrderBy("id", "desc", "id", false), 2, 1)
		rows, err := pool.Query(ctx, q, args...)
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		emitted, more, err := postgres.EmitPage(rows, 2, func(v *thing) (bool, error) {
			got = append(got, v.ID)
			return false, nil
		})
		if err != nil || emitted != 2 || !more || !reflect.DeepEqual(got, []int{6, 4}) {
			t.Fatalf("page = %v (n %d, more %v, err %v); want [6 4], more", got, emitted, more, err)
		}
	})
}
