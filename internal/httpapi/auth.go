package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/store"
)

// openPath tells whether a path is served without credentials even when
// auth is on: the health probes and the web UI's files (the UI then asks
// for a key and sends it with its API calls).
func openPath(p string) bool {
	return p == "/ok" || p == "/livez" || p == "/" || strings.HasPrefix(p, "/ui/") ||
		p == "/docs" || strings.HasPrefix(p, "/docs/") // the API reference page (its document is guarded)
}

// authenticate puts the principal of each request in its context, as a
// (nil: auth off, every request is the default tenant's). A missing or
// bad credential is a 401 {"detail"}; a failure of the authenticator itself
// a 500 (logged) or, with the database away, a 503.
func authenticate(a auth.Authenticator, log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if a == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if openPath(r.URL.Path) {
				next.ServeHTTP(w, r)
				return
			}
			p, err := a.Authenticate(r)
			if err != nil {
				writeAuthError(w, r, log, err)
				return
			}
			next.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), p)))
		})
	}
}

// AuthErrorWriter writes an authentication failure (an *auth.Error, or any
// other error: a 500) exactly as the API answers a request that failed
// authentication: its status and {"detail"}, with WWW-Authenticate on a 401
// and Retry-After on a 503, and with text (Deps.TextErrors) the detail as
// plain text for a client that does not ask for JSON. For what answers in
// front of the API (a project's custom routes, internal/cli/dev/projecthttp).
func AuthErrorWriter(log *slog.Logger, text bool) func(w http.ResponseWriter, r *http.Request, err error) {
	if !text {
		return func(w http.ResponseWriter, r *http.Request, err error) { writeAuthError(w, r, log, err) }
	}
	return func(w http.ResponseWriter, r *http.Request, err error) {
		textErrors(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			writeAuthError(w, r, log, err)
		})).ServeHTTP(w, r)
	}
}

