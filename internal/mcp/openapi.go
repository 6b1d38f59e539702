package mcp

import "net/http"

// Message is one JSON-RPC 2.0 message of MCP sent to /mcp (a request, a
// notification or a response): the OpenAPI document's view of the body,
// which cmd/openapi-gen replaces with the forms checkEnvelope takes (of
// Methods); the MCP specification (Streamable HTTP transport) is the
// contract.
type Message struct {
	JSONRPC string `json:"jsonrpc" example:"2.0" validate:"required" enums:"2.0"`
	// ID is the request's id, a string or a number (absent in a
	// notification).
	ID     any            `json:"id,omitempty"`
	Method string         `json:"method" example:"tools/call" validate:"required" minLength:"1"`
	Params map[string]any `json:"params,omitempty"`
}

// Response is the JSON-RPC 2.0 answer to a request: result or error.
type Response struct {
	JSONRPC string         `json:"jsonrpc" example:"2.0" validate:"required"`
	ID      any            `json:"id"`
	Result  map[string]any `json:"result,omitempty"`
	Error   *ResponseError `json:"error,omitempty"`
}

// ResponseError is a JSON-RPC error (-32602 an unknown tool or a bad
// cursor, -32603 a server failure).
type ResponseError struct {
	Code    int    `json:"code" example:"-32602" validate:"required"`
	Message string `json:"message" example:"Unknown tool: \"nope\"" validate:"required"`
	Data    any    `json:"data,omitempty"`
}

// Post godoc
//
//	@Summary		MCP: send a JSON-RPC message (Streamable HTTP)
//	@ID				post_mcp
//	@Description	The Model Context Protocol endpoint (docs/mcp.md): each assistant of the caller's tenant is a tool (name from the assistant's name, description, inputSchema from its graph's input schema); tools/call runs the assistant (a stateless run, waited for) and returns its output as structuredContent and text, a failed run as a result with isError. initialize, ping, tools/list (paged: nextCursor) and tools/call are answered; a notification or a client response is a 202 without a body; a message of another form (an unknown method, a request without an id, a notification with one, params that are no object, a batch) is a 400. Stateless: no Mcp-Session-Id is issued. The answer is application/json, but text/event-stream (SSE, one "message" event with the response, after any progress notifications) for tools/call; the client must accept both. Needs the assistants scope, and for tools/call the threads scope too.
//	@Tags			mcp
//	@Accept			json
//	@Produce		json
//	@Produce		text/event-stream
//	@Param			body	body		Message	true	"JSON-RPC request, notification or response"
//	@Success		200		{object}	Response
//	@Success		202		"a notification or response was accepted (no body)"
//	@Failure		400		{object}	httpx.ErrorBody	"not a JSON-RPC message this endpoint takes (an unknown method, a request without an id, a notification with one, params that are no object, a batch), or an Accept header without application/json and text/event-stream"
//	@Failure		401		{object}	httpx.ErrorBody
//	@Failure		403		{object}	httpx.ErrorBody
//	@Failure		415		{object}	httpx.ErrorBody	"Content-Type is not application/json"
//	@Failure		422		{object}	httpx.ErrorBody	"a JSON-RPC field given twice or in another case (\"Method\")"
//	@Router			/mcp [post]
func (h *Handler) Post(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }
