package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/dispatch"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/threads"
	"github.com/weftdev/weft/internal/tracing"
	"github.com/weftdev/weft/internal/webhook"
)

// CreateRequest is the body of every run-creating route (RunCreateStateful
// and RunCreateStateless, reference §6.2). Unknown fields are ignored.
type CreateRequest struct {
	// AssistantID is the assistant to run: its UUID, or a graph id (the
	// graph's system assistant).
	AssistantID string          `json:"assistant_id" validate:"required" minLength:"1" example:"foo_bar"`
	Input       json.RawMessage `json:"input" swaggertype:"object"`
	Command     *Command        `json:"command"`
	Metadata    map[string]any  `json:"metadata"`
	// Config is the run's config; its configurable also gets the request's
	// x-* headers (but x-api-key, x-tenant-id, x-service-key and x-weft-*)
	// and user-agent, as LangGraph's servers put them there.
	Config       map[string]any `json:"config"`
	Context      map[string]any `json:"context"`
	CheckpointID string         `json:"checkpoint_id" extensions:"x-nullable"`
	Checkpoint   *struct {
		CheckpointID string `json:"checkpoint_id"`
		NS           string `json:"checkpoint_ns"`
	} `json:"checkpoint"`
	InterruptBefore   NodeList       `json:"interrupt_before" swaggertype:"array,string"`
	InterruptAfter    NodeList       `json:"interrupt_after" swaggertype:"array,string"`
	MultitaskStrategy string         `json:"multitask_strategy" enums:"reject,enqueue,interrupt,rollback"`
	IfNotExists       string         `json:"if_not_exists" enums:"create,reject"`
	OnCompletion      string         `json:"on_completion" enums:"delete,keep"`
	AfterSeconds      *float64       `json:"after_seconds" minimum:"0" maximum:"31622400"`
	StreamMode        StreamModeList `json:"stream_mode" swaggertype:"array,string"`
	StreamSubgraphs   bool           `json:"stream_subgraphs"`
	StreamResumable   bool           `json:"stream_resumable"`
	OnDisconnect      string         `json:"on_disconnect" enums:"cancel,continue"`
	Webhook           *string        `json:"webhook"`
	FeedbackKeys      []string       `json:"feedback_keys"`
	Durability        string         `json:"durability" enums:"sync,async,exit"`
	CheckpointDuring  *bool          `json:"checkpoint_during"`

	// headers are the HTTP request's, which Config.configurable gets as
	// the server's HeaderPolicy says (nil: a run created without one).
	headers http.Header
}

// validated is a CreateRequest checked against the graph.
type validated struct {
	assistantID uuid.UUID
	graph       *graph.Graph
	kwargs      Kwargs
	metadata    map[string]any
	strategy    string
	delay       time.Duration
}

