package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/postgres/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestThreadRowBytes checks what the long suite counts: a thread's rows by
// thread_id, through its runs by run_id, tables with neither left out,
// stored bytes after compression and uncompressed bytes.
func TestThreadRowBytes(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{
		`CREATE SCHEMA s`,
		`CREATE TABLE s.blobs (thread_id text, data bytea, doc jsonb)`,
		`CREATE TABLE s.runs (run_id int, thread_id uuid)`,
		`CREATE TABLE s.events (run_id int, payload text)`,
		`CREATE TABLE s.other (x int)`,
		// Thread A: two blob rows, one of 100,000 compressible bytes.
		`INSERT INTO s.blobs VALUES ('00000000-0000-0000-0000-00000000000a', convert_to(repeat('x', 100000), 'UTF8'), '{"k": 1}'),
			('00000000-0000-0000-0000-00000000000a', '\x0102', NULL)`,
		`INSERT INTO s.blobs VALUES ('00000000-0000-0000-0000-00000000000b', '\x01', NULL)`,
		`INSERT INTO s.runs VALUES (1, '00000000-0000-0000-0000-00000000000a'), (2, '00000000-0000-0000-0000-00000000000b')`,
		`INSERT INTO s.events VALUES (1, 'abc'), (1, 'def'), (2, 'ghi')`,
		`INSERT INTO s.other VALUES (1)`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	got, err := threadRowBytes(ctx, conn, "s", "00000000-0000-0000-0000-00000000000a")
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]tableBytes{}
	for _, x := range got {
		by[x.table] = x
	}
	if len(by) != 3 || by["other"].rows != 0 {
		t.Fatalf("tables counted: %+v, want blobs, runs and events only", got)
	}
	if b := by["blobs"]; b.rows != 2 || b.bytes >= 10000 || b.raw < 100000 || b.raw > 100100 {
		t.Errorf("blobs: %+v, want 2 rows, under 10,000 stored bytes (compressed), 100,000..100,100 uncompressed", b)
	}
	if e := by["events"]; e.rows != 2 || e.raw != 2*(4+3) {
		t.Errorf("events: %+v, want the 2 rows of run 1, 14 uncompressed bytes (run_id 4 + text 3, twice)", e)
	}
	if r := by["runs"]; r.rows != 1 {
		t.Errorf("runs: %+v, want 1 row", r)
	}
	all, err := threadRowBytes(ctx, conn, "s", "")
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	for _, x := range all {
		rows += x.rows
	}
	if rows != 3+2+3+1 {
		t.Errorf("whole schema: %d rows, want 9: %+v", rows, all)
	}
}

// TestLongSuite runs the long suite small, in process, and checks its
// report: every section, the storage rows of both threads with their
// ratios, the stock saver's row when worker-js's node_modules are there,
// and reads either measured or n/a.
func TestLongSuite(t *testing.T) {
	script := filepath.Join("..", "..", "worker-js", "bench", "long-saver.mjs")
	_, err := os.Stat(filepath.Join("..", "..", "worker-js", "node_modules", "@langchain", "langgraph-checkpoint-postgres"))
	withSaver := err == nil
	lo := longOpts{turns: []int{3, 6}, readTurns: []int{2, 6}, saverTurns: []int{3}, reads: 3, node: "node", script: script}
	out := captureStdout(t, func() error {
		return run("", 300*time.Millisecond, 1000, "16", "long", "", "", 4, streamOpts{runs: 1, idleN: 1, idleHold: time.Second}, lo)
	})
	for _, want := range []string{
		"== long threads: storage per thread",
		"== long threads: by table",
		"== long threads: LangGraph.js PostgresSaver",
		"== long threads: reads on an echo_chat thread",
		"== long threads: stateless POST /runs/wait",
		"== long threads: targets (issue 16)",
		"checkpoint_blobs",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// A storage row: turns, messages, then the messages' KiB and row MiB.
	for _, n := range []string{"3      6", "6     12"} {
		if !regexp.MustCompile(`(?m)^\s+` + n + `\s+\d+\.\d\s+\d+\.\d\d\s+\d+\.\d\s+\d+\s`).MatchString(out) {
			t.Errorf("no storage row for %q:\n%s", n, out)
		}
	}
	saverRow := regexp.MustCompile(`(?m)^\s+3\s+\d+\.\d\s+\d+\.\d\d\s+\d+\.\d\s+\d+\s.*saver \d+\.\dx Weft's; \d+\.\dx Weft's checkpoint tables$`)
	if withSaver && !saverRow.MatchString(out) {
		t.Errorf("node_modules present but no PostgresSaver row:\n%s", out)
	}
	if !withSaver && !strings.Contains(out, "n/a: no @langchain/langgraph-checkpoint-postgres") {
		t.Errorf("node_modules absent but no n/a for the saver:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^GET state\s+6\s+\d+\.\d\s+3\s`).MatchString(out) {
		t.Errorf("no GET state read at 6 turns:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^runs/wait\s+16\s+[1-9]\d*\s`).MatchString(out) {
		t.Errorf("no successful stateless runs/wait:\n%s", out)
	}
}

// captureStdout runs fn with os.Stdout going to a pipe and returns what
// it printed; fn's error fails the test.
func captureStdout(t *testing.T, fn func() error) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	var buf bytes.Buffer
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(&buf, r)
		close(done)
	}()
	ferr := fn()
	os.Stdout = saved
	w.Close()
	<-done
	if ferr != nil {
		t.Fatalf("%v\n%s", ferr, buf.String())
	}
	return buf.String()
}
