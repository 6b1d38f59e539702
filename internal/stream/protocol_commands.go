package stream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/crypt"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/runs"
)

// ProtocolCommand is the body of POST /threads/{thread_id}/commands.
type ProtocolCommand struct {
	ID     *int64          `json:"id" validate:"required" minimum:"0" maximum:"9007199254740991"`
	Method string          `json:"method" validate:"required" minLength:"1" example:"run.start"`
	Params json.RawMessage `json:"params" swaggertype:"object"`
}

// ProtocolResponse is the answer to a command: type "success" with result
// and meta, or type "error" with error (invalid_argument, unknown_command,
// unknown_error, no_such_run, no_such_interrupt, no_such_checkpoint,
// not_supported) and message.
type ProtocolResponse struct {
	Type    string        `json:"type" validate:"required" enums:"success,error"`
	ID      *int64        `json:"id" validate:"required" extensions:"x-nullable"`
	Result  any           `json:"result,omitempty" swaggertype:"object"`
	Meta    *ProtocolMeta `json:"meta,omitempty"`
	Error   string        `json:"error,omitempty"`
	Message string        `json:"message,omitempty"`
}

// ProtocolMeta says which thread answered and the seq of its event log
// when it did.
type ProtocolMeta struct {
	ThreadID          uuid.UUID `json:"thread_id" validate:"required" format:"uuid"`
	AppliedThroughSeq int64     `json:"applied_through_seq" validate:"required"`
}

// protocolError is a command that failed with a protocol error code.
type protocolError struct{ code, message string }

func (e *protocolError) Error() string { return e.code + ": " + e.message }

func protoErr(code, format string, args ...any) error {
	return &protocolError{code: code, message: fmt.Sprintf(format, args...)}
}

// protocolRunStart are run.start's params: the run payload of the REST
// routes under the protocol's names (multitaskStrategy is the SDK's older
// spelling of multitask_strategy).
type protocolRunStart struct {
	AssistantID         string          `json:"assistant_id"`
	Input               json.RawMessage `json:"input"`
	Command             *runs.Command   `json:"command"`
	Config              map[string]any  `json:"config"`
	Context             map[string]any  `json:"context"`
	Metadata            map[string]any  `json:"metadata"`
	MultitaskStrategy   string          `json:"multitask_strategy"`
	MultitaskStrategyJS string          `json:"multitaskStrategy"`
	InterruptBefore     runs.StringList `json:"interrupt_before"`
	InterruptAfter      runs.StringList `json:"interrupt_after"`
	Durability          string          `json:"durability"`
}

// protocolRespond are input.respond's params: one answer or several.
type protocolRespond struct {
	InterruptID *string         `json:"interrupt_id"`
	Response    json.RawMessage `json:"response"`
	Responses   []struct {
		InterruptID string          `json:"interrupt_id"`
		Response    json.RawMessage `json:"response"`
	} `json:"responses"`
	Update   json.RawMessage `json:"update"`
	Goto     json.RawMessage `json:"goto"`
	Config   map[string]any  `json:"config"`
	Metadata map[string]any  `json:"metadata"`
}

// protocolRunModes are the modes a protocol run records (every run records
// all its events; the list is what its REST readers default to).
var protocolRunModes = []string{"values", "updates", "messages-tuple", "custom", "tasks", "tools"}

