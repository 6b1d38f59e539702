// Package httpapi assembles Weft's HTTP API: the one route table, the
// middleware (request id, logging, panic recovery, CORS, body limit) and
// the system endpoints (/ok, /info, /openapi.yaml).
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/trace"

	"github.com/weftdev/weft/internal/a2a"
	"github.com/weftdev/weft/internal/assistants"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/crons"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/inspect"
	"github.com/weftdev/weft/internal/mcp"
	"github.com/weftdev/weft/internal/metrics"
	"github.com/weftdev/weft/internal/runs"
	"github.com/weftdev/weft/internal/state"
	"github.com/weftdev/weft/internal/store"
	"github.com/weftdev/weft/internal/stream"
	"github.com/weftdev/weft/internal/threads"
	"github.com/weftdev/weft/internal/workerapi"
	"github.com/weftdev/weft/web"
)

// DefaultMaxBody is the default request body limit (bytes).
const DefaultMaxBody = 10 << 20

// Deps is what the router serves.
type Deps struct {
	Log     *slog.Logger
	DB      *pgxpool.Pool
	Version string
	MaxBody int64 // request body limit; 0 → DefaultMaxBody
	Threads *threads.Handlers
	State   *state.Handlers
	Runs    *runs.Handlers
	// Streams serves run and thread streams and protocol v2.
	Streams *stream.Handlers
	// Workers serves the worker API (/dispatch/…).
	Workers *workerapi.Handlers
	// Security is the CORS and Host policy (the zero value: loopback
	// origins and hosts only).
	Security   Security
	Assistants *assistants.Handlers
	Store      *store.Handlers
	Crons      *crons.Handlers
	// Metrics are served at /metrics and count requests (nil: /metrics
	// answers 404, nothing is counted).
	Metrics *metrics.Metrics
	// Tracer serves each request in a span (nil: tracing off).
	Tracer trace.Tracer
	// Inspect serves the read endpoints of the web UI (/inspect/…).
	Inspect *inspect.Handlers
	// MCP serves /mcp, the assistants as MCP tools.
	MCP *mcp.Handler
	// A2A serves the A2A agent cards and endpoints.
	A2A *a2a.Handlers
	// Auth authenticates every request but the health probes and the web
	// UI's files (nil: auth off — every request is the default tenant's
	// and no scope is checked).
	Auth auth.Authenticator
	// Authorize is the authorize hook of a Go program embedding Weft (nil:
	// none), asked about every request to a guarded route.
	Authorize auth.AuthorizeFunc
	// ThreadMetadata reads a thread's metadata (tenant scoped, 404 when it
	// is not there), to hold it against an authorize decision's filters.
	ThreadMetadata func(ctx context.Context, id uuid.UUID) (map[string]any, error)
	// AssistantMetadata reads an assistant's metadata (by id or graph
	// name, tenant scoped), to hold it against an authorize decision's
	// filters (nil: assistant routes refuse filters).
	AssistantMetadata func(ctx context.Context, ref string) (map[string]any, error)
	// TextErrors answers errors with their detail as plain text, as
	// LangGraph.js's server does (textErrors), for clients that do not ask
	// for JSON.
	TextErrors bool
	// OpenAPI changes the document GET /openapi.json and /openapi.yaml
	// serve (nil: the generated one as it is): weft dev's http.app routes
	// and auth.openapi.
	OpenAPI EditOpenAPI
	// Disabled are the route groups turned off (langgraph.json's
	// http.disable_<group>; groups.go): their routes answer 404, GET /ok
	// stays.
	Disabled map[string]bool
	// LogHeaders says which request headers each request's log line
	// carries, as req_header (langgraph.json's http.logging_headers; nil:
	// none, as LangGraph's server logs none by default).
	LogHeaders *runs.HeaderPolicy
	// Settings and Warnings are what GET /info reports the server started
	// with (Config.Settings, Config.Warnings).
	Settings []Setting
	Warnings []string
}

