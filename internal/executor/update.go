package executor

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/pregel"
	"github.com/weftdev/weft/internal/runs"
	"github.com/weftdev/weft/internal/wire"
)

// updateRequest is the update_state a server hands to a worker of the
// thread's graph as a run (metadata key wire.UpdateStateKey): the
// server has no definition of a worker's graph, the worker has.
type updateRequest struct {
	Values       json.RawMessage `json:"values"`
	AsNode       string          `json:"as_node"`
	CheckpointID string          `json:"checkpoint_id"`
}

// updateOf returns the update_state the run carries, if it is one.
func (x *execution) updateOf() (*updateRequest, bool) {
	var md map[string]json.RawMessage
	if err := jsonv.Decode(x.run.Metadata, &md); err != nil || !jsonv.Present(md[wire.UpdateStateKey]) {
		return nil, false
	}
	var u updateRequest
	if err := jsonv.Decode(md[wire.UpdateStateKey], &u); err != nil {
		return &updateRequest{Values: json.RawMessage(`"invalid"`)}, true // refused below as invalid values
	}
	return &u, true
}

// applyUpdate applies update_state u to the run's thread as the server
// applies it to its own graphs (pregel.UpdateCheckpoint: the graph's
// reducers, as_node's edges, a fork from an older checkpoint_id) and ends
// the run with {"__update_state__": <the new checkpoint's config>}, or with
// {"__update_error__": {error, message}} when the update is refused (the
// server answers 400 with it). The run's graph is never executed.
func (x *execution) applyUpdate(ctx context.Context, u *updateRequest) error {
	put, err := x.updatePut(ctx, u)
	var ae *apperr.Error
	switch {
	case errors.As(err, &ae):
		return x.c.end(ctx, "end", &wire.End{Status: runs.StatusSuccess,
			Result: map[string]any{"__update_error__": map[string]any{"error": "InvalidUpdateError", "message": ae.Message}}}, nil, nil)
	case err != nil:
		return err // the infrastructure failed: the attempt is retried
	}
	cfg := map[string]any{"thread_id": x.run.ThreadID.String(), "checkpoint_ns": "", "checkpoint_id": put.Checkpoint.ID}
	return x.c.end(ctx, "end", &wire.End{Status: runs.StatusSuccess, Result: map[string]any{"__update_state__": cfg}}, nil, nil, put)
}

// updatePut computes the checkpoint update u writes.
func (x *execution) updatePut(ctx context.Context, u *updateRequest) (wire.CheckpointPut, error) {
	updates, err := pregel.ParseUpdates(u.Values)
	if err != nil {
		return wire.CheckpointPut{}, err
	}
	base, err := x.io.Tuple(ctx, u.CheckpointID)
	switch {
	case apperr.CodeOf(err) == apperr.NotFound && u.CheckpointID != "":
		return wire.CheckpointPut{}, apperr.Errorf(apperr.NotFound, "Checkpoint %s not found in thread %s", u.CheckpointID, x.run.ThreadID)
	case apperr.CodeOf(err) == apperr.NotFound:
		base = nil
	case err != nil:
		return wire.CheckpointPut{}, err
	}
	asNode := u.AsNode
	if asNode == "" {
		if asNode, err = pregel.DefaultAsNode(x.g, base); err != nil {
			return wire.CheckpointPut{}, err
		}
	} else if err := pregel.CheckAsNode(x.g, asNode); err != nil {
		return wire.CheckpointPut{}, err
	}
	var baseCP *checkpoints.Checkpoint
	parent := ""
	if base != nil {
		baseCP, parent = &base.Checkpoint, base.Config.CheckpointID
	}
	version, err := x.version(ctx, baseCP)
	if err != nil {
		return wire.CheckpointPut{}, err
	}
	cp, md, changed, err := pregel.UpdateCheckpoint(x.g, base, updates, asNode, version)
	if err != nil {
		return wire.CheckpointPut{}, err
	}
	return wire.CheckpointPut{Parent: parent, Checkpoint: cp, Metadata: md, NewVersions: changed}, nil
}
