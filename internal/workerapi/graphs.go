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
	"github.com/weftdev/weft/internal/wire"
)

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
//	@Param			body	body		wire.GraphRegistration	true	"Graph"
//	@Success		200		{object}	wire.GraphRegistered
//	@Failure		409		{object}	httpx.ErrorBody
//	@Failure		422		{object}	httpx.ErrorBody
//	@Router			/dispatch/graphs [post]
func (h *Handlers) RegisterGraph(w http.ResponseWriter, r *http.Request) error {
	var req wire.GraphRegistration
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
func (h *Handlers) registerGraph(ctx context.Context, req *wire.GraphRegistration) (*wire.GraphRegistered, error) {
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
	h.log.Info("graph registered", "graph_id", req.GraphID, "source", assistants.SourceWorker, "worker", req.WorkerID, "nodes", len(nodes))
	return &wire.GraphRegistered{GraphID: req.GraphID, AssistantID: assistants.SystemID(req.GraphID), Nodes: nodes}, nil
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
//	@Param			body	body	wire.GraphLoadError	true	"The graph and why"
//	@Success		204
//	@Failure		422	{object}	httpx.ErrorBody
//	@Router			/dispatch/graphs/errors [post]
func (h *Handlers) ReportGraphError(w http.ResponseWriter, r *http.Request) error {
	var req wire.GraphLoadError
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
	h.log.Error("graph failed to load", "graph_id", req.GraphID, "worker", req.WorkerID, "error", firstLine(msg))
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}
