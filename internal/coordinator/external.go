package coordinator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/assistants"
	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/checkpoints/serde"
	"github.com/weftdev/weft/internal/dispatch"
	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/pregel"
	"github.com/weftdev/weft/internal/threads"
	"github.com/weftdev/weft/internal/wire"
)

// The one-round-trip commit of external workers.
//
// A worker's commit names only its dispatch, and its end carries no thread
// projection, so the general path (commitTx) reads the dispatch, then
// writes, then reads the thread's latest checkpoint back to project it:
// about ten round trips in a transaction. commitExternal sends the whole
// commit as one pipelined batch (one implicit transaction, one round trip)
// when it can:
//
//   - the dispatch's run, thread and graph (fixed for a dispatch's life)
//     come from the claim this process answered, or one lookup;
//   - the replay key's insert fails with a unique violation when the
//     commit was applied already (or the fence fails, once its end was),
//     which undoes the whole batch: a replay, rare, takes the full path,
//     which answers it from run_commits;
//   - weft_fence checks and locks the claim (after the thread, for an end)
//     exactly as commitTx does; an end meeting a pending cancellation
//     raises WF499;
//   - an end projects the thread from the commit itself: the run's last
//     root checkpoint, sent complete (every channel's value; "complete":
//     true) in this commit, with the pending writes under it that this
//     commit carries (none can have been sent before it). The fence
//     statement also fails when the thread holds a newer root checkpoint
//     than that one.
//
// Anything else (no complete checkpoint in an end, a fence or key
// failure, a replay racing the first attempt) goes to commitTx, which
// decides authoritatively; so the fence and the replay key are exactly as
// strong as there, and a fast-path failure costs one extra round trip.

// errFullPath says commitExternal left the commit to commitTx.
var errFullPath = errors.New("runs: commit needs the full path")

// claimedIdentity is what a commit needs to know of its dispatch.
type claimedIdentity struct {
	runID, threadID uuid.UUID
	graphID         string
}

// claimCache maps dispatch ids to their identity. Its zero value is ready;
// it forgets a dispatch when its run ends here, and everything when it
// grows past claimCacheMax (dispatches whose worker died are never ended
// here).
type claimCache struct {
	mu sync.Mutex
	m  map[uuid.UUID]claimedIdentity
}

const claimCacheMax = 1 << 14

func (c *claimCache) put(d *dispatch.Dispatch) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= claimCacheMax {
		c.m = map[uuid.UUID]claimedIdentity{}
	}
	c.m[d.DispatchID] = claimedIdentity{runID: d.RunID, threadID: d.ThreadID, graphID: d.GraphID}
}

func (c *claimCache) get(id uuid.UUID) (claimedIdentity, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[id]
	return v, ok
}

func (c *claimCache) forget(id uuid.UUID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
}

// claimedIdentityOf returns dispatch id's run, thread and graph (ok false
// when there is no such dispatch).
func (s *Service) claimedIdentityOf(ctx context.Context, id uuid.UUID) (claimedIdentity, bool, error) {
	if v, ok := s.claims.get(id); ok {
		return v, true, nil
	}
	var d dispatch.Dispatch
	err := s.db.QueryRow(ctx, `SELECT run_id, thread_id, graph_id FROM run_dispatches WHERE dispatch_id = $1`, id).
		Scan(&d.RunID, &d.ThreadID, &d.GraphID)
	if errors.Is(err, pgx.ErrNoRows) {
		return claimedIdentity{}, false, nil
	}
	if err != nil {
		return claimedIdentity{}, false, err
	}
	d.DispatchID = id
	s.claims.put(&d)
	v, _ := s.claims.get(id)
	return v, true, nil
}

