package isolation_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"

	"github.com/weftdev/weft/api"
	"github.com/weftdev/weft/internal/assistants"
	"github.com/weftdev/weft/internal/server/servertest"
)

// A graph's system assistant id is computable (uuid5 of its name), so a
// tenant must not be able to create an assistant there before a worker
// registers the graph; and a registration that finds its id held by
// another assistant (a row from before the rule) is refused, not answered
// with that row.
func TestSystemAssistantCannotBeTaken(t *testing.T) {
	t.Parallel()
	srv := start(t, nil)
	a, b := newTenant(t, srv, "a"), newTenant(t, srv, "b")
	worker := newTenant(t, srv, "")
	worker.scopes = "worker"
	graph := map[string]any{"graph_id": "newagent", "drawable": map[string]any{
		"nodes": []any{map[string]any{"id": "__start__"}, map[string]any{"id": "talk"}, map[string]any{"id": "__end__"}},
		"edges": []any{map[string]any{"source": "__start__", "target": "talk"}, map[string]any{"source": "talk", "target": "__end__"}}}}
	sys := assistants.SystemID("newagent").String()

	// The takeover attempt: a version-5 id, of a future graph or of a
	// registered one, is refused, and nothing is created.
	for _, id := range []string{sys, assistants.SystemID("foo_bar").String(), uuid.NewSHA1(uuid.NameSpaceDNS, []byte("x")).String()} {
		for _, ifExists := range []string{"raise", "do_nothing"} {
			r := a.must(http.StatusUnprocessableEntity, "POST", "/assistants",
				map[string]any{"graph_id": "foo_bar", "assistant_id": id, "if_exists": ifExists})
			if !strings.Contains(string(r.Body), "reserved for graphs' system assistants") {
				t.Fatalf("refusal of %s: %s", id, r.Body)
			}
		}
	}
	if n := count(t, srv, `SELECT count(*) FROM assistants WHERE assistant_id = $1`, sys); n != 0 {
		t.Fatalf("%d assistants at newagent's system id", n)
	}
	// A random id of the client's own is still fine.
	own := uuid.NewString()
	a.must(http.StatusOK, "POST", "/assistants", map[string]any{"graph_id": "foo_bar", "assistant_id": own})

	// A row a tenant made at the id before the rule: registration fails
	// loudly and stores nothing of the graph.
	if _, err := srv.DB.Exec(context.Background(), `INSERT INTO assistants (assistant_id, graph_id, name, tenant_id)
		VALUES ($1, 'foo_bar', 'taken', 'a')`, sys); err != nil {
		t.Fatal(err)
	}
	r := worker.must(http.StatusConflict, "POST", "/dispatch/graphs", graph)
	if d, _ := r.Map(t)["detail"].(string); !strings.Contains(d, `graph "newagent": its system assistant id `+sys+` is held by an assistant of graph "foo_bar" (tenant "a")`) {
		t.Fatalf("refused registration: %s", r.Body)
	}
	if n := count(t, srv, `SELECT count(*) FROM graphs WHERE graph_id = 'newagent'`); n != 0 {
		t.Fatalf("the refused graph is in the catalog (%d rows)", n)
	}
	// The graph name never resolves to A's row, for A or anyone else.
	for _, c := range []*tenant{a, b} {
		r := c.do("POST", "/runs/wait", map[string]any{"assistant_id": "newagent", "input": map[string]any{}})
		if r.Status < 400 || r.Status >= 500 || strings.Contains(string(r.Body), "taken") {
			t.Fatalf("tenant %s ran newagent: %d %s", c.name, r.Status, r.Body)
		}
	}
	// A's own assistant is A's to delete; then the graph registers and its
	// system assistant is everyone's.
	a.must(http.StatusNoContent, "DELETE", "/assistants/"+sys, nil)
	reg := worker.must(http.StatusOK, "POST", "/dispatch/graphs", graph).Map(t)
	if reg["assistant_id"] != sys {
		t.Fatalf("registration %v", reg)
	}
	for _, c := range []*tenant{a, b, newTenant(t, srv, "")} {
		got := c.must(http.StatusOK, "GET", "/assistants/"+sys, nil).Map(t)
		if got["graph_id"] != "newagent" || got["name"] != "newagent" {
			t.Fatalf("tenant %q sees %v", c.name, got)
		}
	}
}

