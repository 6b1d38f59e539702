package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/assistants"
	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/eventlog"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/pregel"
	"github.com/weftdev/weft/internal/threads"
)

// Service reads and changes thread state. Every change writes the
// checkpoint and the thread's projection (values, interrupts, status,
// state_updated_at) in one transaction, under the thread's row lock, so
// concurrent changes of one thread serialise and none is lost.
type Service struct {
	db       *pgxpool.Pool
	threads  *threads.Store
	graphs   *graph.Registry
	external ExternalUpdater   // update_state of graphs external workers serve
	catalog  *assistants.Store // worker graphs' stand-ins, cached
}

// NewService returns a Service; the stand-ins of worker graphs are read
// through catalog's cache.
func NewService(db *pgxpool.Pool, ts *threads.Store, graphs *graph.Registry, catalog *assistants.Store) *Service {
	return &Service{db: db, threads: ts, graphs: graphs, catalog: catalog}
}

func (s *Service) graphOf(ref *threads.StateRef) *graph.Graph {
	g, _ := s.graphs.Lookup(ref.GraphID())
	return g
}

// readGraph is the graph state reads assemble with: the one compiled into
// the server, or for a graph a worker registered a stand-in naming its
// nodes, in declaration order, which orders next and tasks as the worker's
// runtime does, and its channels' registered defaults (its values are
// shown as stored, unset channels as their defaults: pregel.StandIn); nil
// when neither. A stand-in is cached for assistants.StandInTTL, as run
// creation's is (a registration through this server is seen at once).
func (s *Service) readGraph(ctx context.Context, ref *threads.StateRef) (*graph.Graph, error) {
	if g := s.graphOf(ref); g != nil || ref.GraphID() == "" {
		return g, nil
	}
	g, ok, err := s.catalog.WorkerGraphCached(ctx, ref.GraphID())
	if err != nil || !ok {
		return nil, err
	}
	return g, nil
}

// Get returns the state at checkpoint cfg (the latest root checkpoint when
// cfg.CheckpointID is empty); a thread without checkpoints gives the empty
// state; an unknown checkpoint id is a 404. Pending tasks that run a
// subgraph which has checkpoints point at it (task.checkpoint); with
// subgraphs, their nested state is filled in too (task.state).
func (s *Service) Get(ctx context.Context, threadID uuid.UUID, cfg checkpoints.Config, subgraphs bool) (*ThreadState, error) {
	return s.GetWindowed(ctx, threadID, cfg, subgraphs, nil)
}

