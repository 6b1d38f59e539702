package dev

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/weftdev/weft/internal/cli/dev/projecthttp"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/server"
)

// The OpenAPI document weft dev serves (GET /openapi.json, /openapi.yaml,
// the page of GET /docs) is the server's, changed as LangGraph's server
// changes its own for the project:
//
//   - langgraph.json's auth.openapi: securitySchemes (or security_schemes)
//     replace the document's security schemes, security its default
//     security, and paths.<path>.<method> the security of that operation
//     (of the server's own operations: the paths are matched as written);
//   - then the routes of the project's http.app are merged in, the app's
//     operation winning where both have a path and method (the app answers
//     first). The worker that serves the app describes it on its socket
//     (appOpenAPIPath, asked with the app's pass): a Python app as
//     LangGraph's server does (a FastAPI app's own openapi(); a Starlette
//     app's routes whose docstrings hold an OpenAPI YAML block), a Hono app
//     by the paths and methods of its routes. The description is fetched
//     once the worker answers, then kept; until then the document has the
//     server's routes alone.
//
// The document's openapi version and info stay the server's.

// appOpenAPIPath is where a worker serving the project's http.app answers
// the app's OpenAPI document, to a request with the app's pass.
const appOpenAPIPath = "/__weft/openapi.json"

// securityConfig is langgraph.json's auth.openapi.
type securityConfig struct {
	SecuritySchemes  map[string]any `json:"securitySchemes"`
	SecuritySchemesS map[string]any `json:"security_schemes"`
	Security         []any          `json:"security"`
	// Paths: path → method → the operation's security requirements.
	Paths map[string]map[string][]any `json:"paths"`
}

// openAPIConfig sets cfg.EditOpenAPI for langgraph.json's auth.openapi and
// the project's http.app (after frontApp, which sets p.httpSocket): a
// malformed auth.openapi stops weft dev with what is wrong.
func (p *project) openAPIConfig(cfg *server.Config) error {
	var c struct {
		Auth struct {
			OpenAPI json.RawMessage `json:"openapi"`
		} `json:"auth"`
		HTTP struct {
			App string `json:"app"`
		} `json:"http"`
	}
	if err := json.Unmarshal(p.raw, &c); err != nil {
		return fmt.Errorf("%s: %w", p.config, err)
	}
	var sec *securityConfig
	if len(c.Auth.OpenAPI) > 0 && string(c.Auth.OpenAPI) != "null" {
		sec = &securityConfig{}
		d := json.NewDecoder(bytes.NewReader(c.Auth.OpenAPI))
		d.DisallowUnknownFields()
		err := httpx.CheckFieldNames(c.Auth.OpenAPI, sec) // names exact: json alone ignores their case
		if err == nil {
			err = d.Decode(sec)
		}
		if err != nil {
			return fmt.Errorf("%s: auth.openapi: %w (securitySchemes or security_schemes: an object of security schemes; "+
				"security: a list of security requirements; paths: path → method → a list of security requirements)", p.config, err)
		}
		for path, methods := range sec.Paths {
			for m := range methods {
				if !slices.Contains(openAPIMethods, strings.ToLower(m)) {
					return fmt.Errorf("%s: auth.openapi.paths[%q]: %q is no HTTP method", p.config, path, m)
				}
			}
		}
	}
	var app *appDescription
	if c.HTTP.App != "" && p.httpSocket != "" {
		app = &appDescription{client: &http.Client{Transport: httpx.UnixTransport(p.httpSocket, 1), Timeout: 10 * time.Second},
			pass: p.appPass}
	}
	if sec == nil && app == nil {
		return nil
	}
	before := cfg.EditOpenAPI
	cfg.EditOpenAPI = func(ctx context.Context, doc map[string]any) error {
		if before != nil {
			if err := before(ctx, doc); err != nil {
				return err
			}
		}
		if sec != nil {
			applySecurity(doc, sec)
		}
		if app != nil {
			if described := app.get(ctx); described != nil {
				mergeOpenAPI(doc, described)
			}
		}
		return nil
	}
	return nil
}

