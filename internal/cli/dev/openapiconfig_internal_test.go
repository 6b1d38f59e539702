package dev

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/server"
)

// auth.openapi is checked when weft dev starts: a key it does not know, a
// value of the wrong type or a method that is none stops it, naming the
// problem; security_schemes is the Python spelling of securitySchemes; an
// edit set before (another langgraph.json key's) still runs.
func TestOpenAPIConfig(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		`{"auth": {"openapi": {"securityschemes": {}}}}`:                   `unknown field "securityschemes"`,
		`{"auth": {"openapi": {"security": {"a": []}}}}`:                   "auth.openapi",
		`{"auth": {"openapi": {"paths": {"/threads": {"fetch": []}}}}}`:    `"fetch" is no HTTP method`,
		`{"auth": {"openapi": {"paths": {"/threads": {"post": "none"}}}}}`: "auth.openapi",
		`{"auth": {"openapi": []}}`:                                        "auth.openapi",
	} {
		p := &project{config: "langgraph.json", raw: []byte(raw)}
		var cfg server.Config
		if err := p.openAPIConfig(&cfg); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", raw, err, want)
		}
		if cfg.EditOpenAPI != nil {
			t.Errorf("%s: an edit was set", raw)
		}
	}

	var cfg server.Config
	if err := (&project{raw: []byte(`{"graphs": {}}`)}).openAPIConfig(&cfg); err != nil || cfg.EditOpenAPI != nil {
		t.Fatalf("no auth.openapi, no http.app: %v, edit set %v", err, cfg.EditOpenAPI != nil)
	}
	ran := false
	cfg.EditOpenAPI = func(context.Context, map[string]any) error { ran = true; return nil }
	p := &project{raw: []byte(`{"auth": {"openapi": {"security_schemes": {"k": {"type": "apiKey", "in": "header", "name": "k"}},
		"paths": {"/threads/{thread_id}": {"DELETE": [{"k": []}]}}}}}`)}
	if err := p.openAPIConfig(&cfg); err != nil {
		t.Fatal(err)
	}
	doc := map[string]any{"paths": map[string]any{"/threads/{thread_id}": map[string]any{"delete": map[string]any{}}},
		"components": map[string]any{"securitySchemes": map[string]any{"ApiKeyAuth": map[string]any{}}}}
	if err := cfg.EditOpenAPI(context.Background(), doc); err != nil {
		t.Fatal(err)
	}
	if !ran {
		t.Error("the edit set before was dropped")
	}
	want := map[string]any{"paths": map[string]any{"/threads/{thread_id}": map[string]any{"delete": map[string]any{"security": []any{map[string]any{"k": []any{}}}}}},
		"components": map[string]any{"securitySchemes": map[string]any{"k": map[string]any{"type": "apiKey", "in": "header", "name": "k"}}}}
	if !reflect.DeepEqual(doc, want) {
		t.Errorf("edited: %v\nwant %v", doc, want)
	}
}
