// Package httpapi assembles Weft's HTTP API: the one route table, the
// middleware (request id, logging, panic recovery, CORS, body limit) and
// the system endpoints (/ok, /info, /openapi.yaml).
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/trace"

	"github.com/weftdev/weft/api"
	"github.com/weftdev/weft/internal/assistants"
	"github.com/weftdev/weft/internal/crons"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/inspect"
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
}

// NewRouter returns the complete HTTP handler. Every route is listed here.
//
//	@title						Weft
//	@version					0.1.0
//	@description				Open, self-hosted thread/run server for LangGraph-style agents, speaking the LangGraph Agent Server REST API.
//	@license.name				Apache-2.0
//	@BasePath					/
func NewRouter(d Deps) http.Handler {
	if d.MaxBody == 0 {
		d.MaxBody = DefaultMaxBody
	}
	s := &system{db: d.DB, version: d.Version, log: d.Log}
	if d.Metrics != nil {
		s.metrics = d.Metrics.Handler(d.Log)
	}
	h := func(fn httpx.HandlerFunc) http.HandlerFunc { return httpx.Handle(d.Log, fn) }
	r := chi.NewRouter()
	// GetHead serves HEAD from the GET route (net/http drops the body).
	r.Use(logRequests(d.Log, d.Metrics, d.Tracer), d.Security.Handler, postOnly, middleware.GetHead, limitBody(d.MaxBody))
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		httpx.WriteJSON(w, http.StatusNotFound, httpx.ErrorBody{Detail: "Not Found"})
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, req *http.Request) {
		allowed := allowedMethods(r, req)
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		httpx.WriteJSON(w, http.StatusMethodNotAllowed, httpx.ErrorBody{
			Detail: "Method Not Allowed: " + req.Method + " " + req.URL.Path + " accepts " + strings.Join(allowed, ", ")})
	})

	r.Get("/ok", s.ok)
	r.Get("/livez", s.livez)
	r.Get("/info", s.info)
	r.Get("/openapi.yaml", s.openapi)
	r.Get("/metrics", s.serveMetrics)

	r.Post("/threads", h(d.Threads.Create))
	r.Post("/threads/search", h(d.Threads.Search))
	r.Post("/threads/count", h(d.Threads.Count))
	r.Post("/threads/prune", h(d.State.Prune))
	r.Get("/threads/{thread_id}", h(d.Threads.Get))
	r.Patch("/threads/{thread_id}", h(d.Threads.Patch))
	r.Delete("/threads/{thread_id}", h(d.Threads.Delete))
	r.Get("/threads/{thread_id}/children", h(d.Threads.Children))
	r.Post("/threads/{thread_id}/copy", h(d.State.Copy))
	r.Get("/threads/{thread_id}/stream", h(d.Streams.ThreadStream))
	r.Post("/threads/{thread_id}/stream/events", h(d.Streams.ProtocolEvents))
	r.Post("/threads/{thread_id}/commands", h(d.Streams.ProtocolCommands))

	r.Get("/threads/{thread_id}/state", h(d.State.GetState))
	r.Post("/threads/{thread_id}/state", h(d.State.UpdateState))
	r.Patch("/threads/{thread_id}/state", h(d.State.PatchState))
	r.Post("/threads/{thread_id}/state/checkpoint", h(d.State.PostStateAt))
	r.Get("/threads/{thread_id}/state/{checkpoint_id}", h(d.State.GetStateAt))
	r.Get("/threads/{thread_id}/history", h(d.State.GetHistory))
	r.Post("/threads/{thread_id}/history", h(d.State.PostHistory))
	r.Get("/threads/{thread_id}/messages", h(d.State.GetMessages))
	r.Post("/threads/{thread_id}/summaries", h(d.State.AddSummary))
	r.Get("/threads/{thread_id}/summaries", h(d.State.ListSummaries))
	r.Delete("/threads/{thread_id}/summaries/{summary_id}", h(d.State.DeleteSummary))

	r.Post("/assistants", h(d.Assistants.Create))
	r.Post("/assistants/search", h(d.Assistants.Search))
	r.Post("/assistants/count", h(d.Assistants.Count))
	r.Get("/assistants/{assistant_id}", h(d.Assistants.Get))
	r.Patch("/assistants/{assistant_id}", h(d.Assistants.Patch))
	r.Delete("/assistants/{assistant_id}", h(d.Assistants.Delete))
	r.Post("/assistants/{assistant_id}/versions", h(d.Assistants.Versions))
	r.Post("/assistants/{assistant_id}/latest", h(d.Assistants.SetLatest))
	r.Get("/assistants/{assistant_id}/graph", h(d.Assistants.Graph))
	r.Get("/assistants/{assistant_id}/schemas", h(d.Assistants.Schemas))
	r.Get("/assistants/{assistant_id}/subgraphs", h(d.Assistants.Subgraphs))
	r.Get("/assistants/{assistant_id}/subgraphs/{namespace}", h(d.Assistants.SubgraphsOf))

	r.Post("/threads/{thread_id}/runs", h(d.Runs.CreateStateful))
	r.Get("/threads/{thread_id}/runs", h(d.Runs.List))
	r.Post("/threads/{thread_id}/runs/wait", h(d.Runs.WaitStateful))
	r.Post("/threads/{thread_id}/runs/stream", h(d.Streams.StreamStateful))
	r.Get("/threads/{thread_id}/runs/{run_id}", h(d.Runs.Get))
	r.Delete("/threads/{thread_id}/runs/{run_id}", h(d.Runs.Delete))
	r.Get("/threads/{thread_id}/runs/{run_id}/join", h(d.Runs.Join))
	r.Get("/threads/{thread_id}/runs/{run_id}/stream", h(d.Streams.JoinStream))
	r.Post("/threads/{thread_id}/runs/{run_id}/cancel", h(d.Runs.Cancel))
	r.Get("/threads/{thread_id}/runs/{run_id}/dispatches", h(d.Runs.RunDispatches))
	r.Post("/runs", h(d.Runs.CreateStateless))
	r.Post("/runs/wait", h(d.Runs.WaitStateless))
	r.Post("/runs/stream", h(d.Streams.StreamStateless))
	r.Get("/runs/{run_id}", h(d.Runs.GetStateless))
	r.Get("/runs/{run_id}/stream", h(d.Streams.JoinStreamStateless))
	r.Post("/runs/batch", h(d.Runs.Batch))
	r.Post("/runs/cancel", h(d.Runs.CancelMany))

	r.Post("/runs/crons", h(d.Crons.CreateStateless))
	r.Post("/runs/crons/search", h(d.Crons.Search))
	r.Post("/runs/crons/count", h(d.Crons.Count))
	r.Get("/runs/crons/{cron_id}", h(d.Crons.Get))
	r.Patch("/runs/crons/{cron_id}", h(d.Crons.Patch))
	r.Delete("/runs/crons/{cron_id}", h(d.Crons.Delete))
	r.Post("/threads/{thread_id}/runs/crons", h(d.Crons.CreateForThread))

	r.Get("/dispatches", h(d.Runs.ListDispatches))
	r.Post("/dispatches/{dispatch_id}/retry", h(d.Runs.RetryDispatch))
	r.Post("/dispatch/claim", h(d.Workers.Claim))
	r.Post("/dispatch/cancellations", h(d.Workers.Cancellations))
	r.Post("/dispatch/{dispatch_id}/heartbeat", h(d.Workers.Heartbeat))
	r.Post("/dispatch/{dispatch_id}/ack", h(d.Workers.Ack))
	r.Post("/dispatch/{dispatch_id}/nack", h(d.Workers.Nack))
	r.Post("/dispatch/{dispatch_id}/commit", h(d.Workers.Commit))
	r.Post("/dispatch/graphs", h(d.Workers.RegisterGraph))
	r.Post("/dispatch/checkpoints/get", h(d.Workers.GetCheckpointRaw))
	r.Post("/dispatch/checkpoints/list", h(d.Workers.ListCheckpointsRaw))
	r.Post("/dispatch/checkpoints/delta-history", h(d.Workers.GetDeltaHistory))

	r.Put("/store/items", h(d.Store.Put))
	r.Get("/store/items", h(d.Store.Get))
	r.Delete("/store/items", h(d.Store.Delete))
	r.Post("/store/items/search", h(d.Store.Search))
	r.Post("/store/namespaces", h(d.Store.ListNamespaces))

	r.Get("/inspect/threads/storage", h(d.Inspect.ThreadStorage))
	r.Get("/inspect/threads/{thread_id}/checkpoints", h(d.Inspect.Checkpoints))
	r.Get("/inspect/threads/{thread_id}/checkpoints/{checkpoint_id}", h(d.Inspect.Checkpoint))
	r.Get("/inspect/threads/{thread_id}/runs", h(d.Inspect.Runs))
	r.Get("/inspect/threads/{thread_id}/runs/{run_id}", h(d.Inspect.Run))

	r.Get("/", web.Handler().ServeHTTP)
	r.Get("/ui/*", web.Handler().ServeHTTP)

	return r
}