// ProtocolCommands godoc
//
//	@Summary		Send a command to a thread (protocol v2)
//	@ID				protocol_thread_command
//	@Description	The command channel of client.threads.stream() (SDK 1.x). run.start {assistant_id (a UUID or graph name), input, config, context, metadata, multitask_strategy} creates the thread when it does not exist and starts a run (result {run_id}); on a thread waiting on an interrupt, any input but null resumes it (command.resume, every pending interrupt), as LangGraph.js's server 1.5 does; input.respond {interrupt_id, response} or {responses:[{interrupt_id, response}]} (optional update, goto, config, metadata) resumes the thread's pending interrupts with a new run (command.resume keyed by interrupt id); state.get {keys?} returns {values, checkpoint:{id, ns}}; agent.getTree returns the latest run's namespaces as {tree:{namespace, status, graph_name, children?}}. Answers are 200 JSON frames: {"type":"success","id","result","meta":{"thread_id","applied_through_seq"}} or {"type":"error","id","error","message"} with a protocol error code (invalid_argument, unknown_command, no_such_run, no_such_interrupt, no_such_checkpoint, not_supported). A body that is not a command ({id: integer, method: string, params: object}) is a 422.
//	@Tags			threads
//	@Accept			json
//	@Produce		json
//	@Param			thread_id	path		string			true	"Thread ID"	format(uuid)
//	@Param			body		body		ProtocolCommand	true	"Command"
//	@Success		200			{object}	ProtocolResponse
//	@Failure		422			{object}	httpx.ErrorBody
//	@Router			/threads/{thread_id}/commands [post]
func (h *Handlers) ProtocolCommands(w http.ResponseWriter, r *http.Request) error {
	tid, err := httpx.PathUUID(r, "thread_id", "thread")
	if err != nil {
		return err
	}
	var cmd ProtocolCommand
	if err := httpx.DecodeJSON(r, &cmd); err != nil {
		return err
	}
	if err := cmd.check(); err != nil {
		return err
	}
	resp, err := h.protocolAnswer(r.Context(), tid, &cmd)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, resp)
	return nil
}

// maxCommandID bounds a command's id: 2^53-1, the integers a JSON number
// holds exactly in every client's language.
const maxCommandID = 1<<53 - 1

// check refuses a body that is not a command: an id, a method, params an
// object when given.
func (cmd *ProtocolCommand) check() error {
	if cmd.ID == nil || *cmd.ID < 0 || *cmd.ID > maxCommandID {
		return apperr.Errorf(apperr.Invalid, "A command needs an id: an integer from 0 to %d", maxCommandID)
	}
	if cmd.Method == "" {
		return apperr.Errorf(apperr.Invalid, "A command needs a method")
	}
	if p := bytes.TrimSpace(cmd.Params); len(p) > 0 && p[0] != '{' && string(p) != "null" {
		return apperr.Errorf(apperr.Invalid, "A command's params must be an object (or null, or left out)")
	}
	return nil
}

// protocolAnswer runs a command of either transport (HTTP /commands, the
// WebSocket) and returns its answer frame; err is an infrastructure
// failure, not the command's.
func (h *Handlers) protocolAnswer(ctx context.Context, tid uuid.UUID, cmd *ProtocolCommand) (*ProtocolResponse, error) {
	result, err := h.protocolCommand(ctx, tid, cmd)
	var pe *protocolError
	var ae *apperr.Error
	switch {
	case errors.As(err, &pe):
	case errors.As(err, &ae):
		pe = &protocolError{code: protocolCode(ae), message: ae.Message}
	case err != nil:
		return nil, err
	}
	if pe != nil {
		return &ProtocolResponse{Type: "error", ID: cmd.ID, Error: pe.code, Message: pe.message}, nil
	}
	return h.protocolSuccess(ctx, tid, cmd.ID, result)
}

// protocolSuccess is a success frame answering command id with result.
func (h *Handlers) protocolSuccess(ctx context.Context, tid uuid.UUID, id *int64, result any) (*ProtocolResponse, error) {
	meta := &ProtocolMeta{ThreadID: tid}
	var err error
	if meta.AppliedThroughSeq, err = h.svc.protocolAppliedSeq(ctx, tid); err != nil {
		return nil, err
	}
	return &ProtocolResponse{Type: "success", ID: id, Result: result, Meta: meta}, nil
}

// protocolCode is the protocol error code of a domain error.
func protocolCode(ae *apperr.Error) string {
	if ae.Code == apperr.NotFound && strings.Contains(strings.ToLower(ae.Message), "checkpoint") {
		return "no_such_checkpoint"
	}
	return "invalid_argument"
}

