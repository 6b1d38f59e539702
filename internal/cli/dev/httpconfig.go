package dev

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/internal/runs"
	"github.com/weftdev/weft/internal/server"
)

// httpKnobs applies the server knobs of langgraph.json's http section, as
// LangGraph's server applies them, refusing a bad value with the key and
// why:
//
//   - cors: the whole CORS policy (httpapi.CORSPolicy) instead of the
//     loopback origins; its allow_origins defaults to -cors-origins when
//     given, else "*", as LangGraph's defaults to CORS_ALLOW_ORIGINS;
//   - disable_assistants, _threads, _runs, _store, _meta, _ui, _mcp, _a2a,
//     _webhooks: those route groups answer 404 (httpapi.Groups; webhooks:
//     none is sent);
//   - mount_prefix: every route under it (unless -mount-prefix or
//     WEFT_MOUNT_PREFIX says otherwise); one trailing "/" is dropped, as
//     LangGraph's server drops it;
//   - logging_headers: the request headers the request log lines carry;
//   - middleware_order: auth_first authenticates the API's requests before
//     the http.app's middleware sees them (default middleware_first).
//
// http.app, http.enable_custom_route_auth and http.configurable_headers are
// frontApp's.
func (p *project) httpKnobs(cfg *server.Config) error {
	var c struct {
		HTTP map[string]json.RawMessage `json:"http"`
	}
	if err := json.Unmarshal(p.raw, &c); err != nil {
		return fmt.Errorf("%s: %w", p.config, err)
	}
	if c.HTTP == nil {
		return nil
	}
	present := func(key string) (json.RawMessage, bool) {
		v, ok := c.HTTP[key]
		return v, ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null"))
	}
	for _, g := range httpapi.Groups {
		key := "disable_" + g
		v, ok := present(key)
		if !ok {
			continue
		}
		var off bool
		if err := json.Unmarshal(v, &off); err != nil {
			return fmt.Errorf("http.%s: must be true or false, not %s", key, v)
		}
		if off {
			if cfg.Disabled == nil {
				cfg.Disabled = map[string]bool{}
			}
			cfg.Disabled[g] = true
		}
	}
	if v, ok := present("cors"); ok {
		var cors httpapi.CORSPolicy
		if err := decodeKnob(v, &cors); err != nil {
			return fmt.Errorf("http.cors: %w", err)
		}
		if err := cors.Check(); err != nil {
			return fmt.Errorf("http.cors.%w", err)
		}
		if cors.AllowOrigins == nil {
			cors.AllowOrigins = []string{"*"}
			if len(cfg.CORSOrigins) > 0 {
				cors.AllowOrigins = cfg.CORSOrigins
			}
		}
		cfg.CORS = &cors
	}
	if v, ok := present("mount_prefix"); ok && cfg.MountPrefix == "" {
		var prefix string
		if err := json.Unmarshal(v, &prefix); err != nil {
			return fmt.Errorf("http.mount_prefix: must be a path such as \"/api\", not %s", v)
		}
		if prefix != "" && prefix != "/" {
			if err := httpapi.CheckMountPrefix(strings.TrimSuffix(prefix, "/")); err != nil {
				return fmt.Errorf("http.mount_prefix: %q %w", prefix, err)
			}
			cfg.MountPrefix = strings.TrimSuffix(prefix, "/")
		}
	}
	if v, ok := present("logging_headers"); ok {
		var h runs.HeaderPolicy
		if err := decodeKnob(v, &h); err != nil {
			return fmt.Errorf("http.logging_headers: %w", err)
		}
		if err := h.Check(); err != nil {
			// Check names configurable_headers, the policy's other use.
			return fmt.Errorf("http.logging_headers%s", strings.TrimPrefix(err.Error(), "configurable_headers"))
		}
		cfg.LogHeaders = &h
	}
	if v, ok := present("middleware_order"); ok {
		var order string
		if err := json.Unmarshal(v, &order); err != nil || (order != "auth_first" && order != "middleware_first") {
			return fmt.Errorf("http.middleware_order: must be \"auth_first\" or \"middleware_first\", not %s", v)
		}
		cfg.AuthFirst = order == "auth_first"
		if cfg.AuthFirst && p.auth != nil {
			// auth.path's handler runs in the authorize step; before the
			// app, it runs at once.
			cfg.AuthenticateNow = func(r *http.Request) error { _, err := p.auth.Identify(r); return err }
		}
	}
	return nil
}

// decodeKnob decodes v into out, refusing a value of the wrong type with
// the field it is for.
func decodeKnob(v json.RawMessage, out any) error {
	if err := json.Unmarshal(v, out); err != nil {
		if te, ok := err.(*json.UnmarshalTypeError); ok && te.Field != "" {
			return fmt.Errorf("%s must be %s, not %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
		}
		return fmt.Errorf("must be an object: %w", err)
	}
	return nil
}

// jsonKind names a Go kind as a JSON type.
func jsonKind(kind string) string {
	switch kind {
	case "slice":
		return "a list"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "int", "ptr":
		return "a whole number"
	}
	return "a " + kind
}
