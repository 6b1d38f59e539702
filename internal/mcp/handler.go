package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weftdev/weft/internal/assistants"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/runs"
)

// DefaultPageSize is how many tools one tools/list page holds.
const DefaultPageSize = 100

// maxAssistants bounds the assistants one request reads to name the tools
// (a tenant with more lists the oldest maxAssistants).
const maxAssistants = 10000

// Config is what the MCP endpoint serves.
type Config struct {
	Assistants *assistants.Store
	Runs       *runs.Service
	Log        *slog.Logger
	// Version is the server's version, in the initialize result's
	// serverInfo.
	Version string
	// PageSize is the number of tools a tools/list page holds (0:
	// DefaultPageSize).
	PageSize int
	// AuthOn says credentials are checked: tools/call then needs the
	// threads scope (the route itself needs assistants).
	AuthOn bool
	// Authorize is the authorize hook of an embedding program (nil: none),
	// asked about each tools/call as ("threads", "create_run"), as for POST
	// /runs/wait.
	Authorize auth.AuthorizeFunc
}

// Handler serves /mcp: the MCP Streamable HTTP transport, stateless.
type Handler struct {
	cfg    Config
	server *sdk.Server
	// jsonH answers with one JSON body, sseH with an SSE stream (a
	// tools/call, so that progress can be sent while the run executes).
	jsonH, sseH *sdk.StreamableHTTPHandler
}

// New returns the /mcp handler.
func New(cfg Config) *Handler {
	if cfg.PageSize <= 0 {
		cfg.PageSize = DefaultPageSize
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	h := &Handler{cfg: cfg}
	h.server = sdk.NewServer(&sdk.Implementation{Name: "weft", Title: "Weft", Version: cfg.Version}, &sdk.ServerOptions{
		Instructions: "Each tool is an assistant (an agent) of this Weft server; calling it runs the assistant once, " +
			"on a new thread, with the arguments as the run's input, and returns the run's output.",
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: false}},
	})
	// Tools are the caller's tenant's assistants, read per request: the
	// middleware answers tools/list and tools/call itself, the SDK
	// everything else (initialize, ping, errors, the transport).
	h.server.AddReceivingMiddleware(h.tools)
	get := func(*http.Request) *sdk.Server { return h.server }
	opts := sdk.StreamableHTTPOptions{
		Stateless: true,
		Logger:    cfg.Log,
		// Weft's own Host policy (httpapi.Security) already guards
		// loopback listeners, and is configurable; the SDK's would refuse
		// the hosts an operator allowed.
		DisableLocalhostProtection: true,
		// The router's body limit applies; the SDK's 4 MiB default would
		// be a second, different one.
		MaxRequestBodyBytes: -1,
	}
	jsonOpts := opts
	jsonOpts.JSONResponse = true
	h.jsonH = sdk.NewStreamableHTTPHandler(get, &jsonOpts)
	h.sseH = sdk.NewStreamableHTTPHandler(get, &opts)
	return h
}

// ServeHTTP serves POST (one JSON-RPC message, its envelope checked by
// checkEnvelope), GET and DELETE (405: the endpoint is stateless, it keeps
// no session to stream on or end; the router sends them its own 405).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	dw := &detailWriter{ResponseWriter: w}
	defer dw.finish()
	h.serve(dw, r)
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Body == nil {
		h.jsonH.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			httpx.WriteJSON(w, http.StatusRequestEntityTooLarge, httpx.ErrorBody{Detail: "Request body too large"})
			return
		}
		httpx.WriteJSON(w, http.StatusBadRequest, httpx.ErrorBody{Detail: "Failed to read the request body"})
		return
	}
	if err := httpx.CheckFieldNames(body, (*rpcMessage)(nil)); err != nil {
		httpx.WriteJSON(w, http.StatusUnprocessableEntity, httpx.ErrorBody{Detail: err.Error()})
		return
	}
	if err := checkEnvelope(body); err != nil {
		httpx.WriteJSON(w, http.StatusBadRequest, httpx.ErrorBody{Detail: "Invalid JSON-RPC message: " + err.Error()})
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if isToolCall(body) {
		// The SDK keeps the request context's values for the handler, not
		// its end: carry the request itself, so that a client that goes
		// away cancels its call (and the call's run).
		h.sseH.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestKey{}, r.Context())))
		return
	}
	h.jsonH.ServeHTTP(w, r)
}

// rpcMessage names the JSON-RPC fields this handler and the SDK read: a
// duplicate or a case variant of one is a 422, as on every route
// (httpx.DecodeJSON), so what a proxy reads is what runs. The arguments'
// keys are the client's data.
type rpcMessage struct {
	JSONRPC any `json:"jsonrpc"`
	ID      any `json:"id"`
	Method  any `json:"method"`
	Params  *struct {
		Name      any            `json:"name"`
		Arguments map[string]any `json:"arguments"`
		Cursor    any            `json:"cursor"`
		Meta      any            `json:"_meta"`
	} `json:"params"`
}

// requestKey carries the HTTP request's context into a tools/call.
type requestKey struct{}

// withRequest returns ctx, done also when the HTTP request that carried the
// call is (its client went away).
func withRequest(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if rc, ok := ctx.Value(requestKey{}).(context.Context); ok {
		stop := context.AfterFunc(rc, cancel)
		return ctx, func() { stop(); cancel() }
	}
	return ctx, cancel
}

// isToolCall tells whether body is a tools/call request (not a batch).
func isToolCall(body []byte) bool {
	var m struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &m) == nil && m.Method == "tools/call"
}

// tools is the receiving middleware that serves tools/list and tools/call
// from the tenant of the request's context.
func (h *Handler) tools(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		switch r := req.(type) {
		case *sdk.ListToolsRequest:
			return h.listTools(ctx, r)
		case *sdk.CallToolRequest:
			return h.callTool(ctx, r)
		}
		return next(ctx, method, req)
	}
}
