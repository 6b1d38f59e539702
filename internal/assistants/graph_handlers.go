package assistants

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/httpx"
)

// xrayFull asks for every level of subgraphs (xray=true).
const xrayFull = -1

// parseXray reads the xray query parameter: absent or false → 0 (no
// subgraphs drawn), true → xrayFull, a positive integer → that depth; an
// integer <= 0 or anything else is a 422.
func parseXray(r *http.Request) (int, error) {
	s, ok := httpx.QueryValue(r, "xray")
	switch {
	case !ok, s == "false", s == "False":
		return 0, nil
	case s == "true", s == "True":
		return xrayFull, nil
	case xrayDepth.MatchString(s):
		return strconv.Atoi(s)
	}
	return 0, apperr.Errorf(apperr.Invalid, "Invalid query parameter xray %q: must be true, false or a positive integer", s)
}

// xrayDepth is a depth xray may give (api/openapi.yaml states the same
// pattern).
var xrayDepth = regexp.MustCompile(`^[1-9][0-9]{0,8}$`)

// Drawable is a graph drawing as GET /assistants/{id}/graph returns it.
type Drawable struct {
	Nodes []DrawableNode `json:"nodes" validate:"required"`
	Edges []DrawableEdge `json:"edges" validate:"required"`
}

// DrawableNode is a node of a Drawable (START and END included, as
// "__start__" and "__end__").
type DrawableNode struct {
	ID       string `json:"id" validate:"required"`
	Type     string `json:"type" validate:"required" enums:"runnable,schema"`
	Data     any    `json:"data" validate:"required" swaggertype:"object"`
	Metadata any    `json:"metadata,omitempty" swaggertype:"object"`
}

// DrawableEdge is an edge of a Drawable.
type DrawableEdge struct {
	Source      string `json:"source" validate:"required"`
	Target      string `json:"target" validate:"required"`
	Data        any    `json:"data,omitempty" swaggertype:"object"`
	Conditional bool   `json:"conditional,omitempty"`
}

// Graph godoc
//
//	@Summary		Draw an assistant's graph
//	@ID				get_assistant_graph
//	@Description	The graph's nodes (with __start__ and __end__) and edges, from the graph catalog. xray=true or a positive depth expands subgraphs; a graph without subgraphs draws the same.
//	@Tags			assistants
//	@Produce		json
//	@Param			assistant_id	path		string	true	"Assistant ID or graph name"
//	@Param			xray			query		string	false	"true, false or a positive integer depth"	default(false)
//	@Success		200				{object}	Drawable
//	@Failure		404				{object}	httpx.ErrorBody
//	@Failure		422				{object}	httpx.ErrorBody
//	@Router			/assistants/{assistant_id}/graph [get]
func (h *Handlers) Graph(w http.ResponseWriter, r *http.Request) error {
	depth, err := parseXray(r)
	if err != nil {
		return err
	}
	g, err := graphOfAssistant(r.Context(), h.store.db, httpx.PathParam(r, "assistant_id"))
	if err != nil {
		return err
	}
	drawing := g.Drawable
	var xray []json.RawMessage
	if err := json.Unmarshal(g.XrayDrawables, &xray); err != nil {
		return err
	}
	if depth != 0 && len(xray) > 0 {
		if depth == xrayFull || depth > len(xray) {
			depth = len(xray)
		}
		drawing = xray[depth-1]
	}
	writeRaw(w, drawing)
	return nil
}

