package workerapi

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/assistants"
	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/runs"
	"github.com/weftdev/weft/internal/state"
	"github.com/weftdev/weft/internal/wire"
)

// update_state on threads of worker graphs. Weft has no definition of such
// a graph (its reducers and edges are JavaScript in the worker), so it
// cannot apply an update itself the way LangGraph would. It hands the
// update to a worker instead, as a run: a run of the graph whose metadata
// key wire.UpdateStateKey holds {values, as_node, checkpoint_id,
// checkpoint_ns}, created with the reject strategy (409 on a busy thread). The worker applies it with
// LangGraph's own updateState through its checkpointer (the fenced commit),
// ends the run with {"__update_state__": <checkpoint config>} or
// {"__update_error__": {error, message}}, and the run is deleted once read:
// it is plumbing, not a run of the thread. The new checkpoint's metadata is
// what LangGraph writes (no run_id), so the run's deletion leaves it.

// UpdateStateTimeout bounds how long update_state waits for a worker of the
// thread's graph; the update is then withdrawn.
const UpdateStateTimeout = 30 * time.Second

// Serves reports whether graphID is a graph registered by an external
// worker (state.ExternalUpdater).
func (h *Handlers) Serves(ctx context.Context, graphID string) (bool, error) {
	var ok bool
	err := h.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM graphs WHERE graph_id = $1 AND source = $2)`, graphID, assistants.SourceWorker).Scan(&ok)
	return ok, err
}

var _ state.ExternalUpdater = (*Handlers)(nil)

// UpdateState applies update_state p to thread threadID through a worker of
// graphID (state.ExternalUpdater) and returns the new checkpoint.
func (h *Handlers) UpdateState(ctx context.Context, threadID uuid.UUID, graphID string, p state.UpdateParams) (checkpoints.Config, error) {
	values := p.Values
	if len(values) == 0 {
		values = json.RawMessage("null")
	}
	upd := map[string]any{"values": values, "as_node": p.AsNode, "checkpoint_id": p.CheckpointID, "checkpoint_ns": p.NS}
	if p.Supersteps != nil {
		upd = map[string]any{"supersteps": p.Supersteps}
	}
	md := map[string]any{wire.UpdateStateKey: upd}
	run, err := h.runs.Create(ctx, threadID, &runs.CreateRequest{AssistantID: h.threadAssistant(ctx, threadID, graphID), Metadata: md, MultitaskStrategy: runs.StrategyReject})
	if err != nil {
		return checkpoints.Config{}, err
	}
	bg := context.WithoutCancel(ctx)
	wctx, cancel := context.WithTimeout(ctx, UpdateStateTimeout)
	defer cancel()
	got, err := h.runs.Join(wctx, threadID, run.RunID)
	if err != nil {
		// No worker took it (or the client left): withdraw the update.
		if _, cerr := h.runs.Cancel(bg, threadID, run.RunID, runs.ActionRollback); cerr != nil && apperr.CodeOf(cerr) != apperr.NotFound {
			h.log.Warn("withdraw update_state run", "run_id", run.RunID, "error", cerr)
		}
		if ctx.Err() != nil {
			return checkpoints.Config{}, ctx.Err()
		}
		return checkpoints.Config{}, apperr.Errorf(apperr.Conflict,
			"No worker serving graph %q applied the update within %s: start one (weft-worker) and retry", graphID, UpdateStateTimeout)
	}
	defer func() {
		if err := h.runs.Delete(bg, threadID, run.RunID); err != nil && apperr.CodeOf(err) != apperr.NotFound {
			h.log.Warn("delete update_state run", "run_id", run.RunID, "error", err)
		}
	}()
	var res struct {
		Config *checkpoints.Config `json:"__update_state__"`
		Error  *struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		} `json:"__update_error__"`
	}
	if len(got.Result) > 0 {
		_ = json.Unmarshal(got.Result, &res)
	}
	switch {
	case res.Config != nil && res.Config.CheckpointID != "":
		res.Config.ThreadID = threadID.String()
		return *res.Config, nil
	case res.Error != nil:
		return checkpoints.Config{}, apperr.Errorf(apperr.BadRequest, "%s: %s", res.Error.Error, res.Error.Message)
	}
	return checkpoints.Config{}, apperr.Errorf(apperr.Conflict, "The worker did not apply the update (run %s ended %s)", run.RunID, got.Status)
}

// threadAssistant is the assistant an update of the thread runs as: the
// one of the thread's runs (its metadata's assistant_id) when that is an
// assistant of graphID, so a graph factory makes the graph from the same
// config (LangGraph's server makes it from the thread's config); else the
// graph's system assistant.
func (h *Handlers) threadAssistant(ctx context.Context, threadID uuid.UUID, graphID string) string {
	var ref *string
	err := h.db.QueryRow(ctx, `WITH t AS (SELECT metadata->>'assistant_id' AS id FROM threads WHERE thread_id = $1)
		SELECT a.assistant_id::text FROM t JOIN assistants a
			ON a.assistant_id = CASE WHEN t.id ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN t.id::uuid END
			AND a.graph_id = $2`, threadID, graphID).Scan(&ref)
	if err != nil || ref == nil {
		return graphID
	}
	return *ref
}
