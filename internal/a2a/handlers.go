package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/assistants"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/runs"
	"github.com/weftdev/weft/internal/stream"
	"github.com/weftdev/weft/internal/threads"
)

// Handlers serves the agent card and the JSON-RPC endpoint.
type Handlers struct {
	db         *pgxpool.Pool
	graphs     *graph.Registry
	assistants *assistants.Store
	threads    *threads.Store
	runs       *runs.Service
	streams    *stream.Service
	log        *slog.Logger
}

// NewHandlers returns the A2A handlers: views over the given services.
func NewHandlers(db *pgxpool.Pool, graphs *graph.Registry, as *assistants.Store, ts *threads.Store, rs *runs.Service,
	ss *stream.Service, log *slog.Logger) *Handlers {
	return &Handlers{db: db, graphs: graphs, assistants: as, threads: ts, runs: rs, streams: ss, log: log}
}

// chatAssistant resolves ref (an assistant id or a graph name) for the
// caller's tenant and checks that its graph has a messages channel: 404
// when the caller cannot see it, 400 when its graph is not a chat graph.
func (h *Handlers) chatAssistant(ctx context.Context, ref string) (*assistants.Assistant, error) {
	a, err := h.assistants.Resolve(ctx, h.db, ref)
	if err != nil {
		return nil, err
	}
	g, ok := h.graphs.Lookup(a.GraphID)
	if !ok {
		if g, ok, err = assistants.WorkerGraph(ctx, h.db, a.GraphID); err != nil {
			return nil, err
		}
	}
	if !ok {
		return nil, apperr.Errorf(apperr.BadRequest, "Graph %q of assistant %s is not registered on this server", a.GraphID, a.AssistantID)
	}
	if _, has := g.Channel("messages"); !has {
		return nil, apperr.Errorf(apperr.BadRequest,
			"Assistant %s (graph %q) has no messages channel: A2A serves assistants of chat graphs", a.AssistantID, a.GraphID)
	}
	return a, nil
}

// AgentCard is the A2A agent card of an assistant: the v1.0 fields
// (supportedInterfaces, one JSON-RPC interface per protocol version) and
// the v0.3 ones (url, preferredTransport, protocolVersion), so that
// clients of either version find the endpoint.
type AgentCard struct {
	Name                string           `json:"name"`
	Description         string           `json:"description"`
	SupportedInterfaces []AgentInterface `json:"supportedInterfaces"`
	Version             string           `json:"version"`
	Capabilities        struct {
		Streaming         bool `json:"streaming"`
		PushNotifications bool `json:"pushNotifications"`
	} `json:"capabilities"`
	DefaultInputModes  []string     `json:"defaultInputModes"`
	DefaultOutputModes []string     `json:"defaultOutputModes"`
	Skills             []AgentSkill `json:"skills"`
	// URL, PreferredTransport and ProtocolVersion are the v0.3 card's.
	URL                string `json:"url"`
	PreferredTransport string `json:"preferredTransport"`
	ProtocolVersion    string `json:"protocolVersion"`
}

// AgentInterface is an endpoint of an agent card.
type AgentInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding" example:"JSONRPC"`
	ProtocolVersion string `json:"protocolVersion" example:"1.0"`
}

// AgentSkill is a skill of an agent card.
type AgentSkill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	InputModes  []string `json:"inputModes"`
	OutputModes []string `json:"outputModes"`
}

// Card godoc
//
//	@Summary		An assistant's A2A agent card
//	@ID				get_agent_card
//	@Description	The A2A agent card of the assistant assistant_id names (an id or a graph name), for assistants whose graph has a messages channel: name, description, one skill, input / output modes, streaming, and the JSON-RPC endpoint /a2a/{assistant_id} for A2A v1.0 and v0.3 clients (docs/a2a.md).
//	@Tags			a2a
//	@Produce		json
//	@Param			assistant_id	query		string	true	"Assistant ID or graph name"
//	@Success		200				{object}	AgentCard
//	@Failure		400				{object}	httpx.ErrorBody	"the assistant's graph has no messages channel"
//	@Failure		404				{object}	httpx.ErrorBody
//	@Failure		422				{object}	httpx.ErrorBody
//	@Router			/.well-known/agent-card.json [get]
func (h *Handlers) Card(w http.ResponseWriter, r *http.Request) error {
	ref := strings.TrimSpace(r.URL.Query().Get("assistant_id"))
	if ref == "" {
		return apperr.Errorf(apperr.Invalid, "Missing query parameter assistant_id: the card is per assistant (?assistant_id=<id or graph name>)")
	}
	return h.writeCard(w, r, ref)
}

