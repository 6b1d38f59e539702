package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Targets of issue 16 (long threads) the long suite reports against.
const (
	targetLongRatio200   = 10.0  // row bytes ≤ 10x the messages' JSON at 200 turns
	targetLongFlat       = 1.25  // bytes per turn at the most turns ≤ 1.25x those at the fewest ("flat")
	targetFullReadMBps   = 300.0 // full-value state and history reads, MB of JSON per second
	targetWindowFlat     = 1.5   // windowed state p50 at the most turns ≤ 1.5x at the fewest
	targetStatelessPerS  = 350.0 // stateless runs/wait on foo_bar at concurrency 16
	refBefore200         = 232.0 // row bytes / messages JSON at 200 turns measured in issue 16 before compact list storage
	longTextChars        = 200   // characters of each human message
	longWindow           = 20    // messages_window and messages page size
	longStatelessWorkers = 16
)

// longOpts are the long suite's settings (flags -long-*).
type longOpts struct {
	turns      []int  // storage threads
	readTurns  []int  // state/history read threads
	saverTurns []int  // LangGraph PostgresSaver baseline threads
	reads      int    // requests per read phase
	node       string // node binary
	script     string // worker-js/bench/long-saver.mjs
}

// longThread is one echo_chat conversation the suite ran through Weft.
type longThread struct {
	id        string
	turns     int
	msgsJSON  int64 // the final values.messages, compact JSON
	turnLat   result
	lastTenth result // the turns of the last tenth of the conversation
	rows      []tableBytes
	growth    map[string]int64 // pg_total_relation_size growth per table of schema public
}

// tableBytes is what one table holds for a thread: its rows and the sum of
// pg_column_size over every column of those rows (the bytes as stored:
// after compression, TOAST included, tuple headers and indexes excluded),
// and the same uncompressed.
type tableBytes struct {
	table string
	rows  int64
	bytes int64
	raw   int64 // the same values uncompressed: bytea, text and JSON as their bytes, other columns as stored
}

func sumBytes(t []tableBytes) (n int64) {
	for _, x := range t {
		n += x.bytes
	}
	return n
}

// checkpointBytes is the row bytes of the tables that hold what a
// LangGraph saver holds (checkpoints, checkpoint_blobs, checkpoint_writes
// and the thread's element log), without the run records (runs, run_events,
// run_dispatches, threads) a saver does not keep.
func checkpointBytes(t []tableBytes) (n int64) {
	for _, x := range t {
		if strings.HasPrefix(x.table, "checkpoint") || strings.HasPrefix(x.table, "thread_element") {
			n += x.bytes
		}
	}
	return n
}

func sumRaw(t []tableBytes) (n int64) {
	for _, x := range t {
		n += x.raw
	}
	return n
}

func sumMap(m map[string]int64) (n int64) {
	for _, v := range m {
		n += v
	}
	return n
}

// longText is the i-th human message of a conversation: longTextChars
// characters drawn from [a-zA-Z0-9], reproducible from the conversation's
// seed (the saver baseline replays the same texts).
func longText(r *rand.Rand) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, longTextChars)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// longTexts is the conversation of n turns with the given seed.
func longTexts(n int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 16))
	out := make([]string, n)
	for i := range out {
		out[i] = longText(r)
	}
	return out
}