func count(t *testing.T, srv *servertest.Server, q string, args ...any) int {
	t.Helper()
	var n int
	if err := srv.DB.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// Request field names are exact: a duplicate or a case variant of a
// field is a 422 and nothing is done, so a proxy or an auth hook that reads
// the body sees what the server uses.
func TestFieldNamesAreExact(t *testing.T) {
	t.Parallel()
	srv := start(t, nil)
	a := newTenant(t, srv, "a")
	tA, tF := uuid.NewString(), uuid.NewString()
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	refused := func(method, path, body, want string) {
		t.Helper()
		r := a.do(method, path, raw(body))
		detail, _ := r.Map(t)["detail"].(string)
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(detail, want) {
			t.Fatalf("%s %s %s: %d %s, want 422 with %q", method, path, body, r.Status, r.Body, want)
		}
	}

	// Threads: neither id is created, whichever a reader believes.
	refused("POST", "/threads", `{"thread_id":"`+tA+`","Thread_ID":"`+tF+`"}`, `unknown field "Thread_ID" (field names are case-sensitive: did you mean "thread_id"?)`)
	refused("POST", "/threads", `{"Thread_ID":"`+tF+`"}`, `"Thread_ID"`)
	refused("POST", "/threads", `{"thread_id":"`+tA+`","thread_id":"`+tF+`"}`, `field "thread_id" appears twice`)
	refused("POST", "/threads", `{"thread_id":"`+tA+`","thread\u005fid":"`+tF+`"}`, `field "thread_id" appears twice`)
	for _, id := range []string{tA, tF} {
		a.must(http.StatusNotFound, "GET", "/threads/"+id, nil)
	}
	// Client data keeps its keys: metadata may hold keys that differ only
	// in case.
	th := a.must(http.StatusOK, "POST", "/threads", raw(`{"metadata":{"Owner":"x","owner":"y"}}`)).Map(t)
	if md := th["metadata"].(map[string]any); md["Owner"] != "x" || md["owner"] != "y" {
		t.Fatalf("metadata %v", md)
	}
	tid := th["thread_id"].(string)

	// Runs, nested fields included: no run is created.
	refused("POST", "/threads/"+tid+"/runs", `{"assistant_id":"foo_bar","Assistant_ID":"echo_chat"}`, `"Assistant_ID"`)
	refused("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id":"foo_bar","command":{"resume":1,"Resume":2}}`, `"command.Resume"`)
	refused("POST", "/runs/batch", `[{"assistant_id":"foo_bar","assistant_id":"echo_chat"}]`, `field "assistant_id" appears twice`)
	if n := count(t, srv, `SELECT count(*) FROM runs`); n != 0 {
		t.Fatalf("%d runs created from refused bodies", n)
	}
	// Assistants.
	refused("POST", "/assistants", `{"graph_id":"foo_bar","Graph_Id":"echo_chat"}`, `"Graph_Id"`)
	refused("POST", "/assistants/search", `{"graph_id":"foo_bar","graph_id":"echo_chat"}`, `appears twice`)
	// The store: no item under either namespace.
	refused("PUT", "/store/items", `{"namespace":["n1"],"key":"k","value":{},"Namespace":["n2"]}`, `"Namespace"`)
	refused("PUT", "/store/items", `{"namespace":["n1"],"key":"k","key":"k2","value":{}}`, `appears twice`)
	if n := count(t, srv, `SELECT count(*) FROM store_items`); n != 0 {
		t.Fatalf("%d store items from refused bodies", n)
	}
	// A ttl object is checked too (its own decoder).
	refused("POST", "/threads", `{"ttl":{"ttl":5,"Strategy":"keep_latest"}}`, `"Strategy"`)
}

// Every operation of the spec that takes a JSON body refuses a duplicate
// and a case variant of one of its fields, before it looks at anything
// else: a new route gets this check by being in the spec.
func TestEveryBodyRefusesAmbiguousFields(t *testing.T) {
	t.Parallel()
	srv := start(t, nil)
	c := newTenant(t, srv, "a")
	c.scopes = "tenant,worker,admin"
	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	param := regexp.MustCompile(`\{[^}]+\}`)
	checked := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.RequestBody == nil || op.RequestBody.Value == nil {
				continue
			}
			mt := op.RequestBody.Value.Content.Get("application/json")
			if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
				continue
			}
			schema, array := mt.Schema.Value, false
			if schema.Type.Is(openapi3.TypeArray) && schema.Items != nil && schema.Items.Value != nil {
				schema, array = schema.Items.Value, true
			}
			names := make([]string, 0, len(schema.Properties))
			for name := range schema.Properties {
				if strings.ToUpper(name) != name {
					names = append(names, name)
				}
			}
			if len(names) == 0 {
				continue
			}
			sort.Strings(names)
			name := names[0]
			url := param.ReplaceAllStringFunc(path, func(string) string { return uuid.NewString() })
			for _, body := range []string{
				`{"` + name + `":null,"` + name + `":null}`,
				`{"` + strings.ToUpper(name) + `":null}`,
			} {
				if array {
					body = "[" + body + "]"
				}
				r := c.do(method, url, json.RawMessage(body))
				if r.Status != http.StatusUnprocessableEntity ||
					!strings.Contains(string(r.Body), "appears twice") && !strings.Contains(string(r.Body), "case-sensitive") {
					t.Errorf("%s %s %s: %d %.300s, want a 422 for the ambiguous field", method, path, body, r.Status, r.Body)
				}
			}
			checked++
		}
	}
	if checked < 30 {
		t.Fatalf("only %d operations with a JSON body checked", checked)
	}
}