// commitExternal is an external worker's commit in one round trip, or
// errFullPath (see above).
func (s *Service) commitExternal(ctx context.Context, dispatchID uuid.UUID, key string, req *Commit) (*committed, error) {
	who, ok, err := s.claimedIdentityOf(ctx, dispatchID)
	if err != nil || !ok {
		if err == nil {
			err = errFullPath
		}
		return nil, err
	}
	newest := ""
	if req.End != nil {
		g, err := s.graphOf(ctx, who.graphID)
		if err != nil {
			return nil, err
		}
		t, blobs := lastCheckpointOf(who, g, req)
		if t == nil {
			return nil, errFullPath
		}
		pr := threads.Project(t, g)
		pr.Blobs = blobs
		req.Projection, newest = &pr, t.Config.CheckpointID
	}
	res := &committed{CommitResult: wire.CommitResult{CheckpointIDs: []string{}}}
	p := &postgres.Pipeline{}
	if req.End != nil {
		p.Exec(ctx, `SELECT 1 FROM threads WHERE thread_id = $1 FOR UPDATE`, who.threadID)
		// A newer root checkpoint than the projected one fences (NULL
		// dispatch): commitTx then projects what the thread holds.
		p.Queue(`SELECT weft_fence(CASE WHEN NOT EXISTS (SELECT 1 FROM checkpoints
				WHERE thread_id = $3 AND checkpoint_ns = '' AND checkpoint_id > $4) THEN $1::uuid END, $2, true)`,
			dispatchID, req.ClaimToken, who.threadID.String(), newest).QueryRow(func(row pgx.Row) error {
			return row.Scan(&res.Cancel)
		})
	} else {
		p.Queue(`SELECT weft_fence($1, $2, false)`, dispatchID, req.ClaimToken).QueryRow(func(row pgx.Row) error {
			return row.Scan(&res.Cancel)
		})
	}
	d := &dispatch.Dispatch{DispatchID: dispatchID, RunID: who.runID, ThreadID: who.threadID, GraphID: who.graphID}
	if err := s.queueCommit(ctx, p, d, key, req, res); err != nil {
		if errors.Is(err, postgres.ErrPipelineRead) {
			req.Projection = nil
			return nil, errFullPath // a list put needs reads: commitTx has a transaction for them
		}
		return nil, err
	}
	err = p.Send(ctx, s.db)
	if err == nil {
		if req.End != nil {
			s.claims.forget(dispatchID)
		}
		return res, nil
	}
	switch postgres.SQLState(err) {
	case postgres.CodeFenced, postgres.CodeCancelPending, "23505":
		// A replay of an applied commit meets its key's insert, or the fence
		// of its ended dispatch: commitTx answers it from run_commits.
		req.Projection = nil
		return nil, errFullPath
	}
	return nil, err
}

// lastCheckpointOf is what the thread's projection at the end of a run is
// computed from (threads.Project) with the commit alone: its last root
// checkpoint, when the worker sent it complete, as a read of the store
// would return it once written, with the writes under it in this commit;
// and the channels whose blob rows this commit writes with exactly the
// values SQL renders (the projection's Blobs). It returns nil when the
// commit does not allow it.
func lastCheckpointOf(who claimedIdentity, g *graph.Graph, req *Commit) (*checkpoints.Tuple, map[string]string) {
	var last *wire.CheckpointPut
	for i := range req.Checkpoints {
		c := &req.Checkpoints[i]
		if c.NS != "" {
			continue
		}
		if last != nil && c.Checkpoint.ID < last.Checkpoint.ID {
			return nil, nil // out of order: let the full path find the latest
		}
		last = c
	}
	if last == nil || !last.Complete {
		return nil, nil
	}
	// A graph with delta channels (LangGraph's DeltaChannel) sends them
	// without their value: the full path rebuilds them from the store.
	if len(pregel.DeltaKinds(g)) > 0 || last.Metadata["counters_since_delta_snapshot"] != nil {
		return nil, nil
	}
	cp := last.Checkpoint
	cp.ChannelValues = make(map[string]any, len(last.Checkpoint.ChannelValues))
	// A channel the put writes whose value SQL reads from its blob as the
	// projection has it (the JSON as stored, or a list of message
	// envelopes weft_thread_values normalises) may be referenced by the
	// thread row.
	blobs := map[string]string{}
	for ch, v := range last.Checkpoint.ChannelValues {
		if serde.IsUndefined(v) {
			continue // no value, as a read of the store finds it
		}
		sv, sqlReads, err := storedForm(v, true)
		if errors.Is(err, serde.ErrEmpty) {
			continue
		}
		if err != nil {
			return nil, nil
		}
		cp.ChannelValues[ch] = sv
		if sqlReads {
			if ver, ok := last.NewVersions[ch]; ok {
				blobs[ch] = ver
			}
		}
	}
	t := &checkpoints.Tuple{
		Config:        checkpoints.Config{ThreadID: who.threadID.String(), CheckpointID: cp.ID},
		Checkpoint:    cp,
		Metadata:      last.Metadata,
		PendingWrites: []checkpoints.Write{},
	}
	for _, b := range req.Writes {
		if b.NS != "" || b.CheckpointID != cp.ID {
			continue
		}
		for _, w := range b.Writes {
			v, _, err := storedForm(w.Value, false)
			if err != nil && !errors.Is(err, serde.ErrEmpty) {
				return nil, nil
			}
			w.Value = v
			w.Idx, _ = checkpoints.WriteIdx(w.Channel, w.Idx)
			t.PendingWrites = append(t.PendingWrites, w)
		}
	}
	// The order of a read (task path, task id, idx), with a later write of
	// the same key replacing the earlier one as the store does.
	slices.SortStableFunc(t.PendingWrites, func(a, b checkpoints.Write) int {
		if c := strings.Compare(a.TaskPath, b.TaskPath); c != 0 {
			return c
		}
		if c := strings.Compare(a.TaskID, b.TaskID); c != 0 {
			return c
		}
		return a.Idx - b.Idx
	})
	t.PendingWrites = dedupWrites(t.PendingWrites)
	return t, blobs
}