// writeCard answers the agent card of the assistant ref names.
func (h *Handlers) writeCard(w http.ResponseWriter, r *http.Request, ref string) error {
	a, err := h.chatAssistant(r.Context(), ref)
	if err != nil {
		return err
	}
	url := baseURL(r) + "/a2a/" + a.AssistantID.String()
	desc := fmt.Sprintf("LangGraph assistant %s (graph %s) served by Weft", a.Name, a.GraphID)
	if a.Description != nil && *a.Description != "" {
		desc = *a.Description
	}
	modes := []string{"text/plain", "application/json"}
	c := AgentCard{Name: a.Name, Description: desc, Version: strconv.Itoa(a.Version),
		SupportedInterfaces: []AgentInterface{
			{URL: url, ProtocolBinding: "JSONRPC", ProtocolVersion: "1.0"},
			{URL: url, ProtocolBinding: "JSONRPC", ProtocolVersion: "0.3"},
		},
		DefaultInputModes: modes, DefaultOutputModes: modes,
		Skills: []AgentSkill{{ID: a.GraphID + "-chat", Name: a.Name, Description: desc,
			Tags: []string{"chat", "langgraph", a.GraphID}, InputModes: modes, OutputModes: modes}},
		URL: url, PreferredTransport: "JSONRPC", ProtocolVersion: "0.3.0"}
	c.Capabilities.Streaming = true
	httpx.WriteJSON(w, http.StatusOK, c)
	return nil
}

// baseURL is the scheme and host the client reached this server at
// (X-Forwarded-Proto and X-Forwarded-Host, set by a proxy, win).
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p == "http" || p == "https" {
		scheme = p
	}
	host := r.Host
	if fh := r.Header.Get("X-Forwarded-Host"); fh != "" {
		host = strings.TrimSpace(strings.Split(fh, ",")[0])
	}
	return scheme + "://" + host
}

// Request is a JSON-RPC 2.0 request to /a2a/{assistant_id}.
type Request struct {
	JSONRPC string          `json:"jsonrpc" validate:"required" enums:"2.0" example:"2.0"`
	ID      json.RawMessage `json:"id" swaggertype:"string" example:"1"`
	// Method is an A2A v1.0 method (SendMessage, SendStreamingMessage,
	// GetTask, CancelTask) or its v0.3 name (message/send, message/stream,
	// tasks/get, tasks/cancel).
	Method string          `json:"method" validate:"required" minLength:"1" example:"SendMessage"`
	Params json.RawMessage `json:"params" swaggertype:"object"`
}

// Response is a JSON-RPC 2.0 response: result, or error.
type Response struct {
	JSONRPC string          `json:"jsonrpc" example:"2.0"`
	ID      json.RawMessage `json:"id" swaggertype:"string" example:"1"`
	Result  any             `json:"result,omitempty" swaggertype:"object"`
	Error   *RPCError       `json:"error,omitempty"`
}