func (s *Service) validate(ctx context.Context, req *CreateRequest, stateless bool) (*validated, error) {
	a, err := s.assistants.ResolveRef(ctx, req.AssistantID)
	if err != nil {
		return nil, err
	}
	g, err := s.runnableGraph(ctx, a.GraphID, a.AssistantID)
	if err != nil {
		return nil, err
	}
	v := &validated{assistantID: a.AssistantID, graph: g, metadata: req.Metadata}
	if v.metadata == nil {
		v.metadata = map[string]any{}
	}
	if _, set := v.metadata["assistant_id"]; !set {
		v.metadata["assistant_id"] = a.AssistantID.String()
	}
	k := Kwargs{Input: req.Input, Command: req.Command, Config: s.cfg.Headers.apply(req.Config, req.headers, g.Language),
		Context:    req.Context,
		StreamMode: StringList(req.StreamMode), InterruptBefore: StringList(req.InterruptBefore), InterruptAfter: StringList(req.InterruptAfter),
		Subgraphs: req.StreamSubgraphs, Resumable: req.StreamResumable, OnDisconnect: req.OnDisconnect,
		Webhook: req.Webhook, FeedbackKeys: req.FeedbackKeys, Durability: req.Durability}
	if k.Config == nil {
		k.Config = map[string]any{}
	}
	if k.Context == nil {
		k.Context = map[string]any{}
	}
	if len(k.StreamMode) == 0 {
		k.StreamMode = []string{"values"}
	}
	switch k.Durability {
	case "":
		if req.CheckpointDuring != nil && !*req.CheckpointDuring {
			k.Durability = "exit" // the deprecated checkpoint_during: false
		}
	case "sync", "async", "exit":
	default:
		return nil, apperr.Errorf(apperr.Invalid, "Invalid durability %q: must be sync, async or exit", k.Durability)
	}
	if k.Webhook != nil {
		if err := s.cfg.Webhooks.Validate(*k.Webhook); err != nil {
			return nil, err
		}
	}
	if k.OnDisconnect == "" {
		k.OnDisconnect = "continue"
	}
	if k.OnDisconnect != "continue" && k.OnDisconnect != "cancel" {
		return nil, apperr.Errorf(apperr.Invalid, "Invalid on_disconnect %q: must be cancel or continue", k.OnDisconnect)
	}
	k.CheckpointID = req.CheckpointID
	if k.CheckpointID == "" && req.Checkpoint != nil {
		k.CheckpointID = req.Checkpoint.CheckpointID
	}
	if k.CheckpointID != "" {
		if _, err := uuid.Parse(k.CheckpointID); err != nil || len(k.CheckpointID) != 36 {
			return nil, apperr.Errorf(apperr.Invalid, "Invalid checkpoint_id: must be a UUID, got %q", k.CheckpointID)
		}
	}
	if stateless && k.CheckpointID != "" {
		return nil, apperr.Errorf(apperr.BadRequest, "checkpoint_id needs a thread: a stateless run has no history")
	}
	// interrupt_before / interrupt_after may name nodes the graph does not
	// have, as LangGraph's servers accept them: such a name never matches.
	if c, ok := k.Config["configurable"]; ok && c != nil {
		if _, isObj := c.(map[string]any); !isObj {
			return nil, apperr.Errorf(apperr.Invalid, "Invalid config.configurable: must be an object")
		}
	}
	if rl, ok := k.Config["recursion_limit"]; ok {
		if n, err := RecursionLimit(k.Config); err != nil || n < 1 {
			return nil, apperr.Errorf(apperr.Invalid, "Invalid config.recursion_limit %v: must be a positive integer", rl)
		}
	}
	if k.Command != nil {
		if stateless && jsonv.Present(k.Command.Resume) {
			return nil, apperr.Errorf(apperr.BadRequest, "You must provide a thread_id when resuming.")
		}
		if jsonv.Present(k.Command.Update) {
			if _, err := CommandUpdates(g, k.Command.Update); err != nil {
				return nil, err
			}
		}
		if _, err := CommandGoto(g, k.Command.Goto); err != nil {
			return nil, err
		}
		k.Input = nil // a command replaces the input (agent-chat-ui sends both)
	}
	if jsonv.Present(k.Input) {
		var in map[string]any
		if err := jsonv.Decode(k.Input, &in); err != nil || in == nil {
			return nil, apperr.Errorf(apperr.Invalid, "Invalid input: must be an object or null")
		}
		if _, err := g.Apply(graph.State{}, InputChannels(g, in)); err != nil {
			return nil, apperr.Errorf(apperr.Invalid, "Invalid input: %v", err)
		}
	} else {
		k.Input = nil
	}
	switch v.strategy = req.MultitaskStrategy; v.strategy {
	case "":
		v.strategy = StrategyEnqueue
	case StrategyReject, StrategyEnqueue, StrategyInterrupt, StrategyRollback:
	default:
		return nil, apperr.Errorf(apperr.Invalid, "Invalid multitask_strategy %q: must be reject, enqueue, interrupt or rollback", v.strategy)
	}
	switch req.IfNotExists {
	case "", "reject", "create":
	default:
		return nil, apperr.Errorf(apperr.Invalid, "Invalid if_not_exists %q: must be create or reject", req.IfNotExists)
	}
	switch req.OnCompletion {
	case "", "delete", "keep":
	default:
		return nil, apperr.Errorf(apperr.Invalid, "Invalid on_completion %q: must be delete or keep", req.OnCompletion)
	}
	k.Temporary = stateless && req.OnCompletion != "keep"
	if req.AfterSeconds != nil {
		a := *req.AfterSeconds
		if a < 0 || a > 366*24*3600 || math.IsNaN(a) {
			return nil, apperr.Errorf(apperr.Invalid, "Invalid after_seconds: must be between 0 and one year")
		}
		v.delay = time.Duration(a * float64(time.Second))
	}
	v.kwargs = k
	return v, nil
}

