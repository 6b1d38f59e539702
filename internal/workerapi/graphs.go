package workerapi

import (
	"context"
	"net/http"
	"regexp"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/assistants"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/postgres"
)

// GraphRegistration is the body of POST /dispatch/graphs: one graph a
// worker serves, described the way the assistant routes answer for it.
type GraphRegistration struct {
	// GraphID is the graph's id (the key of langgraph.json's "graphs").
	GraphID string `json:"graph_id" validate:"required" example:"agent"`
	// WorkerID names the registering worker (for the log).
	WorkerID string `json:"worker_id" example:"js-worker-1"`
	// Drawable is the graph drawn without subgraphs: {nodes: [{id, type,
	// data?}], edges: [{source, target, conditional?}]}, as LangGraph's
	// drawable graph serialises; its node ids (other than __start__ and
	// __end__) are the graph's nodes.
	Drawable map[string]any `json:"drawable" validate:"required" swaggertype:"object"`
	// XrayDrawables are the drawings with subgraphs expanded, element i to
	// depth i + 1 (empty without subgraphs).
	XrayDrawables []any `json:"xray_drawables" swaggertype:"array,object"`
	// Subgraphs maps subgraph namespaces to their schemas.
	Subgraphs     map[string]assistants.SubgraphSchemas `json:"subgraphs"`
	InputSchema   any                                   `json:"input_schema" swaggertype:"object"`
	OutputSchema  any                                   `json:"output_schema" swaggertype:"object"`
	StateSchema   any                                   `json:"state_schema" swaggertype:"object"`
	ConfigSchema  any                                   `json:"config_schema" swaggertype:"object"`
	ContextSchema any                                   `json:"context_schema" swaggertype:"object"`
	// ChannelDefaults are what state channels read as while unset, as the
	// graph's runtime defines them (LangGraph.js: a fresh channel's value,
	// e.g. [] for a list with a reducer and a default); only channels that
	// have one. State reads of the graph show them, as LangGraph's do.
	ChannelDefaults map[string]any `json:"channel_defaults" swaggertype:"object"`
	// ChannelKinds marks the state channels the graph's runtime keeps as
	// LangGraph delta channels (DeltaChannel, MessagesDeltaValue: only
	// writes and periodic snapshots stored): "delta:messages" when the
	// reducer is messagesDeltaReducer (state reads rebuild it from the
	// writes along the parent chain), "delta" for any other reducer (reads
	// show a {"__weft_unresolved__": "delta_channel"} marker for it). Absent
	// or {}: none.
	ChannelKinds map[string]string `json:"channel_kinds,omitempty"`
	// Config and Context are what the graph's system assistant starts
	// with when it is created here (LangGraph's server takes them from
	// LANGGRAPH_CONFIG); an existing system assistant keeps its own.
	Config  map[string]any `json:"config,omitempty" swaggertype:"object"`
	Context map[string]any `json:"context,omitempty" swaggertype:"object"`
	// Language is the graph's runtime: "python" for Python LangGraph
	// (weft_worker), whose task ids Weft then derives Python's way
	// (xxh3-128); "js" for LangGraph.js (weft-worker); absent or "" for a
	// Go worker's. State reads of its threads are shaped as the official
	// server of its language answers them (Weft's own superset for "").
	Language string `json:"language,omitempty" enums:"js,python" example:"python"`
}

// GraphRegistered is the answer to a graph registration.
type GraphRegistered struct {
	GraphID string `json:"graph_id" validate:"required"`
	// AssistantID is the graph's system assistant (created when missing).
	AssistantID uuid.UUID `json:"assistant_id" validate:"required"`
	// Nodes are the graph's node names, as run creation checks them
	// (interrupt_before, interrupt_after, command.goto).
	Nodes []string `json:"nodes" validate:"required"`
}