// RPC godoc
//
//	@Summary		A2A JSON-RPC endpoint of an assistant
//	@ID				post_a2a
//	@Description	The A2A protocol (v1.0, and v0.3 for clients without the A2A-Version: 1.0 header) over JSON-RPC 2.0, for an assistant whose graph has a messages channel. SendMessage / message/send runs the assistant on the thread the message's contextId names (created on first use; a new one without contextId) and answers the task (= the run) when it ends, the answer as an artifact; SendStreamingMessage / message/stream answers Server-Sent Events (the task, status and artifact updates as the run streams); GetTask / tasks/get; CancelTask / tasks/cancel cancels the run; SubscribeToTask / tasks/resubscribe follows a task that has not ended. An interrupted run is the input-required state, and the next message on the context resumes it. JSON-RPC errors (invalid params, method not found, task not found) come with HTTP 200. docs/a2a.md.
//	@Tags			a2a
//	@Accept			json
//	@Produce		json
//	@Produce		text/event-stream
//	@Param			assistant_id	path		string	true	"Assistant ID or graph name"
//	@Param			A2A-Version		header		string	false	"1.0 (v1.0 clients) or 0.3; absent: as the method's name says"
//	@Param			body			body		Request	true	"JSON-RPC request"
//	@Success		200				{object}	Response
//	@Failure		400				{object}	httpx.ErrorBody	"the assistant's graph has no messages channel"
//	@Failure		404				{object}	httpx.ErrorBody
//	@Failure		413				{object}	httpx.ErrorBody
//	@Failure		422				{object}	httpx.ErrorBody
//	@Router			/a2a/{assistant_id} [post]
func (h *Handlers) RPC(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return apperr.Errorf(apperr.TooLarge, "Request body too large")
		}
		return nil // the client went away
	}
	var req Request
	if trimmed := strings.TrimSpace(string(body)); strings.HasPrefix(trimmed, "[") {
		writeRPC(w, nil, nil, &RPCError{Code: codeInvalidRequest, Message: "Batch requests are not supported"})
		return nil
	}
	// Field names are exact, as on every route (httpx.DecodeJSON): a
	// duplicate or a case variant of a field is a 422, not a message.
	if err := httpx.CheckFieldNames(body, &req); err != nil {
		return err
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeRPC(w, nil, nil, &RPCError{Code: codeParseError, Message: "Parse error: " + err.Error()})
		return nil
	}
	a, err := h.chatAssistant(r.Context(), httpx.PathParam(r, "assistant_id"))
	if err != nil {
		return err
	}
	if req.JSONRPC != "2.0" || req.Method == "" {
		writeRPC(w, req.ID, nil, &RPCError{Code: codeInvalidRequest, Message: `Invalid request: need "jsonrpc": "2.0" and a method`})
		return nil
	}
	if v := strings.TrimSpace(r.Header.Get("A2A-Version")); v != "" && !knownVersion(v) {
		writeRPC(w, req.ID, nil, &RPCError{Code: codeVersionNotSupported,
			Message: fmt.Sprintf("A2A-Version %q is not supported: this server speaks 1.0 and 0.3", v)})
		return nil
	}
	m, ok := methods[req.Method]
	if !ok {
		writeRPC(w, req.ID, nil, &RPCError{Code: codeMethodNotFound, Message: "Method not found: " + req.Method})
		return nil
	}
	rd := renderer{v03: m.v03}
	ctx := r.Context()
	switch m.name {
	case "send":
		result, err := h.send(ctx, a, req.Params, rd)
		writeRPC(w, req.ID, result, h.rpcErr(ctx, err))
	case "stream":
		h.stream(w, r, a, req, rd)
	case "subscribe":
		h.subscribe(w, r, a, req, rd)
	case "get":
		result, err := h.get(ctx, a, req.Params, rd)
		writeRPC(w, req.ID, result, h.rpcErr(ctx, err))
	case "cancel":
		result, err := h.cancel(ctx, a, req.Params, rd)
		writeRPC(w, req.ID, result, h.rpcErr(ctx, err))
	default:
		writeRPC(w, req.ID, nil, &RPCError{Code: codeUnsupportedOperation,
			Message: "Unsupported operation: " + req.Method + " (this agent serves SendMessage, SendStreamingMessage, GetTask, CancelTask and SubscribeToTask)"})
	}
	return nil
}

// method is an A2A method: what it does and the version its name is of.
type method struct {
	name string
	v03  bool
}

