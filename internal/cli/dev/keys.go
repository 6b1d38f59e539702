package dev

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/internal/server"
)

// keyUse is what weft dev does with a key of langgraph.json.
type keyUse string

const (
	// keyApplied: read and applied as LangGraph's server applies it.
	keyApplied keyUse = "applied"
	// keyBuild: read by image builds (langgraph build); weft dev, as
	// langgraph dev, runs the project in the environment it is started in.
	keyBuild keyUse = "image builds"
	// keyRefused: weft dev does not start with it; the note says why.
	keyRefused keyUse = "refused"
)

// projectKey is one key of langgraph.json: its dotted path, what weft dev
// does with it and how (or why not). free keys hold the project's own
// names (graph ids, variables, headers): what is under them is not checked
// here.
type projectKey struct {
	path string
	use  keyUse
	note string
	free bool
	// names: the value is an object of names and secrets (variables,
	// headers): /info and the log show the names only.
	names bool
}

// projectKeys are every key of the official servers' langgraph.json (the
// Python CLI's Config and the JS CLI's config schema), in the order
// docs/workers.md lists them. A key not here is reported as unknown at
// start; TestProjectKeysCoverOfficialSchema holds this list against the
// installed langgraph-cli.
var projectKeys = []projectKey{
	{path: "graphs", use: keyApplied, free: true, note: "graph id → `./file.py:name` or `./file.ts:name`: Python graphs run in the Python worker, JS/TS ones in the JS worker"},
	{path: "graphs.path", use: keyApplied, note: "a graph given as an object: its file and export"},
	{path: "graphs.description", use: keyApplied, note: "the description of the graph's system assistant"},
	{path: "env", use: keyApplied, free: true, names: true, note: "a .env file or an object of variables given to the workers (set variables win); a list of names is accepted and loads nothing"},
	{path: "dependencies", use: keyApplied, note: "the Python worker puts local paths on the import path; packages are installed in the project's environment, as for langgraph dev"},
	{path: "ui", use: keyApplied, free: true, note: "generative UI components, bundled and served by the JS worker"},
	{path: "ui_config", use: keyApplied},
	{path: "ui_config.shared", use: keyApplied, note: "packages the UI bundle shares with the host page"},
	{path: "node_loader", use: keyApplied, note: "`tsx` only: the JS worker loads TypeScript with tsx; another loader is refused"},

	{path: "store", use: keyApplied},
	{path: "store.index", use: keyApplied},
	{path: "store.index.dims", use: keyApplied},
	{path: "store.index.embed", use: keyApplied, note: "`openai:<model>` (OPENAI_BASE_URL, OPENAI_API_KEY) or a function of the project's, run by its worker"},
	{path: "store.index.fields", use: keyApplied},
	{path: "store.ttl", use: keyApplied},
	{path: "store.ttl.refresh_on_read", use: keyApplied},
	{path: "store.ttl.default_ttl", use: keyApplied},
	{path: "store.ttl.sweep_interval_minutes", use: keyApplied},

	{path: "checkpointer", use: keyApplied},
	{path: "checkpointer.path", use: keyRefused, note: "Weft is the checkpointer: it keeps checkpoints in LangGraph's PostgreSQL schema in its own database, and a project's saver would not see the runs' commits. Remove the key."},
	{path: "checkpointer.ttl", use: keyApplied},
	{path: "checkpointer.ttl.strategy", use: keyApplied},
	{path: "checkpointer.ttl.default_ttl", use: keyApplied},
	{path: "checkpointer.ttl.sweep_interval_minutes", use: keyApplied},
	{path: "checkpointer.ttl.sweep_limit", use: keyApplied, note: "checked; each sweep takes every expired thread"},
	{path: "checkpointer.serde", use: keyApplied, note: "Python projects: the Python worker's serializer (LangGraph's JsonPlusSerializer) keeps the classes it allows; ignored, with a log line, for JS-only projects as by LangGraph.js's server"},
	{path: "checkpointer.serde.allowed_json_modules", use: keyApplied},
	{path: "checkpointer.serde.allowed_msgpack_modules", use: keyApplied, note: "listed classes come back as themselves, others as their fields; `true` any class"},
	{path: "checkpointer.serde.pickle_fallback", use: keyApplied, note: "`false` only: `true` stops weft dev (a pickled value cannot be shown in state, history or webhooks, and unpickling what the database holds runs code)"},

	{path: "auth", use: keyApplied},
	{path: "auth.path", use: keyApplied, note: "the project's Auth handlers, run by the worker of their language"},
	{path: "auth.disable_studio_auth", use: keyApplied, note: "a boolean; Weft has no LangSmith Studio bypass, so every request goes through auth.path whatever its value"},
	{path: "auth.openapi", use: keyApplied, note: "the security the served OpenAPI document (/openapi.json, /openapi.yaml, /docs) shows: schemes, default security, per path and method"},
	{path: "auth.openapi.securitySchemes", use: keyApplied, free: true},
	{path: "auth.openapi.security_schemes", use: keyApplied, free: true},
	{path: "auth.openapi.security", use: keyApplied, free: true},
	{path: "auth.openapi.paths", use: keyApplied, free: true},
	{path: "auth.cache", use: keyApplied, note: "a JS auth.path's authenticate results cached by the cache_keys headers (TTL, size), as LangGraph's server caches its JS handler only; ignored, with a log line, for a Python auth.path"},
	{path: "auth.cache.cache_keys", use: keyApplied},
	{path: "auth.cache.ttl_seconds", use: keyApplied},
	{path: "auth.cache.max_size", use: keyApplied},

	{path: "encryption", use: keyRefused, note: noEncryption},
	{path: "encryption.path", use: keyRefused, note: noEncryption},
	{path: "priority", use: keyRefused, note: noPriority},
	{path: "priority.path", use: keyRefused, note: noPriority},

	{path: "http", use: keyApplied},
	{path: "http.app", use: keyApplied, note: "a Starlette/FastAPI or Hono app in front of the API"},
	{path: "http.enable_custom_route_auth", use: keyApplied, note: "http.app's routes authenticated by auth.path"},
	{path: "http.configurable_headers", use: keyApplied, note: "the request headers that join a run's configurable"},
	{path: "http.configurable_headers.includes", use: keyApplied},
	{path: "http.configurable_headers.excludes", use: keyApplied},
	{path: "http.cors", use: keyApplied, note: "the whole CORS policy instead of loopback origins and -cors-origins (allow_origins defaults to -cors-origins, else any), as LangGraph's server applies it; allowed origins' preflights also get Access-Control-Allow-Private-Network"},
	{path: "http.cors.allow_origins", use: keyApplied},
	{path: "http.cors.allow_methods", use: keyApplied},
	{path: "http.cors.allow_headers", use: keyApplied},
	{path: "http.cors.allow_credentials", use: keyApplied},
	{path: "http.cors.allow_origin_regex", use: keyApplied},
	{path: "http.cors.expose_headers", use: keyApplied},
	{path: "http.cors.max_age", use: keyApplied},
	{path: "http.disable_assistants", use: keyApplied, note: "the group's routes answer 404, as on LangGraph's server (the groups are listed under \"The server's http knobs\" above)"},
	{path: "http.disable_threads", use: keyApplied},
	{path: "http.disable_runs", use: keyApplied},
	{path: "http.disable_store", use: keyApplied},
	{path: "http.disable_meta", use: keyApplied, note: "/info, /metrics, /docs, /openapi.*: 404; GET /ok stays, answering without checks"},
	{path: "http.disable_ui", use: keyApplied, note: "Weft's web UI and the project's ui components: 404"},
	{path: "http.disable_mcp", use: keyApplied},
	{path: "http.disable_a2a", use: keyApplied},
	{path: "http.disable_webhooks", use: keyApplied, note: "runs run; their webhooks are not sent (logged)"},
	{path: "http.mount_prefix", use: keyApplied, note: "every route, the web UI, the worker API and http.app under the prefix (the SDKs' base URL http://host:port/prefix); outside it GET /, /ok, /livez and /metrics; -mount-prefix wins"},
	{path: "http.logging_headers", use: keyApplied, note: "the request headers each request's log line carries (req_header); credentials never"},
	{path: "http.logging_headers.includes", use: keyApplied},
	{path: "http.logging_headers.excludes", use: keyApplied},
	{path: "http.middleware_order", use: keyApplied, note: "auth_first: auth.path authenticates the API's requests before http.app's middleware sees them; middleware_first (default) the other way round. A Python http.app's own routes are authenticated inside its middleware either way"},

	{path: "webhooks", use: keyApplied},
	{path: "webhooks.env_prefix", use: keyApplied, note: "the variables `${{ env.VAR }}` header values may name (default LG_WEBHOOK_)"},
	{path: "webhooks.url", use: keyApplied, note: "the URL policy: a run's or cron's webhook it refuses is a 422 at creation, and checked again at delivery"},
	{path: "webhooks.url.require_https", use: keyApplied},
	{path: "webhooks.url.allowed_domains", use: keyApplied},
	{path: "webhooks.url.allowed_ports", use: keyApplied},
	{path: "webhooks.url.max_url_length", use: keyApplied},
	{path: "webhooks.url.disable_loopback", use: keyApplied},
	{path: "webhooks.url.disable_private_ips", use: keyApplied},
	{path: "webhooks.headers", use: keyApplied, free: true, names: true, note: "headers of every webhook request, `${{ env.VAR }}` resolved at start"},
	{path: "webhooks.allowed_fields", use: keyApplied, note: "the fields of a run a webhook delivers (LangGraph's server reads it, its CLI schema does not list it)"},

	{path: "python_version", use: keyBuild},
	{path: "node_version", use: keyBuild},
	{path: "api_version", use: keyBuild},
	{path: "_INTERNAL_docker_tag", use: keyBuild},
	{path: "base_image", use: keyBuild},
	{path: "image_distro", use: keyBuild},
	{path: "pip_config_file", use: keyBuild},
	{path: "pip_installer", use: keyBuild},
	{path: "source", use: keyBuild, free: true},
	{path: "source.kind", use: keyBuild},
	{path: "source.root", use: keyBuild},
	{path: "source.package", use: keyBuild},
	{path: "dockerfile_lines", use: keyBuild},
	{path: "docker_compose_file", use: keyBuild},
	{path: "keep_pkg_tools", use: keyBuild},
	{path: "$schema", use: keyApplied, note: "the JSON schema editors check the file against; nothing to apply"},
}

