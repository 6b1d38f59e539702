package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/runs"
)

// progressEvery is how often a tools/call that asked for progress (a
// progressToken) hears that its run still executes; on an SSE response it
// also keeps proxies from closing an idle connection.
const progressEvery = 5 * time.Second

// callTool answers tools/call: a stateless run of the tool's assistant with
// the arguments as its input, through the runs service (dispatched,
// stored, streamed and shown as any run), waited for. A run that fails, and
// input the run refuses, are tool errors (isError), which the model reads;
// an unknown tool is a JSON-RPC invalid-params error.
func (h *Handler) callTool(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	ctx, cancel := withRequest(ctx)
	defer cancel()
	name := req.Params.Name
	if msg := h.forbidden(ctx); msg != "" {
		return toolError(msg), nil
	}
	input, err := arguments(req.Params.Arguments)
	if err != nil {
		return toolError(err.Error()), nil
	}
	all, err := h.directory(ctx)
	if err != nil {
		return nil, h.internal(ctx, "call tool", err)
	}
	var t *tool
	for i := range all {
		if all[i].name == name {
			t = &all[i]
			break
		}
	}
	if t == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("Unknown tool: %q", name)}
	}
	run, err := h.cfg.Runs.Create(ctx, uuid.Nil, &runs.CreateRequest{
		AssistantID: t.entry.AssistantID.String(), Input: input,
		Metadata: map[string]any{"mcp_tool": name}, OnDisconnect: "cancel"})
	if err != nil {
		if apperr.CodeOf(err) != "" {
			return toolError(err.Error()), nil
		}
		return nil, h.internal(ctx, "call tool: create run", err)
	}
	log := h.cfg.Log.With("tool", name, "run_id", run.RunID, "thread_id", run.ThreadID)
	// The client going away (or cancelling the request) cancels the run.
	done := h.cfg.Runs.CancelOnDisconnect(ctx, run, true)
	stop := h.progress(ctx, req, run)
	final, err := h.cfg.Runs.Join(ctx, run.ThreadID, run.RunID)
	stop()
	done(ctx.Err() != nil)
	switch {
	case apperr.CodeOf(err) == apperr.NotFound:
		return toolError("The run was rolled back"), nil
	case err != nil:
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		log.ErrorContext(ctx, "mcp: wait for run", "error", err)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "waiting for the run failed"}
	}
	body, err := h.cfg.Runs.Result(ctx, final)
	if final.Temporary {
		h.cfg.Runs.DeleteTemporaryLater(ctx, final)
	}
	if err != nil {
		return nil, h.internal(ctx, "call tool: run result", err)
	}
	return resultOf(body), nil
}

// forbidden says why the caller may not run assistants ("" when it may):
// with auth on it needs the threads scope, as POST /runs/wait does, and
// the authorize hook's leave for ("threads", "create_run").
func (h *Handler) forbidden(ctx context.Context) string {
	p, _ := auth.FromContext(ctx)
	if h.cfg.AuthOn && !p.Has(auth.ScopeThreads) {
		return "Forbidden: this credential lacks the " + auth.ScopeThreads + " scope that tools/call (a run) needs"
	}
	if h.cfg.Authorize == nil {
		return ""
	}
	d, err := h.cfg.Authorize(ctx, auth.Request{Principal: p, Resource: "threads", Action: "create_run",
		Method: "POST", Path: "/mcp"})
	switch {
	case err != nil:
		if ae, ok := auth.AsError(err); ok {
			return ae.Detail
		}
		h.cfg.Log.ErrorContext(ctx, "mcp: authorize hook", "error", err)
		return "Forbidden"
	case d.Deny:
		if d.Reason != "" {
			return d.Reason
		}
		return "Forbidden"
	case len(d.Filters) > 0:
		return "Forbidden: tools/call cannot apply the authorization filters of this request"
	}
	return ""
}

// arguments checks a tools/call's arguments: an object, or none ({}).
func arguments(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage(`{}`), nil
	}
	if raw[0] != '{' {
		return nil, fmt.Errorf("Invalid arguments: must be an object (the run's input)")
	}
	return raw, nil
}

// progress sends a progress notification every progressEvery while the run
// executes, when the request asked for progress; the returned func stops it.
func (h *Handler) progress(ctx context.Context, req *sdk.CallToolRequest, run *runs.Run) (stop func()) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for n := 1; ; n++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token,
					Progress: float64(n), Message: "run " + run.RunID.String() + " is executing"})
			}
		}
	}()
	return func() { cancel(); <-finished }
}

// resultOf renders a run's result (the body of /runs/wait, compact) as a tool
// result: {"__error__": {error, message}} is a tool error with its text;
// other output is the structured content (an object; any other value under
// "result") and its JSON as text.
func resultOf(body json.RawMessage) *sdk.CallToolResult {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) == nil && obj != nil {
		if e, ok := obj["__error__"]; ok && len(obj) == 1 {
			return toolError(errorText(e))
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(body)}},
			StructuredContent: body}
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(body)}},
		StructuredContent: map[string]json.RawMessage{"result": body}}
}

// errorText is a run error's text: "<error>: <message>", or its JSON.
func errorText(raw json.RawMessage) string {
	var e struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) != nil || e.Error == "" && e.Message == "" {
		return string(raw)
	}
	if e.Error == "" {
		return e.Message
	}
	if e.Message == "" {
		return e.Error
	}
	return e.Error + ": " + e.Message
}

func toolError(text string) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: text}}}
}

// internal logs err and returns the JSON-RPC internal error the client
// sees (no detail).
func (h *Handler) internal(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	h.cfg.Log.ErrorContext(ctx, "mcp: "+what, "error", err)
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"}
}