// InputChannels is the part of a run's input that names the graph's
// channels: LangGraph reads only those and ignores the other keys, and so
// does Weft (no 422 for them).
func InputChannels(g *graph.Graph, in map[string]any) map[string]any {
	out := make(map[string]any, len(in))
	for k, v := range in {
		if _, ok := g.Channel(k); ok {
			out[k] = v
		}
	}
	return out
}

// RecursionLimit reads config.recursion_limit (default 25).
func RecursionLimit(cfg map[string]any) (int, error) {
	v, ok := cfg["recursion_limit"]
	if !ok || v == nil {
		return 25, nil
	}
	switch n := v.(type) {
	case json.Number:
		i, err := n.Int64()
		if err != nil || i > math.MaxInt32 {
			return 0, fmt.Errorf("not an integer: %s", n)
		}
		return int(i), nil
	case float64:
		if n != math.Trunc(n) || n > math.MaxInt32 {
			return 0, fmt.Errorf("not an integer: %v", n)
		}
		return int(n), nil
	}
	return 0, fmt.Errorf("not a number: %v", v)
}

// CommandUpdates reads command.update: an object, or a list of [key, value]
// pairs, each key a channel of g.
func CommandUpdates(g *graph.Graph, raw json.RawMessage) (graph.State, error) {
	var obj map[string]any
	if err := jsonv.Decode(raw, &obj); err != nil || obj == nil {
		var pairs [][]json.RawMessage
		if err := jsonv.Decode(raw, &pairs); err != nil {
			return nil, apperr.Errorf(apperr.Invalid, "Invalid command.update: must be an object or a list of [key, value] pairs")
		}
		obj = map[string]any{}
		for _, p := range pairs {
			var k string
			if len(p) != 2 || json.Unmarshal(p[0], &k) != nil {
				return nil, apperr.Errorf(apperr.Invalid, "Invalid command.update: each pair must be [key, value]")
			}
			var val any
			if err := jsonv.Decode(p[1], &val); err != nil {
				return nil, apperr.Errorf(apperr.Invalid, "Invalid command.update value for %q", k)
			}
			obj[k] = val
		}
	}
	if _, err := g.Apply(graph.State{}, obj); err != nil {
		return nil, apperr.Errorf(apperr.Invalid, "Invalid command.update: %v", err)
	}
	return obj, nil
}

// CommandGoto reads command.goto: a node name, {node, input}, or a list of
// either; it returns the node names (Send inputs are not supported).
func CommandGoto(g *graph.Graph, raw json.RawMessage) ([]string, error) {
	if !jsonv.Present(raw) {
		return nil, nil
	}
	var items []json.RawMessage
	if err := jsonv.Decode(raw, &items); err != nil {
		items = []json.RawMessage{raw}
	}
	var out []string
	for _, it := range items {
		var name string
		if json.Unmarshal(it, &name) != nil {
			var send struct {
				Node  string `json:"node"`
				Input any    `json:"input"`
			}
			if json.Unmarshal(it, &send) != nil || send.Node == "" {
				return nil, apperr.Errorf(apperr.Invalid, "Invalid command.goto: must be a node name or a list of node names")
			}
			if send.Input != nil {
				return nil, apperr.Errorf(apperr.BadRequest, "command.goto with a Send input is not supported yet")
			}
			name = send.Node
		}
		if _, ok := g.Node(name); !ok {
			return nil, apperr.Errorf(apperr.Invalid, "Invalid command.goto: graph %q has no node %q", g.ID, name)
		}
		out = append(out, name)
	}
	return out, nil
}