// longSuite runs the long-threads benchmark of issue 16: storage per
// thread, the stock saver's storage for the same conversation, reads on
// long threads and stateless runs/wait throughput.
func (l *load) longSuite(o longOpts) error {
	if l.dsn == "" {
		return errors.New("the long suite reads table sizes: with -url it needs -database-url")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, l.dsn)
	if err != nil {
		return fmt.Errorf("database: %w", err)
	}
	defer conn.Close(ctx)

	fmt.Printf("\n== long threads (issue 16): echo_chat conversations, one POST /threads/{id}/runs/wait per turn\n")
	fmt.Printf("turn: input {\"messages\":[{\"type\":\"human\",\"content\":<%d random characters of [a-zA-Z0-9]>}]}; echo_chat answers \"echo: <text>\"; each answer is checked (2 messages per turn, the last one the echo)\n", longTextChars)
	fmt.Printf("messages JSON: the size of the thread's final values.messages as GET /threads/{id}/state returns it, compact JSON\n")
	fmt.Printf("row bytes: sum of pg_column_size(column) over every column of the thread's rows, per table (as stored: after PostgreSQL's compression, TOAST included; tuple headers, indexes and dead rows excluded); tables without thread_id are counted through the thread's runs\n")
	fmt.Printf("relation growth: sum over the tables of schema public of pg_total_relation_size (heap, TOAST, indexes, free space and dead rows) after the thread minus before it (threads run one after another)\n")

	byTurns := map[int]*longThread{}
	var threads []*longThread
	for i, n := range o.turns {
		t, err := l.longStorage(ctx, conn, n, uint64(i+1))
		if err != nil {
			return fmt.Errorf("storage, %d turns: %w", n, err)
		}
		threads = append(threads, t)
		byTurns[n] = t
	}
	printLongStorage(threads)

	saver := l.longSaver(ctx, conn, o, threads)
	reads, err := l.longReads(o, byTurns)
	if err != nil {
		return err
	}
	stateless := l.longStateless()
	printLongTargets(threads, saver, reads, stateless)
	return nil
}

// longTurn posts one turn and checks the answer.
func (l *load) longTurn(tid, text string, turn int) error {
	body := map[string]any{"assistant_id": "echo_chat", "input": map[string]any{"messages": []any{map[string]any{"type": "human", "content": text}}}}
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	path := "/threads/" + tid + "/runs/wait"
	resp, err := l.client.Post(l.target+path, "application/json", bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, bytes.TrimSpace(got))
	}
	var out struct {
		Messages []struct {
			Type    string `json:"type"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(got, &out); err != nil {
		return fmt.Errorf("POST %s: 200 with a body that is not the state: %w", path, err)
	}
	if len(out.Messages) != 2*turn {
		return fmt.Errorf("turn %d: %d messages, want %d: %.300s", turn, len(out.Messages), 2*turn, got)
	}
	if last := out.Messages[len(out.Messages)-1]; last.Type != "ai" || last.Content != "echo: "+text {
		return fmt.Errorf("turn %d: last message %s %v, want the echo", turn, last.Type, last.Content)
	}
	return nil
}

// longConversation creates an echo_chat thread and runs n turns on it,
// returning the thread id and the turns' latencies (all, and the last
// tenth's).
func (l *load) longConversation(n int, seed uint64) (string, result, result, error) {
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if err := l.post("/threads", map[string]any{"metadata": map[string]any{"graph_id": "echo_chat", "bench": "weft-load long"}}, &th); err != nil {
		return "", result{}, result{}, err
	}
	lat := make([]time.Duration, 0, n)
	start := time.Now()
	for i, text := range longTexts(n, seed) {
		t0 := time.Now()
		if err := l.longTurn(th.ThreadID, text, i+1); err != nil {
			return "", result{}, result{}, err
		}
		lat = append(lat, time.Since(t0))
	}
	all := result{lat: slices.Sorted(slices.Values(lat)), elapsed: time.Since(start)}
	tail := result{lat: slices.Sorted(slices.Values(lat[n-max(n/10, 1):]))}
	return th.ThreadID, all, tail, nil
}

// longStorage runs one conversation of n turns and measures what it left
// in the database.
func (l *load) longStorage(ctx context.Context, conn *pgx.Conn, n int, seed uint64) (*longThread, error) {
	before, err := relationSizes(ctx, conn, "public")
	if err != nil {
		return nil, err
	}
	tid, lat, tail, err := l.longConversation(n, seed)
	if err != nil {
		return nil, err
	}
	after, err := relationSizes(ctx, conn, "public")
	if err != nil {
		return nil, err
	}
	growth := map[string]int64{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			growth[k] = d
		}
	}
	rows, err := threadRowBytes(ctx, conn, "public", tid)
	if err != nil {
		return nil, err
	}
	msgs, err := l.messagesJSON(tid)
	if err != nil {
		return nil, err
	}
	return &longThread{id: tid, turns: n, msgsJSON: msgs, turnLat: lat, lastTenth: tail, rows: rows, growth: growth}, nil
}

// messagesJSON is the size of the thread's values.messages as compact JSON.
func (l *load) messagesJSON(tid string) (int64, error) {
	resp, err := l.client.Get(l.target + "/threads/" + tid + "/state")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET /threads/%s/state: %d", tid, resp.StatusCode)
	}
	var st struct {
		Values struct {
			Messages json.RawMessage `json:"messages"`
		} `json:"values"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return 0, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, st.Values.Messages); err != nil {
		return 0, err
	}
	return int64(buf.Len()), nil
}

