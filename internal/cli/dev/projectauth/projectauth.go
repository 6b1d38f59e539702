// Package projectauth runs a LangGraph.js project's langgraph.json auth.path
// (an Auth of @langchain/langgraph-sdk/auth) as Weft's authenticate and
// authorize hooks: the JS worker serves the Auth's handlers on a unix socket
// (worker-js/src/auth.mjs) and this client asks them, per request, over
// keep-alive HTTP. Every request is authenticated and authorized anew, as
// LangGraph's server does, unless langgraph.json's auth.cache asks that
// identities be remembered (SetCache, cache.go).
package projectauth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/httpx"
)

// Client calls the handlers a worker serves on Socket.
type Client struct {
	Socket string
	hc     *http.Client
	cache  *identityCache // auth.cache (nil: none)
}

// New is a client of the handlers served on socket.
func New(socket string) *Client {
	return &Client{Socket: socket, hc: &http.Client{Transport: httpx.UnixTransport(socket, 256), Timeout: 30 * time.Second}}
}

// reply is the worker's answer: a refusal (Status) or a result.
type reply struct {
	Status  int               `json:"status"`
	Detail  string            `json:"detail"`
	Headers map[string]string `json:"headers"`
	User    map[string]any    `json:"user"`
	Scopes  []string          `json:"scopes"`
	Filters map[string]any    `json:"filters"`
	Value   map[string]any    `json:"value"`
}

func (c *Client) call(ctx context.Context, path string, in any) (*reply, error) {
	out, err := c.callReply(ctx, path, in)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// callReply is call, with the worker's reply also when it is a refusal.
func (c *Client) callReply(ctx context.Context, path string, in any) (*reply, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://auth"+path, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := c.hc.Do(req)
	if err != nil {
		// The worker is (re)starting or has not loaded auth.path yet.
		return nil, &auth.Error{Status: http.StatusServiceUnavailable, Detail: "the project's auth.path is not served yet (its worker is starting)"}
	}
	defer res.Body.Close()
	var out reply
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("auth.path %s: %w", path, err)
	}
	if out.Status >= 400 {
		return &out, &auth.Error{Status: out.Status, Detail: out.Detail}
	}
	return &out, nil
}

// user is what a principal carries for the authorize call: the request to
// authenticate there.
type user struct {
	Request  map[string]any
	cacheKey string // auth.cache's key of the request ("" none)
}

// Authenticate takes r's method, URL and headers for the Auth's authenticate
// handler, which the authorize hook calls together with the route's on()
// handler (one call to the worker per request; every API route is
// authorized). The principal has the tenant scope of the default tenant; a
// handler's HTTPException is answered with its status.
func (c *Client) Authenticate(r *http.Request) (auth.Principal, error) {
	if r.URL.Path == "/info" { // served without credentials, as LangGraph's server does
		return auth.Principal{Scopes: []string{auth.ScopeTenant}}, nil
	}
	return auth.Principal{Scopes: []string{auth.ScopeTenant}, User: user{Request: requestOf(r), cacheKey: c.cache.keyOf(r.Header)}}, nil
}

