package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
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
var uiRoutes = map[string]bool{"GET /": true, "GET /ui/*": true}

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
		route = strings.TrimSuffix(route, "/")
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
