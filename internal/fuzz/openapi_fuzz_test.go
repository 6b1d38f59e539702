// Package fuzz_test sends malformed requests to every operation of
// api/openapi.yaml and checks the bad-input rule of DESIGN.md §10: no client
// input ever gets a 5xx (the SDKs retry those and would run work twice), every
// error is a JSON {"detail": "..."}, and a refused request changes nothing.
//
// The operations come from the OpenAPI document, so a route added later is
// fuzzed without editing this file. The requests are generated from a seeded
// PRNG: the same binary always sends the same requests, in the same order
// (only the fixture ids differ). Requests that turn out valid (a 2xx to a
// POST, PATCH or DELETE) may change things; the suite lets them settle and
// takes a new snapshot. FUZZ_SHOW_ACCEPTED=1 logs them.
//
// Event-stream operations only get requests that must fail before a stream
// starts (malformed ids, bodies that are not a JSON object, bodies over the
// limit); POST /dispatch/claim never gets a valid positive wait_ms.
package fuzz_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"

	"github.com/weftdev/weft/api"
	"github.com/weftdev/weft/internal/assistants"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// seed fixes the generated requests; change it to explore other ones.
const seed = 20240917

// maxBody is the request body limit servertest gives the server.
const maxBody = 1 << 20

// snapshotTables are the tables whose rows a refused request must not touch.
var snapshotTables = []string{"threads", "runs", "run_dispatches", "checkpoints",
	"checkpoint_blobs", "checkpoint_writes", "assistants", "assistant_versions", "store_items", "crons"}

// request is one generated request.
type request struct {
	op     string // "POST /threads/{thread_id}/runs"
	class  string // what is malformed (see the generators)
	method string
	path   string // escaped, with the query string
	body   []byte // nil: no body
}

func (r request) String() string {
	body := string(r.body)
	if len(body) > 200 {
		body = body[:200] + fmt.Sprintf("…(%d bytes)", len(r.body))
	}
	path := r.path
	if len(path) > 200 {
		path = path[:200] + "…"
	}
	return fmt.Sprintf("[%s] %s %s %q", r.class, r.method, path, body)
}

// fixtures are real rows whose ids are put in a share of the requests, so
// handlers get past their 404 checks.
type fixtures struct {
	thread, run, checkpoint, dispatch, assistant string
}

