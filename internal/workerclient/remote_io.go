package workerclient

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/coordinator"
	"github.com/weftdev/weft/internal/dispatch"
	"github.com/weftdev/weft/internal/executor"
	"github.com/weftdev/weft/internal/runs"
	"github.com/weftdev/weft/internal/wire"
)

// remoteIO is executor.IO over the worker API of a remote server.
type remoteIO struct {
	c     *client
	d     dispatch.Dispatch
	run   runs.Run
	token uuid.UUID
	seq   atomic.Int64 // numbers this attempt's commits for their keys
}

func (r *remoteIO) Local() bool { return false }

// rawTuple is wire.RawTuple as read here: the stored columns kept as text.
type rawTuple struct {
	Config struct {
		ThreadID     string `json:"thread_id"`
		NS           string `json:"checkpoint_ns"`
		CheckpointID string `json:"checkpoint_id"`
	} `json:"config"`
	ParentCheckpointID *string         `json:"parent_checkpoint_id"`
	Checkpoint         json.RawMessage `json:"checkpoint"`
	Metadata           json.RawMessage `json:"metadata"`
	ChannelValues      [][]*string     `json:"channel_values"`
	PendingWrites      [][]*string     `json:"pending_writes"`
}

// stored decodes [type, base64 blob] (either may be null).
func stored(typ, blob *string) (checkpoints.StoredValue, error) {
	var v checkpoints.StoredValue
	if typ != nil {
		v.Type = *typ
	}
	if blob != nil {
		b, err := base64.StdEncoding.DecodeString(*blob)
		if err != nil {
			return v, fmt.Errorf("blob: %w", err)
		}
		v.Data = b
	}
	return v, nil
}

func (t *rawTuple) decode() (*checkpoints.Tuple, error) {
	blobs := make(map[string]checkpoints.StoredValue, len(t.ChannelValues))
	for _, cv := range t.ChannelValues {
		if len(cv) != 3 || cv[0] == nil {
			return nil, fmt.Errorf("checkpoint %s: malformed channel value", t.Config.CheckpointID)
		}
		v, err := stored(cv[1], cv[2])
		if err != nil {
			return nil, err
		}
		blobs[*cv[0]] = v
	}
	writes := make([]checkpoints.StoredWrite, 0, len(t.PendingWrites))
	for _, w := range t.PendingWrites {
		if len(w) != 4 || w[0] == nil || w[1] == nil {
			return nil, fmt.Errorf("checkpoint %s: malformed pending write", t.Config.CheckpointID)
		}
		v, err := stored(w[2], w[3])
		if err != nil {
			return nil, err
		}
		writes = append(writes, checkpoints.StoredWrite{TaskID: *w[0], Channel: *w[1], Value: v})
	}
	cfg := checkpoints.Config{ThreadID: t.Config.ThreadID, NS: t.Config.NS, CheckpointID: t.Config.CheckpointID}
	return checkpoints.TupleFromStored(cfg, t.ParentCheckpointID, t.Checkpoint, t.Metadata, blobs, writes)
}

func (r *remoteIO) Tuple(ctx context.Context, id string) (*checkpoints.Tuple, error) {
	root := ""
	var t rawTuple
	err := r.c.post(ctx, "/dispatch/checkpoints/get", wire.CheckpointReadRequest{ThreadID: r.run.ThreadID.String(),
		CheckpointNS: &root, CheckpointID: id}, &t, 30*time.Second, retryable)
	var he *httpError
	if errors.As(err, &he) && he.status == http.StatusNotFound {
		return nil, apperr.Errorf(apperr.NotFound, "%s", he.detail)
	}
	if err != nil {
		return nil, err
	}
	return t.decode()
}