// NewRouter returns the complete HTTP handler. Every route is listed here.
//
//	@title						Weft
//	@version					0.1.0
//	@description				Open, self-hosted thread/run server for LangGraph-style agents, speaking the LangGraph Agent Server REST API. With auth on (WEFT_AUTH=keys or jwt, or an embedding program's hook) every operation but GET /ok, /livez and /docs (the reference page; the document it loads is guarded) needs a credential, in x-api-key or as Authorization: Bearer: a missing or bad one is a 401 {"detail"}, a credential without the scope the route needs (tenant data, worker, admin; docs/production.md) a 403. Without auth (the default) the server listens on loopback only and no credential is needed.
//	@license.name				Apache-2.0
//	@BasePath					/
//	@securityDefinitions.apikey	ApiKeyAuth
//	@in							header
//	@name						x-api-key
//	@description				An API key (weft keys create), or with WEFT_AUTH=jwt a JWT; what the LangGraph SDKs' apiKey option sends.
func NewRouter(d Deps) http.Handler {
	if d.MaxBody == 0 {
		d.MaxBody = DefaultMaxBody
	}
	s := &system{db: d.DB, version: d.Version, log: d.Log, settings: d.Settings, warnings: d.Warnings}
	s.metaOff = d.Disabled[GroupMeta]
	if d.Metrics != nil {
		s.metrics = d.Metrics.Handler(d.Log)
		s.snapshot = d.Metrics.Snapshot
	}
	h := func(fn httpx.HandlerFunc) http.HandlerFunc { return httpx.Handle(d.Log, fn) }
	r := chi.NewRouter()
	if d.TextErrors {
		r.Use(textErrors)
	}
	// GetHead serves HEAD from the GET route (net/http drops the body).
	r.Use(logRequests(d.Log, d.Metrics, d.Tracer, d.LogHeaders), d.Security.Handler, shadowed(r), authenticate(d.Auth, d.Log),
		middleware.GetHead, limitBody(d.MaxBody))
	if off := disabledGroups(d.Disabled, r); off != nil {
		r.Use(off)
	}
	// Each route names the resource it touches and the action: the scope
	// it needs follows (auth.Scope*), and the authorize hook decides on
	// both. g.thread routes hold the thread in their path against the
	// hook's filters; g.threads routes apply them in their handler; g.need
	// routes refuse a decision with filters.
	g := &guard{on: d.Auth != nil, authorize: d.Authorize, threadMeta: d.ThreadMetadata, assistantMeta: d.AssistantMetadata, log: d.Log}
	th, ths := g.thread, g.threads
	need := g.need
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		httpx.WriteJSON(w, http.StatusNotFound, httpx.ErrorBody{Detail: "Not Found"})
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, req *http.Request) {
		_, allowed := resource(r, req)
		methodNotAllowed(w, req, allowed)
	})

	r.Get("/ok", s.ok)
	r.Get("/livez", s.livez)
	r.With(need("system", "read")).Get("/info", s.info)
	od := newOpenAPIDoc(d.OpenAPI, d.Log)
	r.With(need("system", "read")).Get("/openapi.yaml", od.yaml)
	r.With(need("system", "read")).Get("/openapi.json", od.json)
	r.Get("/docs", od.page)   // the page and its files hold nothing: open, as the web UI's
	r.Get("/docs/*", od.page) // (the document they load is guarded)
	r.With(need("admin", "read")).Get("/metrics", s.serveMetrics)

	r.With(ths("create")).Post("/threads", h(d.Threads.Create))
	r.With(ths("search")).Post("/threads/search", h(d.Threads.Search))
	r.With(ths("search")).Post("/threads/count", h(d.Threads.Count))
	r.With(need("threads", "delete")).Post("/threads/prune", h(d.State.Prune))
	r.With(th("read")).Get("/threads/{thread_id}", h(d.Threads.Get))
	r.With(th("update")).Patch("/threads/{thread_id}", h(d.Threads.Patch))
	r.With(th("delete")).Delete("/threads/{thread_id}", h(d.Threads.Delete))
	r.With(ths("search")).Get("/threads/{thread_id}/children", h(d.Threads.Children))
	r.With(missingAs(conflictIfMissing), th("copy")).Post("/threads/{thread_id}/copy", h(d.State.Copy))
	r.With(th("read")).Get("/threads/{thread_id}/stream", h(d.Streams.ThreadStream))
	r.With(th("read")).Post("/threads/{thread_id}/stream/events", h(d.Streams.ProtocolEvents))
	// The WebSocket carries commands (run.start, …) as well: update, like /commands.
	r.With(th("update")).Get("/threads/{thread_id}/stream/events", h(d.Streams.ProtocolSocket))
	r.With(th("update")).Post("/threads/{thread_id}/commands", h(d.Streams.ProtocolCommands))

	r.With(th("read")).Get("/threads/{thread_id}/state", h(d.State.GetState))
	r.With(th("update")).Post("/threads/{thread_id}/state", h(d.State.UpdateState))
	r.With(th("update")).Patch("/threads/{thread_id}/state", h(d.State.PatchState))
	r.With(th("read")).Post("/threads/{thread_id}/state/checkpoint", h(d.State.PostStateAt))
	r.With(th("read")).Get("/threads/{thread_id}/state/{checkpoint_id}", h(d.State.GetStateAt))
	r.With(th("read")).Get("/threads/{thread_id}/history", h(d.State.GetHistory))
	r.With(th("read")).Post("/threads/{thread_id}/history", h(d.State.PostHistory))
	r.With(th("read")).Get("/threads/{thread_id}/messages", h(d.State.GetMessages))
	r.With(th("read")).Get("/threads/{thread_id}/storage", h(d.State.GetStorage))
	r.With(th("update")).Post("/threads/{thread_id}/summaries", h(d.State.AddSummary))
	r.With(th("read")).Get("/threads/{thread_id}/summaries", h(d.State.ListSummaries))
	r.With(th("update")).Delete("/threads/{thread_id}/summaries/{summary_id}", h(d.State.DeleteSummary))

	r.With(need("assistants", "create")).Post("/assistants", h(d.Assistants.Create))
	r.With(need("assistants", "search")).Post("/assistants/search", h(d.Assistants.Search))
	r.With(need("assistants", "search")).Post("/assistants/count", h(d.Assistants.Count))
	r.With(need("assistants", "read")).Get("/assistants/{assistant_id}", h(d.Assistants.Get))
	r.With(need("assistants", "update")).Patch("/assistants/{assistant_id}", h(d.Assistants.Patch))
	r.With(need("assistants", "delete")).Delete("/assistants/{assistant_id}", h(d.Assistants.Delete))
	r.With(need("assistants", "search")).Post("/assistants/{assistant_id}/versions", h(d.Assistants.Versions))
	r.With(need("assistants", "update")).Post("/assistants/{assistant_id}/latest", h(d.Assistants.SetLatest))
	r.With(need("assistants", "read")).Get("/assistants/{assistant_id}/graph", h(d.Assistants.Graph))
	r.With(need("assistants", "read")).Get("/assistants/{assistant_id}/schemas", h(d.Assistants.Schemas))
	r.With(need("assistants", "read")).Get("/assistants/{assistant_id}/subgraphs", h(d.Assistants.Subgraphs))
	r.With(need("assistants", "read")).Get("/assistants/{assistant_id}/subgraphs/{namespace}", h(d.Assistants.SubgraphsOf))

	r.With(th("create_run")).Post("/threads/{thread_id}/runs", h(d.Runs.CreateStateful))
	r.With(th("read")).Get("/threads/{thread_id}/runs", h(d.Runs.List))
	r.With(th("create_run")).Post("/threads/{thread_id}/runs/wait", h(d.Runs.WaitStateful))
	r.With(th("create_run")).Post("/threads/{thread_id}/runs/stream", h(d.Streams.StreamStateful))
	r.With(th("read")).Get("/threads/{thread_id}/runs/{run_id}", h(d.Runs.Get))
	r.With(th("delete")).Delete("/threads/{thread_id}/runs/{run_id}", h(d.Runs.Delete))
	r.With(th("read")).Get("/threads/{thread_id}/runs/{run_id}/join", h(d.Runs.Join))
	r.With(missingAs(streamErrorIfMissing), th("read")).Get("/threads/{thread_id}/runs/{run_id}/stream", h(d.Streams.JoinStream))
	r.With(th("update")).Post("/threads/{thread_id}/runs/{run_id}/cancel", h(d.Runs.Cancel))
	r.With(th("read")).Get("/threads/{thread_id}/runs/{run_id}/dispatches", h(d.Runs.RunDispatches))
	r.With(need("threads", "create_run")).Post("/runs", h(d.Runs.CreateStateless))
	r.With(need("threads", "create_run")).Post("/runs/wait", h(d.Runs.WaitStateless))
	r.With(need("threads", "create_run")).Post("/runs/stream", h(d.Streams.StreamStateless))
	r.With(need("threads", "read")).Get("/runs/{run_id}", h(d.Runs.GetStateless))
	r.With(missingAs(streamErrorIfMissing), need("threads", "read")).Get("/runs/{run_id}/stream", h(d.Streams.JoinStreamStateless))
	r.With(need("threads", "create_run")).Post("/runs/batch", h(d.Runs.Batch))
	r.With(need("threads", "update")).Post("/runs/cancel", h(d.Runs.CancelMany))

	r.With(need("crons", "create")).Post("/runs/crons", h(d.Crons.CreateStateless))
	r.With(need("crons", "search")).Post("/runs/crons/search", h(d.Crons.Search))
	r.With(need("crons", "search")).Post("/runs/crons/count", h(d.Crons.Count))
	r.With(need("crons", "read")).Get("/runs/crons/{cron_id}", h(d.Crons.Get))
	r.With(need("crons", "update")).Patch("/runs/crons/{cron_id}", h(d.Crons.Patch))
	r.With(need("crons", "delete")).Delete("/runs/crons/{cron_id}", h(d.Crons.Delete))
	r.With(need("crons", "create")).Post("/threads/{thread_id}/runs/crons", h(d.Crons.CreateForThread))

	r.With(need("admin", "read")).Get("/dispatches", h(d.Runs.ListDispatches))
	r.With(need("admin", "update")).Post("/dispatches/{dispatch_id}/retry", h(d.Runs.RetryDispatch))
	r.With(need("worker", "claim")).Post("/dispatch/claim", h(d.Workers.Claim))
	r.With(need("worker", "read")).Post("/dispatch/cancellations", h(d.Workers.Cancellations))
	r.With(need("worker", "heartbeat")).Post("/dispatch/{dispatch_id}/heartbeat", h(d.Workers.Heartbeat))
	r.With(need("worker", "ack")).Post("/dispatch/{dispatch_id}/ack", h(d.Workers.Ack))
	r.With(need("worker", "nack")).Post("/dispatch/{dispatch_id}/nack", h(d.Workers.Nack))
	r.With(need("worker", "commit")).Post("/dispatch/{dispatch_id}/commit", h(d.Workers.Commit))
	r.With(need("worker", "register")).Post("/dispatch/graphs", h(d.Workers.RegisterGraph))
	r.With(need("worker", "register")).Post("/dispatch/graphs/errors", h(d.Workers.ReportGraphError))
	r.With(need("worker", "read")).Post("/dispatch/checkpoints/get", h(d.Workers.GetCheckpointRaw))
	r.With(need("worker", "read")).Post("/dispatch/checkpoints/list", h(d.Workers.ListCheckpointsRaw))
	r.With(need("worker", "read")).Post("/dispatch/checkpoints/delta-history", h(d.Workers.GetDeltaHistory))

	r.With(need("store", "update")).Put("/store/items", h(d.Store.Put))
	r.With(need("store", "read")).Get("/store/items", h(d.Store.Get))
	r.With(need("store", "delete")).Delete("/store/items", h(d.Store.Delete))
	r.With(need("store", "search")).Post("/store/items/search", h(d.Store.Search))
	r.With(need("store", "search")).Post("/store/namespaces", h(d.Store.ListNamespaces))

	r.With(need("threads", "search")).Get("/inspect/threads/storage", h(d.Inspect.ThreadStorage))
	r.With(th("read")).Get("/inspect/threads/{thread_id}/checkpoints", h(d.Inspect.Checkpoints))
	r.With(th("read")).Get("/inspect/threads/{thread_id}/checkpoints/{checkpoint_id}", h(d.Inspect.Checkpoint))
	r.With(th("read")).Get("/inspect/threads/{thread_id}/runs", h(d.Inspect.Runs))
	r.With(th("read")).Get("/inspect/threads/{thread_id}/runs/{run_id}", h(d.Inspect.Run))

	// MCP (Streamable HTTP): tools/list is a search of assistants; a
	// tools/call also needs the threads scope (checked by the handler).
	// GET and DELETE /mcp are the router's 405 (Allow: POST): the endpoint
	// is stateless, with no stream to open nor session to end, as MCP's
	// Streamable HTTP transport lets a server answer.
	r.With(d.Security.originGuard, need("assistants", "search")).Post("/mcp", d.MCP.Post)
	// /mcp/: the same endpoint by the name LangGraph's document gives it.
	r.With(d.Security.originGuard, need("assistants", "search")).Post("/mcp/", d.MCP.PostSlash)
	r.With(need("assistants", "search")).Get("/mcp/", d.MCP.GetSlash)
	r.With(need("assistants", "search")).Delete("/mcp/", d.MCP.DeleteSlash)
	r.With(need("assistants", "read")).Get("/.well-known/agent-card.json", h(d.A2A.Card))
	r.With(need("threads", "create_run")).Post("/a2a/{assistant_id}", h(d.A2A.RPC))
	// The card at the endpoint and under it, as LangGraph's server serves
	// it (DELETE /a2a/{assistant_id} is the router's 405, as there).
	r.With(need("assistants", "read")).Get("/a2a/{assistant_id}", h(d.A2A.EndpointCard))
	r.With(need("assistants", "read")).Get("/a2a/{assistant_id}/.well-known/agent-card.json", h(d.A2A.WellKnownCard))
	r.With(need("assistants", "read")).Get("/a2a/{assistant_id}/.well-known/agent.json", h(d.A2A.LegacyWellKnownCard))

	r.Get("/", web.Handler().ServeHTTP)
	r.Get("/ui/*", web.Handler().ServeHTTP)

	return r
}