// GetWindowed is Get; with w, the value of list channel w.Channel is its
// last w.K elements, read without the rest of the list, and the state
// describes the window (ThreadState.MessagesWindow).
func (s *Service) GetWindowed(ctx context.Context, threadID uuid.UUID, cfg checkpoints.Config, subgraphs bool, w *WindowParams) (*ThreadState, error) {
	ref, err := s.threads.LockForState(ctx, s.db, threadID, false)
	if err != nil {
		return nil, err
	}
	cfg.ThreadID = threadID.String()
	var t *checkpoints.Tuple
	if w == nil {
		t, err = checkpoints.GetTuple(ctx, s.db, cfg)
	} else {
		t, err = checkpoints.GetTupleWithout(ctx, s.db, cfg, w.Channel)
	}
	if apperr.CodeOf(err) == apperr.NotFound {
		if cfg.CheckpointID != "" {
			return nil, apperr.Errorf(apperr.NotFound, "Checkpoint %s not found in thread %s", cfg.CheckpointID, threadID)
		}
		st := emptyState()
		if w != nil {
			if st.MessagesWindow, err = s.emptyWindow(ctx, threadID, *w); err != nil {
				return nil, err
			}
		}
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	g, err := s.readGraph(ctx, ref)
	if err != nil {
		return nil, err
	}
	var sw *StateWindow
	if w == nil {
		err = checkpoints.ResolveDelta(ctx, s.db, []checkpoints.Tuple{*t}, pregel.DeltaKinds(g))
	} else {
		t, sw, err = s.window(ctx, t, g, *w)
	}
	if err != nil {
		return nil, err
	}
	st := assemble(t, graphAt(g, t.Config.NS))
	st.MessagesWindow = sw
	return st, s.linkSubgraphs(ctx, threadID, g, []*ThreadState{st}, subgraphs, 0)
}

// maxSubgraphDepth bounds the expansion of nested subgraph states.
const maxSubgraphDepth = 8

// subgraphNS is the namespace LangGraph gives the subgraph that task runs
// from a checkpoint in namespace parent: "<name>:<task id>", nested with "|".
func subgraphNS(parent string, t *Task) string {
	ns := t.Name + ":" + t.ID
	if parent != "" {
		ns = parent + "|" + ns
	}
	return ns
}

// subgraphView is what state reads know of a subgraph of g: its runtime
// (task ids), not its nodes or channels, which g does not describe (nil
// for a graph compiled into this server, which has no subgraphs).
func subgraphView(g *graph.Graph) *graph.Graph {
	if g == nil {
		return nil
	}
	return &graph.Graph{ID: g.ID, Language: g.Language}
}

// graphAt is the graph a state read of namespace ns of a thread of g
// assembles with: g for the root, and, as LangGraph reads a namespace
// with the graph that declares it, the subgraph's view for a subgraph g
// declares, else g itself (a graph run inside a node, e.g. by a tool, is
// read as LangGraph's servers read it: with the root graph's nodes).
func graphAt(g *graph.Graph, ns string) *graph.Graph {
	if ns == "" || g == nil {
		return g
	}
	parent, last := "", ns
	if i := strings.LastIndex(ns, "|"); i >= 0 {
		parent, last = ns[:i], ns[i+1:]
	}
	if declaresSubgraph(g, parent, strings.SplitN(last, ":", 2)[0]) {
		return subgraphView(g)
	}
	return g
}

// declaresSubgraph reports whether node name, run from a checkpoint in
// namespace ns of a thread of graph g, is a subgraph g declares (its
// Subgraphs, by the path of node names): a graph that declares none (nil
// Subgraphs: compiled into this server, or registered before Weft kept
// them) lets every task's checkpoints count.
func declaresSubgraph(g *graph.Graph, ns, name string) bool {
	if g == nil || g.Subgraphs == nil {
		return true
	}
	path := name
	if ns != "" {
		var nodes []string
		for _, part := range strings.Split(ns, "|") {
			nodes = append(nodes, strings.SplitN(part, ":", 2)[0])
		}
		path = strings.Join(append(nodes, name), "|")
	}
	return slices.Contains(g.Subgraphs, path)
}

// linkSubgraphs points every pending task whose subgraph has checkpoints
// at the subgraph's namespace (task.checkpoint, one query for all the
// states), or with expand fills in the subgraph's latest state instead
// (task.state, recursively; task.checkpoint stays null, as in LangGraph,
// whose expanded task state is a snapshot rather than a config). Subgraphs are not
// graphs this server knows, so their values are every non-internal channel.
func (s *Service) linkSubgraphs(ctx context.Context, threadID uuid.UUID, g *graph.Graph, states []*ThreadState, expand bool, depth int) error {
	var nss []string
	for _, st := range states {
		for i := range st.Tasks {
			if declaresSubgraph(g, st.Checkpoint.NS, st.Tasks[i].Name) {
				nss = append(nss, subgraphNS(st.Checkpoint.NS, &st.Tasks[i]))
			}
		}
	}
	latest, err := checkpoints.LatestNamespaces(ctx, s.db, threadID.String(), nss)
	if err != nil || len(latest) == 0 {
		return err
	}
	for _, st := range states {
		for i := range st.Tasks {
			task := &st.Tasks[i]
			ns := subgraphNS(st.Checkpoint.NS, task)
			id, ok := latest[ns]
			if !ok {
				continue
			}
			cfg := checkpoints.Config{ThreadID: threadID.String(), NS: ns, CheckpointID: id}
			if !expand || depth >= maxSubgraphDepth {
				task.Checkpoint = &TaskCheckpoint{ThreadID: cfg.ThreadID, NS: ns}
				continue
			}
			t, err := checkpoints.GetTuple(ctx, s.db, cfg)
			if err != nil {
				return err
			}
			if err := checkpoints.ResolveDelta(ctx, s.db, []checkpoints.Tuple{*t}, pregel.DeltaKinds(g)); err != nil {
				return err
			}
			sub := assemble(t, subgraphView(g))
			if err := s.linkSubgraphs(ctx, threadID, g, []*ThreadState{sub}, true, depth+1); err != nil {
				return err
			}
			task.State = nestedState(sub)
		}
	}
	return nil
}

// HistoryParams select a page of history.
type HistoryParams struct {
	NS       string
	Before   string
	Limit    int
	Metadata map[string]any
	// MaxBytes caps the page: History stops once the sizes its emit
	// reports add up to this (the checkpoint that passes it is the page's
	// last; a page always has at least one). 0 = no cap.
	MaxBytes int
}

// historyChunkMax bounds how many checkpoints one query of History loads.
const historyChunkMax = 64

// historyFirstChunk is how many checkpoints History reads first under a
// byte cap: the SDKs' default page (10) in one read.
const historyFirstChunk = 10

// History calls emit with up to p.Limit checkpoints of the thread, newest
// first, before p.Before; emit returns the size the state added to the page.
// The checkpoints are read in chunks sized from what p.MaxBytes still
// allows at the average size so far (historyFirstChunk at first), so
// memory stays near the byte cap whatever the limit and the checkpoints'
// size. more tells that
// History stopped at the byte cap while older checkpoints may remain: the
// caller continues with Before = the last emitted checkpoint id.
func (s *Service) History(ctx context.Context, threadID uuid.UUID, p HistoryParams,
	emit func(*ThreadState) (int, error)) (more bool, err error) {
	ref, err := s.threads.LockForState(ctx, s.db, threadID, false)
	if err != nil {
		return false, err
	}
	g, err := s.readGraph(ctx, ref)
	if err != nil {
		return false, err
	}
	before, emitted, used := p.Before, 0, 0
	chunk := min(p.Limit, historyFirstChunk)
	if p.MaxBytes == 0 {
		chunk = min(p.Limit, historyChunkMax)
	}
	for emitted < p.Limit {
		list, err := checkpoints.List(ctx, s.db, checkpoints.Config{ThreadID: threadID.String(), NS: p.NS},
			checkpoints.ListOptions{Before: before, Limit: chunk, Filter: p.Metadata})
		if err != nil {
			return false, err
		}
		if err := checkpoints.ResolveDelta(ctx, s.db, list, pregel.DeltaKinds(g)); err != nil {
			return false, err
		}
		out := make([]*ThreadState, len(list))
		for i := range list {
			out[i] = assemble(&list[i], graphAt(g, p.NS))
			list[i] = checkpoints.Tuple{} // the raw rows go as the states are built
		}
		if err := s.linkSubgraphs(ctx, threadID, g, out, false, 0); err != nil {
			return false, err
		}
		for i, st := range out {
			n, err := emit(st)
			if err != nil {
				return false, err
			}
			out[i] = nil
			used += n
			emitted++
			before = st.Checkpoint.CheckpointID
			if p.MaxBytes > 0 && used >= p.MaxBytes {
				// More may follow unless this was the last of a short chunk.
				return emitted < p.Limit && (i < len(out)-1 || len(out) == chunk), nil
			}
		}
		if len(out) < chunk {
			return false, nil
		}
		chunk = min(p.Limit-emitted, historyChunkMax)
		if p.MaxBytes > 0 {
			chunk = min(chunk, (p.MaxBytes-used)/max(used/emitted, 1)+1)
		}
	}
	return false, nil
}

// UpdateParams are update_state's inputs.
type UpdateParams struct {
	Values       json.RawMessage
	AsNode       string
	CheckpointID string // base; "" = latest
	// NS is the base's namespace: "" for the root graph, a subgraph's
	// ("<node>:<task id>", nested with "|") to update that subgraph.
	NS string
	// Supersteps, for a worker's graph only, replace the above: LangGraph's
	// bulk update (each superstep's updates as one step) on a new thread.
	Supersteps []Superstep
}

// Update writes a new checkpoint on top of the base (an older base forks
// the thread) and returns its address. 409 while a run is active, 400 when
// the thread has no registered graph.
func (s *Service) Update(ctx context.Context, threadID uuid.UUID, p UpdateParams) (checkpoints.Config, error) {
	updates, err := pregel.ParseUpdates(p.Values)
	if err != nil {
		return checkpoints.Config{}, err
	}
	var out checkpoints.Config
	err = postgres.WithTx(ctx, s.db, func(tx pgx.Tx) error {
		out, err = s.updateTx(ctx, tx, threadID, updates, p)
		return err
	})
	if d := (*delegated)(nil); errors.As(err, &d) {
		return s.external.UpdateState(ctx, threadID, d.graphID, p)
	}
	return out, err
}

// graphOfThread is the graph state reads of thread id assemble with (see
// readGraph), nil when none is known.
func (s *Service) graphOfThread(ctx context.Context, id uuid.UUID) *graph.Graph {
	ref, err := s.threads.LockForState(ctx, s.db, id, false)
	if err != nil {
		return nil
	}
	g, _ := s.readGraph(ctx, ref)
	return g
}

// updateTx is Update inside the caller's transaction.
func (s *Service) updateTx(ctx context.Context, tx pgx.Tx, threadID uuid.UUID, updates []map[string]any, p UpdateParams) (checkpoints.Config, error) {
	var out checkpoints.Config
	ref, err := s.threads.LockForState(ctx, tx, threadID, true)
	if err != nil {
		return out, err
	}
	if ref.Status == threads.StatusBusy {
		return out, apperr.Errorf(apperr.Conflict, "Thread %s is busy: a run is pending or running; wait for it or cancel it", threadID)
	}
	g := s.graphOf(ref)
	if g == nil {
		if err := s.delegate(ctx, ref.GraphID()); err != nil {
			return out, err
		}
		return out, graphError(ref.GraphID(), s.graphs.IDs())
	}
	if p.NS != "" {
		// This server's own graphs have no subgraphs: no namespace but the
		// root holds their checkpoints.
		return out, apperr.Errorf(apperr.NotFound, "Checkpoint namespace %q not found in thread %s: graph %q has no subgraphs", p.NS, threadID, ref.GraphID())
	}
	base, err := checkpoints.GetTuple(ctx, tx, checkpoints.Config{ThreadID: threadID.String(), CheckpointID: p.CheckpointID})
	switch {
	case apperr.CodeOf(err) == apperr.NotFound && p.CheckpointID != "":
		return out, apperr.Errorf(apperr.NotFound, "Checkpoint %s not found in thread %s", p.CheckpointID, threadID)
	case apperr.CodeOf(err) == apperr.NotFound:
		base = nil
	case err != nil:
		return out, err
	}
	asNode := p.AsNode
	if asNode == "" {
		if asNode, err = pregel.DefaultAsNode(g, base); err != nil {
			return out, err
		}
	} else if err := pregel.CheckAsNode(g, asNode); err != nil {
		return out, err
	}
	var threadMax int64
	var baseCP *checkpoints.Checkpoint
	if base != nil {
		baseCP = &base.Checkpoint
	}
	if pregel.UsesIntVersions(baseCP) {
		if threadMax, err = checkpoints.BlobMaxIntVersion(ctx, tx, base.Config); err != nil {
			return out, err
		}
	}
	cp, md, changed, err := pregel.UpdateCheckpoint(g, base, updates, asNode, pregel.NextVersion(baseCP, threadMax))
	if err != nil {
		return out, err
	}
	parent := checkpoints.Config{ThreadID: threadID.String()}
	if base != nil {
		parent.CheckpointID = base.Config.CheckpointID
	}
	if out, err = checkpoints.Put(ctx, tx, parent, cp, md, changed); err != nil {
		return out, err
	}
	t := &checkpoints.Tuple{Config: out, Checkpoint: cp, Metadata: md}
	if base != nil {
		t.Parent = &base.Config
	}
	// The thread row may reference the blobs this put wrote (its new
	// versions with a value) and those the base, read in this
	// transaction, shares with it unchanged.
	blobs := checkpoints.WrittenVersions(&cp, changed)
	maps.Copy(blobs, checkpoints.StoredVersions(base, &cp))
	return out, s.project(ctx, tx, threadID, assemble(t, g), blobs)
}

// Superstep is one entry of POST /threads' supersteps: updates applied to
// a new thread, as LangGraph's bulk update_state does when threads are
// copied between deployments.
type Superstep struct {
	Updates []struct {
		Values json.RawMessage `json:"values"`
		AsNode string          `json:"as_node"`
	} `json:"updates"`
}

// ApplySupersteps writes supersteps to thread threadID inside tx, each
// update as one update_state on the previous one. It is the threads
// package's creation hook: an error rolls the creation back.
func (s *Service) ApplySupersteps(ctx context.Context, tx pgx.Tx, threadID uuid.UUID, raw json.RawMessage) error {
	var steps []Superstep
	if err := httpx.UnmarshalStrict(raw, &steps); err != nil {
		return apperr.Errorf(apperr.Invalid, "Invalid supersteps: must be a list of {updates: [{values, as_node}]}")
	}
	for i, step := range steps {
		for j, u := range step.Updates {
			updates, err := pregel.ParseUpdates(u.Values)
			if err == nil {
				_, err = s.updateTx(ctx, tx, threadID, updates, UpdateParams{AsNode: u.AsNode})
			}
			if d := (*delegated)(nil); i == 0 && j == 0 && errors.As(err, &d) && s.external != nil {
				// A worker's graph: once the thread exists, a worker applies
				// them all with LangGraph's own bulk update.
				graphID := d.graphID
				return &threads.InitAfterCommit{Run: func(ctx context.Context, id uuid.UUID) error {
					_, err := s.external.UpdateState(ctx, id, graphID, UpdateParams{Supersteps: steps})
					return err
				}}
			}
			if err != nil {
				var ae *apperr.Error
				if errors.As(err, &ae) {
					return apperr.Errorf(ae.Code, "supersteps[%d].updates[%d]: %s", i, j, ae.Message)
				}
				return err
			}
		}
	}
	return nil
}

// project writes the thread's projection of its latest state: the new
// checkpoint is always the thread's newest (ids are time-ordered). blobs
// are the channels whose values are exactly blob rows of the thread
// (threads.State.Blobs).
func (s *Service) project(ctx context.Context, tx pgx.Tx, threadID uuid.UUID, st *ThreadState, blobs map[string]string) error {
	interrupts, err := json.Marshal(interruptsByTask(st))
	if err != nil {
		return err
	}
	status := threads.StatusIdle
	if len(st.Next) > 0 {
		status = threads.StatusInterrupted
	}
	values, ok := st.Values.(map[string]any)
	if !ok {
		return fmt.Errorf("thread %s: state values are a %T", threadID, st.Values)
	}
	return s.threads.SetState(ctx, tx, threadID, threads.State{Values: values, Blobs: blobs, Interrupts: interrupts}, status)
}

// Copy duplicates a thread with all its checkpoints under a new id.
func (s *Service) Copy(ctx context.Context, threadID uuid.UUID) (*threads.Thread, error) {
	var out *threads.Thread
	err := postgres.WithTx(ctx, s.db, func(tx pgx.Tx) error {
		if _, err := s.threads.LockForState(ctx, tx, threadID, true); err != nil {
			return err
		}
		to := uuid.Must(uuid.NewV7())
		// Checkpoints first: the copied row is read back with its values
		// rendered, and a projection stored by reference names the copy's
		// blobs (same versions).
		if err := checkpoints.CopyThread(ctx, tx, threadID.String(), to.String()); err != nil {
			return err
		}
		t, err := s.threads.CopyRow(ctx, tx, threadID, to)
		if err != nil {
			return err
		}
		out = t
		return nil
	})
	return out, err
}

// PatchMetadata merges metadata into a checkpoint's metadata (the latest
// root checkpoint when checkpointID is empty).
func (s *Service) PatchMetadata(ctx context.Context, threadID uuid.UUID, checkpointID string, md map[string]any) error {
	return postgres.WithTx(ctx, s.db, func(tx pgx.Tx) error {
		if _, err := s.threads.LockForState(ctx, tx, threadID, true); err != nil {
			return err
		}
		t, err := checkpoints.GetTuple(ctx, tx, checkpoints.Config{ThreadID: threadID.String(), CheckpointID: checkpointID})
		if apperr.CodeOf(err) == apperr.NotFound {
			return apperr.Errorf(apperr.NotFound, "Thread %s has no checkpoint %s", threadID, checkpointID)
		}
		if err != nil {
			return err
		}
		return checkpoints.MergeMetadata(ctx, tx, t.Config, md)
	})
}

// decodeJSON decodes JSON keeping numbers exact (jsonv.Decode).
func decodeJSON(raw []byte, v any) error { return jsonv.Decode(raw, v) }

// Prune strategies of POST /threads/prune.
const (
	PruneDelete     = "delete"      // delete the threads (children detached)
	PruneKeepLatest = "keep_latest" // keep the threads and their latest checkpoint only
)

// Prune applies strategy to every thread in ids and returns how many
// existed. Unknown ids are skipped. Each thread is pruned in its own
// transaction.
func (s *Service) Prune(ctx context.Context, ids []uuid.UUID, strategy string) (int, error) {
	pruned := 0
	for _, id := range ids {
		var err error
		switch strategy {
		case PruneDelete:
			_, err = s.threads.Delete(ctx, id, threads.DeleteDetach)
		case PruneKeepLatest:
			err = s.keepLatest(ctx, id)
		default:
			return pruned, apperr.Errorf(apperr.Invalid, "Invalid strategy %q: must be delete or keep_latest", strategy)
		}
		switch {
		case apperr.CodeOf(err) == apperr.NotFound:
		case err != nil:
			return pruned, err
		default:
			pruned++
		}
	}
	return pruned, nil
}

func (s *Service) keepLatest(ctx context.Context, id uuid.UUID) error {
	return postgres.WithTx(ctx, s.db, func(tx pgx.Tx) error {
		ref, err := s.threads.LockForState(ctx, tx, id, true)
		if err != nil {
			return err
		}
		g, err := s.readGraph(ctx, ref)
		if err != nil {
			return err
		}
		latest, err := checkpoints.GetTuple(ctx, tx, checkpoints.Config{ThreadID: id.String()})
		if apperr.CodeOf(err) == apperr.NotFound {
			return nil // nothing to prune
		}
		if err != nil {
			return err
		}
		if _, err := eventlog.MaterializeThread(ctx, tx, id, "", latest.Config.CheckpointID); err != nil {
			return err
		}
		if err := s.threads.ValuesInline(ctx, tx, id, latest.Checkpoint.ChannelVersions); err != nil {
			return err
		}
		return checkpoints.PruneThread(ctx, tx, id.String(), latest.Config.CheckpointID, pregel.DeltaKinds(g))
	})
}