// Create creates a run on thread threadID (uuid.Nil: a stateless run on a
// new temporary thread) and queues its dispatch, in one transaction. On a
// busy thread the multitask strategy decides (reject → 409; enqueue;
// interrupt / rollback cancel the inflight runs first).
func (s *Service) Create(ctx context.Context, threadID uuid.UUID, req *CreateRequest) (*Run, error) {
	run, err := s.create(ctx, threadID, req)
	var changed *assistantChangedError
	if errors.As(err, &changed) {
		// The assistant was deleted, or moved to another graph, since it
		// was resolved: resolve it afresh (a 404 when it is gone) and try
		// once more.
		s.assistants.Forget(changed.id)
		run, err = s.create(ctx, threadID, req)
		if errors.As(err, &changed) {
			return nil, apperr.Errorf(apperr.NotFound, "Assistant not found: %s", changed.id)
		}
	}
	return run, err
}

// runAssistantKwargs is the kwargs of a new run ($6) with its assistant's
// (a) config under the run's config (run keys win), the configurable of the
// assistant, then of its thread (t), then of the run merged key by key, as
// LangGraph's servers merge them; its context under the run's context, and
// assistant_version.
const runAssistantKwargs = `$6::jsonb || jsonb_build_object(
		'config', a.config || ($6::jsonb -> 'config') || jsonb_build_object('configurable',
			CASE WHEN jsonb_typeof(a.config -> 'configurable') = 'object' THEN a.config -> 'configurable' ELSE '{}' END ||
			CASE WHEN jsonb_typeof(t.config -> 'configurable') = 'object' THEN t.config -> 'configurable' ELSE '{}' END ||
			CASE WHEN jsonb_typeof($6::jsonb -> 'config' -> 'configurable') = 'object' THEN $6::jsonb -> 'config' -> 'configurable' ELSE '{}' END),
		'context', a.context || ($6::jsonb -> 'context'),
		'assistant_version', a.version)`

// runMetadata is the metadata of a new run as LangGraph's servers merge it:
// its assistant's (a), its thread's (t, with the graph it now runs) and
// the request's ($7), later keys winning; the assistant_id is always the
// run's (weft_run_metadata puts it back when the row is read).
const runMetadata = `(a.metadata || t.metadata || jsonb_build_object('graph_id', a.graph_id) || $7::jsonb) - 'assistant_id'`

// errAssistantChanged is a run insert that found no assistant with the
// id and graph the run was validated against.
var errAssistantChanged = errors.New("runs: the assistant changed since it was resolved")

// assistantChangedError is errAssistantChanged for one assistant.
type assistantChangedError struct{ id uuid.UUID }

func (e *assistantChangedError) Error() string {
	return errAssistantChanged.Error() + ": " + e.id.String()
}
func (e *assistantChangedError) Unwrap() error { return errAssistantChanged }

func (s *Service) create(ctx context.Context, threadID uuid.UUID, req *CreateRequest) (*Run, error) {
	stateless := threadID == uuid.Nil
	v, err := s.validate(ctx, req, stateless)
	if err != nil {
		return nil, err
	}
	if stateless {
		return s.createStateless(ctx, v)
	}
	if v.strategy == StrategyEnqueue && v.kwargs.CheckpointID == "" {
		return s.enqueue(ctx, threadID, req.IfNotExists == "create", v)
	}
	var run *Run
	err = postgres.WithTx(ctx, s.db, func(tx pgx.Tx) error {
		var err error
		run, err = s.createTx(ctx, tx, threadID, req.IfNotExists == "create", v)
		return err
	})
	if err != nil {
		return nil, err
	}
	return run, nil
}