// routeMethods are the methods a route may serve, in the order an Allow
// header lists them.
var routeMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// resource is the route pattern that serves the path of req: of the
// routes that match it with some method, the most specific one (a literal
// segment before a parameter, a parameter before a wildcard), as a reader of
// the route table reads the path: /threads/{thread_id}/runs/wait, not
// /threads/{thread_id}/runs/{run_id}. methods are the methods it serves;
// pattern is "" when no route matches.
func resource(mux chi.Routes, req *http.Request) (pattern string, methods []string) {
	path := req.URL.RawPath
	if path == "" {
		path = req.URL.Path
	}
	byMethod := make(map[string]string, len(routeMethods))
	for _, m := range routeMethods {
		rctx := chi.NewRouteContext()
		if mux.Match(rctx, m, path) {
			byMethod[m] = rctx.RoutePattern()
			if pattern == "" || moreSpecific(byMethod[m], pattern) {
				pattern = byMethod[m]
			}
		}
	}
	for _, m := range routeMethods {
		if p, ok := byMethod[m]; ok && p == pattern {
			methods = append(methods, m)
			if m == http.MethodGet {
				methods = append(methods, http.MethodHead)
			}
		}
	}
	return pattern, methods
}

// moreSpecific tells whether route pattern a is more specific than b: at
// the first segment where they differ, a literal beats a {parameter} and a
// parameter beats the * wildcard.
func moreSpecific(a, b string) bool {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if ra, rb := segmentRank(as[i]), segmentRank(bs[i]); ra != rb {
			return ra < rb
		}
	}
	return len(as) > len(bs)
}