// requestOf is what the authenticate handler is given of r: its method,
// URL and headers (not its body).
func requestOf(r *http.Request) map[string]any {
	headers := map[string]string{}
	for k, v := range r.Header {
		headers[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	return map[string]any{"method": r.Method, "url": "http://" + r.Host + r.URL.RequestURI(), "headers": headers}
}

// Identity is who the authenticate handler says a request comes from: the
// user as the Agent Server normalizes it (identity, display_name,
// is_authenticated, permissions and the handler's own fields; null when
// the Auth has no authenticate handler) and its scopes (the permissions).
type Identity struct {
	User   map[string]any `json:"user"`
	Scopes []string       `json:"scopes"`
}

// Identify authenticates r now, with the authenticate handler alone, as
// the API authenticates its worker and admin routes: what a project's
// custom routes are given (http.enable_custom_route_auth). A refusal is
// an *auth.Error with the handler's status.
func (c *Client) Identify(r *http.Request) (Identity, error) {
	return c.identify(r.Context(), user{Request: requestOf(r), cacheKey: c.cache.keyOf(r.Header)})
}

// Authorize authenticates the request and asks the on() handler of req's
// resource and action, with the value LangGraph's server passes it. Its
// filters (jsonb containment) go back as the decision's; metadata it
// stamped on the value replaces the body's. A refusal is answered with the
// handler's status.
func (c *Client) Authorize(ctx context.Context, req auth.Request) (auth.Decision, error) {
	u, ok := req.Principal.User.(user)
	if !ok {
		return auth.Allow(), nil // the worker's own key, or /info
	}
	if req.Resource == "worker" || req.Resource == "admin" || req.Resource == "system" {
		// Routes the Agent Server does not authorize: authenticated only.
		_, err := c.identify(ctx, u)
		return auth.Allow(), err
	}
	value := valueOf(req)
	if req.Resource == "threads" && req.Action == "copy" {
		// A copy reads the thread and creates one: both handlers are asked,
		// as on LangGraph's server; the read's filters hold the source.
		read, err := c.check(ctx, u, "threads", "read", map[string]any{"thread_id": req.ID})
		if err != nil {
			return auth.Decision{}, err
		}
		if _, err := c.call(ctx, "/authorize", map[string]any{"user": read.User, "scopes": read.Scopes, "resource": "threads",
			"action": "create", "value": map[string]any{"metadata": map[string]any{}}}); err != nil {
			return auth.Decision{}, err
		}
		return auth.Decision{Filters: read.Filters}, nil
	}
	out, err := c.check(ctx, u, req.Resource, action(req), value)
	if err != nil {
		return auth.Decision{}, err
	}
	d := auth.Decision{Filters: out.Filters, Body: map[string]any{}}
	if md, ok := out.Value["metadata"].(map[string]any); ok && mutates(req.Action) {
		d.Body["metadata"] = md
	}
	if req.Action == "create_run" && out.User != nil {
		// The run's graph sees its user as on LangGraph's server.
		cfg, _ := out.Value["config"].(map[string]any)
		if cfg == nil {
			cfg = map[string]any{}
		}
		conf, _ := cfg["configurable"].(map[string]any)
		if conf == nil {
			conf = map[string]any{}
		}
		conf["langgraph_auth_user"] = out.User
		conf["langgraph_auth_user_id"] = out.User["identity"]
		conf["langgraph_auth_permissions"] = out.Scopes
		cfg["configurable"] = conf
		d.Body["config"] = cfg
	}
	switch {
	case req.Resource == "store":
		// The store's filters are on namespaces: a request naming one is
		// held against them here; one that names none cannot be filtered.
		if ns, ok := value["namespace"].([]any); ok && len(ns) > 0 && len(d.Filters) > 0 {
			if !auth.Contains(map[string]any{"namespace": ns}, d.Filters) {
				return auth.Decision{}, auth.Forbidden("Not authorized")
			}
			d.Filters = nil
		}
	case (req.Action == "create" || req.Action == "create_run") && req.ID == "":
		// What is created is stamped by the handler itself (metadata); there
		// is no row to hold the filters against.
		if req.Resource == "threads" && req.Action == "create" {
			break // a thread create merges the filters into its metadata
		}
		d.Filters = nil
	}
	return d, nil
}

// mutates tells whether action writes the metadata of its value.
func mutates(action string) bool {
	return action == "create" || action == "update" || action == "create_run"
}

// action is the Agent Server's action name of req.
func action(req auth.Request) string {
	if req.Resource == "store" {
		switch {
		case req.Action == "update":
			return "put"
		case req.Action == "read":
			return "get"
		case req.Action == "search" && strings.HasSuffix(req.Path, "/namespaces"):
			return "list_namespaces"
		}
	}
	return req.Action
}

// valueOf is the value the handler is given: the request's JSON body, its
// path's id, and for the store the namespace as a list.
func valueOf(req auth.Request) map[string]any {
	v := map[string]any{}
	if len(bytes.TrimSpace(req.Body)) > 0 {
		_ = json.Unmarshal(req.Body, &v)
		if v == nil {
			v = map[string]any{}
		}
	}
	if req.Query != "" {
		q, _ := url.ParseQuery(req.Query)
		for k, vs := range q {
			if _, set := v[k]; set || len(vs) == 0 {
				continue
			}
			if len(vs) > 1 {
				l := make([]any, len(vs))
				for i, s := range vs {
					l[i] = s
				}
				v[k] = l
			} else {
				v[k] = vs[0]
			}
		}
	}
	switch req.Resource {
	case "threads":
		if req.ID != "" && strings.HasPrefix(req.Path, "/threads/") {
			v["thread_id"] = req.ID
		}
	case "assistants":
		if req.ID != "" {
			v["assistant_id"] = req.ID
		}
	case "store":
		if p, ok := v["namespace_prefix"]; ok {
			v["namespace"] = p
		} else if p, ok := v["prefix"]; ok {
			v["namespace"] = p
		}
		if s, ok := v["namespace"].(string); ok { // GET /store/items?namespace=a.b
			parts := []any{}
			for _, p := range strings.Split(s, ".") {
				if p != "" {
					parts = append(parts, p)
				}
			}
			v["namespace"] = parts
		}
	}
	return v
}

// Path is the auth.path of a langgraph.json ("" when none).
func Path(raw []byte) string {
	var cfg struct {
		Auth struct {
			Path string `json:"path"`
		} `json:"auth"`
	}
	_ = json.Unmarshal(raw, &cfg)
	return cfg.Auth.Path
}