// enqueue creates a run with the enqueue strategy, which needs no decision
// about the thread's inflight runs: the thread's lock, the run, its
// dispatch and the thread's update go as one batch, one implicit
// transaction, one round trip.
func (s *Service) enqueue(ctx context.Context, threadID uuid.UUID, create bool, v *validated) (*Run, error) {
	p := &postgres.Pipeline{}
	if create {
		p.Exec(ctx, threads.InsertDefault, s.threads.InsertDefaultArgs(threadID, v.threadMetadata(), auth.Tenant(ctx))...)
	}
	// Another tenant's thread (or none) locks no row: a 404. The run's
	// insert then finds no thread either, and the dispatch's foreign key
	// fails the whole batch, so nothing is written.
	p.Queue(`SELECT 1 FROM threads WHERE thread_id = $1 AND tenant_id = $2 FOR UPDATE`, threadID, auth.Tenant(ctx)).
		Query(func(rows pgx.Rows) error {
			found := rows.Next()
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			if !found {
				return apperr.Errorf(apperr.NotFound, "Thread with ID %s not found", threadID)
			}
			return nil
		})
	run, err := s.queueRun(ctx, p, threadID, v, dispatch.EnqueueParams{EpochOfThread: true})
	if err != nil {
		return nil, err
	}
	err = p.Send(ctx, s.db)
	if postgres.IsForeignKeyViolation(err) {
		return nil, apperr.Errorf(apperr.NotFound, "Thread with ID %s not found", threadID)
	}
	if err != nil {
		return nil, err
	}
	return run, nil
}

// createStateless creates a stateless run: its new thread (busy), the
// run, its dispatch and the thread's update go as one batch, one implicit
// transaction, one round trip (a new thread has no runs to decide about,
// and validate refused a checkpoint_id).
func (s *Service) createStateless(ctx context.Context, v *validated) (*Run, error) {
	threadID := uuid.Must(uuid.NewV7())
	p := &postgres.Pipeline{}
	if err := s.threads.InsertTemporary(ctx, p, threadID, v.threadMetadata(), auth.Tenant(ctx)); err != nil {
		return nil, err
	}
	run, err := s.queueRun(ctx, p, threadID, v, dispatch.EnqueueParams{})
	if err != nil {
		return nil, err
	}
	if err := p.Send(ctx, s.db); err != nil {
		return nil, err
	}
	return run, nil
}

func (v *validated) threadMetadata() map[string]any {
	return map[string]any{"graph_id": v.graph.ID, "assistant_id": v.assistantID.String()}
}

// queueRun queues the run's insert, its dispatch (ep gives the epoch) and
// the thread's update (busy, graph and assistant in its metadata, run
// pointers) on p; the run is filled in when p is sent.
func (s *Service) queueRun(ctx context.Context, p *postgres.Pipeline, threadID uuid.UUID, v *validated, ep dispatch.EnqueueParams) (*Run, error) {
	runID := uuid.Must(uuid.NewV7())
	run := &Run{}
	kwargs, err := SealKwargs(ctx, storedKwargs(v.kwargs))
	if err != nil {
		return nil, err
	}
	// The run copies its assistant's current config, context and version
	// (see runAssistantKwargs); no row is inserted when the assistant is
	// gone or now has another graph than the one validated against, and
	// then the dispatch's foreign key fails the whole batch.
	p.Queue(`
		INSERT INTO runs (run_id, thread_id, assistant_id, graph_id, multitask_strategy, kwargs, metadata, temporary, created_at, updated_at,
			traceparent, tenant_id)
		SELECT $1, $2, a.assistant_id, a.graph_id, $5, `+runAssistantKwargs+`, `+runMetadata+`, $8, clock_timestamp() + $9::interval, clock_timestamp(),
			nullif($10, ''), t.tenant_id
		FROM assistants a, threads t WHERE a.assistant_id = $3 AND a.graph_id = $4 AND (a.tenant_id = $11 OR a.shared)
			AND t.thread_id = $2 AND t.tenant_id = $11
		RETURNING `+Columns,
		runID, threadID, v.assistantID, v.graph.ID, v.strategy, kwargs, v.metadata, v.kwargs.Temporary, v.delay,
		tracing.Traceparent(ctx), auth.Tenant(ctx)).
		Query(func(rows pgx.Rows) error {
			r, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Run])
			if errors.Is(err, pgx.ErrNoRows) {
				return &assistantChangedError{id: v.assistantID}
			}
			if err == nil {
				err = Open(ctx, &r)
			}
			*run = r
			return err
		})
	ep.RunID, ep.ThreadID, ep.GraphID, ep.Delay, ep.MaxAttempts = runID, threadID, v.graph.ID, v.delay, s.cfg.MaxAttempts
	if _, err := dispatch.Enqueue(ctx, p, ep); err != nil {
		return nil, err
	}
	// The thread's config becomes the run's (its assistant's merged under
	// it; for a Python graph, as the Python server keeps it, with the
	// configurable of the assistant and the thread, not the run's), and a
	// new run is activity that restarts the thread's ttl clock.
	if err := s.threads.SetRunCreated(ctx, p, threadID, v.threadMetadata(), runID, auth.Tenant(ctx),
		v.graph.Language == graph.LanguagePython); err != nil {
		return nil, err
	}
	return run, nil
}