// relationSizesSQL is pg_total_relation_size of each table of a schema.
const relationSizesSQL = `SELECT c.relname::text AS name, pg_total_relation_size(c.oid) AS size
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind IN ('r', 'p')`

func relationSizes(ctx context.Context, conn *pgx.Conn, schema string) (map[string]int64, error) {
	rows, err := conn.Query(ctx, relationSizesSQL, schema)
	if err != nil {
		return nil, fmt.Errorf("relation sizes: %w", err)
	}
	type row struct {
		Name string `db:"name"`
		Size int64  `db:"size"`
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByName[row])
	if err != nil {
		return nil, fmt.Errorf("relation sizes: %w", err)
	}
	out := map[string]int64{}
	for _, r := range list {
		out[r.Name] = r.Size
	}
	return out, nil
}

// tableColumnsSQL lists the columns of each table of a schema.
const tableColumnsSQL = `SELECT c.table_name::text AS name, array_agg(c.column_name::text ORDER BY c.ordinal_position) AS columns,
    array_agg(c.data_type::text ORDER BY c.ordinal_position) AS types
FROM information_schema.columns c JOIN pg_tables t ON t.schemaname = c.table_schema AND t.tablename = c.table_name
WHERE c.table_schema = $1 GROUP BY c.table_name ORDER BY c.table_name`

// threadRowBytes sums pg_column_size over the rows each table of schema
// holds for a thread: tables with a thread_id column by it, tables with a
// run_id column through the thread's runs. With tid "" every row of every
// table counts (a schema holding one thread).
func threadRowBytes(ctx context.Context, conn *pgx.Conn, schema, tid string) ([]tableBytes, error) {
	rows, err := conn.Query(ctx, tableColumnsSQL, schema)
	if err != nil {
		return nil, fmt.Errorf("table columns: %w", err)
	}
	type table struct {
		Name    string   `db:"name"`
		Columns []string `db:"columns"`
		Types   []string `db:"types"`
	}
	tables, err := pgx.CollectRows(rows, pgx.RowToStructByName[table])
	if err != nil {
		return nil, fmt.Errorf("table columns: %w", err)
	}
	var out []tableBytes
	for _, t := range tables {
		var stored, raw []string
		for i, c := range t.Columns {
			col := pgx.Identifier{c}.Sanitize()
			stored = append(stored, "coalesce(pg_column_size("+col+"), 0)")
			switch t.Types[i] {
			case "bytea":
				raw = append(raw, "coalesce(octet_length("+col+"), 0)")
			case "text", "jsonb", "json", "character varying":
				raw = append(raw, "coalesce(octet_length("+col+"::text), 0)")
			default:
				raw = append(raw, "coalesce(pg_column_size("+col+"), 0)")
			}
		}
		q := "SELECT count(*), coalesce(sum(" + strings.Join(stored, " + ") + "), 0)::bigint, coalesce(sum(" + strings.Join(raw, " + ") + "), 0)::bigint FROM " + pgx.Identifier{schema, t.Name}.Sanitize()
		var args []any
		switch {
		case tid == "":
		case slices.Contains(t.Columns, "thread_id"):
			q += " WHERE thread_id::text = $1"
			args = append(args, tid)
		case slices.Contains(t.Columns, "run_id"):
			q += " WHERE run_id IN (SELECT run_id FROM " + pgx.Identifier{schema, "runs"}.Sanitize() + " WHERE thread_id::text = $1)"
			args = append(args, tid)
		default:
			continue
		}
		tb := tableBytes{table: t.Name}
		if err := conn.QueryRow(ctx, q, args...).Scan(&tb.rows, &tb.bytes, &tb.raw); err != nil {
			return nil, fmt.Errorf("row bytes of %s: %w", t.Name, err)
		}
		if tb.rows > 0 {
			out = append(out, tb)
		}
	}
	return out, nil
}

