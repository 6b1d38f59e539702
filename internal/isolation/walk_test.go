package isolation_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/weftdev/weft/api"
	"github.com/weftdev/weft/internal/server/servertest"
)

// reporter collects what the walk finds; every finding is a leak or a
// broken rule, and the suite fails on any.
type reporter struct {
	t     testing.TB
	leaks []string
}

func (r *reporter) leak(format string, args ...any) {
	r.t.Helper()
	msg := fmt.Sprintf(format, args...)
	r.leaks = append(r.leaks, msg)
	r.t.Errorf("LEAK: %s", msg)
}

// walker is tenant B walking the API with tenant A's ids (a) and forged
// ones (f).
type walker struct {
	rep     *reporter
	b       *tenant
	a, f    ids
	bThread string // a thread of B's own
}

// secretsIn lists what of A's is in body and was not in the request: the
// marker, and A's ids.
func (w *walker) secretsIn(body []byte, request string) []string {
	var found []string
	if bytes.Contains(body, []byte(marker)) {
		found = append(found, "marker")
	}
	for _, s := range w.a.list() {
		if bytes.Contains(body, []byte(s)) && !strings.Contains(request, s) {
			found = append(found, s)
		}
	}
	return found
}

func describe(method, path string, body any) string {
	b, _ := json.Marshal(body)
	return method + " " + path + " " + string(b)
}

// clean sends a request as B and checks the response holds nothing of A's
// and has status want (0: any status below 500).
func (w *walker) clean(want int, method, path string, body any) *servertest.Response {
	w.rep.t.Helper()
	req := describe(method, path, body)
	r := w.b.do(method, path, body)
	if want != 0 && r.Status != want || want == 0 && r.Status >= 500 {
		w.rep.t.Errorf("%s: status %d, want %d; body %.300s", req, r.Status, want, r.Body)
	}
	if s := w.secretsIn(r.Body, req); len(s) > 0 {
		w.rep.leak("%s returned A's %v: %.400s", req, s, r.Body)
	}
	return r
}

// empty is clean plus: the body is an empty JSON list (or zero).
func (w *walker) empty(method, path string, body any, zero string) {
	w.rep.t.Helper()
	r := w.clean(http.StatusOK, method, path, body)
	got := strings.TrimSpace(string(r.Body))
	if got != zero {
		// Lists may carry an envelope (store search: {"items": []}).
		var m map[string]json.RawMessage
		if json.Unmarshal(r.Body, &m) == nil && len(m) == 1 {
			for _, v := range m {
				got = strings.TrimSpace(string(v))
			}
		}
	}
	if got != zero {
		w.rep.leak("%s: B's filter on A's values found %.400s, want %s", describe(method, path, body), r.Body, zero)
	}
}

// same sends the request twice as B, once with A's ids and once with
// forged ones: the answers must not tell them apart (same status, same
// body once each id is replaced by its field name), and the status is want
// (0: whatever the forged one gets).
func (w *walker) same(want int, method string, path func(ids) string, body func(ids) any) {
	w.rep.t.Helper()
	if body == nil {
		body = func(ids) any { return nil }
	}
	pa, ba := path(w.a), body(w.a)
	pf, bf := path(w.f), body(w.f)
	ra := w.b.do(method, pa, ba)
	rf := w.b.do(method, pf, bf)
	req := describe(method, pa, ba)
	if ra.Status != rf.Status || w.normal(ra.Body, w.a) != w.normal(rf.Body, w.f) {
		w.rep.leak("%s: A's ids answer %d %.300s; forged ids answer %d %.300s", req, ra.Status, ra.Body, rf.Status, rf.Body)
	}
	if want != 0 && ra.Status != want {
		w.rep.leak("%s: status %d, want %d; body %.300s", req, ra.Status, want, ra.Body)
	}
	if s := w.secretsIn(ra.Body, req); len(s) > 0 {
		w.rep.leak("%s returned A's %v: %.400s", req, s, ra.Body)
	}
}

// sameWaiting opens a stream as B with A's ids and with forged ones, reads
// each for a while and stops: both must answer 200 and send no event (a
// waiting stream sends at most comments), and nothing of A's.
func (w *walker) sameWaiting(path func(ids) string, body any) {
	w.rep.t.Helper()
	read := func(x ids) (int, string) {
		b, _ := json.Marshal(body)
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "POST", w.b.srv.URL+path(x), bytes.NewReader(b))
		req.Header.Set(servertest.TenantHeader, w.b.name)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			w.rep.t.Errorf("POST %s: %v", path(x), err)
			return 0, ""
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body) // ends with the context
		return resp.StatusCode, string(got)
	}
	sa, ba := read(w.a)
	sf, bf := read(w.f)
	req := describe("POST", path(w.a), body)
	if sa != http.StatusOK || sf != sa {
		w.rep.leak("%s: A's ids answer %d, forged ids %d; want 200 (a waiting stream) for both", req, sa, sf)
	}
	for _, got := range []string{ba, bf} {
		if strings.Contains(got, "event:") || strings.Contains(got, "data:") {
			w.rep.leak("%s: a stream B opened sent events: %.400s", req, got)
		}
	}
	if s := w.secretsIn([]byte(ba), req); len(s) > 0 {
		w.rep.leak("%s returned A's %v: %.400s", req, s, ba)
	}
}

// normal replaces each id of x in body by its field name.
func (w *walker) normal(body []byte, x ids) string {
	s := string(body)
	names := []string{"Thread", "Child", "Copy", "StreamThread", "StreamRun", "PendingThread", "PendingRun",
		"Run", "StatelessRun", "Checkpoint", "Assistant", "Cron", "ThreadCron", "Dispatch"}
	for i, v := range x.list() {
		s = strings.ReplaceAll(s, v, "<"+names[i]+">")
	}
	return s
}

// op is one operation of the spec ("GET /threads/{thread_id}") and what B
// does with it.
type op struct {
	name string
	walk func(w *walker)
}

// specOps lists the operations of api/openapi.yaml.
func specOps(t testing.TB) []string {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPI)
	if err != nil {
		t.Fatalf("load api/openapi.yaml: %v", err)
	}
	var out []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			out = append(out, method+" "+path)
		}
	}
	sort.Strings(out)
	return out
}

// walkAll runs every case, in the spec's order, after checking that the
// cases and the spec name the same operations.
func walkAll(t testing.TB, w *walker) {
	t.Helper()
	cases := map[string]func(*walker){}
	for _, c := range operations() {
		if _, dup := cases[c.name]; dup {
			t.Fatalf("two cases for %s", c.name)
		}
		cases[c.name] = c.walk
	}
	spec := specOps(t)
	inSpec := map[string]bool{}
	for _, name := range spec {
		inSpec[name] = true
		if cases[name] == nil {
			t.Errorf("operation %s of api/openapi.yaml has no tenant isolation case: add one to operations()", name)
		}
	}
	for name := range cases {
		if !inSpec[name] {
			t.Errorf("isolation case for %s, which api/openapi.yaml does not list", name)
		}
	}
	for _, name := range spec {
		if c := cases[name]; c != nil {
			c(w)
		}
	}
}