// Why weft dev refuses encryption and priority.
const (
	noEncryption = `Weft encrypts run, thread and checkpoint values and metadata at rest itself, with LANGGRAPH_AES_KEY (docs/encryption.md); it does not call a project's Encryption handlers. Remove the key and set LANGGRAPH_AES_KEY.`
	noPriority   = `Weft's dispatch queue serves runs oldest first, one per thread at a time; it does not call a project's Priority function. Remove the key.`
)

// projectKeyOf is the entry of path, nil when langgraph.json has no such key.
func projectKeyOf(path string) *projectKey {
	i := slices.IndexFunc(projectKeys, func(k projectKey) bool { return k.path == path })
	if i < 0 {
		return nil
	}
	return &projectKeys[i]
}

// projectSetting is a key a project's langgraph.json sets (a section's
// keys, not the section) and its value.
type projectSetting struct {
	key   *projectKey
	value json.RawMessage
}

// checkKeys walks the keys raw (langgraph.json) sets. It returns them (the
// keys of a section, such as http.cors.allow_origins, not the section), a
// warning for each key LangGraph's servers do not know either (with the
// nearest known name: a typo is the likely cause, and the official CLI
// warns the same way), and an error naming every refused key and why. A
// null value is a key not given.
func checkKeys(raw []byte) (set []projectSetting, warnings []string, err error) {
	var refused []string
	var walk func(prefix string, obj map[string]json.RawMessage)
	walk = func(prefix string, obj map[string]json.RawMessage) {
		for _, name := range slices.Sorted(maps.Keys(obj)) {
			v := obj[name]
			if string(v) == "null" {
				continue
			}
			path := prefix + name
			k := projectKeyOf(path)
			if k == nil {
				warnings = append(warnings, unknownKey(prefix, name))
				continue
			}
			var inner map[string]json.RawMessage
			if !k.free && hasChildren(path) && json.Unmarshal(v, &inner) == nil {
				walk(path+".", inner) // a section: its keys are the settings
				continue
			}
			set = append(set, projectSetting{key: k, value: v})
			if k.use == keyRefused {
				refused = append(refused, fmt.Sprintf("%s: %s", path, k.note))
			}
		}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, nil, err
	}
	walk("", top)
	if len(refused) > 0 {
		return set, warnings, fmt.Errorf("langgraph.json sets keys weft dev does not take:\n  %s", strings.Join(refused, "\n  "))
	}
	return set, warnings, nil
}