func kb(n int64) string { return fmt.Sprintf("%.1f", float64(n)/1024) }

func mb(n int64) string { return fmt.Sprintf("%.2f", float64(n)/(1024*1024)) }

func printLongStorage(threads []*longThread) {
	fmt.Printf("\n== long threads: storage per thread\n")
	fmt.Printf("%6s %6s %10s %11s %7s %10s %12s %12s %7s %11s %9s %9s %14s\n", "turns", "msgs", "msgs KiB", "row MiB", "x msgs", "row B/turn",
		"uncompr MiB", "growth MiB", "x msgs", "growth B/t", "turn p50", "turn p95", "last 10% p50")
	for _, t := range threads {
		rb, g := sumBytes(t.rows), sumMap(t.growth)
		fmt.Printf("%6d %6d %10s %11s %7.1f %10d %12s %12s %7.1f %11d %8.2fms %8.2fms %12.2fms\n", t.turns, 2*t.turns, kb(t.msgsJSON), mb(rb),
			float64(rb)/float64(t.msgsJSON), rb/int64(t.turns), mb(sumRaw(t.rows)), mb(g), float64(g)/float64(t.msgsJSON), g/int64(t.turns),
			t.turnLat.pct(0.5), t.turnLat.pct(0.95), t.lastTenth.pct(0.5))
	}
	fmt.Printf("(x msgs = bytes / messages JSON; B/turn = bytes / turns, flat when storage grows with the conversation; turn = one runs/wait, client side; last 10%% = the turns of the last tenth of the conversation)\n")

	names := map[string]bool{}
	for _, t := range threads {
		for _, r := range t.rows {
			names[r.table] = true
		}
		for k := range t.growth {
			names[k] = true
		}
	}
	sorted := slices.Sorted(func(yield func(string) bool) {
		for k := range names {
			if !yield(k) {
				return
			}
		}
	})
	fmt.Printf("\n== long threads: by table, per turn — row bytes (rows) / uncompressed bytes / relation growth\n")
	fmt.Printf("%-22s", "table")
	for _, t := range threads {
		fmt.Printf(" %30s", fmt.Sprintf("%d turns", t.turns))
	}
	fmt.Println()
	for _, name := range sorted {
		fmt.Printf("%-22s", name)
		for _, t := range threads {
			var r tableBytes
			for _, x := range t.rows {
				if x.table == name {
					r = x
				}
			}
			fmt.Printf(" %30s", fmt.Sprintf("%d (%d) / %d / %d", r.bytes/int64(t.turns), r.rows, r.raw/int64(t.turns), t.growth[name]/int64(t.turns)))
		}
		fmt.Println()
	}
	fmt.Printf("%-22s", "total")
	for _, t := range threads {
		fmt.Printf(" %30s", fmt.Sprintf("%d / %d / %d", sumBytes(t.rows)/int64(t.turns), sumRaw(t.rows)/int64(t.turns), sumMap(t.growth)/int64(t.turns)))
	}
	fmt.Println()
	fmt.Printf("(uncompressed: bytea, text and JSON columns as their bytes (jsonb as its text), other columns as stored)\n")
}

// saverResult is the stock saver's run of one conversation.
type saverResult struct {
	turns    int
	note     string // why it was not measured ("" when it was)
	msPerT   map[string]float64
	msgsJSON int64 // Weft's messages JSON for the same conversation (0: not measured)
	rows     []tableBytes
	rels     int64
}