func (h *Handlers) protocolCommand(ctx context.Context, tid uuid.UUID, cmd *ProtocolCommand) (any, error) {
	switch cmd.Method {
	case "run.start":
		var p protocolRunStart
		if err := decodeParams(cmd, &p); err != nil {
			return nil, err
		}
		return h.protocolRunStart(ctx, tid, &p)
	case "input.respond":
		var p protocolRespond
		if err := decodeParams(cmd, &p); err != nil {
			return nil, err
		}
		return h.protocolRespond(ctx, tid, &p)
	case "state.get":
		var p struct {
			Keys []string `json:"keys"`
		}
		if err := decodeParams(cmd, &p); err != nil {
			return nil, err
		}
		return h.svc.protocolState(ctx, tid, p.Keys)
	case "agent.getTree":
		return h.svc.protocolTree(ctx, tid)
	case "input.inject", "state.listCheckpoints", "state.fork", "subscription.subscribe",
		"subscription.unsubscribe", "subscription.reconnect":
		return nil, protoErr("not_supported", "%s is not supported by this server over HTTP (subscribe by opening POST /threads/{thread_id}/stream/events, or over the WebSocket of GET /threads/{thread_id}/stream/events)", cmd.Method)
	}
	return nil, protoErr("unknown_command", "Unknown protocol command: %s", cmd.Method)
}

// decodeParams decodes a command's params (absent or null: none).
func decodeParams(cmd *ProtocolCommand, dst any) error {
	if !jsonv.Present(cmd.Params) {
		return nil
	}
	if err := json.Unmarshal(cmd.Params, dst); err != nil {
		return protoErr("invalid_argument", "Invalid params of %s: %v", cmd.Method, err)
	}
	return nil
}

// protocolRunStart creates the thread when needed and starts a run on it
// through the REST create path.
func (h *Handlers) protocolRunStart(ctx context.Context, tid uuid.UUID, p *protocolRunStart) (any, error) {
	if p.AssistantID == "" {
		return nil, protoErr("invalid_argument", "run.start requires an assistant_id")
	}
	req := &runs.CreateRequest{AssistantID: p.AssistantID, Input: p.Input, Command: p.Command, Config: p.Config,
		Context: p.Context, Metadata: p.Metadata, MultitaskStrategy: p.MultitaskStrategy,
		InterruptBefore: runs.NodeList(p.InterruptBefore), InterruptAfter: runs.NodeList(p.InterruptAfter), Durability: p.Durability,
		IfNotExists: "create", StreamMode: protocolRunModes, StreamSubgraphs: true, StreamResumable: true}
	if req.MultitaskStrategy == "" {
		req.MultitaskStrategy = p.MultitaskStrategyJS
	}
	if req.MultitaskStrategy == "" {
		req.MultitaskStrategy = runs.StrategyEnqueue
	}
	// A fork: the SDK puts forkFrom in config.configurable.checkpoint_id.
	if c, ok := p.Config["configurable"].(map[string]any); ok {
		if id, ok := c["checkpoint_id"].(string); ok && id != "" {
			req.CheckpointID = id
		}
	}
	// On a thread waiting on an interrupt(), run.start resumes it, as
	// LangGraph.js's server does (1.5): any input but null becomes
	// command.resume, whole, for every pending interrupt (not keyed by
	// interrupt id), and the run has no input. A thread without a pending
	// interrupt (none yet, or only a cancelled run's status "interrupted")
	// gets the input. A command of its own (this server's extension of
	// run.start) is left as it is.
	if p.Command == nil && jsonv.Present(p.Input) {
		waits, err := h.svc.waitsOnInterrupt(ctx, tid)
		if err != nil {
			return nil, err
		}
		if waits {
			req.Command, req.Input = &runs.Command{Resume: p.Input}, nil
		}
	}
	run, err := h.svc.runs.Create(ctx, tid, req)
	if err != nil {
		return nil, err
	}
	return map[string]any{"run_id": run.RunID}, nil
}