// segmentRank orders route segments: literal 0, {parameter} 1, * 2.
func segmentRank(seg string) int {
	switch {
	case seg == "*":
		return 2
	case strings.HasPrefix(seg, "{"):
		return 1
	}
	return 0
}

// shadowed answers 405 (with the Allow of the route that serves the path)
// to a request whose method only a less specific route serves. chi routes
// each method on its own, so GET /threads/{id}/runs/wait, a path only the
// POST route /threads/{thread_id}/runs/wait serves, would otherwise reach
// GET /threads/{thread_id}/runs/{run_id} and fail as a bad run id ("wait"),
// and GET /threads/search would reach GET /threads/{thread_id}.
func shadowed(mux chi.Routes) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			method := req.Method
			if method == http.MethodHead {
				method = http.MethodGet // middleware.GetHead serves HEAD from GET
			}
			if !slices.Contains(routeMethods, method) {
				next.ServeHTTP(w, req) // OPTIONS, TRACE, …: no route has them (405 from the router)
				return
			}
			rctx := chi.NewRouteContext()
			path := req.URL.RawPath
			if path == "" {
				path = req.URL.Path
			}
			if !mux.Match(rctx, method, path) || !strings.ContainsAny(rctx.RoutePattern(), "{*") {
				next.ServeHTTP(w, req) // no route (404), or a literal route, which nothing outranks
				return
			}
			pattern, allowed := resource(mux, req)
			if pattern == rctx.RoutePattern() {
				next.ServeHTTP(w, req)
				return
			}
			methodNotAllowed(w, req, allowed)
		})
	}
}