// dedupWrites keeps one write per (task id, idx) of a sorted list: the last
// one for the special channels (their rows are replaced), the first for
// others (their insert is ignored), as checkpoints.PutWrites
// stores them.
func dedupWrites(ws []checkpoints.Write) []checkpoints.Write {
	out := ws[:0]
	for _, w := range ws {
		if n := len(out); n > 0 && out[n-1].TaskID == w.TaskID && out[n-1].Idx == w.Idx && out[n-1].TaskPath == w.TaskPath {
			if w.Idx < 0 {
				out[n-1] = w
			}
			continue
		}
		out = append(out, w)
	}
	return out
}

// storedForm is v as a read of the store returns it once written: encoded
// as the checkpoint writer encodes it, then decoded as the reader decodes
// it (LangChain envelopes normalised; with raw, JSON without envelopes left
// undecoded, as channel values are read). sqlReads: SQL rendering the
// blob as a thread's values (weft_thread_values) gives the same JSON.
func storedForm(v any, raw bool) (out any, sqlReads bool, err error) {
	typ, data, err := serde.Encode(v)
	if err != nil {
		return nil, false, err
	}
	if typ != serde.TypeJSON {
		out, err = serde.Decode(typ, data)
		return out, false, err
	}
	if !bytes.Contains(data, serde.LCMarker) && json.Valid(data) {
		if raw {
			return json.RawMessage(data), true, nil
		}
		out, err = serde.Decode(typ, data)
		return out, true, err
	}
	if out, err = serde.Decode(typ, data); err != nil {
		return nil, false, err
	}
	sqlReads = serde.NormalizedBySQL(out)
	return serde.NormalizeLC(out), sqlReads, nil
}

// graphOf is the graph the thread of a run of graphID is projected with:
// the one compiled into the server, or the stand-in of a worker's graph
// (assistants.WorkerGraph: node order and channel defaults, cached for
// assistants.StandInTTL); nil when neither.
func (s *Service) graphOf(ctx context.Context, graphID string) (*graph.Graph, error) {
	if g, ok := s.graphs.Lookup(graphID); ok {
		return g, nil
	}
	g, _, err := s.cfg.Assistants.WorkerGraphCached(ctx, graphID)
	return g, err
}

// projectionGraphs is how threads.Store.ProjectLatest finds the graph of
// a thread whose run ended on the general path: the one compiled into the
// server, or a worker graph's stand-in read in the ending transaction
// (assistants.WorkerGraph, uncached).
func (s *Service) projectionGraphs() threads.GraphLookup {
	return threads.GraphLookup{Compiled: s.graphs, Worker: assistants.WorkerGraph}
}