// hasChildren reports whether some key sits under path.
func hasChildren(path string) bool {
	return slices.ContainsFunc(projectKeys, func(k projectKey) bool { return strings.HasPrefix(k.path, path+".") })
}

// unknownKey is the warning for name under prefix ("" or "http."), naming
// the nearest known key at that level when one is close.
func unknownKey(prefix, name string) string {
	best, bestDist := "", 3 // at most two edits away
	for _, k := range projectKeys {
		rest, ok := strings.CutPrefix(k.path, prefix)
		if !ok || strings.Contains(rest, ".") {
			continue
		}
		if d := editDistance(name, rest); d < bestDist {
			best, bestDist = rest, d
		}
	}
	msg := fmt.Sprintf("langgraph.json: unknown key %s%s ignored: LangGraph's servers do not read it either", prefix, name)
	if best != "" {
		msg += fmt.Sprintf(" (did you mean %s%s?)", prefix, best)
	}
	return msg
}

// editDistance is the Levenshtein distance of a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// maxSettingValue bounds a value as /info and the start log show it.
const maxSettingValue = 200

// checkKeys checks the keys of the project's langgraph.json (checkKeys):
// a refused key is an error naming it.
func (p *project) checkKeys() error {
	var err error
	if p.settings, p.warnings, err = checkKeys(p.raw); err != nil {
		return fmt.Errorf("%s: %w", p.config, err)
	}
	for _, s := range p.settings {
		if s.key.path == "node_loader" {
			var loader string
			if json.Unmarshal(s.value, &loader) != nil || loader != "tsx" {
				return fmt.Errorf("%s: node_loader %s: the JS worker loads TypeScript with tsx, and no other loader; remove the key or set it to \"tsx\"", p.config, s.value)
			}
		}
	}
	return nil
}

// addSettings adds the keys of the project's langgraph.json to the
// server's settings and its unknown keys to the warnings (GET /info, the
// start log).
func (p *project) addSettings(cfg *server.Config) {
	for _, s := range p.settings {
		var compact bytes.Buffer
		if json.Compact(&compact, s.value) != nil {
			compact.Write(s.value)
		}
		var obj map[string]json.RawMessage
		if s.key.names && json.Unmarshal(s.value, &obj) == nil {
			// Variables' and headers' values may be secrets: their names only.
			b, _ := json.Marshal(slices.Sorted(maps.Keys(obj)))
			compact.Reset()
			compact.WriteString("names: " + string(b))
		}
		v := compact.String()
		if len(v) > maxSettingValue {
			v = strings.ToValidUTF8(v[:maxSettingValue], "") + "…"
		}
		cfg.Settings = append(cfg.Settings, httpapi.Setting{Name: s.key.path, Value: v, Source: p.config, Use: string(s.key.use)})
	}
	cfg.Warnings = append(cfg.Warnings, p.warnings...)
}