// openAPIMethods are the operations of an OpenAPI path item.
var openAPIMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// applySecurity applies auth.openapi to doc, as LangGraph's server does.
func applySecurity(doc map[string]any, sec *securityConfig) {
	schemes := sec.SecuritySchemes
	if schemes == nil {
		schemes = sec.SecuritySchemesS
	}
	if schemes != nil {
		components, _ := doc["components"].(map[string]any)
		if components == nil {
			components = map[string]any{}
			doc["components"] = components
		}
		components["securitySchemes"] = schemes
	}
	if sec.Security != nil {
		doc["security"] = sec.Security
	}
	paths, _ := doc["paths"].(map[string]any)
	for path, methods := range sec.Paths {
		item, _ := paths[path].(map[string]any)
		for method, security := range methods {
			if op, ok := item[strings.ToLower(method)].(map[string]any); ok {
				op["security"] = security
			}
		}
	}
}

// mergeOpenAPI merges the app's document into doc: its paths (the app's
// operation wins on a path and method both have; path-level parameters
// merged by name and location), its components (the app's win by name),
// its tags (by name), its security requirements and servers (without
// repeats).
func mergeOpenAPI(doc, app map[string]any) {
	paths, _ := doc["paths"].(map[string]any)
	if paths == nil {
		paths = map[string]any{}
		doc["paths"] = paths
	}
	appPaths, _ := app["paths"].(map[string]any)
	for path, v := range appPaths {
		appItem, ok := v.(map[string]any)
		if !ok {
			continue
		}
		item, ok := paths[path].(map[string]any)
		if !ok {
			paths[path] = appItem
			continue
		}
		for k, v := range appItem {
			if k == "parameters" {
				item[k] = mergeList(item[k], v, func(p any) string {
					m, _ := p.(map[string]any)
					return fmt.Sprint(m["name"], "\x00", m["in"])
				})
				continue
			}
			item[k] = v
		}
	}
	if appComponents, ok := app["components"].(map[string]any); ok {
		components, _ := doc["components"].(map[string]any)
		if components == nil {
			components = map[string]any{}
			doc["components"] = components
		}
		for kind, v := range appComponents {
			entries, _ := v.(map[string]any)
			cur, _ := components[kind].(map[string]any)
			if cur == nil {
				cur = map[string]any{}
				components[kind] = cur
			}
			for name, e := range entries {
				cur[name] = e
			}
		}
	}
	byJSON := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	for _, key := range []string{"security", "servers", "tags"} {
		if _, ok := app[key]; !ok {
			continue
		}
		id := byJSON
		if key == "tags" {
			id = func(v any) string { m, _ := v.(map[string]any); return fmt.Sprint(m["name"]) }
		}
		doc[key] = mergeList(doc[key], app[key], id)
	}
}

// mergeList is list a then the items of b, an item of b replacing the
// item of a with the same id in place.
func mergeList(a, b any, id func(any) string) []any {
	la, _ := a.([]any)
	lb, _ := b.([]any)
	out := slices.Clone(la)
	at := map[string]int{}
	for i, v := range out {
		at[id(v)] = i
	}
	for _, v := range lb {
		if i, ok := at[id(v)]; ok {
			out[i] = v
			continue
		}
		at[id(v)] = len(out)
		out = append(out, v)
	}
	return out
}

// appDescription is the http.app's OpenAPI document, as its worker
// describes it: fetched once the worker answers, then kept.
type appDescription struct {
	client *http.Client
	pass   string

	mu  sync.Mutex
	doc map[string]any
}

// get is the app's document (a copy: the caller may change it), nil while
// the worker does not answer.
func (a *appDescription) get(ctx context.Context) map[string]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.doc == nil {
		doc, err := a.fetch(ctx)
		if err != nil {
			return nil // the worker is starting: the server's routes alone
		}
		a.doc = doc
	}
	b, _ := json.Marshal(a.doc)
	var c map[string]any
	_ = json.Unmarshal(b, &c)
	return c
}

func (a *appDescription) fetch(ctx context.Context) (map[string]any, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://app"+appOpenAPIPath, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set(projecthttp.PassHeader, a.pass)
	res, err := a.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, httpapi.DefaultMaxBody))
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the http.app's worker answered %d: %.200s", res.StatusCode, body)
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, err
	}
	if doc == nil {
		return nil, errors.New("the http.app's worker described no document")
	}
	return doc, nil
}