// span pages through the run's root checkpoints, newest first.
func (r *remoteIO) Span(ctx context.Context) (executor.Span, bool, error) {
	var sp executor.Span
	root, before, found := "", "", false
	for {
		var page []struct {
			Config struct {
				CheckpointID string `json:"checkpoint_id"`
			} `json:"config"`
			Metadata checkpoints.Metadata `json:"metadata"`
		}
		err := r.c.post(ctx, "/dispatch/checkpoints/list", wire.CheckpointReadRequest{ThreadID: r.run.ThreadID.String(),
			CheckpointNS: &root, Before: before, Filter: map[string]any{"run_id": r.run.RunID.String()}, Limit: 1000},
			&page, 30*time.Second, retryable)
		if err != nil {
			return sp, false, err
		}
		if len(page) == 0 {
			return sp, found, nil
		}
		if !found {
			sp.Last, found = page[0].Config.CheckpointID, true
		}
		first := page[len(page)-1]
		sp.FirstStep, _ = first.Metadata.Step()
		sp.FirstSource, _ = first.Metadata["source"].(string)
		if len(page) < 1000 {
			return sp, true, nil
		}
		before = first.Config.CheckpointID
	}
}

// MaxIntVersion: the worker API has no read of the thread's blob versions,
// so a remote worker continuing a thread in the JS saver's integer scheme
// mints above its base checkpoint's versions only (as the JS saver does).
func (r *remoteIO) MaxIntVersion(context.Context) (int64, error) { return 0, nil }

// Commit sends cm's request; what only this process's coordinator uses of
// cm (the thread's projection, the run's own checkpoints) is not sent.
func (r *remoteIO) Commit(ctx context.Context, cm *coordinator.Commit) (*wire.CommitResult, error) {
	req := &cm.CommitRequest
	// Every commit gets a key of this attempt (a dispatch's attempts share
	// its id), so a retried request is applied once, and a stale attempt's
	// commit never passes for a later one's.
	key := req.CommitID
	if key == "" {
		key = strconv.FormatInt(r.seq.Add(1), 10)
	}
	req.CommitID = r.d.DispatchID.String() + ":" + strconv.Itoa(r.d.Attempt) + ":" + key
	// A checkpoint carries only the values of the channels it changed.
	for i, c := range req.Checkpoints {
		vals := make(map[string]any, len(c.NewVersions))
		for ch := range c.NewVersions {
			if v, ok := c.Checkpoint.ChannelValues[ch]; ok {
				vals[ch] = v
			}
		}
		req.Checkpoints[i].Checkpoint.ChannelValues = vals
	}
	var res wire.CommitResult
	if err := r.c.post(ctx, "/dispatch/"+r.d.DispatchID.String()+"/commit", req, &res, 30*time.Second, retryable); err != nil {
		return nil, r.fenced(err)
	}
	return &res, nil
}

func (r *remoteIO) Heartbeat(ctx context.Context) (string, error) {
	var res wire.HeartbeatResponse
	err := r.c.post(ctx, "/dispatch/"+r.d.DispatchID.String()+"/heartbeat", wire.FenceRequest{ClaimToken: r.token.String()},
		&res, 10*time.Second, nil)
	if err != nil {
		return "", r.fenced(err)
	}
	return res.Cancel, nil
}

func (r *remoteIO) Nack(ctx context.Context, reason string) (dispatch.State, error) {
	var res wire.NackResponse
	err := r.c.post(ctx, "/dispatch/"+r.d.DispatchID.String()+"/nack", wire.FenceRequest{ClaimToken: r.token.String(), Error: reason},
		&res, 10*time.Second, retryable)
	if err != nil {
		return "", r.fenced(err)
	}
	return dispatch.State(res.State), nil
}

// fenced turns the server's 409 into dispatch.ErrFenced.
func (r *remoteIO) fenced(err error) error {
	var he *httpError
	if errors.As(err, &he) && he.status == http.StatusConflict {
		return fmt.Errorf("%w (%s)", dispatch.Fenced(r.d.DispatchID), he.detail)
	}
	return err
}
