package a2a

import (
	"net/http"

	"github.com/weftdev/weft/internal/httpx"
)

// The agent card of an assistant at the paths LangGraph's server serves it
// beside /.well-known/agent-card.json?assistant_id=: the assistant's A2A
// endpoint itself (GET, as the A2A specification lets an agent's URL
// answer its card), and the multi-tenant well-known paths under it (the
// current agent-card.json and v0.2's agent.json). DELETE on the endpoint is
// a 405, as there (no session to end).

// EndpointCard godoc
//
//	@Summary		An assistant's A2A agent card, at its endpoint
//	@ID				get_a2a_endpoint_card
//	@Description	The agent card GET /.well-known/agent-card.json?assistant_id= answers, at the assistant's A2A endpoint (as LangGraph's server answers a GET there). DELETE is a 405: there is no session to end.
//	@Tags			a2a
//	@Produce		json
//	@Param			assistant_id	path		string	true	"Assistant ID or graph name"
//	@Success		200				{object}	AgentCard
//	@Failure		400				{object}	httpx.ErrorBody	"the assistant's graph has no messages channel"
//	@Failure		404				{object}	httpx.ErrorBody
//	@Failure		422				{object}	httpx.ErrorBody
//	@Router			/a2a/{assistant_id} [get]
func (h *Handlers) EndpointCard(w http.ResponseWriter, r *http.Request) error {
	return h.writeCard(w, r, httpx.PathParam(r, "assistant_id"))
}

// WellKnownCard godoc
//
//	@Summary		An assistant's A2A agent card (multi-tenant well-known path)
//	@ID				get_a2a_assistant_agent_card
//	@Description	The agent card GET /.well-known/agent-card.json?assistant_id= answers, at the well-known path under the assistant's A2A endpoint.
//	@Tags			a2a
//	@Produce		json
//	@Param			assistant_id	path		string	true	"Assistant ID or graph name"
//	@Success		200				{object}	AgentCard
//	@Failure		400				{object}	httpx.ErrorBody	"the assistant's graph has no messages channel"
//	@Failure		404				{object}	httpx.ErrorBody
//	@Failure		422				{object}	httpx.ErrorBody
//	@Router			/a2a/{assistant_id}/.well-known/agent-card.json [get]
func (h *Handlers) WellKnownCard(w http.ResponseWriter, r *http.Request) error {
	return h.writeCard(w, r, httpx.PathParam(r, "assistant_id"))
}

// LegacyWellKnownCard godoc
//
//	@Summary		An assistant's A2A agent card (A2A v0.2 well-known path)
//	@ID				get_a2a_assistant_agent_json
//	@Description	The agent card at agent.json, the well-known name of A2A v0.2, under the assistant's A2A endpoint.
//	@Tags			a2a
//	@Produce		json
//	@Param			assistant_id	path		string	true	"Assistant ID or graph name"
//	@Success		200				{object}	AgentCard
//	@Failure		400				{object}	httpx.ErrorBody	"the assistant's graph has no messages channel"
//	@Failure		404				{object}	httpx.ErrorBody
//	@Failure		422				{object}	httpx.ErrorBody
//	@Router			/a2a/{assistant_id}/.well-known/agent.json [get]
func (h *Handlers) LegacyWellKnownCard(w http.ResponseWriter, r *http.Request) error {
	return h.writeCard(w, r, httpx.PathParam(r, "assistant_id"))
}
