package postgres_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/migrations"
)

// pinnedSearchPath is the search_path every Weft function runs with
// (migration 029): Weft's schema, then pg_temp last.
const pinnedSearchPath = "search_path=public, pg_temp"

// unpinnedFunctions lists the functions of the schemas the migrations
// create (every schema but PostgreSQL's own; an extension's functions
// excepted) that do not run with pinnedSearchPath, each with its settings.
func unpinnedFunctions(t *testing.T, db interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}) []string {
	t.Helper()
	rows, err := db.Query(context.Background(), `SELECT p.oid::regprocedure::text || ' ' || coalesce(p.proconfig::text, '{}')
		FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_%'
			AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
			AND NOT coalesce($1 = ANY(p.proconfig), false)
		ORDER BY 1`, pinnedSearchPath)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Every function Weft creates runs with its own search_path, whatever the
// caller's (the views of schema langgraph call them from connections whose
// search_path is not Weft's); 029's down gives the functions it names
// back the caller's, and its up pins them again.
func TestFunctionsPinTheirSearchPath(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.Pool(t)
	var n int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		WHERE n.nspname IN ('public', 'langgraph')`).Scan(&n); err != nil || n < 18 {
		t.Fatalf("functions found: %d (%v)", n, err)
	}
	if bad := unpinnedFunctions(t, db); len(bad) > 0 {
		t.Fatalf("functions without %q (give them SET search_path = public, pg_temp):\n  %s", pinnedSearchPath, strings.Join(bad, "\n  "))
	}

	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	run := func(file string) {
		t.Helper()
		sql, err := migrations.FS.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, string(sql)); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	run("029_function_search_path.down.sql")
	down, _ := migrations.FS.ReadFile("029_function_search_path.down.sql")
	reset := regexp.MustCompile(`ALTER FUNCTION (.+?) RESET search_path;`).FindAllStringSubmatch(string(down), -1)
	if len(reset) < 18 {
		t.Fatalf("029's down resets %d functions", len(reset))
	}
	for _, m := range reset {
		var settings string
		if err := tx.QueryRow(ctx, `SELECT coalesce(proconfig::text, '{}') FROM pg_proc WHERE oid = $1::regprocedure`, m[1]).Scan(&settings); err != nil || settings != "{}" {
			t.Errorf("after 029's down, %s has settings %s (%v)", m[1], settings, err)
		}
	}
	if bad := unpinnedFunctions(t, tx); len(bad) != len(reset) {
		t.Errorf("after 029's down, %d functions unpinned; want the %d it names: %v", len(bad), len(reset), bad)
	}
	run("029_function_search_path.up.sql")
	if bad := unpinnedFunctions(t, tx); len(bad) > 0 {
		t.Errorf("after 029's up again: %v", bad)
	}

	// What the pin is for: a caller whose search_path lacks Weft's schema,
	// with tables named like Weft's first on it (a schema of its own, its
	// temporary schema), reads Weft's rows through the views of schema
	// langgraph all the same.
	if _, err := tx.Exec(ctx, `INSERT INTO public.thread_elements (thread_id, seq, hash, data)
			VALUES ('t1', 1, '\x00', convert_to('"weft"', 'UTF8'));
		INSERT INTO public.checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
			VALUES ('t1', '', 'messages', '1', 'weft_list', convert_to('{"n": 1, "h": "", "r": [[1, 1]]}', 'UTF8'));
		CREATE SCHEMA decoy;
		CREATE TABLE decoy.thread_elements (LIKE public.thread_elements);
		INSERT INTO decoy.thread_elements (thread_id, seq, hash, data) VALUES ('t1', 1, '\x00', convert_to('"decoy"', 'UTF8'));
		CREATE TEMPORARY TABLE thread_elements (LIKE public.thread_elements);
		INSERT INTO pg_temp.thread_elements (thread_id, seq, hash, data) VALUES ('t1', 1, '\x00', convert_to('"temporary"', 'UTF8'));
		SET LOCAL search_path = decoy, langgraph`); err != nil {
		t.Fatal(err)
	}
	var blob, direct string
	if err := tx.QueryRow(ctx, `SELECT convert_from(blob, 'UTF8') FROM checkpoint_blobs WHERE thread_id = 't1'`).Scan(&blob); err != nil {
		t.Fatalf("read through langgraph.checkpoint_blobs: %v", err)
	}
	if err := tx.QueryRow(ctx, `SELECT convert_from(public.weft_blob('t1', 'weft_list',
		convert_to('{"n": 1, "h": "", "r": [[1, 1]]}', 'UTF8')), 'UTF8')`).Scan(&direct); err != nil {
		t.Fatal(err)
	}
	if blob != `["weft"]` || direct != `["weft"]` {
		t.Errorf("a weft_list blob reads %s through the view, %s from weft_blob; want [\"weft\"]", blob, direct)
	}
}