// postOnlyPaths are action paths that share their shape with an id route
// (/threads/search and /threads/{thread_id}): routing alone would send a GET
// of them to the id route, to fail as a bad id instead of a 405.
var postOnlyPaths = map[string]bool{"/threads/search": true, "/threads/count": true, "/threads/prune": true,
	"/runs/wait": true, "/runs/stream": true, "/runs/batch": true, "/runs/cancel": true, "/assistants/search": true,
	"/assistants/count": true, "/runs/crons": true, "/runs/crons/search": true, "/runs/crons/count": true}

// postOnly answers 405 (Allow: POST) to any other method on postOnlyPaths.
func postOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if postOnlyPaths[strings.TrimSuffix(req.URL.Path, "/")] && req.Method != http.MethodPost && req.Method != http.MethodOptions {
			w.Header().Set("Allow", http.MethodPost)
			httpx.WriteJSON(w, http.StatusMethodNotAllowed, httpx.ErrorBody{
				Detail: "Method Not Allowed: " + req.Method + " " + req.URL.Path + " accepts POST"})
			return
		}
		next.ServeHTTP(w, req)
	})
}

// allowedMethods lists the methods mux routes for the path of req (for the
// Allow header of a 405), in a fixed order.
func allowedMethods(mux chi.Routes, req *http.Request) []string {
	path := req.URL.RawPath
	if path == "" {
		path = req.URL.Path
	}
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if mux.Match(chi.NewRouteContext(), m, path) {
			allowed = append(allowed, m)
			if m == http.MethodGet {
				allowed = append(allowed, http.MethodHead)
			}
		}
	}
	return allowed
}