// methodNotAllowed answers 405 with the Allow header the route serving
// the path has.
func methodNotAllowed(w http.ResponseWriter, req *http.Request, allowed []string) {
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	httpx.WriteJSON(w, http.StatusMethodNotAllowed, httpx.ErrorBody{
		Detail: "Method Not Allowed: " + req.Method + " " + req.URL.Path + " accepts " + strings.Join(allowed, ", ")})
}

type system struct {
	db      *pgxpool.Pool
	version string
	log     *slog.Logger
	metrics http.Handler // nil: no metrics
	metaOff bool         // the meta routes are off (Deps.Disabled): /ok checks nothing
	// settings and warnings are GET /info's (Deps.Settings, Deps.Warnings).
	settings []Setting
	warnings []string
	// snapshot is GET /metrics?format=json's (metrics.Metrics.Snapshot).
	snapshot func(ctx context.Context) (*metrics.Snapshot, error)
}

// OK is the body of GET /ok.
type OK struct {
	OK bool `json:"ok" validate:"required" example:"true"`
}

// okPingTimeout bounds the database ping of GET /ok?check_db=1, so a
// readiness probe answers within it even when the database hangs.
const okPingTimeout = 3 * time.Second

// ok godoc
//
//	@Summary		Health check (readiness; liveness with check_db=0)
//	@ID				health_check
//	@Description	Pings the database (readiness): 200 {"ok":true}, or 503 with Retry-After while the database is unreachable or restarting (the server reconnects, and restarts a managed cluster, by itself). check_db=0 skips the ping: the process serves HTTP (liveness, like GET /livez). With the meta routes off (langgraph.json's http.disable_meta) it answers {"ok":true} without any check, as LangGraph's server does.
//	@Tags			system
//	@Produce		json
//	@Param			check_db	query		bool	false	"false (or 0): do not ping the database (default true)"
//	@Success		200			{object}	OK
//	@Failure		422			{object}	httpx.ErrorBody
//	@Failure		503			{object}	httpx.ErrorBody	"database unreachable"
//	@Router			/ok [get]
func (s *system) ok(w http.ResponseWriter, r *http.Request) {
	if s.metaOff {
		httpx.WriteJSON(w, http.StatusOK, OK{OK: true})
		return
	}
	check, err := httpx.QueryBool(r, "check_db", true)
	if err != nil {
		httpx.WriteError(w, r, s.log, err)
		return
	}
	if check {
		ctx, cancel := context.WithTimeout(r.Context(), okPingTimeout)
		defer cancel()
		if err := s.db.Ping(ctx); err != nil {
			if r.Context().Err() != nil {
				return // the client went away
			}
			s.log.Debug("readiness check: database ping failed", "error", err)
			httpx.WriteUnavailable(w, "Database unavailable")
			return
		}
	}
	httpx.WriteJSON(w, http.StatusOK, OK{OK: true})
}

