package dev

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/weftdev/weft/internal/cli/dev/projectauth"
	"github.com/weftdev/weft/internal/server"
)

// projectConfig applies langgraph.json's webhooks (webhooks.go),
// auth.cache and auth.disable_studio_auth, and checkpointer.serde to the
// server weft dev runs and to its Python worker. A bad value stops weft
// dev with a message naming the key.
func (p *project) projectConfig(cfg *server.Config) error {
	log := cfg.NewLogger(p.out)
	var err error
	if cfg.Webhooks, err = projectWebhooks(p.raw, p.config, os.LookupEnv); err != nil {
		return err
	}
	notes, err := p.authCache()
	if err != nil {
		return err
	}
	serdeNotes, err := p.serde()
	if err != nil {
		return err
	}
	for _, n := range append(notes, serdeNotes...) {
		log.Info(n)
	}
	return nil
}

// authCache applies auth.cache (projectauth.CacheConfig) to a JS
// auth.path, whose authenticate results LangGraph's server caches; a
// Python auth.path's handler is asked on every request, as there (the
// returned note says so). It checks auth.disable_studio_auth: Weft has no
// LangSmith Studio sign-in to bypass the project's auth with, so every
// request goes through auth.path whatever its value (as with true).
func (p *project) authCache() (notes []string, err error) {
	var file struct {
		Auth *struct {
			DisableStudioAuth json.RawMessage `json:"disable_studio_auth"`
			Cache             json.RawMessage `json:"cache"`
		} `json:"auth"`
	}
	if err := json.Unmarshal(p.raw, &file); err != nil || file.Auth == nil {
		return nil, nil // not an object: the auth.path reader says so
	}
	if v := file.Auth.DisableStudioAuth; hasValue(v) {
		var b bool
		if json.Unmarshal(v, &b) != nil {
			return nil, fmt.Errorf("langgraph.json auth.disable_studio_auth %s: want true or false", v)
		}
	}
	if !hasValue(file.Auth.Cache) {
		return nil, nil
	}
	var c struct {
		CacheKeys  []string `json:"cache_keys"`
		TTLSeconds *int     `json:"ttl_seconds"`
		MaxSize    *int     `json:"max_size"`
	}
	if err := json.Unmarshal(file.Auth.Cache, &c); err != nil {
		return nil, fmt.Errorf(`langgraph.json auth.cache: %w (want {"cache_keys": ["authorization"], "ttl_seconds": 60, "max_size": 1000})`, err)
	}
	for _, k := range c.CacheKeys {
		if !validHeaderName(k) {
			return nil, fmt.Errorf("langgraph.json auth.cache.cache_keys: %q is not a header name", k)
		}
	}
	cc := projectauth.CacheConfig{Keys: c.CacheKeys, TTL: 60 * time.Second, MaxSize: 1000}
	if c.TTLSeconds != nil {
		if *c.TTLSeconds < 0 {
			return nil, fmt.Errorf("langgraph.json auth.cache.ttl_seconds %d: want seconds >= 0", *c.TTLSeconds)
		}
		cc.TTL = time.Duration(*c.TTLSeconds) * time.Second
	}
	if c.MaxSize != nil {
		if *c.MaxSize < 0 {
			return nil, fmt.Errorf("langgraph.json auth.cache.max_size %d: want a number of identities >= 0 (0: 1000)", *c.MaxSize)
		}
		cc.MaxSize = *c.MaxSize
	}
	switch {
	case p.auth == nil:
		return []string{"auth.cache ignored: there is no auth.path whose results it would keep"}, nil
	case p.pyAuth:
		return []string{"auth.cache ignored: LangGraph's server caches only a JS auth.path's authenticate results; the Python auth.path's handler is asked on every request"}, nil
	case len(cc.Keys) == 0:
		return []string{"auth.cache names no cache_keys: every request is authenticated anew"}, nil
	}
	p.auth.SetCache(cc)
	return nil, nil
}

