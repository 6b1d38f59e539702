package dev_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/oasdiff/yaml"
)

// The OpenAPI document weft dev serves for a project (testdata/openapiproject)
// is the server's as LangGraph's server changes it: langgraph.json's
// auth.openapi sets the security schemes, the default security and the
// security of the server's own operations it names; then the http.app's
// routes (a Hono app's paths and methods, its middleware left out) are
// merged in, the app's operation replacing the server's where both have
// one. /openapi.yaml is the same document, and GET /docs renders it.
func TestDevOpenAPIDocument(t *testing.T) {
	t.Parallel()
	dev := startDev(t, []string{"--config", testProject(t, "openapiproject"), "-workers", "0"})
	do := caller(t, "http://"+dev.addr)
	waitServed(t, do, "/custom/any")

	var doc map[string]any
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		res, b := do("GET", "/openapi.json", nil)
		if res == nil || res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("GET /openapi.json: %v %s", res, b)
		}
		doc = nil
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		if paths(doc)["/custom/any"] != nil || time.Now().After(deadline) {
			break
		}
	}
	p := paths(doc)
	op := func(path, method string) map[string]any {
		t.Helper()
		item, _ := p[path].(map[string]any)
		o, _ := item[method].(map[string]any)
		return o
	}

	t.Run("app routes", func(t *testing.T) {
		get := op("/custom/items/{item_id}", "get")
		if get == nil {
			t.Fatalf("no GET /custom/items/{item_id} among %d paths", len(p))
		}
		params, _ := get["parameters"].([]any)
		if len(params) != 1 || params[0].(map[string]any)["name"] != "item_id" || params[0].(map[string]any)["in"] != "path" {
			t.Errorf("GET /custom/items/{item_id} parameters: %v", params)
		}
		if op("/custom/items", "post") == nil || op("/custom/items", "get") != nil {
			t.Errorf("/custom/items: %v", p["/custom/items"])
		}
		for _, m := range []string{"get", "post", "put", "patch", "delete"} {
			if op("/custom/any", m) == nil {
				t.Errorf("app.all /custom/any: no %s", m)
			}
		}
		if _, ok := p["/*"]; ok {
			t.Error("the app's middleware is listed as a path")
		}
		// The app answers GET /info first: its operation replaces the server's.
		if tags, _ := op("/info", "get")["tags"].([]any); len(tags) != 1 || tags[0] != "http.app" {
			t.Errorf("GET /info: %v, want the app's", op("/info", "get"))
		}
		// The server's own routes are all still there.
		if op("/threads", "post") == nil || op("/threads/{thread_id}/runs/wait", "post") == nil {
			t.Error("the server's routes are missing")
		}
		// The worker's description is the server's alone to ask for.
		if res, b := do("GET", "/__weft/openapi.json", nil); res == nil || res.StatusCode != 404 {
			t.Errorf("GET /__weft/openapi.json from a client: %v %s", res, b)
		}
	})

	t.Run("auth.openapi", func(t *testing.T) {
		components, _ := doc["components"].(map[string]any)
		schemes, _ := components["securitySchemes"].(map[string]any)
		if len(schemes) != 1 || schemes["OAuth2"] == nil {
			t.Errorf("securitySchemes: %v, want the project's OAuth2 alone", schemes)
		}
		want := []any{map[string]any{"OAuth2": []any{"me"}}}
		if !reflect.DeepEqual(doc["security"], want) {
			t.Errorf("security: %v, want %v", doc["security"], want)
		}
		if got := op("/threads", "post")["security"]; !reflect.DeepEqual(got, want) {
			t.Errorf("POST /threads security: %v, want %v (the method's case does not matter)", got, want)
		}
		if op("/threads", "get") != nil {
			t.Error("auth.openapi added an operation (GET /threads) the server does not have")
		}
		if got, ok := op("/ok", "get")["security"]; !ok || !reflect.DeepEqual(got, []any{}) {
			t.Errorf("GET /ok security: %v", got)
		}
		// Applied before the app's routes are merged, as LangGraph's server does.
		if _, ok := op("/custom/items", "post")["security"]; ok {
			t.Errorf("POST /custom/items security: %v, want none", op("/custom/items", "post")["security"])
		}
	})

	t.Run("yaml and docs", func(t *testing.T) {
		res, b := do("GET", "/openapi.yaml", nil)
		if res == nil || res.StatusCode != 200 {
			t.Fatalf("GET /openapi.yaml: %v", res)
		}
		js, err := yaml.YAMLToJSON(b)
		if err != nil {
			t.Fatal(err)
		}
		var fromYAML map[string]any
		if err := json.Unmarshal(js, &fromYAML); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fromYAML, doc) {
			t.Error("/openapi.yaml is not the document /openapi.json serves")
		}
		if res, b := do("GET", "/docs", nil); res == nil || res.StatusCode != 200 || !strings.Contains(string(b), "docs/swagger-ui-bundle.js") {
			t.Errorf("GET /docs: %v %.200s", res, b)
		}
	})
}

func paths(doc map[string]any) map[string]any {
	p, _ := doc["paths"].(map[string]any)
	return p
}