// livez godoc
//
//	@Summary		Liveness
//	@ID				liveness_check
//	@Description	200 while the process serves HTTP; never touches the database (GET /ok is the readiness check).
//	@Tags			system
//	@Produce		json
//	@Success		200	{object}	OK
//	@Router			/livez [get]
func (s *system) livez(w http.ResponseWriter, r *http.Request) {
	httpx.WriteJSON(w, http.StatusOK, OK{OK: true})
}

// Info is the body of GET /info.
type Info struct {
	Version string `json:"version" validate:"required" example:"0.1.0"`
	Flags   Flags  `json:"flags" validate:"required"`
	// GraphErrors are the graphs a worker could not load (its other graphs
	// are served), until a worker registers them; absent when none.
	GraphErrors []GraphError `json:"graph_errors,omitempty"`
	// Graphs are the graphs served: compiled in, or registered by a
	// worker (the start log says "graph registered" for each).
	Graphs []GraphServed `json:"graphs" validate:"required"`
	// Settings are what the server started with and where each came from
	// (the start log lists those not at their default, in these words).
	Settings []Setting `json:"settings" validate:"required"`
	// Warnings are settings read and not applied (an unknown key of
	// langgraph.json, …), as the start log warned of them; absent when
	// none.
	Warnings []string `json:"warnings,omitempty"`
}