// graphIDPattern is what a worker may call a graph: a langgraph.json key
// without spaces, slashes or control characters.
var graphIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:\-]{0,127}$`)

// RegisterGraph godoc
//
//	@Summary		Register a graph an external worker serves (worker API)
//	@ID				register_graph
//	@Description	Adds the graph to the catalog (or replaces its entry) with its drawing and JSON Schemas, so /assistants/{id}/graph, /schemas and /subgraphs answer for it, and creates its system assistant. Runs of the graph are then accepted, queued and claimed only by workers that name it in graph_ids; the in-process pool never claims them. Idempotent: every worker serving the graph registers it at start. A graph id compiled into this server is refused with 409.
//	@Tags			worker
//	@Accept			json
//	@Produce		json
//	@Param			body	body		GraphRegistration	true	"Graph"
//	@Success		200		{object}	GraphRegistered
//	@Failure		409		{object}	httpx.ErrorBody
//	@Failure		422		{object}	httpx.ErrorBody
//	@Router			/dispatch/graphs [post]
func (h *Handlers) RegisterGraph(w http.ResponseWriter, r *http.Request) error {
	var req GraphRegistration
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	out, err := h.registerGraph(r.Context(), &req)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// registerGraph validates a worker's graph and stores it in the catalog
// with its system assistant.
func (h *Handlers) registerGraph(ctx context.Context, req *GraphRegistration) (*GraphRegistered, error) {
	if !graphIDPattern.MatchString(req.GraphID) {
		return nil, apperr.Errorf(apperr.Invalid, "Invalid graph_id %q: 1 to 128 letters, digits, '_', '.', ':' or '-', starting with a letter or digit", req.GraphID)
	}
	if _, err := uuid.Parse(req.GraphID); err == nil {
		return nil, apperr.Errorf(apperr.Invalid, "Invalid graph_id %q: a UUID would read as an assistant id", req.GraphID)
	}
	if _, builtin := h.graphs.Lookup(req.GraphID); builtin {
		return nil, apperr.Errorf(apperr.Conflict, "Graph %q is compiled into this server; a worker cannot register it "+
			"(the built-in demo graphs foo_bar, echo_chat, hitl, hitl_chat and slow are left out with -builtin-graphs false or WEFT_BUILTIN_GRAPHS=false)", req.GraphID)
	}
	language := req.Language
	switch language {
	case "", graph.LanguageJS, graph.LanguagePython:
	default:
		return nil, apperr.Errorf(apperr.Invalid, "Invalid language %q: \"js\" or \"python\"", req.Language)
	}
	nodes, err := assistants.DrawableNodes(req.Drawable)
	if err != nil {
		return nil, err
	}
	info := assistants.GraphInfo{GraphID: req.GraphID, Drawable: req.Drawable, XrayDrawables: req.XrayDrawables,
		Subgraphs: req.Subgraphs, Source: assistants.SourceWorker, ChannelDefaults: req.ChannelDefaults, ChannelKinds: req.ChannelKinds, Language: language,
		Schemas: assistants.SubgraphSchemas{InputSchema: req.InputSchema, OutputSchema: req.OutputSchema,
			StateSchema: req.StateSchema, ConfigSchema: req.ConfigSchema, ContextSchema: req.ContextSchema}}
	// The graph and its system assistant together: a graph whose system
	// id another assistant holds is refused (409) and nothing of it is
	// stored; a reader never sees the assistant without the graph. The
	// system assistant starts with the project's config and context
	// (LANGGRAPH_CONFIG), as on LangGraph's server.
	err = postgres.WithTx(ctx, h.db, func(tx pgx.Tx) error {
		if err := assistants.GraphUpsert(ctx, tx, info); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM graph_load_errors WHERE graph_id = $1`, req.GraphID); err != nil {
			return err
		}
		if err := assistants.EnsureSystem(ctx, tx, []string{req.GraphID},
			map[string]assistants.SystemDefaults{req.GraphID: {Config: req.Config, Context: req.Context}}); err != nil {
			return err
		}
		if h.descriptions == nil {
			return nil
		}
		var description *string
		if d, ok := h.descriptions[req.GraphID]; ok {
			description = &d
		}
		return assistants.SetSystemDescription(ctx, tx, req.GraphID, description)
	})
	if err != nil {
		return nil, err
	}
	h.assistants.ForgetWorkerGraph(req.GraphID)
	h.log.Info("worker graph registered", "graph_id", req.GraphID, "worker", req.WorkerID, "nodes", len(nodes))
	return &GraphRegistered{GraphID: req.GraphID, AssistantID: assistants.SystemID(req.GraphID), Nodes: nodes}, nil
}

// GraphLoadError is the body of POST /dispatch/graphs/errors: a graph of
// the worker's config it could not load.
type GraphLoadError struct {
	GraphID  string `json:"graph_id" validate:"required" example:"agent"`
	WorkerID string `json:"worker_id" example:"js-worker-1"`
	// Error says why: the import's exception, or what the export is
	// instead of a graph (at most MaxGraphErrorBytes are kept).
	Error string `json:"error" validate:"required" example:"Error: Cannot find module 'openai'"`
}

// MaxGraphErrorBytes bounds a stored load error (a stack trace is cut).
const MaxGraphErrorBytes = 8 << 10

// ReportGraphError godoc
//
//	@Summary		Report a graph a worker could not load (worker API)
//	@ID				report_graph_error
//	@Description	The worker serves its other graphs; GET /info lists this one under graph_errors (its error's first line) until a worker registers the graph.
//	@Tags			worker
//	@Accept			json
//	@Param			body	body	GraphLoadError	true	"The graph and why"
//	@Success		204
//	@Failure		422	{object}	httpx.ErrorBody
//	@Router			/dispatch/graphs/errors [post]
func (h *Handlers) ReportGraphError(w http.ResponseWriter, r *http.Request) error {
	var req GraphLoadError
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	if !graphIDPattern.MatchString(req.GraphID) {
		return apperr.Errorf(apperr.Invalid, "Invalid graph_id %q: 1 to 128 letters, digits, '_', '.', ':' or '-', starting with a letter or digit", req.GraphID)
	}
	if strings.Trim(req.Error, blank) == "" {
		return apperr.Errorf(apperr.Invalid, "error must say why the graph did not load")
	}
	msg := strings.ToValidUTF8(req.Error, "\uFFFD")
	if len(msg) > MaxGraphErrorBytes {
		msg = strings.ToValidUTF8(msg[:MaxGraphErrorBytes], "")
	}
	msg = strings.ReplaceAll(msg, "\x00", "")
	_, err := h.db.Exec(r.Context(), `INSERT INTO graph_load_errors (graph_id, worker_id, error) VALUES ($1, $2, $3)
		ON CONFLICT (graph_id) DO UPDATE SET worker_id = EXCLUDED.worker_id, error = EXCLUDED.error, reported_at = now()`,
		req.GraphID, req.WorkerID, msg)
	if err != nil {
		return err
	}
	h.log.Error("worker graph failed to load", "graph_id", req.GraphID, "worker", req.WorkerID, "error", firstLine(msg))
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}
