package runs

import (
	"fmt"
	"net/http"
	"path"
	"strings"

	"github.com/weftdev/weft/graph"
)

// HeaderPolicy says which request headers a run's config.configurable gets
// (langgraph.json's http.configurable_headers): header names matching an
// Excludes pattern never; with Includes, only names matching one; with
// neither, every x-* header and user-agent for a LangGraph.js graph, as
// LangGraph.js's server copies them, and none for a Python graph, as the
// Python server copies none by default. Patterns are lowercase names with * wildcards. Credentials
// (x-api-key, x-tenant-id, x-service-key, authorization, cookie) and
// Weft's own x-weft-* headers are never copied.
type HeaderPolicy struct {
	Includes []string `json:"includes"`
	Excludes []string `json:"excludes"`
}

// Check refuses a malformed pattern.
func (p HeaderPolicy) Check() error {
	for _, pat := range append(append([]string(nil), p.Includes...), p.Excludes...) {
		if _, err := path.Match(strings.ToLower(pat), ""); err != nil || strings.ContainsAny(pat, "[]?\\") {
			return fmt.Errorf("configurable_headers: %q is not a header name with * wildcards", pat)
		}
	}
	return nil
}

var neverInConfig = map[string]bool{"x-api-key": true, "x-tenant-id": true, "x-service-key": true,
	"authorization": true, "cookie": true}

func matchAny(patterns []string, key string) bool {
	for _, pat := range patterns {
		if ok, _ := path.Match(strings.ToLower(pat), key); ok {
			return true
		}
	}
	return false
}

// copies tells whether the header named key (lowercase) goes into the
// config of a run of a graph in language (graph.Graph.Language).
func (p HeaderPolicy) copies(key, language string) bool {
	switch {
	case neverInConfig[key] || strings.HasPrefix(key, "x-weft-") || matchAny(p.Excludes, key):
		return false
	case len(p.Includes) > 0:
		return matchAny(p.Includes, key)
	case language == graph.LanguagePython:
		return false
	}
	return strings.HasPrefix(key, "x-") || key == "user-agent"
}

// Logs tells whether the header named key (lowercase) appears in a
// request's log line when the policy is langgraph.json's
// http.logging_headers: one matching an Excludes pattern never; with
// Includes, one matching them; without, none — as LangGraph's server logs
// them. Credentials (x-api-key, x-tenant-id, x-service-key, authorization,
// cookie, set-cookie) and Weft's own x-weft-* headers are never logged.
func (p HeaderPolicy) Logs(key string) bool {
	if neverInConfig[key] || key == "set-cookie" || strings.HasPrefix(key, "x-weft-") || matchAny(p.Excludes, key) {
		return false
	}
	return matchAny(p.Includes, key)
}

// apply puts the request's headers the policy copies into
// config.configurable, as both official servers do at run creation
// (lowercase names, the first value); they win over the body's keys of the
// same name. A graph reads a caller's per-request settings so (the SDK's
// defaultHeaders, a header a proxy or an http.app middleware adds).
func (p HeaderPolicy) apply(config map[string]any, h http.Header, language string) map[string]any {
	var conf map[string]any
	for name, values := range h {
		key := strings.ToLower(name)
		if len(values) == 0 || !p.copies(key, language) {
			continue
		}
		if conf == nil {
			if config == nil {
				config = map[string]any{}
			}
			switch c := config["configurable"].(type) {
			case map[string]any:
				conf = c
			case nil:
				conf = map[string]any{}
				config["configurable"] = conf
			default:
				return config // not an object: the run's validation refuses it
			}
		}
		conf[key] = values[0]
	}
	return config
}