type system struct {
	db      *pgxpool.Pool
	version string
	log     *slog.Logger
	metrics http.Handler // nil: no metrics
}

// OK is the body of GET /ok.
type OK struct {
	OK bool `json:"ok" example:"true"`
}

// okPingTimeout bounds the database ping of GET /ok?check_db=1, so a
// readiness probe answers within it even when the database hangs.
const okPingTimeout = 3 * time.Second

// ok godoc
//
//	@Summary		Health check (readiness; liveness with check_db=0)
//	@Description	Pings the database (readiness): 200 {"ok":true}, or 503 with Retry-After while the database is unreachable or restarting (the server reconnects, and restarts a managed cluster, by itself). check_db=0 skips the ping: the process serves HTTP (liveness, like GET /livez).
//	@Tags			system
//	@Produce		json
//	@Param			check_db	query		string	false	"0/false: do not ping the database (default 1)"
//	@Success		200			{object}	OK
//	@Failure		422			{object}	httpx.ErrorBody
//	@Failure		503			{object}	httpx.ErrorBody	"database unreachable"
//	@Router			/ok [get]
func (s *system) ok(w http.ResponseWriter, r *http.Request) {
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
	Version string `json:"version" example:"0.1.0"`
	Flags   Flags  `json:"flags"`
}

// Flags say which optional API families this server implements.
type Flags struct {
	Assistants               bool `json:"assistants"`
	Crons                    bool `json:"crons"`
	Langsmith                bool `json:"langsmith"`
	LangsmithTracingReplicas bool `json:"langsmith_tracing_replicas"`
}

// info godoc
//
//	@Summary	Server version and feature flags
//	@Tags		system
//	@Produce	json
//	@Success	200	{object}	Info
//	@Router		/info [get]
func (s *system) info(w http.ResponseWriter, r *http.Request) {
	httpx.WriteJSON(w, http.StatusOK, Info{Version: s.version, Flags: Flags{Assistants: true, Crons: true}})
}

// openapi godoc
//
//	@Summary	This API's OpenAPI 3 document
//	@Tags		system
//	@Produce	application/yaml
//	@Success	200	{string}	string
//	@Router		/openapi.yaml [get]
func (s *system) openapi(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(api.OpenAPI)
}

// serveMetrics godoc
//
//	@Summary		Prometheus metrics
//	@Description	This process's metrics in the Prometheus text exposition format (runs by outcome, claim and commit latency, fences, leases, dead letters, webhooks, SSE streams, HTTP requests by route template, the database pool, the queue by state and graph, Go runtime and process). Each replica serves its own: scrape every one. Also served on -metrics-addr when set. docs/operations.md lists the metrics.
//	@Tags			system
//	@Produce		plain
//	@Success		200	{string}	string	"Prometheus text format"
//	@Router			/metrics [get]
func (s *system) serveMetrics(w http.ResponseWriter, r *http.Request) {
	if s.metrics == nil {
		httpx.WriteJSON(w, http.StatusNotFound, httpx.ErrorBody{Detail: "Metrics are off"})
		return
	}
	s.metrics.ServeHTTP(w, r)
}
