package mcp

import (
	"net/http"

	"github.com/weftdev/weft/internal/httpx"
)

// /mcp/ is /mcp with the trailing slash LangGraph's server's document
// names it by: POST is the endpoint; GET and DELETE answer as /mcp answers
// them, 405 with Allow: POST (stateless: no stream to open, no session to
// end).

// PostSlash godoc
//
//	@Summary		MCP: send a JSON-RPC message (/mcp/)
//	@ID				post_mcp_slash
//	@Description	POST /mcp, at the path with a trailing slash (LangGraph's server's name of the endpoint): the same endpoint, answers and scopes.
//	@Tags			mcp
//	@Accept			json
//	@Produce		json
//	@Produce		text/event-stream
//	@Param			body	body		Message	true	"JSON-RPC request, notification or response"
//	@Success		200		{object}	Response
//	@Success		202		"a notification or response was accepted (no body)"
//	@Failure		400		{object}	httpx.ErrorBody	"not a JSON-RPC message this endpoint takes, or an Accept header without application/json and text/event-stream"
//	@Failure		401		{object}	httpx.ErrorBody
//	@Failure		403		{object}	httpx.ErrorBody
//	@Failure		415		{object}	httpx.ErrorBody	"Content-Type is not application/json"
//	@Failure		422		{object}	httpx.ErrorBody	"a JSON-RPC field given twice or in another case (\"Method\")"
//	@Router			/mcp/ [post]
func (h *Handler) PostSlash(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }

// GetSlash godoc
//
//	@Summary		MCP: open a stream (not offered)
//	@ID				get_mcp_slash
//	@Description	405 with Allow: POST, as GET /mcp: the endpoint is stateless and offers no server-initiated stream (MCP's Streamable HTTP transport lets a server answer so).
//	@Tags			mcp
//	@Produce		json
//	@Failure		405	{object}	httpx.ErrorBody	"no stream is offered"
//	@Router			/mcp/ [get]
func (h *Handler) GetSlash(w http.ResponseWriter, r *http.Request) { postOnly(w, r) }

// DeleteSlash godoc
//
//	@Summary		MCP: end a session (none)
//	@ID				delete_mcp_slash
//	@Description	405 with Allow: POST, as DELETE /mcp: the endpoint is stateless and issues no session to end.
//	@Tags			mcp
//	@Produce		json
//	@Failure		405	{object}	httpx.ErrorBody	"there is no session"
//	@Router			/mcp/ [delete]
func (h *Handler) DeleteSlash(w http.ResponseWriter, r *http.Request) { postOnly(w, r) }

// postOnly answers 405 with Allow: POST, as the router answers a method
// /mcp does not serve.
func postOnly(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", http.MethodPost)
	httpx.WriteJSON(w, http.StatusMethodNotAllowed, httpx.ErrorBody{
		Detail: "Method Not Allowed: " + r.Method + " " + r.URL.Path + " accepts POST"})
}