// longSaver runs worker-js/bench/long-saver.mjs for each -long-saver-turns
// on its own schema of the same database, then reads the schema's sizes.
// The conversation of n turns is the one Weft's n-turn thread had (same
// seed); its messages JSON is Weft's.
func (l *load) longSaver(ctx context.Context, conn *pgx.Conn, o longOpts, threads []*longThread) []saverResult {
	fmt.Printf("\n== long threads: LangGraph.js PostgresSaver (@langchain/langgraph-checkpoint-postgres) for the same conversation\n")
	fmt.Printf("method: node %s: a MessagesAnnotation graph START → echo → END compiled with PostgresSaver.fromConnString(<this database>, {schema: \"bench_saver_<turns>\"}), graph.invoke per turn on one thread; rows and pg_total_relation_size of that schema afterwards (one thread in it); x msgs against Weft's messages JSON of the same texts\n", o.script)
	var out []saverResult
	seedOf := map[int]uint64{}
	msgsOf := map[int]int64{}
	for i, t := range threads {
		seedOf[t.turns], msgsOf[t.turns] = uint64(i+1), t.msgsJSON
	}
	for _, n := range o.saverTurns {
		r := saverResult{turns: n, msgsJSON: msgsOf[n]}
		seed, ok := seedOf[n]
		if !ok {
			seed = uint64(1000 + n)
		}
		if err := l.runSaver(ctx, conn, o, n, seed, &r); err != nil {
			r.note = err.Error()
		}
		out = append(out, r)
	}
	fmt.Printf("%6s %12s %11s %7s %10s %12s %7s %10s %9s %9s %s\n", "turns", "msgs KiB", "row MiB", "x msgs", "row B/turn", "rel MiB", "x msgs", "rel B/turn", "turn p50", "turn p95", "vs Weft (row bytes: all tables; checkpoints, checkpoint_blobs, checkpoint_writes, thread_elements)")
	for _, r := range out {
		if r.note != "" {
			fmt.Printf("%6d n/a: %s\n", r.turns, r.note)
			continue
		}
		rb := sumBytes(r.rows)
		ratio := func(n int64) string {
			if r.msgsJSON == 0 {
				return "-"
			}
			return fmt.Sprintf("%.1f", float64(n)/float64(r.msgsJSON))
		}
		vs := "-"
		for _, t := range threads {
			if t.turns == r.turns {
				vs = fmt.Sprintf("saver %.1fx Weft's; %.1fx Weft's checkpoint tables", float64(rb)/float64(sumBytes(t.rows)), float64(rb)/float64(checkpointBytes(t.rows)))
			}
		}
		fmt.Printf("%6d %12s %11s %7s %10d %12s %7s %10d %7.2fms %7.2fms %s\n", r.turns, kb(r.msgsJSON), mb(rb), ratio(rb), rb/int64(r.turns),
			mb(r.rels), ratio(r.rels), r.rels/int64(r.turns), r.msPerT["p50"], r.msPerT["p95"], vs)
		for _, t := range r.rows {
			fmt.Printf("%8s%-22s %8d rows %12s KiB row bytes (%d B/turn), %s KiB uncompressed\n", "", t.table, t.rows, kb(t.bytes), t.bytes/int64(r.turns), kb(t.raw))
		}
	}
	return out
}

