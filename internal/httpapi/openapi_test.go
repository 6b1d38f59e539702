package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-chi/chi/v5"

	"github.com/weftdev/weft/api"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/internal/state"
	"github.com/weftdev/weft/internal/threads"
)

// uiRoutes serve the embedded web UI, not the API; they are not in the spec.
var uiRoutes = map[string]bool{"GET /": true, "GET /ui/*": true, "GET /docs/*": true}

// The checked-in OpenAPI document is valid OpenAPI 3 and lists exactly the
// routes the router serves.
func TestOpenAPIMatchesRouter(t *testing.T) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(api.OpenAPI)
	if err != nil {
		t.Fatalf("load api/openapi.yaml: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("api/openapi.yaml is not valid OpenAPI 3: %v", err)
	}
	inSpec := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			inSpec[method+" "+path] = true
		}
	}
	h := httpapi.NewRouter(httpapi.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Threads: &threads.Handlers{}, State: &state.Handlers{}})
	inRouter := map[string]bool{}
	err = chi.Walk(h.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if route != "/mcp/" { // /mcp/ is a route of its own (LangGraph's name of /mcp)
			route = strings.TrimSuffix(route, "/")
		}
		if route == "" {
			route = "/"
		}
		if !uiRoutes[method+" "+route] {
			inRouter[method+" "+route] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var missing, extra []string
	for r := range inRouter {
		if !inSpec[r] {
			missing = append(missing, r)
		}
	}
	for r := range inSpec {
		if !inRouter[r] {
			extra = append(extra, r)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("routes missing from api/openapi.yaml (add swag annotations, run make openapi): %v", missing)
	}
	if len(extra) > 0 {
		t.Errorf("api/openapi.yaml lists routes the router lacks: %v", extra)
	}
	if len(inRouter) < 8 {
		t.Fatalf("walked only %d routes: %v", len(inRouter), inRouter)
	}
}

// loadSpec loads and validates the checked-in OpenAPI document.
func loadSpec(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPI)
	if err != nil {
		t.Fatalf("load api/openapi.yaml: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("api/openapi.yaml is not valid OpenAPI 3: %v", err)
	}
	return doc
}

// operations lists the spec's operations as "METHOD path".
func operations(doc *openapi3.T) map[string]*openapi3.Operation {
	out := map[string]*openapi3.Operation{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			out[method+" "+path] = op
		}
	}
	return out
}

// operationIDPattern is a short snake_case verb-noun name (create_assistant,
// search_threads, wait_run): what client generators name their functions.
var operationIDPattern = regexp.MustCompile(`^[a-z]+(_[a-z0-9]+)+$`)

// Every operation has an operationId, unique across the document, so a
// generated client names its functions after them and not after paths.
func TestOpenAPIOperationIDsAreUnique(t *testing.T) {
	doc := loadSpec(t)
	seen := map[string]string{}
	ops := operations(doc)
	for _, name := range slices.Sorted(maps.Keys(ops)) {
		id := ops[name].OperationID
		switch {
		case id == "":
			t.Errorf("%s has no operationId (add @ID to its swag annotation)", name)
		case !operationIDPattern.MatchString(id):
			t.Errorf("%s: operationId %q is not snake_case verb_noun", name, id)
		case seen[id] != "":
			t.Errorf("operationId %q is both %s and %s", id, seen[id], name)
		}
		seen[id] = name
	}
	if len(seen) != len(ops) || len(ops) < 90 {
		t.Fatalf("%d operationIds for %d operations", len(seen), len(ops))
	}
	// Operations the official server has keep its handler's name.
	for name, id := range map[string]string{"POST /assistants": "create_assistant", "POST /threads/search": "search_threads",
		"POST /threads/{thread_id}/runs/wait": "wait_run", "POST /runs/wait": "wait_run_stateless",
		"GET /threads/{thread_id}/state": "get_latest_thread_state", "PUT /store/items": "put_item"} {
		if ops[name] == nil || ops[name].OperationID != id {
			t.Errorf("%s: operationId %v, want %q", name, ops[name], id)
		}
	}
}

// The document says what the server answers in forms OpenAPI 3.0.3 means
// and client generators read as meant (cmd/openapi-gen/normalize.go):
// nullable only beside a type, null among a nullable enum's values, no
// object schema without members (generators read it as an empty object),
// no default on a field of a request body (openapi-typescript makes it
// required), every error response application/json, and the 401 / 403
// of the middleware on every operation that needs a credential.
func TestOpenAPIShapes(t *testing.T) {
	doc := loadSpec(t)
	var walk func(where string, ref *openapi3.SchemaRef, request bool, seen map[*openapi3.Schema]bool)
	walk = func(where string, ref *openapi3.SchemaRef, request bool, seen map[*openapi3.Schema]bool) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		if ref.Ref != "" {
			where = ref.Ref
		}
		if s.Nullable && (s.Type == nil || s.Type.IsEmpty()) {
			t.Errorf("%s: nullable without type", where)
		}
		if s.Nullable && len(s.Enum) > 0 && !slices.Contains(s.Enum, nil) {
			t.Errorf("%s: nullable enum %v without null", where, s.Enum)
		}
		if s.Type.Is("object") && len(s.Properties) == 0 && s.AdditionalProperties.Has == nil &&
			s.AdditionalProperties.Schema == nil && !(s.Nullable && len(s.Enum) == 1) {
			t.Errorf("%s: object without properties or additionalProperties", where)
		}
		for _, list := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf, s.AllOf} {
			for i, r := range list {
				walk(fmt.Sprintf("%s/%d", where, i), r, request, seen)
			}
		}
		walk(where+"/items", s.Items, request, seen)
		walk(where+"/additionalProperties", s.AdditionalProperties.Schema, request, seen)
		for name, p := range s.Properties {
			if request && p.Value != nil && p.Value.Default != nil {
				t.Errorf("%s.%s: default %v in a request body", where, name, p.Value.Default)
			}
			walk(where+"."+name, p, request, seen)
		}
	}
	for name, s := range doc.Components.Schemas {
		walk("#/components/schemas/"+name, s, false, map[*openapi3.Schema]bool{})
	}
	ops := operations(doc)
	for _, name := range slices.Sorted(maps.Keys(ops)) {
		op := ops[name]
		if op.RequestBody != nil {
			for _, mt := range op.RequestBody.Value.Content {
				walk(name+" body", mt.Schema, true, map[*openapi3.Schema]bool{})
			}
		}
		for code, resp := range op.Responses.Map() {
			for ct, mt := range resp.Value.Content {
				walk(name+" "+code, mt.Schema, false, map[*openapi3.Schema]bool{})
				if code[0] >= '4' && ct != "application/json" {
					t.Errorf("%s: %s declared as %s (errors are JSON)", name, code, ct)
				}
			}
		}
		open := strings.HasSuffix(name, " /ok") || strings.HasSuffix(name, " /livez") || strings.HasSuffix(name, " /docs")
		if op.Responses.Status(http.StatusForbidden) == nil || !open && op.Responses.Status(http.StatusUnauthorized) == nil {
			t.Errorf("%s: 401 or 403 not declared", name)
		}
	}
}