// methods are the A2A methods by their JSON-RPC names; those served as
// "unsupported" are answered with UnsupportedOperation, not MethodNotFound.
var methods = map[string]method{
	"SendMessage":          {"send", false},
	"SendStreamingMessage": {"stream", false},
	"GetTask":              {"get", false},
	"CancelTask":           {"cancel", false},
	"SubscribeToTask":      {"subscribe", false},
	"message/send":         {"send", true},
	"message/stream":       {"stream", true},
	"tasks/get":            {"get", true},
	"tasks/cancel":         {"cancel", true},
	"tasks/resubscribe":    {"subscribe", true},

	"ListTasks":                           {"unsupported", false},
	"CreateTaskPushNotificationConfig":    {"unsupported", false},
	"GetTaskPushNotificationConfig":       {"unsupported", false},
	"ListTaskPushNotificationConfigs":     {"unsupported", false},
	"DeleteTaskPushNotificationConfig":    {"unsupported", false},
	"GetExtendedAgentCard":                {"unsupported", false},
	"tasks/pushNotificationConfig/set":    {"unsupported", true},
	"tasks/pushNotificationConfig/get":    {"unsupported", true},
	"tasks/pushNotificationConfig/list":   {"unsupported", true},
	"tasks/pushNotificationConfig/delete": {"unsupported", true},
	"agent/getAuthenticatedExtendedCard":  {"unsupported", true},
}

// knownVersion tells whether an A2A-Version header names a version served
// here (1.0 or 0.3, any patch).
func knownVersion(v string) bool {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return false
	}
	mm := parts[0] + "." + parts[1]
	return mm == "1.0" || mm == "0.3"
}

// send starts a run for the message and answers its task once the run
// ends (at once with returnImmediately / blocking false).
func (h *Handlers) send(ctx context.Context, a *assistants.Assistant, raw json.RawMessage, rd renderer) (any, error) {
	p, err := decodeParams[sendParams](raw)
	if err != nil {
		return nil, err
	}
	run, err := h.start(ctx, a, p.Message, false)
	if err != nil {
		return nil, err
	}
	wait := p.Configuration == nil || !p.Configuration.ReturnImmediately &&
		(p.Configuration.Blocking == nil || *p.Configuration.Blocking)
	if wait {
		if run, err = h.runs.Join(ctx, run.ThreadID, run.RunID); err != nil {
			return nil, err
		}
	}
	t, err := h.taskOf(ctx, run)
	if err != nil {
		return nil, err
	}
	if p.Configuration != nil {
		trimHistory(t, p.Configuration.HistoryLength)
	}
	return rd.sendResult(t), nil
}

// start creates the run a client's message asks for: on the thread its
// contextId names (created on first use; a new thread without one, or the
// thread of its taskId), resuming the thread's interrupt when it has one,
// else with the message as the human input. A streamed run asks for the
// messages-tuple stream mode too, so that its AI message chunks are logged.
func (h *Handlers) start(ctx context.Context, a *assistants.Assistant, m *inMessage, streamed bool) (*runs.Run, error) {
	in, err := readInput(m)
	if err != nil {
		return nil, err
	}
	threadID := uuid.Nil
	if m.ContextID != "" {
		if threadID, err = uuid.Parse(m.ContextID); err != nil {
			return nil, errInvalidParams(fmt.Sprintf("params.message.contextId %q: a context id is a thread id, a UUID", m.ContextID))
		}
	}
	if m.TaskID != "" {
		prev, err := h.taskRun(ctx, a, m.TaskID)
		if err != nil {
			return nil, err
		}
		if threadID == uuid.Nil {
			threadID = prev.ThreadID
		} else if threadID != prev.ThreadID {
			return nil, errInvalidParams(fmt.Sprintf("Task %s belongs to context %s, not %s", prev.RunID, prev.ThreadID, threadID))
		}
		if !prev.Finished() {
			return nil, &RPCError{Code: codeUnsupportedOperation, Message: fmt.Sprintf(
				"Task %s is still running: wait for it, or cancel it, before sending it a message", prev.RunID)}
		}
	}
	resume := false
	if threadID == uuid.Nil {
		threadID = uuid.New()
	} else {
		th, err := h.threads.Get(ctx, threadID)
		switch {
		case apperr.CodeOf(err) == apperr.NotFound:
		case err != nil:
			return nil, err
		default:
			resume = th.Status == threads.StatusInterrupted
		}
	}
	// A message to a finished task that is not waiting for input starts
	// the context's next turn, like a message without a task id.
	req := &runs.CreateRequest{AssistantID: a.AssistantID.String(), IfNotExists: "create", Metadata: map[string]any{}}
	if in.id != "" {
		req.Metadata["a2a_message_id"] = in.id
	}
	if streamed {
		req.StreamMode = runs.StreamModeList{"values", "messages-tuple"}
	}
	if resume {
		value := in.data
		if value == nil {
			value = jsonv.Must(in.text)
		}
		req.Command = &runs.Command{Resume: value}
	} else {
		human := map[string]any{"type": "human", "content": in.text}
		if in.id != "" {
			human["id"] = in.id
		}
		req.Input = jsonv.Must(map[string]any{"messages": []any{human}})
	}
	return h.runs.Create(ctx, threadID, req)
}