// protocolRespond resumes the thread's pending interrupts named in p with
// a new run of the thread's assistant.
func (h *Handlers) protocolRespond(ctx context.Context, tid uuid.UUID, p *protocolRespond) (any, error) {
	answers := map[string]json.RawMessage{}
	for _, a := range p.Responses {
		if a.InterruptID == "" {
			return nil, protoErr("invalid_argument", "input.respond responses entries require an interrupt_id")
		}
		answers[a.InterruptID] = orNull(a.Response)
	}
	if p.InterruptID != nil {
		answers[*p.InterruptID] = orNull(p.Response)
	}
	if len(answers) == 0 {
		return nil, protoErr("invalid_argument", "input.respond requires an interrupt_id and a response, or responses")
	}
	var assistantID *uuid.UUID
	var interrupts json.RawMessage
	err := h.svc.db.QueryRow(ctx, `SELECT (SELECT r.assistant_id FROM runs r WHERE r.thread_id = t.thread_id
			ORDER BY r.created_at DESC, r.run_id DESC LIMIT 1), t.interrupts
		FROM threads t WHERE t.thread_id = $1 AND t.tenant_id = $2`, tid, auth.Tenant(ctx)).Scan(&assistantID, &interrupts)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && assistantID == nil {
		return nil, protoErr("no_such_run", "Thread %s has no run to resume; start one with run.start", tid)
	}
	if err != nil {
		return nil, err
	}
	if interrupts, err = crypt.FromContext(ctx).OpenJSON(interrupts); err != nil {
		return nil, err
	}
	pending := pendingInterruptIDs(interrupts)
	for id := range answers {
		if !pending[id] {
			return nil, protoErr("no_such_interrupt", "Interrupt %q is not pending on thread %s", id, tid)
		}
	}
	resume, _ := json.Marshal(answers)
	req := &runs.CreateRequest{AssistantID: assistantID.String(), Command: &runs.Command{Resume: resume, Update: p.Update, Goto: p.Goto},
		Config: p.Config, Metadata: p.Metadata, StreamMode: protocolRunModes, StreamSubgraphs: true, StreamResumable: true}
	run, err := h.svc.runs.Create(ctx, tid, req)
	if err != nil {
		return nil, err
	}
	return map[string]any{"run_id": run.RunID}, nil
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// waitsOnInterrupt says whether thread tid waits on an interrupt: a task
// of its latest checkpoint has one (false for a thread that does not
// exist, or not in the caller's tenant).
func (s *Service) waitsOnInterrupt(ctx context.Context, tid uuid.UUID) (bool, error) {
	var interrupts json.RawMessage
	err := s.db.QueryRow(ctx, `SELECT interrupts FROM threads WHERE thread_id = $1 AND tenant_id = $2`,
		tid, auth.Tenant(ctx)).Scan(&interrupts)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if interrupts, err = crypt.FromContext(ctx).OpenJSON(interrupts); err != nil {
		return false, err
	}
	var byTask map[string][]json.RawMessage
	_ = json.Unmarshal(interrupts, &byTask)
	for _, list := range byTask {
		if len(list) > 0 {
			return true, nil
		}
	}
	return false, nil
}

// pendingInterruptIDs reads the ids of a thread's interrupts (task id →
// [{id, value}]).
func pendingInterruptIDs(raw json.RawMessage) map[string]bool {
	var byTask map[string][]struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(raw, &byTask)
	ids := map[string]bool{}
	for _, list := range byTask {
		for _, in := range list {
			if in.ID != "" {
				ids[in.ID] = true
			}
		}
	}
	return ids
}

// protocolState is state.get: the thread's current values (only keys, when
// given) and its latest root checkpoint; empty values for a thread that
// does not exist yet (its client minted the id and has not started a run).
func (s *Service) protocolState(ctx context.Context, tid uuid.UUID, keys []string) (any, error) {
	var values json.RawMessage
	var checkpointID *string
	err := s.db.QueryRow(ctx, `SELECT weft_thread_values(t.thread_id, t."values", t.values_refs), (SELECT c.checkpoint_id FROM checkpoints c
			WHERE c.thread_id = t.thread_id::text AND c.checkpoint_ns = '' ORDER BY c.checkpoint_id DESC LIMIT 1)
		FROM threads t WHERE t.thread_id = $1 AND t.tenant_id = $2`, tid, auth.Tenant(ctx)).Scan(&values, &checkpointID)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, err
	}
	if values, err = crypt.FromContext(ctx).OpenJSON(values); err != nil {
		return nil, err
	}
	vals := map[string]any{}
	_ = jsonv.Decode(values, &vals)
	if vals == nil {
		vals = map[string]any{}
	}
	if len(keys) > 0 {
		for k := range vals {
			if !slices.Contains(keys, k) {
				delete(vals, k)
			}
		}
	}
	out := map[string]any{"values": vals}
	if checkpointID != nil {
		out["checkpoint"] = map[string]any{"id": *checkpointID, "ns": ""}
	}
	return out, nil
}