func (l *load) runSaver(ctx context.Context, conn *pgx.Conn, o longOpts, n int, seed uint64, r *saverResult) error {
	if _, err := exec.LookPath(o.node); err != nil {
		return fmt.Errorf("no node (%s)", o.node)
	}
	if _, err := os.Stat(o.script); err != nil {
		return fmt.Errorf("no %s (run from the repository root, or set -long-saver-script)", o.script)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(o.script)), "node_modules", "@langchain", "langgraph-checkpoint-postgres")); err != nil {
		return fmt.Errorf("no @langchain/langgraph-checkpoint-postgres in %s/node_modules (npm ci there, or symlink it)", filepath.Dir(filepath.Dir(o.script)))
	}
	schema := fmt.Sprintf("bench_saver_%d", n)
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
		return err
	}
	in, err := json.Marshal(map[string]any{"texts": longTexts(n, seed)})
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, o.node, o.script, "--dsn", l.dsn, "--schema", schema)
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 800 {
			msg = msg[len(msg)-800:]
		}
		return fmt.Errorf("%s: %w: %s", o.script, err, msg)
	}
	var res struct {
		Turns     int                `json:"turns"`
		MsPerTurn map[string]float64 `json:"ms_per_turn"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || res.Turns != n {
		return fmt.Errorf("%s: unexpected output %q", o.script, stdout.String())
	}
	r.msPerT = res.MsPerTurn
	if r.rows, err = threadRowBytes(ctx, conn, schema, ""); err != nil {
		return err
	}
	rels, err := relationSizes(ctx, conn, schema)
	if err != nil {
		return err
	}
	r.rels = sumMap(rels)
	return nil
}

// readPhase is one read measured on one thread.
type readPhase struct {
	op     string
	turns  int
	bytes  int64
	res    result
	note   string // n/a reason
	window bool   // a windowed read (flatness target)
	full   bool   // a full-value read (MB/s target)
}

func (r readPhase) mbps() float64 {
	if p := r.res.pct(0.5); p > 0 {
		return float64(r.bytes) / (1024 * 1024) / (p / 1000)
	}
	return 0
}

// request sends method path with an optional JSON body and returns the
// status and the response's body.
func (l *load) request(method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, l.target+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// longReads measures state, history(10), windowed state, the messages
// page and GET /threads/{id} (the thread's values projection) on threads
// of each -long-read-turns (the storage threads when they have that
// length, else new ones).
func (l *load) longReads(o longOpts, byTurns map[int]*longThread) ([]readPhase, error) {
	fmt.Printf("\n== long threads: reads on an echo_chat thread of N turns (2N messages), %d sequential requests each\n", o.reads)
	fmt.Printf("MB/s = response bytes / p50 latency (MiB of JSON per second for one request); p50/p95 client side\n")
	tids := map[int]string{}
	for i, n := range o.readTurns {
		if t, ok := byTurns[n]; ok {
			tids[n] = t.id
			continue
		}
		tid, _, _, err := l.longConversation(n, uint64(500+i))
		if err != nil {
			return nil, fmt.Errorf("reads, building %d turns: %w", n, err)
		}
		tids[n] = tid
	}
	// The optional endpoints are probed on the longest thread: a server
	// without them answers 404/400, or (messages_window) ignores the
	// parameter and returns every message.
	longest := slices.Max(o.readTurns)
	windowNote, pageNote := "", ""
	status, body, err := l.request("GET", "/threads/"+tids[longest]+fmt.Sprintf("/state?messages_window=%d", longWindow), nil)
	switch {
	case err != nil:
		return nil, err
	case status != http.StatusOK:
		windowNote = fmt.Sprintf("n/a (server answered %d)", status)
	default:
		var st struct {
			Values struct {
				Messages []json.RawMessage `json:"messages"`
			} `json:"values"`
		}
		if json.Unmarshal(body, &st) != nil || len(st.Values.Messages) > longWindow {
			windowNote = fmt.Sprintf("n/a (server ignored messages_window: %d messages returned at %d turns)", len(st.Values.Messages), longest)
		}
	}
	status, _, err = l.request("GET", "/threads/"+tids[longest]+fmt.Sprintf("/messages?limit=%d", longWindow), nil)
	switch {
	case err != nil:
		return nil, err
	case status != http.StatusOK:
		pageNote = fmt.Sprintf("n/a (server answered %d)", status)
	}

	type op struct {
		name, method, path string
		body               any
		note               string
		window, full       bool
	}
	var out []readPhase
	fmt.Printf("%-28s %6s %11s %9s %9s %9s %9s\n", "op", "turns", "resp KiB", "requests", "p50 ms", "p95 ms", "MB/s")
	for _, n := range o.readTurns {
		tid := tids[n]
		for _, x := range []op{
			{name: "GET state", method: "GET", path: "/threads/" + tid + "/state", full: true},
			{name: "POST history {limit:10}", method: "POST", path: "/threads/" + tid + "/history", body: map[string]any{"limit": 10}, full: true},
			{name: fmt.Sprintf("GET state?messages_window=%d", longWindow), method: "GET", path: "/threads/" + tid + fmt.Sprintf("/state?messages_window=%d", longWindow), note: windowNote, window: true},
			{name: fmt.Sprintf("GET messages?limit=%d", longWindow), method: "GET", path: "/threads/" + tid + fmt.Sprintf("/messages?limit=%d", longWindow), note: pageNote},
			{name: "GET thread", method: "GET", path: "/threads/" + tid},
		} {
			p := readPhase{op: x.name, turns: n, note: x.note, window: x.window, full: x.full}
			if p.note == "" {
				var errs errorLog
				var size int64
				p.res = phase(1, time.Minute, o.reads, func(int) error {
					status, b, err := l.request(x.method, x.path, x.body)
					if err == nil && status != http.StatusOK {
						err = fmt.Errorf("%s %s: %d %s", x.method, x.path, status, bytes.TrimSpace(b))
					}
					if err != nil {
						return errs.add(err)
					}
					size = int64(len(b))
					return nil
				})
				p.bytes = size
				if p.res.errs > 0 {
					errs.print("    error: ")
				}
			}
			out = append(out, p)
			if p.note != "" {
				fmt.Printf("%-28s %6d %s\n", p.op, n, p.note)
				continue
			}
			fmt.Printf("%-28s %6d %11s %9d %9.2f %9.2f %9.1f\n", p.op, n, kb(p.bytes), len(p.res.lat), p.res.pct(0.5), p.res.pct(0.95), p.mbps())
		}
	}
	return out, nil
}

// longStateless measures stateless POST /runs/wait on foo_bar at
// concurrency 16 for -duration.
func (l *load) longStateless() result {
	fmt.Printf("\n== long threads: stateless POST /runs/wait {\"assistant_id\":\"foo_bar\",\"input\":{\"foo\":\"\"}} at concurrency %d for %s (answer checked: %s)\n", longStatelessWorkers, l.duration, fooBarResult)
	var errs errorLog
	body := map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}}
	res := phase(longStatelessWorkers, l.duration, l.maxReq, func(int) error {
		if err := l.runWait("/runs/wait", body, fooBarResult); err != nil {
			return errs.add(err)
		}
		return nil
	})
	fmt.Printf("%-12s %5s %9s %9s %8s %8s %8s %8s\n", "op", "conc", "count", "runs/s", "p50 ms", "p95 ms", "p99 ms", "errors")
	fmt.Printf("%-12s %5d %9d %9.0f %8.2f %8.2f %8.2f %8d\n", "runs/wait", longStatelessWorkers, len(res.lat), res.opsPerSec(), res.pct(0.5), res.pct(0.95), res.pct(0.99), res.errs)
	errs.print("    error: ")
	return res
}

// printLongTargets compares the measurements with issue 16's targets.
func printLongTargets(threads []*longThread, saver []saverResult, reads []readPhase, stateless result) {
	fmt.Printf("\n== long threads: targets (issue 16)\n")
	fmt.Printf("%-48s %26s %22s %s\n", "measure", "measured", "target", "")
	mark := func(ok bool) string {
		if ok {
			return "PASS"
		}
		return "MISS"
	}
	line := func(measure, got, target string, ok bool) {
		fmt.Printf("%-48s %26s %22s %s\n", measure, got, target, mark(ok))
	}
	na := func(measure, why string) { fmt.Printf("%-48s %26s\n", measure, why) }
	var t200 *longThread
	for _, t := range threads {
		if t.turns == 200 {
			t200 = t
		}
	}
	if t200 != nil {
		x := float64(sumBytes(t200.rows)) / float64(t200.msgsJSON)
		line("row bytes / messages JSON at 200 turns", fmt.Sprintf("%.1fx", x), fmt.Sprintf("≤%.0fx", targetLongRatio200), x <= targetLongRatio200)
		fmt.Printf("%-48s %26s %22s\n", "  (before compact list storage, issue 16)", fmt.Sprintf("%.0fx", refBefore200), "(reference)")
		g := float64(sumMap(t200.growth)) / float64(t200.msgsJSON)
		fmt.Printf("%-48s %26s %22s\n", "  (relation growth / messages JSON, 200 turns)", fmt.Sprintf("%.1fx", g), "(for the record)")
	} else {
		na("row bytes / messages JSON at 200 turns", "n/a (no 200-turn thread)")
	}
	if len(threads) >= 2 {
		first, last := threads[0], threads[len(threads)-1]
		for _, t := range threads {
			if t.turns < first.turns {
				first = t
			}
			if t.turns > last.turns {
				last = t
			}
		}
		perTurn := func(t *longThread) float64 { return float64(sumBytes(t.rows)) / float64(t.turns) }
		x := perTurn(last) / perTurn(first)
		line(fmt.Sprintf("row bytes/turn at %d vs %d turns", last.turns, first.turns), fmt.Sprintf("%.0f vs %.0f B = %.2fx", perTurn(last), perTurn(first), x),
			fmt.Sprintf("flat (≤%.2fx)", targetLongFlat), x <= targetLongFlat)
		// What grows: the tables whose bytes per turn rose the most.
		type grow struct {
			table string
			delta float64
		}
		var gs []grow
		for _, r := range last.rows {
			var f int64
			for _, q := range first.rows {
				if q.table == r.table {
					f = q.bytes
				}
			}
			d := float64(r.bytes)/float64(last.turns) - float64(f)/float64(first.turns)
			if d > 8 {
				gs = append(gs, grow{r.table, d})
			}
		}
		slices.SortFunc(gs, func(a, b grow) int { return int(b.delta - a.delta) })
		for _, g := range gs {
			fmt.Printf("  %-46s %26s\n", g.table+" B/turn grew by", fmt.Sprintf("%.0f B", g.delta))
		}
	}
	for _, s := range saver {
		if s.note != "" || s.msgsJSON == 0 {
			continue
		}
		fmt.Printf("%-48s %26s %22s\n", fmt.Sprintf("PostgresSaver row bytes / messages, %d turns", s.turns),
			fmt.Sprintf("%.1fx", float64(sumBytes(s.rows))/float64(s.msgsJSON)), "(for comparison)")
	}
	maxTurns := 0
	for _, r := range reads {
		maxTurns = max(maxTurns, r.turns)
	}
	var win []readPhase
	for _, r := range reads {
		if r.window {
			win = append(win, r)
		}
		if r.full && r.turns == maxTurns {
			if r.note != "" || len(r.res.lat) == 0 {
				na(r.op+" MB/s", "n/a")
				continue
			}
			line(fmt.Sprintf("%s MB/s at %d turns", r.op, r.turns), fmt.Sprintf("%.0f MB/s", r.mbps()), fmt.Sprintf("≥%.0f MB/s", targetFullReadMBps), r.mbps() >= targetFullReadMBps)
		}
	}
	if len(win) >= 2 && win[0].note == "" && len(win[0].res.lat) > 0 && len(win[len(win)-1].res.lat) > 0 {
		a, b := win[0], win[len(win)-1]
		x := b.res.pct(0.5) / a.res.pct(0.5)
		line(fmt.Sprintf("windowed state p50 at %d vs %d turns", b.turns, a.turns), fmt.Sprintf("%.2f vs %.2f ms = %.2fx", b.res.pct(0.5), a.res.pct(0.5), x),
			fmt.Sprintf("≤%.1fx", targetWindowFlat), x <= targetWindowFlat)
	} else {
		why := "n/a"
		if len(win) > 0 && win[0].note != "" {
			why = win[0].note
		}
		na("windowed state p50, most vs fewest turns", why)
	}
	if len(stateless.lat) > 0 {
		ops := stateless.opsPerSec()
		line(fmt.Sprintf("stateless runs/wait c%d", longStatelessWorkers), fmt.Sprintf("%.0f runs/s", ops), fmt.Sprintf("≥%.0f runs/s (quiet machine)", targetStatelessPerS), ops >= targetStatelessPerS)
	} else {
		na(fmt.Sprintf("stateless runs/wait c%d", longStatelessWorkers), "n/a (no successful run)")
	}
}