// serde applies checkpointer.serde to the Python worker, which reads
// checkpoints with LangGraph's JsonPlusSerializer built from it
// (WEFT_CHECKPOINTER_SERDE):
//
//	"checkpointer": {"serde": {"allowed_msgpack_modules": [["my_agent.models", "MyState"]],
//	                           "allowed_json_modules": [["my_agent", "models", "Legacy"]], "pickle_fallback": false}}
//
// allowed_msgpack_modules ([module, class] pairs, true for any with a
// warning, the default, or null for LangGraph's safe types only) is which
// custom classes (Pydantic models, dataclasses, enums, named tuples) a
// checkpoint gives back as themselves on the next run; a class not allowed
// comes back as its fields. allowed_json_modules is the same for "json"
// constructor envelopes other writers left. pickle_fallback: true is
// refused: Weft never pickles (its server reads every checkpoint as JSON,
// for state, history and webhooks), and unpickling what the database holds
// runs whatever code it names. Without a Python graph the key is ignored,
// as LangGraph.js's dev server ignores it.
func (p *project) serde() (notes []string, err error) {
	var file struct {
		Checkpointer *struct {
			Serde json.RawMessage `json:"serde"`
		} `json:"checkpointer"`
	}
	if err := json.Unmarshal(p.raw, &file); err != nil || file.Checkpointer == nil || !hasValue(file.Checkpointer.Serde) {
		return nil, nil
	}
	if p.py == nil {
		return []string{"checkpointer.serde ignored: it sets how Python graphs' checkpoints are read, and the project has none (LangGraph.js's dev server ignores it too)"}, nil
	}
	var s map[string]json.RawMessage
	if err := json.Unmarshal(file.Checkpointer.Serde, &s); err != nil {
		return nil, fmt.Errorf(`langgraph.json checkpointer.serde: %w (want {"allowed_msgpack_modules": [["module", "Class"]], "allowed_json_modules": [...], "pickle_fallback": false})`, err)
	}
	out := map[string]any{}
	for _, key := range []string{"allowed_msgpack_modules", "allowed_json_modules"} {
		v, ok := s[key]
		if !ok {
			continue // LangGraph's default
		}
		allow, err := serdeAllowlist(v)
		if err != nil {
			return nil, fmt.Errorf("langgraph.json checkpointer.serde.%s: %w", key, err)
		}
		out[key] = allow
	}
	if v := s["pickle_fallback"]; hasValue(v) {
		var b bool
		if json.Unmarshal(v, &b) != nil {
			return nil, fmt.Errorf("langgraph.json checkpointer.serde.pickle_fallback %s: want true or false", v)
		}
		if b {
			return nil, fmt.Errorf("langgraph.json checkpointer.serde.pickle_fallback: true is refused: Weft stores checkpoints as JSON, which its server reads for state, history and webhooks, and never as pickles, which it could not read; and unpickling what a database holds runs whatever code it names. Remove the key or set it to false (a value JSON cannot hold is stored as its JSON form: a custom class's fields, else its text)")
		}
	}
	b, _ := json.Marshal(out)
	p.pyEnv = append(p.pyEnv, "WEFT_CHECKPOINTER_SERDE="+string(b))
	if len(p.jsGraphs) > 0 {
		notes = append(notes, "checkpointer.serde applies to the Python graphs; the JS graphs' checkpoints are JSON, as LangGraph.js writes them")
	}
	return notes, nil
}

// serdeAllowlist is an allowlist of checkpointer.serde: true, false or
// null (as given), or [module path..., class] lists of names.
func serdeAllowlist(v json.RawMessage) (any, error) {
	switch strings.TrimSpace(string(v)) {
	case "null":
		return nil, nil
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	var entries [][]string
	if err := json.Unmarshal(v, &entries); err != nil {
		return nil, fmt.Errorf("%s: want true, false, null or a list of [module, class] lists", v)
	}
	for _, e := range entries {
		if len(e) < 2 || slices.Contains(e, "") {
			return nil, fmt.Errorf("%q: want [module, class], as [\"my_agent.models\", \"MyState\"]", e)
		}
	}
	return entries, nil
}