func writeAuthError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	ae, ok := auth.AsError(err)
	if !ok {
		httpx.WriteError(w, r, log, err)
		return
	}
	switch ae.Status {
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="weft"`)
	case http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", "1")
	}
	httpx.WriteJSON(w, ae.Status, httpx.ErrorBody{Detail: ae.Detail})
}

// guard checks, per route, the scope its resource needs and the authorize
// hook's decision.
type guard struct {
	on        bool // credentials are checked (auth on): scopes apply
	authorize auth.AuthorizeFunc
	// threadMeta reads a thread's metadata (auth.Tenant scoped), to hold it
	// against a decision's filters.
	threadMeta func(ctx context.Context, id uuid.UUID) (map[string]any, error)
	// assistantMeta reads an assistant's metadata (by id or graph name);
	// nil: assistant routes refuse filters.
	assistantMeta func(ctx context.Context, ref string) (map[string]any, error)
	log           *slog.Logger
}

// scopeOf is the scope each resource needs ("" for none beyond a valid
// credential).
var scopeOf = map[string]string{
	"threads": auth.ScopeThreads, "assistants": auth.ScopeAssistants, "store": auth.ScopeStore,
	"crons": auth.ScopeCrons, "worker": auth.ScopeWorker, "admin": auth.ScopeAdmin, "system": "",
}

// filterMode is how a route applies an authorize decision's filters.
type filterMode int

const (
	// noFilters: the route cannot apply them; a decision with filters is
	// refused (403) rather than ignored.
	noFilters filterMode = iota
	// threadRow: the route is about the thread in its path; a thread whose
	// metadata does not contain the filters is answered 404.
	threadRow
	// inHandler: the handler applies auth.Filters itself (thread search,
	// count, children, create).
	inHandler
)

// need is the middleware of a route touching resource with action.
func (g *guard) need(resource, action string) func(http.Handler) http.Handler {
	return g.check(resource, action, noFilters)
}

// thread is the middleware of a route about the thread in its path.
func (g *guard) thread(action string) func(http.Handler) http.Handler {
	return g.check("threads", action, threadRow)
}

// threads is the middleware of a thread route whose handler applies the
// filters itself.
func (g *guard) threads(action string) func(http.Handler) http.Handler {
	return g.check("threads", action, inHandler)
}

func (g *guard) check(resource, action string, mode filterMode) func(http.Handler) http.Handler {
	scope := scopeOf[resource]
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := r.Context()
			p, _ := auth.FromContext(ctx)
			if g.on && scope != "" && !p.Has(scope) && !runStore(resource, p, r) {
				httpx.WriteJSON(w, http.StatusForbidden, httpx.ErrorBody{Detail: "Forbidden: this credential lacks the " +
					scope + " scope that " + r.Method + " " + routeOf(r) + " needs"})
				return
			}
			if g.authorize == nil {
				next.ServeHTTP(w, r)
				return
			}
			req := auth.Request{Principal: p, Resource: resource, Action: action, ID: pathID(r), Method: r.Method, Path: r.URL.Path,
				Query: r.URL.RawQuery}
			if r.Body != nil && r.Body != http.NoBody && r.Method != http.MethodGet {
				b, err := io.ReadAll(r.Body)
				if err != nil {
					httpx.WriteError(w, r, g.log, err)
					return
				}
				req.Body = b
				r.Body = io.NopCloser(bytes.NewReader(b))
			}
			d, err := g.authorize(ctx, req)
			if err != nil {
				writeAuthError(w, r, g.log, err)
				return
			}
			if d.Deny {
				reason := d.Reason
				if reason == "" {
					reason = "Forbidden"
				}
				httpx.WriteJSON(w, http.StatusForbidden, httpx.ErrorBody{Detail: reason})
				return
			}
			if len(d.Body) > 0 {
				r, req.Body = withBodyFields(r, req.Body, d.Body)
			}
			if len(d.Filters) > 0 && resource == "assistants" && g.assistantMeta != nil {
				if ref := chi.URLParam(r, "assistant_id"); ref != "" {
					md, err := g.assistantMeta(ctx, ref)
					if err != nil {
						httpx.WriteError(w, r, g.log, err)
						return
					}
					if !auth.Contains(md, d.Filters) {
						httpx.WriteJSON(w, http.StatusNotFound, httpx.ErrorBody{Detail: "Assistant not found: " + ref})
						return
					}
					d.Filters = nil
				} else if action == "search" {
					// A search's metadata filter is jsonb containment too: the
					// decision's filters join it.
					md := map[string]any{}
					var body struct {
						Metadata map[string]any `json:"metadata"`
					}
					if json.Unmarshal(req.Body, &body) == nil && body.Metadata != nil {
						md = body.Metadata
					}
					merged, ok := auth.MergeFilters(md, d.Filters)
					if !ok {
						merged = map[string]any{"\x00weft-none": true} // contradictory: matches nothing
					}
					r, req.Body = withBodyFields(r, req.Body, map[string]any{"metadata": merged})
					d.Filters = nil
				}
			}
			if len(d.Filters) > 0 && resource == "store" && action == "search" {
				// Store searches and namespace listings: the answer keeps the
				// items and namespaces whose namespace the filters contain
				// ({"namespace": [...]}), after the page was cut.
				rec := &bufferedWriter{header: http.Header{}, status: http.StatusOK}
				next.ServeHTTP(rec, r.WithContext(ctx))
				writeStoreFiltered(w, rec, d.Filters)
				return
			}
			if len(d.Filters) > 0 {
				switch mode {
				case noFilters:
					g.log.WarnContext(ctx, "authorize hook returned filters for a route that cannot apply them; refused",
						"method", r.Method, "route", routeOf(r), "resource", resource, "action", action)
					httpx.WriteJSON(w, http.StatusForbidden, httpx.ErrorBody{Detail: "Forbidden: " + r.Method + " " + routeOf(r) +
						" cannot apply the authorization filters of this request"})
					return
				case threadRow:
					if id, err := uuid.Parse(chi.URLParam(r, "thread_id")); err == nil { // a bad id: the handler's 422
						md, err := g.threadMeta(ctx, id)
						if err != nil {
							httpx.WriteError(w, r, g.log, err)
							return
						}
						if !auth.Contains(md, d.Filters) {
							httpx.WriteJSON(w, http.StatusNotFound, httpx.ErrorBody{Detail: "Thread with ID " + id.String() + " not found"})
							return
						}
					}
				}
				ctx = auth.WithFilters(ctx, d.Filters)
			}
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// withBodyFields is r with fields set in its JSON body (body: the body
// already read; none: fields alone), and that new body.
func withBodyFields(r *http.Request, body []byte, fields map[string]any) (*http.Request, []byte) {
	obj := map[string]any{}
	if len(bytes.TrimSpace(body)) > 0 {
		// Numbers stay as sent; a body a map would lose a repeated key of
		// is left as it is, for the handler to refuse (httpx.DecodeJSON).
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&obj); err != nil || obj == nil || httpx.DuplicateKey(body) {
			return r, body // the handler answers the bad body
		}
	}
	for k, v := range fields {
		obj[k] = v
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return r, body
	}
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(b))
	r2.ContentLength = int64(len(b))
	return r2, b
}

// pathID is the id the route's path names, "" when none.
func pathID(r *http.Request) string {
	for _, k := range []string{"thread_id", "assistant_id", "cron_id", "run_id", "dispatch_id"} {
		if v := chi.URLParam(r, k); v != "" {
			return v
		}
	}
	return ""
}

// routeOf is the request's route template (its path when none matched).
func routeOf(r *http.Request) string {
	if rc := chi.RouteContext(r.Context()); rc != nil {
		if p := rc.RoutePattern(); p != "" {
			return p
		}
	}
	return r.URL.Path
}

// runStore tells whether r is a worker's store request on behalf of a run
// it executes: a worker-scoped caller with the run's dispatch id and claim
// token (what the JS worker's WeftStore sends). The store handler checks
// the claim (409 when it is not current) and acts for the run's tenant, so
// the worker scope is enough.
func runStore(resource string, p auth.Principal, r *http.Request) bool {
	return resource == "store" && p.Has(auth.ScopeWorker) && r.Header.Get(store.HeaderDispatchID) != ""
}

// bufferedWriter holds a response to filter it.
type bufferedWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header         { return b.header }
func (b *bufferedWriter) WriteHeader(status int)      { b.status = status }
func (b *bufferedWriter) Write(p []byte) (int, error) { return b.body.Write(p) }

// writeStoreFiltered writes rec's answer keeping, of its "items" and
// "namespaces", those whose namespace filters contain.
func writeStoreFiltered(w http.ResponseWriter, rec *bufferedWriter, filters map[string]any) {
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	var out map[string]json.RawMessage
	if rec.status != http.StatusOK || json.Unmarshal(rec.body.Bytes(), &out) != nil {
		w.WriteHeader(rec.status)
		_, _ = w.Write(rec.body.Bytes())
		return
	}
	match := func(ns any) bool { return auth.Contains(map[string]any{"namespace": ns}, filters) }
	if raw, ok := out["items"]; ok {
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) == nil {
			kept := []json.RawMessage{}
			for _, it := range items {
				var item struct {
					Namespace []any `json:"namespace"`
				}
				if json.Unmarshal(it, &item) == nil && match(item.Namespace) {
					kept = append(kept, it)
				}
			}
			out["items"], _ = json.Marshal(kept)
		}
	}
	if raw, ok := out["namespaces"]; ok {
		var nss [][]any
		if json.Unmarshal(raw, &nss) == nil {
			kept := [][]any{}
			for _, ns := range nss {
				if match(ns) {
					kept = append(kept, ns)
				}
			}
			out["namespaces"], _ = json.Marshal(kept)
		}
	}
	b, _ := json.Marshal(out)
	w.Header().Del("Content-Length")
	w.WriteHeader(rec.status)
	_, _ = w.Write(b)
}