// GraphServed is a graph this server runs runs of.
type GraphServed struct {
	GraphID string `json:"graph_id" validate:"required" db:"graph_id"`
	// Source: builtin (compiled into this binary) or worker.
	Source string `json:"source" validate:"required" db:"source" enums:"builtin,worker"`
	// Language: python for the Python worker's graphs (their task ids are
	// Python LangGraph's), empty for Go and LangGraph.js graphs.
	Language string `json:"language" validate:"required" db:"language"`
}

// Setting is one setting the server started with.
type Setting struct {
	// Name is the flag's name (addr, workers, …) or the key of
	// langgraph.json (http.cors, …).
	Name string `json:"name" validate:"required" example:"workers"`
	// Value as given (a URL's password hidden; langgraph.json's values as
	// compact JSON).
	Value string `json:"value" validate:"required"`
	// Source: the flag (-workers), the environment variable (WEFT_WORKERS),
	// default, or the path of langgraph.json.
	Source string `json:"source" validate:"required" example:"WEFT_WORKERS"`
	// Use is what weft dev does with a langgraph.json key: applied, image
	// builds (read by image builds only, as langgraph dev does); empty for
	// the server's own settings.
	Use string `json:"use,omitempty" example:"applied"`
}

// GraphError is a graph a worker could not load.
type GraphError struct {
	GraphID  string `json:"graph_id" validate:"required" db:"graph_id"`
	WorkerID string `json:"worker_id" validate:"required" db:"worker_id"`
	// Error is the first line of why (the worker's log has the whole
	// stack).
	Error      string     `json:"error" validate:"required" db:"error"`
	ReportedAt httpx.Time `json:"reported_at" validate:"required" db:"reported_at"`
}