func TestOpenAPIFuzz(t *testing.T) {
	t.Parallel()
	start := time.Now()
	// Temporary threads of stateless runs, and threads and store items
	// created with a ttl, stay for the whole test: their sweeps would change
	// the database between two requests.
	s := servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) {
		c.TempRetention, c.TTLSweepInterval, c.StoreSweepInterval = time.Hour, 24*time.Hour, 24*time.Hour
	})
	ctx := context.Background()

	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPI)
	if err != nil {
		t.Fatalf("load api/openapi.yaml: %v", err)
	}

	fx := makeFixtures(t, s)
	quiesce(t, s)
	g := &gen{rng: rand.New(rand.NewPCG(seed, seed))}
	reqs := g.all(doc)

	client := &http.Client{Timeout: 20 * time.Second}
	perOp := map[string]int{}
	perClass := map[string]int{}
	accepted := map[string]int{} // non-GET requests that got a 2xx (allowed to change things)
	baseline := snapshot(t, s)
	failures := 0
	took := map[string]time.Duration{}
	fail := func(format string, args ...any) {
		failures++
		if failures <= 60 {
			t.Errorf(format, args...)
		}
	}
	check := func(rq request) {
		status, hdr, body, err := send(ctx, client, s.URL, rq)
		if err != nil {
			fail("%s: transport error: %v", rq, err)
			return
		}
		ctype := hdr.Get("Content-Type")
		if status >= 500 {
			fail("%s: status %d, body %.300s", rq, status, body)
		}
		if status >= 400 {
			var eb struct {
				Detail any `json:"detail"`
			}
			if !strings.HasPrefix(ctype, "application/json") {
				fail("%s: status %d with Content-Type %q, want application/json", rq, status, ctype)
			} else if err := json.Unmarshal(body, &eb); err != nil || eb.Detail == nil || eb.Detail == "" {
				fail("%s: status %d without a JSON detail: %.300s", rq, status, body)
			}
		}
		if rq.class == "method" {
			// A 405 names the methods the path has. (GET /threads/search is
			// GET /threads/{thread_id} with a malformed id: a 422.)
			if allow := hdr.Get("Allow"); status == http.StatusMethodNotAllowed && (allow == "" || strings.Contains(allow, rq.method)) {
				fail("%s: 405 with Allow %q", rq, allow)
			}
		}
		if rq.method != http.MethodGet && status >= 200 && status < 300 {
			// A request that was valid after all may change things: let its
			// run finish, put back any fixture it removed, and start over.
			accepted[rq.op]++
			if os.Getenv("FUZZ_SHOW_ACCEPTED") != "" {
				t.Logf("accepted %d: %s", status, rq)
			}
			temporaryDeleted(t, s, rq, hdr)
			if snapshot(t, s) == baseline {
				return // a search, a count: nothing changed
			}
			quiesce(t, s)
			if fx2, changed := ensureFixtures(t, s, fx); changed {
				fx = fx2
			}
			baseline = snapshot(t, s)
			return
		}
		if snap := snapshot(t, s); snap != baseline {
			fail("%s: status %d changed the database:\nbefore %s\nafter  %s", rq, status, baseline, snap)
			baseline = snap
		}
	}
	for _, rq := range reqs {
		rq.path = g.resolve(rq.path, fx)
		perOp[rq.op]++
		perClass[rq.class]++
		t0 := time.Now()
		check(rq)
		took[rq.op] += time.Since(t0)
	}

	// Read back what the accepted requests stored: a value taken in must not
	// make a later read fail.
	for _, rq := range readBack(t, s) {
		perOp["read back"]++
		perClass[rq.class]++
		status, _, body, err := send(ctx, client, s.URL, rq)
		if err != nil || status >= 500 {
			fail("%s: status %d, err %v, body %.300s", rq, status, err, body)
		}
	}

	ops := make([]string, 0, len(perOp))
	for op := range perOp {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	var sb strings.Builder
	for _, op := range ops {
		fmt.Fprintf(&sb, "\n  %-50s %5d %v", op, perOp[op], took[op].Round(time.Millisecond))
		if accepted[op] > 0 {
			fmt.Fprintf(&sb, " (%d accepted)", accepted[op])
		}
	}
	classes := make([]string, 0, len(perClass))
	for c := range perClass {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	sb.WriteString("\n  per class:")
	for _, c := range classes {
		fmt.Fprintf(&sb, " %s=%d", c, perClass[c])
	}
	total := 0
	for _, n := range perOp {
		total += n
	}
	t.Logf("fuzzed %d operations with %d requests in %s:%s", len(ops), total, time.Since(start).Round(time.Millisecond), sb.String())
	if total < 5000 {
		t.Errorf("only %d requests sent, want at least 5000", total)
	}
	if failures > 60 {
		t.Errorf("… and %d more failures", failures-60)
	}
}

func send(ctx context.Context, c *http.Client, base string, rq request) (int, http.Header, []byte, error) {
	var rd io.Reader
	if rq.body != nil {
		rd = bytes.NewReader(rq.body)
	}
	req, err := http.NewRequestWithContext(ctx, rq.method, base+rq.path, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	if rq.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, body, err
}

// snapshot returns the row count and a hash of the row versions of every
// table in snapshotTables. A row version is its physical place and the
// transaction that wrote it (ctid, xmin): an insert, update or delete changes
// the hash, a rolled-back write or a row lock does not. Hashing row versions
// rather than row contents keeps a snapshot cheap as the tables grow.
func snapshot(t *testing.T, s *servertest.Server) string {
	t.Helper()
	parts := make([]string, len(snapshotTables))
	for i, tbl := range snapshotTables {
		parts[i] = fmt.Sprintf(`(SELECT '%[1]s=' || count(*) || ':' || coalesce(md5(string_agg(ctid::text || xmin::text, '|' ORDER BY ctid)), '-') FROM %[1]s)`, tbl)
	}
	var out string
	if err := s.DB.QueryRow(context.Background(), "SELECT "+strings.Join(parts, " || ' ' || ")).Scan(&out); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	return out
}

// temporaryDeleted waits (at most 10 s) until the temporary thread of the
// stateless run that an accepted POST /runs/wait or /runs/stream answered
// (named by its Content-Location) is deleted: that happens in the
// background once the answer is written.
func temporaryDeleted(t *testing.T, s *servertest.Server, rq request, hdr http.Header) {
	t.Helper()
	if !strings.HasSuffix(rq.path, "/runs/wait") && !strings.HasSuffix(rq.path, "/runs/stream") {
		return
	}
	loc := hdr.Get("Content-Location")
	runID, err := uuid.Parse(loc[strings.LastIndex(loc, "/")+1:])
	if err != nil {
		return
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		var left bool
		if err := s.DB.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM runs r JOIN threads t USING (thread_id)
			WHERE r.run_id = $1 AND r.temporary AND r.webhook_state IS DISTINCT FROM 'pending')`, runID).Scan(&left); err != nil {
			t.Fatalf("temporary thread of run %s: %v", runID, err)
		}
		if !left {
			return
		}
	}
}

// quiesce waits until no run is pending or running (at most 10 s) and the
// tables stop changing.
func quiesce(t *testing.T, s *servertest.Server) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var busy int
		if err := s.DB.QueryRow(context.Background(),
			`SELECT count(*) FROM runs WHERE status IN ('pending', 'running')`).Scan(&busy); err != nil {
			t.Fatalf("quiesce: %v", err)
		}
		if busy == 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	prev := snapshot(t, s)
	for time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
		cur := snapshot(t, s)
		if cur == prev {
			return
		}
		prev = cur
	}
}

// makeFixtures creates a thread bound to foo_bar, a finished foo_bar run on
// it, and reads back the run's checkpoint and dispatch.
func makeFixtures(t *testing.T, s *servertest.Server) fixtures {
	t.Helper()
	// An accepted DELETE or PATCH of /assistants/foo_bar may have removed
	// the system assistant or moved it to another graph: put it back, as a
	// server start does (no client may create an assistant at a system id).
	ctx := context.Background()
	if _, err := s.DB.Exec(ctx, `UPDATE assistants SET graph_id = 'foo_bar' WHERE assistant_id = $1`, fooBarAssistant); err != nil {
		t.Fatal(err)
	}
	if err := assistants.NewStore(s.DB).EnsureSystem(ctx, []string{"foo_bar"}); err != nil {
		t.Fatal(err)
	}
	s.Must(http.StatusOK, "PATCH", "/assistants/foo_bar", map[string]any{"graph_id": "foo_bar"})
	tid := s.Must(http.StatusOK, "POST", "/threads", map[string]any{"metadata": map[string]any{"graph_id": "foo_bar"}}).Map(t)["thread_id"].(string)
	s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}})
	fx := fixtures{thread: tid, assistant: "foo_bar"}
	if err := s.DB.QueryRow(ctx, `SELECT run_id::text FROM runs WHERE thread_id = $1 ORDER BY created_at DESC LIMIT 1`, tid).Scan(&fx.run); err != nil {
		t.Fatalf("fixture run: %v", err)
	}
	if err := s.DB.QueryRow(ctx, `SELECT checkpoint_id FROM checkpoints WHERE thread_id::text = $1 ORDER BY checkpoint_id DESC LIMIT 1`, tid).Scan(&fx.checkpoint); err != nil {
		t.Fatalf("fixture checkpoint: %v", err)
	}
	if err := s.DB.QueryRow(ctx, `SELECT dispatch_id::text FROM run_dispatches WHERE run_id = $1 LIMIT 1`, fx.run).Scan(&fx.dispatch); err != nil {
		t.Fatalf("fixture dispatch: %v", err)
	}
	return fx
}

// fooBarAssistant is the id of foo_bar's system assistant, the fixture
// assistant (named by its graph in requests).
const fooBarAssistant = "59bfe87c-f4fa-5cd5-8a97-4f116167b027"

// ensureFixtures makes new fixtures when an accepted request removed any.
func ensureFixtures(t *testing.T, s *servertest.Server, fx fixtures) (fixtures, bool) {
	t.Helper()
	var ok bool
	err := s.DB.QueryRow(context.Background(), `SELECT
		EXISTS (SELECT 1 FROM threads WHERE thread_id::text = $1)
		AND EXISTS (SELECT 1 FROM runs WHERE run_id::text = $2)
		AND EXISTS (SELECT 1 FROM checkpoints WHERE thread_id::text = $1 AND checkpoint_id::text = $3)
		AND EXISTS (SELECT 1 FROM run_dispatches WHERE dispatch_id::text = $4)
		AND EXISTS (SELECT 1 FROM assistants WHERE assistant_id::text = $5 AND graph_id = 'foo_bar')`,
		fx.thread, fx.run, fx.checkpoint, fx.dispatch, fooBarAssistant).Scan(&ok)
	if err != nil {
		t.Fatalf("ensureFixtures: %v", err)
	}
	if ok {
		return fx, false
	}
	fx = makeFixtures(t, s)
	quiesce(t, s)
	return fx, true
}

// readBack lists reads of every thread and run left in the database.
func readBack(t *testing.T, s *servertest.Server) []request {
	t.Helper()
	rows, err := s.DB.Query(context.Background(), `SELECT t.thread_id::text, coalesce(r.run_id::text, '')
		FROM threads t LEFT JOIN runs r USING (thread_id) ORDER BY 1, 2`)
	if err != nil {
		t.Fatalf("readBack: %v", err)
	}
	defer rows.Close()
	var out []request
	get := func(path string) {
		out = append(out, request{op: "read back", class: "readback", method: http.MethodGet, path: path})
	}
	seen := map[string]bool{}
	for rows.Next() {
		var tid, rid string
		if err := rows.Scan(&tid, &rid); err != nil {
			t.Fatalf("readBack: %v", err)
		}
		if !seen[tid] {
			seen[tid] = true
			for _, p := range []string{"", "/state", "/history", "/runs", "/children"} {
				get("/threads/" + tid + p)
			}
		}
		if rid != "" {
			get("/threads/" + tid + "/runs/" + rid)
			get("/runs/" + rid)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("readBack: %v", err)
	}
	get("/dispatches?limit=1000")
	for _, p := range []string{"/threads/search", "/assistants/search", "/threads/count", "/store/items/search", "/store/namespaces"} {
		out = append(out, request{op: "read back", class: "readback", method: http.MethodPost, path: p, body: []byte(`{"limit":1000}`)})
	}
	return out
}

// gen generates the requests. Paths hold placeholders (@thread@, …) for the
// fixture ids, resolved when the request is sent (fixtures may be remade).
type gen struct {
	rng *rand.Rand
}

var fixtureOf = map[string]string{
	"thread_id": "@thread@", "run_id": "@run@", "checkpoint_id": "@checkpoint@",
	"dispatch_id": "@dispatch@", "assistant_id": "@assistant@",
}

func (g *gen) resolve(path string, fx fixtures) string {
	return strings.NewReplacer("@thread@", fx.thread, "@run@", fx.run, "@checkpoint@", fx.checkpoint,
		"@dispatch@", fx.dispatch, "@assistant@", fx.assistant).Replace(path)
}

type operation struct {
	path, method string
	op           *openapi3.Operation
	streaming    bool
}

// all returns every request, operation by operation (DELETEs last, so the
// fixtures they may remove serve the other operations first).
func (g *gen) all(doc *openapi3.T) []request {
	var ops []operation
	allowed := map[string]map[string]bool{}
	for path, item := range doc.Paths.Map() {
		allowed[path] = map[string]bool{}
		for method, op := range item.Operations() {
			allowed[path][method] = true
			ops = append(ops, operation{path: path, method: method, op: op, streaming: isStreaming(op)})
		}
	}
	sort.Slice(ops, func(i, j int) bool {
		di, dj := ops[i].method == http.MethodDelete, ops[j].method == http.MethodDelete
		if di != dj {
			return dj
		}
		if ops[i].path != ops[j].path {
			return ops[i].path < ops[j].path
		}
		return ops[i].method < ops[j].method
	})
	var out []request
	for _, o := range ops {
		out = append(out, g.operation(o)...)
	}
	paths := make([]string, 0, len(allowed))
	for p := range allowed {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions} {
			if allowed[p][m] {
				continue
			}
			for i := 0; i < 2; i++ {
				ids := g.ids(p, i == 0)
				out = append(out, request{op: "wrong method " + p, class: "method", method: m, path: fill(p, ids)})
			}
		}
	}
	return out
}

// isStreaming tells whether the operation answers with an event stream; such
// operations only get requests that must fail before any stream starts.
func isStreaming(op *openapi3.Operation) bool {
	for _, r := range op.Responses.Map() {
		if r.Value != nil && r.Value.Content.Get("text/event-stream") != nil {
			return true
		}
	}
	return false
}

func pathParams(path string) []string {
	var names []string
	for _, seg := range strings.Split(path, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			names = append(names, seg[1:len(seg)-1])
		}
	}
	return names
}

// ids picks a value for every path parameter: mostly the fixture, sometimes
// a UUID of nothing (never one for fixtureOnly).
func (g *gen) ids(path string, fixtureOnly bool) map[string]string {
	ids := map[string]string{}
	for _, name := range pathParams(path) {
		if fixtureOnly || g.rng.IntN(4) != 0 {
			ids[name] = fixtureOf[name]
		} else {
			ids[name] = g.uuid()
			if name == "checkpoint_id" {
				ids[name] = fmt.Sprintf("1ef%05x-0000-6000-8000-000000000000", g.rng.IntN(1<<20))
			}
		}
	}
	return ids
}

// nothingIDs gives every path parameter a UUID of nothing.
func (g *gen) nothingIDs(path string) map[string]string {
	ids := map[string]string{}
	for _, name := range pathParams(path) {
		ids[name] = g.uuid()
	}
	return ids
}

// uuid returns a random (version 4) UUID from the seeded PRNG.
func (g *gen) uuid() string {
	var u uuid.UUID
	for i := range u {
		u[i] = byte(g.rng.IntN(256))
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u.String()
}

func fill(path string, ids map[string]string) string {
	for name, v := range ids {
		path = strings.ReplaceAll(path, "{"+name+"}", v)
	}
	return path
}

// badIDs are malformed path segments, already escaped.
func badIDs() []string {
	u := "0b9e8f0e-3c2a-4a57-9a55-8a3b7c9d1e2f"
	return []string{
		"not-a-uuid", "123", "-1", "null", "%20", "%00", "a%00b", u + "%00", "%00" + u,
		"%FF%FE%FD", "%C3%28", u[:35] + "%FF", "%E2%80%8B", "%ED%A0%80",
		strings.Repeat("a", 3000), strings.Repeat("%F0%9F%98%80", 200),
		u[:35] + "g", u + "0", "%7B" + u + "%7D", "urn:uuid:" + u, u[:8] + "%2D" + u[9:],
		"..%2F..%2Fthreads", "%2F", "%25", "'%20OR%201=1--", "%22%5C",
	}
}

func (g *gen) operation(o operation) []request {
	opName := o.method + " " + o.path
	var out []request
	add := func(class, path string, body []byte) {
		out = append(out, request{op: opName, class: class, method: o.method, path: path, body: body})
	}
	var params, query []*openapi3.Parameter
	for _, p := range o.op.Parameters {
		if p.Value == nil {
			continue
		}
		switch p.Value.In {
		case "path":
			params = append(params, p.Value)
		case "query":
			query = append(query, p.Value)
		}
	}

	// Path parameters: malformed, UUIDs of nothing, every other one a fixture.
	for _, p := range params {
		for _, bad := range badIDs() {
			ids := g.ids(o.path, true)
			ids[p.Name] = bad
			if o.streaming && nonUUIDParam(p.Name) {
				continue // not surely malformed: could start a stream
			}
			add("path", fill(o.path, ids), nil)
		}
		if !o.streaming {
			for i := 0; i < 3; i++ {
				ids := g.ids(o.path, true)
				ids[p.Name] = g.uuid()
				add("path", fill(o.path, ids), nil)
			}
		}
	}

	// Query parameters.
	pathFor := func() string {
		if o.streaming {
			return fill(o.path, g.nothingIDs(o.path))
		}
		return fill(o.path, g.ids(o.path, false))
	}
	for _, q := range query {
		for _, v := range badQueryValues(q) {
			add("query", pathFor()+"?"+q.Name+"="+v, nil)
		}
	}
	for _, v := range []string{"zz_unknown=1", "%00=%00", "%FF=%FF", strings.Repeat("a=1&", 500) + "b", "&&&", "=%00"} {
		add("query", pathFor()+"?"+v, nil)
	}

	// Bodies.
	if o.op.RequestBody == nil || o.op.RequestBody.Value == nil {
		return out
	}
	mt := o.op.RequestBody.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return out
	}
	bodyPath := func() string {
		if o.streaming {
			return fill(o.path, g.ids(o.path, true))
		}
		return fill(o.path, g.ids(o.path, false))
	}
	bodies := malformedBodies(mt.Schema.Value)
	classes := make([]string, 0, len(bodies))
	for c := range bodies {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	for _, class := range classes {
		if o.streaming && class != "notjson" && class != "toplevel" && class != "huge" {
			continue // a valid-enough body would start a stream
		}
		for _, b := range bodies[class] {
			add(class, bodyPath(), []byte(b))
		}
	}
	return out
}

// nonUUIDParam tells the path parameters that are not UUIDs (assistants are
// also named by graph id).
func nonUUIDParam(name string) bool { return name == "assistant_id" }

func badQueryValues(p *openapi3.Parameter) []string {
	vals := []string{"%00", "a%00b", "%FF%FE", "%C3%28", strings.Repeat("x", 4000), "%22%5B1%2C", "%5B1%2C%7B%7D%5D"}
	var s *openapi3.Schema
	if p.Schema != nil {
		s = p.Schema.Value
	}
	switch {
	case s == nil:
	case s.Type.Is("integer") || s.Type.Is("number"):
		vals = append(vals, "abc", "1.5", "1e400", "1e200000", "-1", "-0", "99999999999999999999",
			"9007199254740993", "-9223372036854775809", "0x10", "NaN", "Infinity", "", "%201")
	case s.Type.Is("boolean"):
		vals = append(vals, "maybe", "2", "truee", "-1", "")
	}
	if s != nil && len(s.Enum) > 0 {
		first := fmt.Sprint(s.Enum[0])
		vals = append(vals, "bogus_enum", strings.ToUpper(first), first+"%00", first+"%FF", "%20"+first+"x")
	}
	return vals
}

// Raw JSON helpers: bodies are built as text so they can hold invalid UTF-8
// and numbers encoding/json cannot produce.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

type field struct{ k, v string } // k and v are raw JSON

func object(fields ...field) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f.k + ":" + f.v
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func deepArray(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

func deepObject(n int) string {
	return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n)
}

// wrongValues are JSON values of a type other than s's.
func wrongValues(s *openapi3.Schema) []string {
	switch {
	case s.Type.Is("string"):
		return []string{`123`, `{}`, `["x"]`, `true`, `1e400`}
	case s.Type.Is("integer"):
		return []string{`"1"`, `1.5`, `{}`, `true`, `[1]`}
	case s.Type.Is("number"):
		return []string{`"1"`, `{}`, `true`, `[1]`}
	case s.Type.Is("boolean"):
		return []string{`"true"`, `1`, `{}`, `[]`}
	case s.Type.Is("array"):
		return []string{`"x"`, `{}`, `1`, `[{}]`, `[1,null]`, `[[]]`}
	case s.Type.Is("object"):
		return []string{`"x"`, `[]`, `1`, `true`, `[{}]`}
	}
	return []string{`"x"`, `[]`, `1`, `{"":{}}`}
}

// outOfRange are numbers at and past the edges of what decoders and
// PostgreSQL hold.
var outOfRange = []string{`1e400`, `1e200000`, `-0`, `9007199254740993`, `-1`, `1e-400`,
	`-9223372036854775809`, `123456789012345678901234567890`, `-1e400`}

// malformedBodies returns, per class, bodies that should be refused for an
// operation whose body has schema s (an object, or an array of objects).
func malformedBodies(s *openapi3.Schema) map[string][]string {
	isArray := s.Type.Is("array")
	item := s
	if isArray && s.Items != nil && s.Items.Value != nil {
		item = s.Items.Value
	}
	// The base is the fields with an example (assistant_id: foo_bar, …),
	// so the other field the body carries is what gets checked.
	var base []field
	names := make([]string, 0, len(item.Properties))
	for name := range item.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if ex := item.Properties[name].Value.Example; ex != nil {
			b, _ := json.Marshal(ex)
			base = append(base, field{quote(name), string(b)})
		}
	}
	wrap := func(o string) string {
		if isArray {
			return "[" + o + "]"
		}
		return o
	}
	with := func(k, v string) string {
		fs := []field{}
		for _, f := range base {
			if f.k != k {
				fs = append(fs, f)
			}
		}
		return wrap(object(append(fs, field{k, v})...))
	}
	out := map[string][]string{}
	add := func(class string, bodies ...string) { out[class] = append(out[class], bodies...) }

	add("notjson", "{", "not json", `{"a":}`, `{"a":1}}`, `{"a":1} {"b":2}`, "\xff\xfe{}", "{'a':1}",
		`{"a":1,}`, "NaN", `{"a":NaN}`, `{"a":Infinity}`, `{"a":01}`, `{"a":"\x01"}`, `{"a":"\u12"}`,
		"\xef\xbb\xbf{}", "<xml/>", `{"a" 1}`, `{1:2}`, "{\"a\":\"b\x00\"}", "\x00")
	if isArray {
		add("toplevel", `{}`, `{"assistant_id":"foo_bar"}`, `"s"`, `1`, `true`, `[1]`, `[[]]`, `["x"]`, `[null]`)
	} else {
		add("toplevel", `[]`, `[{}]`, `"s"`, `1`, `-0`, `true`, `false`, `1e400`)
	}
	add("huge",
		wrap(object(append(base, field{`"metadata"`, object(field{`"k"`, quote(strings.Repeat("a", maxBody))})})...)),
		strings.Repeat(" ", maxBody+1)+"{}",
		"{"+strings.Repeat(`"a":1,`, maxBody/6+1)+`"b":1}`)
	add("extra", with(`"zz_unknown"`, `1`), with(`"__proto__"`, `{"admin":true}`))
	add("deep", with(`"zz_unknown"`, deepArray(10000)), with(`"zz_unknown"`, deepObject(10000)))
	add("nul", with("\"\\u0000\"", "\"\\u0000\""))
	add("utf8", with("\"\xff\"", `1`), with(`"zz_unknown"`, "\"\xc3\x28\""))
	if isArray {
		add("missing", `[]`, `[{}]`)
	} else {
		add("missing", `{}`)
	}

	var walk func(prefix []string, sch *openapi3.Schema, depth int)
	walk = func(prefix []string, sch *openapi3.Schema, depth int) {
		pnames := make([]string, 0, len(sch.Properties))
		for name := range sch.Properties {
			pnames = append(pnames, name)
		}
		sort.Strings(pnames)
		for _, name := range pnames {
			ps := sch.Properties[name].Value
			if ps == nil {
				continue
			}
			path := append(append([]string{}, prefix...), name)
			// nest wraps v at path (the first key goes through with, so
			// the base fields are kept).
			nest := func(v string) string {
				for i := len(path) - 1; i >= 1; i-- {
					v = object(field{quote(path[i]), v})
				}
				return with(quote(path[0]), v)
			}
			for _, v := range wrongValues(ps) {
				add("wrongtype", nest(v))
			}
			for _, e := range ps.Enum {
				add("enum", nest(quote("bogus_enum")), nest(quote(strings.ToUpper(fmt.Sprint(e)))), nest(quote(fmt.Sprint(e)+" ")))
				break
			}
			switch {
			case ps.Type.Is("string"):
				add("nul", nest(`"a\u0000b"`), nest(`"\u0000"`))
				add("utf8", nest("\"a\xffb\""), nest("\"\xed\xa0\x80\""), nest(`"\ud800"`), nest("\"\xc0\xaf\""))
				if ps.Format == "uuid" || strings.HasSuffix(name, "_id") {
					add("wrongtype", nest(`"not-a-uuid"`), nest(`""`), nest(`"0b9e8f0e-3c2a-4a57-9a55-8a3b7c9d1e2fx"`))
				}
			case ps.Type.Is("integer"), ps.Type.Is("number"):
				for _, n := range outOfRange {
					add("number", nest(n))
				}
			case ps.Type.Is("array"):
				add("nul", nest(`["\u0000"]`))
				add("utf8", nest("[\"\xff\"]"))
				add("deep", nest(deepArray(5000)))
				add("number", nest(`[1e400]`))
			default: // objects and anything
				add("nul", nest(`{"k\u0000":"v"}`), nest(`{"k":"v\u0000"}`), nest(`{"k":{"k":["\u0000"]}}`))
				add("utf8", nest("{\"\xff\":1}"), nest("{\"k\":\"\xfe\"}"))
				add("number", nest(`{"n":1e400}`), nest(`{"n":1e200000}`), nest(`{"n":-1e200000}`), nest(`{"n":1e-200000}`), nest(`{"n":9007199254740993}`))
				add("deep", nest(deepArray(10000)), nest(deepObject(10000)), nest(deepArray(5000)), nest(deepObject(2000)),
					nest("{\"k\":"+deepArray(1000)+"}"), nest(deepArray(600)), nest(`{"s":"[[[[{{{{"}`))
				if depth < 2 && len(ps.Properties) > 0 {
					walk(path, ps, depth+1)
				}
			}
		}
	}
	walk(nil, item, 0)
	return out
}
