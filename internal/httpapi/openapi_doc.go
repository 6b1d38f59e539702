package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/oasdiff/yaml"

	"github.com/weftdev/weft/api"
	"github.com/weftdev/weft/api/reference"
	"github.com/weftdev/weft/internal/httpx"
)

// EditOpenAPI changes the served OpenAPI document (decoded JSON) before
// GET /openapi.json and /openapi.yaml answer it: weft dev merges a
// project's http.app routes and applies langgraph.json's auth.openapi. It
// is called per request with a fresh copy; an error is a 500.
type EditOpenAPI func(ctx context.Context, doc map[string]any) error

// openapiDoc serves the OpenAPI document in YAML and JSON, and the API
// reference page (GET /docs) that renders it.
type openapiDoc struct {
	edit EditOpenAPI // nil: the generated document as it is
	log  *slog.Logger

	once     sync.Once
	baseJSON []byte // api.OpenAPI as JSON
	baseErr  error
}

func newOpenAPIDoc(edit EditOpenAPI, log *slog.Logger) *openapiDoc {
	return &openapiDoc{edit: edit, log: log}
}

// base is the generated document as JSON, converted once.
func (d *openapiDoc) base() ([]byte, error) {
	d.once.Do(func() {
		d.baseJSON, d.baseErr = yaml.YAMLToJSON(api.OpenAPI)
		if d.baseErr != nil {
			d.baseErr = fmt.Errorf("api/openapi.yaml as JSON: %w", d.baseErr)
		}
	})
	return d.baseJSON, d.baseErr
}

// document is the served document as JSON: the generated one, edited.
func (d *openapiDoc) document(ctx context.Context) ([]byte, error) {
	b, err := d.base()
	if err != nil || d.edit == nil {
		return b, err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if err := d.edit(ctx, doc); err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	return json.Marshal(doc)
}

// yaml godoc
//
//	@Summary		This API's OpenAPI 3 document
//	@ID				get_openapi
//	@Description	The document GET /openapi.json serves, in YAML. Under weft dev it includes the project's http.app routes and langgraph.json's auth.openapi security, as /openapi.json does.
//	@Tags			system
//	@Produce		application/yaml
//	@Success		200	{object}	object	"the OpenAPI 3.0 document (this one), in YAML"
//	@Router			/openapi.yaml [get]
func (d *openapiDoc) yaml(w http.ResponseWriter, r *http.Request) {
	out := api.OpenAPI
	if d.edit != nil {
		js, err := d.document(r.Context())
		if err == nil {
			out, err = yaml.JSONToYAML(js)
		}
		if err != nil {
			httpx.WriteError(w, r, d.log, err)
			return
		}
	}
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(out)
}

// json godoc
//
//	@Summary		This API's OpenAPI 3 document, JSON
//	@ID				get_openapi_json
//	@Description	The OpenAPI document of this server (what GET /openapi.yaml serves), as JSON, where LangGraph's servers serve theirs. Under weft dev a project's http.app routes are merged into it (the app's win where both have a path and method: the app answers first), and langgraph.json's auth.openapi sets the security schemes (securitySchemes or security_schemes), the default security and the security of the given paths and methods, as LangGraph's server applies them.
//	@Tags			system
//	@Produce		json
//	@Success		200	{object}	object	"the OpenAPI 3.0 document (this one)"
//	@Router			/openapi.json [get]
func (d *openapiDoc) json(w http.ResponseWriter, r *http.Request) {
	js, err := d.document(r.Context())
	if err != nil {
		httpx.WriteError(w, r, d.log, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(js)
}

// page godoc
//
//	@Summary		API reference page
//	@ID				get_docs
//	@Description	An HTML page that renders this server's OpenAPI document (GET /openapi.json) with swagger-ui, embedded in the binary: it loads nothing from another origin. Like the web UI's files it is served without a credential; with auth on, the page sends the API key the web UI keeps for the tab.
//	@Tags			system
//	@Produce		html
//	@Success		200	{string}	string	"the page"
//	@Router			/docs [get]
func (d *openapiDoc) page(w http.ResponseWriter, r *http.Request) {
	reference.Handler().ServeHTTP(w, r)
}