// Flags say which optional API families this server implements.
type Flags struct {
	Assistants               bool `json:"assistants" validate:"required"`
	Crons                    bool `json:"crons" validate:"required"`
	Langsmith                bool `json:"langsmith" validate:"required"`
	LangsmithTracingReplicas bool `json:"langsmith_tracing_replicas" validate:"required"`
	// MCP: /mcp serves the assistants as MCP tools (Streamable HTTP).
	MCP bool `json:"mcp" validate:"required"`
	// A2A: /a2a/{assistant_id} and /.well-known/agent-card.json serve the
	// A2A protocol (v1.0 and v0.3) for assistants of chat graphs.
	A2A bool `json:"a2a" validate:"required"`
}

// info godoc
//
//	@Summary	Server version and feature flags
//	@ID			server_info
//	@Tags		system
//	@Produce	json
//	@Success	200	{object}	Info
//	@Router		/info [get]
func (s *system) info(w http.ResponseWriter, r *http.Request) {
	info := Info{Version: s.version, Flags: Flags{Assistants: true, Crons: true, MCP: true, A2A: true}}
	rows, err := s.db.Query(r.Context(), `SELECT graph_id, worker_id, split_part(error, E'\n', 1) AS error, reported_at
		FROM graph_load_errors ORDER BY graph_id LIMIT 100`)
	if err == nil {
		info.GraphErrors, err = pgx.CollectRows(rows, pgx.RowToStructByName[GraphError])
	}
	if err == nil {
		rows, err = s.db.Query(r.Context(), `SELECT graph_id, source, language FROM graphs ORDER BY graph_id`)
	}
	if err == nil {
		info.Graphs, err = pgx.CollectRows(rows, pgx.RowToStructByName[GraphServed])
	}
	info.Settings, info.Warnings = s.settings, s.warnings
	if info.Settings == nil {
		info.Settings = []Setting{}
	}
	if err != nil {
		httpx.WriteError(w, r, s.log, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, info)
}

// serveMetrics godoc
//
//	@Summary		Prometheus metrics
//	@ID				system_metrics
//	@Description	This process's metrics in the Prometheus text exposition format (runs by outcome, claim and commit latency, fences, leases, dead letters, webhooks, SSE streams, HTTP requests by route template, the database pool, the queue by state and graph, Go runtime and process). Each replica serves its own: scrape every one. Also served on -metrics-addr when set. docs/operations.md lists the metrics. With format=json, the JSON snapshot LangGraph's server answers (metrics.Snapshot: the database pool, the run queue, this process's in-process workers, HTTP requests by route); another format is a 422.
//	@Tags			system
//	@Produce		plain
//	@Produce		json
//	@Param			format	query		string	false	"prometheus (default) or json"	Enums(prometheus, json)	default(prometheus)
//	@Success		200		{object}	metrics.Snapshot	"text/plain: the Prometheus text format; application/json (format=json): the snapshot"
//	@Failure		422		{object}	httpx.ErrorBody
//	@Router			/metrics [get]
func (s *system) serveMetrics(w http.ResponseWriter, r *http.Request) {
	if s.metrics == nil {
		httpx.WriteJSON(w, http.StatusNotFound, httpx.ErrorBody{Detail: "Metrics are off"})
		return
	}
	if format, err := httpx.QueryEnum(r, "format", "prometheus", "prometheus", "json"); err != nil || format == "json" {
		s.serveMetricsJSON(w, r, err) // metrics_json.go
		return
	}
	s.metrics.ServeHTTP(w, r)
}