// protocolTree is agent.getTree: the root graph of the thread's latest run
// with the subgraph namespaces its events came from.
func (s *Service) protocolTree(ctx context.Context, tid uuid.UUID) (any, error) {
	var graphID string
	var status runs.Status
	var names []string
	err := s.db.QueryRow(ctx, `SELECT r.graph_id, r.status, coalesce((SELECT array_agg(DISTINCT e.event) FROM run_events e
			WHERE e.run_id = r.run_id AND e.event LIKE '%|%'), '{}')
		FROM threads t JOIN runs r ON r.run_id = t.latest_run_id WHERE t.thread_id = $1 AND t.tenant_id = $2`,
		tid, auth.Tenant(ctx)).Scan(&graphID, &status, &names)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, protoErr("no_such_run", "Thread %s has no run", tid)
	}
	if err != nil {
		return nil, err
	}
	state := lifecycleOf(status)
	type node struct {
		Namespace []string `json:"namespace"`
		Status    string   `json:"status"`
		GraphName string   `json:"graph_name"`
		Children  []*node  `json:"children,omitempty"`
	}
	root := &node{Namespace: []string{}, Status: state, GraphName: graphID}
	index := map[string]*node{"": root}
	sort.Strings(names)
	for _, name := range names {
		_, rest, _ := strings.Cut(name, "|")
		segs := strings.Split(rest, "|")
		for i := range segs {
			key := strings.Join(segs[:i+1], "|")
			if index[key] != nil {
				continue
			}
			graphName, _, _ := strings.Cut(segs[i], ":")
			n := &node{Namespace: slices.Clone(segs[:i+1]), Status: state, GraphName: graphName}
			parent := index[strings.Join(segs[:i], "|")]
			parent.Children = append(parent.Children, n)
			index[key] = n
		}
	}
	return map[string]any{"tree": root}, nil
}

// lifecycleOf is the protocol status of a run status.
func lifecycleOf(s runs.Status) string {
	switch s {
	case runs.StatusSuccess:
		return "completed"
	case runs.StatusError:
		return "failed"
	case runs.StatusInterrupted, runs.StatusTimeout:
		return "interrupted"
	}
	return "running"
}

// protocolAppliedSeq is the highest seq the thread's log can hold now.
func (s *Service) protocolAppliedSeq(ctx context.Context, tid uuid.UUID) (int64, error) {
	var n int64
	err := s.db.QueryRow(ctx, `SELECT coalesce(max(thread_seq), 0) FROM run_events WHERE thread_id = $1
		AND EXISTS (SELECT 1 FROM threads WHERE thread_id = $1 AND tenant_id = $2)`, tid, auth.Tenant(ctx)).Scan(&n)
	if n == 0 {
		return 0, err
	}
	return n*protocolSeqScale + protocolSeqScale - 1, err
}