func (s *Service) createTx(ctx context.Context, tx pgx.Tx, threadID uuid.UUID, create bool, v *validated) (*Run, error) {
	md := v.threadMetadata()
	var epoch int64
	var inflight []uuid.UUID
	if threadID == uuid.Nil {
		threadID = uuid.Must(uuid.NewV7())
		if err := s.threads.InsertTemporary(ctx, tx, threadID, md, auth.Tenant(ctx)); err != nil {
			return nil, err
		}
	} else {
		// Lock the thread (serialising run creation, cancellation and the
		// end of runs on it) and read its inflight runs, in one statement.
		err := tx.QueryRow(ctx, `SELECT dispatch_epoch, ARRAY(SELECT run_id FROM runs
				WHERE thread_id = $1 AND status IN ('pending', 'running') ORDER BY created_at)
			FROM threads WHERE thread_id = $1 AND tenant_id = $2 FOR UPDATE`, threadID, auth.Tenant(ctx)).Scan(&epoch, &inflight)
		if errors.Is(err, pgx.ErrNoRows) {
			if !create {
				return nil, apperr.Errorf(apperr.NotFound, "Thread with ID %s not found", threadID)
			}
			// An id another tenant holds is a 404, like any id of theirs.
			tag, err := tx.Exec(ctx, threads.InsertDefault, s.threads.InsertDefaultArgs(threadID, md, auth.Tenant(ctx))...)
			if err != nil {
				return nil, err
			}
			if tag.RowsAffected() == 0 {
				return nil, apperr.Errorf(apperr.NotFound, "Thread with ID %s not found", threadID)
			}
		} else if err != nil {
			return nil, err
		}
	}
	if v.kwargs.CheckpointID != "" {
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = '' AND checkpoint_id = $2)`,
			threadID.String(), v.kwargs.CheckpointID).Scan(&exists); err != nil {
			return nil, err
		}
		if !exists {
			return nil, apperr.Errorf(apperr.NotFound, "Checkpoint %s not found in thread %s", v.kwargs.CheckpointID, threadID)
		}
	}
	if len(inflight) > 0 {
		switch v.strategy {
		case StrategyReject:
			return nil, apperr.Errorf(apperr.Conflict,
				"Thread is already running a task. Wait for it to finish or choose a different multitask strategy.")
		case StrategyInterrupt, StrategyRollback:
			action := ActionInterrupt
			if v.strategy == StrategyRollback {
				action = ActionRollback
			}
			var err error
			if epoch, err = s.cancelInflight(ctx, tx, threadID, inflight, action); err != nil {
				return nil, err
			}
		}
	}
	// The run, its dispatch and the thread's update go in one round trip.
	p := &postgres.Pipeline{}
	run, err := s.queueRun(ctx, p, threadID, v, dispatch.EnqueueParams{Epoch: epoch})
	if err != nil {
		return nil, err
	}
	if err := p.Send(ctx, tx); err != nil {
		return nil, err
	}
	return run, nil
}

// cancelInflight cancels a thread's inflight runs with action, inside the
// caller's transaction (thread row locked): the dispatch epoch is bumped,
// queued dispatches are superseded (their runs become interrupted, or are
// deleted on rollback), and the worker of a claimed one is told to stop. It
// returns the new epoch.
func (s *Service) cancelInflight(ctx context.Context, tx pgx.Tx, threadID uuid.UUID, runIDs []uuid.UUID, action string) (int64, error) {
	epoch, err := s.threads.DispatchEpochBump(ctx, tx, threadID)
	if err != nil {
		return 0, err
	}
	queued, err := dispatch.CancelQueued(ctx, tx, runIDs, true)
	if err != nil {
		return 0, err
	}
	if err := s.endQueuedRuns(ctx, tx, queued, action); err != nil {
		return 0, err
	}
	for _, id := range runIDs {
		if _, err := dispatch.RequestCancel(ctx, tx, id, action); err != nil {
			return 0, err
		}
	}
	return epoch, nil
}

// endQueuedRuns ends runs whose dispatch was cancelled before any worker
// took it: interrupted, or deleted on rollback (they wrote nothing).
func (s *Service) endQueuedRuns(ctx context.Context, tx pgx.Tx, runIDs []uuid.UUID, action string) error {
	if len(runIDs) == 0 {
		return nil
	}
	var err error
	if action == ActionRollback {
		_, err = tx.Exec(ctx, `DELETE FROM runs WHERE run_id = ANY($1)`, runIDs)
	} else {
		_, err = tx.Exec(ctx, `UPDATE runs SET status = 'interrupted', finished_at = now(), updated_at = now(),
			`+webhook.PendingSet()+`
			WHERE run_id = ANY($1)`, runIDs)
	}
	if err == nil {
		_, err = tx.Exec(ctx, `SELECT pg_notify('`+ChannelRunEnd+`', id::text) FROM unnest($1::uuid[]) id`, runIDs)
	}
	return err
}

func collectRun(rows pgx.Rows, err error) (*Run, error) {
	if err != nil {
		return nil, err
	}
	r, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Run])
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// Validate checks req as Create would for a run on threadID (uuid.Nil: a
// stateless run) and creates nothing; it does not look at the thread. It
// returns the assistant req names (a graph name resolved to its system
// assistant) and that assistant's graph. Crons validate their payload
// with it when they are created or changed, so that each firing's run is
// refused for what has changed since, never for the payload itself.
func (s *Service) Validate(ctx context.Context, threadID uuid.UUID, req *CreateRequest) (assistantID uuid.UUID, graphID string, err error) {
	v, err := s.validate(ctx, req, threadID == uuid.Nil)
	if err != nil {
		return uuid.Nil, "", err
	}
	return v.assistantID, v.graph.ID, nil
}

// ErrAssistantChanged is returned (wrapped) by CreateTx when the
// assistant the request names was deleted, or moved to another graph,
// since it was resolved. The transaction is then aborted; what ResolveRef
// remembered is forgotten, so a new attempt in a new transaction (or
// savepoint) resolves it afresh.
var ErrAssistantChanged = errAssistantChanged

// CreateTx is Create inside the caller's transaction tx: the run, its
// dispatch, the thread's update (and a stateless run's new thread) are
// written in tx and take effect when the caller commits, with the
// dispatch's NOTIFY. The multitask strategies behave as in Create. An
// error may leave tx aborted: a caller that goes on after one runs
// CreateTx in a savepoint (tx.Begin). It never takes Create's
// one-round-trip enqueue path, which needs a transaction of its own.
func (s *Service) CreateTx(ctx context.Context, tx pgx.Tx, threadID uuid.UUID, req *CreateRequest) (*Run, error) {
	v, err := s.validate(ctx, req, threadID == uuid.Nil)
	if err != nil {
		return nil, err
	}
	run, err := s.createTx(ctx, tx, threadID, req.IfNotExists == "create", v)
	var changed *assistantChangedError
	if errors.As(err, &changed) {
		s.assistants.Forget(changed.id)
	}
	return run, err
}