// writeRaw answers 200 with JSON that is already encoded.
func writeRaw(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// GraphSchemas is the body of GET /assistants/{id}/schemas.
type GraphSchemas struct {
	GraphID       string          `json:"graph_id" validate:"required"`
	InputSchema   json.RawMessage `json:"input_schema" validate:"required" swaggertype:"object" extensions:"x-nullable"`
	OutputSchema  json.RawMessage `json:"output_schema" validate:"required" swaggertype:"object" extensions:"x-nullable"`
	StateSchema   json.RawMessage `json:"state_schema" validate:"required" swaggertype:"object" extensions:"x-nullable"`
	ConfigSchema  json.RawMessage `json:"config_schema" validate:"required" swaggertype:"object" extensions:"x-nullable"`
	ContextSchema json.RawMessage `json:"context_schema" validate:"required" swaggertype:"object" extensions:"x-nullable"`
}

// orNull keeps a NULL column a JSON null.
func orNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

// Schemas godoc
//
//	@Summary		An assistant's graph schemas
//	@ID				get_assistant_schemas
//	@Description	The JSON Schemas of the graph's input, output and state (one property per state channel, none required), of config.configurable and of the context, from the graph catalog.
//	@Tags			assistants
//	@Produce		json
//	@Param			assistant_id	path		string	true	"Assistant ID or graph name"
//	@Success		200				{object}	GraphSchemas
//	@Failure		404				{object}	httpx.ErrorBody
//	@Failure		422				{object}	httpx.ErrorBody
//	@Router			/assistants/{assistant_id}/schemas [get]
func (h *Handlers) Schemas(w http.ResponseWriter, r *http.Request) error {
	g, err := graphOfAssistant(r.Context(), h.store.db, httpx.PathParam(r, "assistant_id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, GraphSchemas{GraphID: g.GraphID, InputSchema: orNull(g.InputSchema),
		OutputSchema: orNull(g.OutputSchema), StateSchema: orNull(g.StateSchema),
		ConfigSchema: orNull(g.ConfigSchema), ContextSchema: orNull(g.ContextSchema)})
	return nil
}

// Subgraphs godoc
//
//	@Summary		An assistant's subgraphs
//	@ID				get_assistant_subgraphs
//	@Description	The schemas of the graph's subgraphs by namespace ({} for a graph without subgraphs). recurse=true includes nested subgraphs (namespaces joined with "|").
//	@Tags			assistants
//	@Produce		json
//	@Param			assistant_id	path		string	true	"Assistant ID or graph name"
//	@Param			recurse			query		boolean	false	"Include nested subgraphs"	default(false)
//	@Success		200				{object}	map[string]SubgraphSchemas
//	@Failure		404				{object}	httpx.ErrorBody
//	@Failure		422				{object}	httpx.ErrorBody
//	@Router			/assistants/{assistant_id}/subgraphs [get]
func (h *Handlers) Subgraphs(w http.ResponseWriter, r *http.Request) error {
	return h.subgraphs(w, r, "")
}

// SubgraphsOf godoc
//
//	@Summary		An assistant's subgraphs under a namespace
//	@ID				get_assistant_subgraphs_by_namespace
//	@Description	The schemas of the subgraph at namespace ({} when there is none); recurse=true includes the subgraphs nested in it.
//	@Tags			assistants
//	@Produce		json
//	@Param			assistant_id	path		string	true	"Assistant ID or graph name"
//	@Param			namespace		path		string	true	"Subgraph namespace"
//	@Param			recurse			query		boolean	false	"Include nested subgraphs"	default(false)
//	@Success		200				{object}	map[string]SubgraphSchemas
//	@Failure		404				{object}	httpx.ErrorBody
//	@Failure		422				{object}	httpx.ErrorBody
//	@Router			/assistants/{assistant_id}/subgraphs/{namespace} [get]
func (h *Handlers) SubgraphsOf(w http.ResponseWriter, r *http.Request) error {
	return h.subgraphs(w, r, httpx.PathParam(r, "namespace"))
}

func (h *Handlers) subgraphs(w http.ResponseWriter, r *http.Request, namespace string) error {
	recurse, err := httpx.QueryBool(r, "recurse", false)
	if err != nil {
		return err
	}
	g, err := graphOfAssistant(r.Context(), h.store.db, httpx.PathParam(r, "assistant_id"))
	if err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(g.Subgraphs, &all); err != nil {
		return err
	}
	out := map[string]json.RawMessage{}
	for ns, schemas := range all {
		var keep bool
		if namespace == "" {
			keep = recurse || !strings.Contains(ns, "|")
		} else {
			keep = ns == namespace || recurse && strings.HasPrefix(ns, namespace+"|")
		}
		if keep {
			out[ns] = schemas
		}
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}