// taskRun is the run of task id, when it is a run of assistant a that the
// caller may see (TaskNotFound otherwise).
func (h *Handlers) taskRun(ctx context.Context, a *assistants.Assistant, id string) (*runs.Run, error) {
	notFound := &RPCError{Code: codeTaskNotFound, Message: "Task not found: " + id}
	runID, err := uuid.Parse(strings.TrimSpace(id))
	if err != nil {
		return nil, notFound
	}
	run, err := h.runs.Get(ctx, uuid.Nil, runID)
	if apperr.CodeOf(err) == apperr.NotFound || err == nil && run.AssistantID != a.AssistantID {
		return nil, notFound
	}
	return run, err
}

// get answers a task.
func (h *Handlers) get(ctx context.Context, a *assistants.Assistant, raw json.RawMessage, rd renderer) (any, error) {
	p, err := decodeParams[taskParams](raw)
	if err != nil {
		return nil, err
	}
	run, err := h.taskRun(ctx, a, p.ID)
	if err != nil {
		return nil, err
	}
	t, err := h.taskOf(ctx, run)
	if err != nil {
		return nil, err
	}
	trimHistory(t, p.HistoryLength)
	return rd.task(t), nil
}

// cancelWait bounds how long CancelTask waits for a running run to stop
// (it stops at its next step boundary).
const cancelWait = 10 * time.Second

// cancel cancels a task's run (action interrupt: its checkpoints stay) and
// answers the task once the run has stopped. A finished task is not
// cancelable.
func (h *Handlers) cancel(ctx context.Context, a *assistants.Assistant, raw json.RawMessage, rd renderer) (any, error) {
	p, err := decodeParams[taskParams](raw)
	if err != nil {
		return nil, err
	}
	run, err := h.taskRun(ctx, a, p.ID)
	if err != nil {
		return nil, err
	}
	if run.Finished() {
		t, err := h.taskOf(ctx, run)
		if err != nil {
			return nil, err
		}
		return nil, &RPCError{Code: codeTaskNotCancelable, Message: fmt.Sprintf("Task %s is %s: it cannot be canceled", t.ID, t.Status.State)}
	}
	if _, err := h.runs.Cancel(ctx, run.ThreadID, run.RunID, runs.ActionInterrupt); err != nil {
		return nil, err
	}
	wctx, stop := context.WithTimeout(ctx, cancelWait)
	defer stop()
	if ended, err := h.runs.Join(wctx, run.ThreadID, run.RunID); err == nil {
		run = ended
	} else if run, err = h.runs.Get(ctx, run.ThreadID, run.RunID); err != nil {
		return nil, err
	}
	t, err := h.taskOf(ctx, run)
	if err != nil {
		return nil, err
	}
	trimHistory(t, p.HistoryLength)
	return rd.task(t), nil
}

// decodeParams reads a method's params (InvalidParams when they are not
// an object of the method's shape).
func decodeParams[T any](raw json.RawMessage) (*T, error) {
	var p T
	if !jsonv.Present(raw) {
		return nil, errInvalidParams("params are required")
	}
	if err := httpx.CheckFieldNames(raw, &p); err != nil {
		return nil, errInvalidParams(err.Error())
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, errInvalidParams("Invalid params: " + err.Error())
	}
	return &p, nil
}
