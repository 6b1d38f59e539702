package executor

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/coordinator"
	"github.com/weftdev/weft/internal/wire"
)

// committer turns an execution's results into commits: it gathers the
// checkpoints, pending writes and events of a run attempt and sends them
// through the attempt's IO, one commit at a time and in order (what piles
// up while a commit is in flight goes in the next), as the run's
// durability says. It is the Committer of the Python and JS workers
// (worker-py/weft_worker/run.py, worker-js/src/run.mjs) for Go:
//
//	emit, addWrites, addCheckpoint  queue an event, a write batch, a checkpoint
//	checkpoint                      a step's checkpoint, per durability (their persist)
//	flushAsync                      commit in the background (their soon)
//	flush, end                      commit now; the run's end (their flush, end)
//	send                            one commit (their _send)
//
// Every commit presents the claim token; after a failed commit nothing
// more is sent (a checkpoint without its parent must never be written),
// and nothing after the end.
type committer struct {
	io    IO
	token uuid.UUID
	// durability is the run's: "async" ("" too), "sync" or "exit" (set
	// once the run's kwargs are read, before anything is queued).
	durability string
	// cancel stops the attempt when a commit reports a requested
	// cancellation (set by attempt).
	cancel context.CancelCauseFunc

	mu      sync.Mutex
	pending wire.CommitRequest // writes and events not committed yet
	// own names the root checkpoints this run wrote that pending write
	// batches are under (coordinator.Commit.Own).
	own map[string]bool
	// sent are the writes committed already under checkpoint sentFor (the
	// last one a commit carried writes for): a background commit may take
	// a step's writes (an interrupt's) before the end projects the thread
	// from a tuple read earlier, which lacks them.
	sentFor string
	sent    []checkpoints.Write

	// Commits go out one at a time, in order (commitMu is held while one
	// is in flight); with async durability a step's commit runs while the
	// next step executes, and what piles up meanwhile goes in the next.
	commitMu sync.Mutex
	inflight bool // an async commit is running (under mu)
	// With "exit" durability: the checkpoint that will be written at the
	// end, and the ids of those it replaced (under mu).
	exitPut   *wire.CheckpointPut
	dropped   map[string]bool
	commitErr error         // the first failed commit: nothing may follow it (under mu)
	ended     bool          // the run's end was committed (under mu)
	endc      chan struct{} // closed when ended is set (under mu; made by flushAsync)
	async     sync.WaitGroup
}

// stepQueue is what a step queues with its checkpoint, in the same
// critical section: its tasks' writes and the events that repeat them or
// the checkpoint (updates, values, checkpoints, debug; the messages
// events of the nodes' updates, in their order). So they share the
// checkpoint's commit, and are stored as references to them (eventlog),
// however the background commits of streamed chunks interleave.
type stepQueue struct {
	writes wire.WriteBatch
	own    bool // writes are under a checkpoint this run wrote
	events []wire.Event
}

func (c *committer) emit(event string, data any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending.Events = append(c.pending.Events, wire.Event{Event: event, Data: data})
}

// queue adds q to what is pending (c.mu held).
func (c *committer) queue(q *stepQueue) {
	if q == nil {
		return
	}
	c.queueWrites(q.writes, q.own)
	c.pending.Events = append(c.pending.Events, q.events...)
}

// queueWrites adds batch b to what is pending (c.mu held); own says b is
// under a checkpoint this run wrote.
func (c *committer) queueWrites(b wire.WriteBatch, own bool) {
	if len(b.Writes) == 0 {
		return
	}
	c.pending.Writes = append(c.pending.Writes, b)
	if own {
		if c.own == nil {
			c.own = map[string]bool{}
		}
		c.own[b.CheckpointID] = true
	}
}

// addWrites queues batch b for the next commit; own says b is under a
// checkpoint this run wrote.
func (c *committer) addWrites(b wire.WriteBatch, own bool) {
	if len(b.Writes) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queueWrites(b, own)
}

// addInput queues the run's input checkpoint and the events that repeat
// it, for the first commit.
func (c *committer) addInput(put wire.CheckpointPut, events []wire.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending.Events = append(c.pending.Events, events...)
	c.addCheckpoint(put)
}

// flush commits what is pending now, after any commit in flight, under
// key ("" for the default).
func (c *committer) flush(ctx context.Context, key string) error {
	_, err := c.send(ctx, key, nil, nil, nil, nil)
	return err
}

// end commits the run's end with what is pending, plus cps and q (the step
// that made them); pr is the thread's projection when the committer knows
// it (coordinator.Commit.Projection).
func (c *committer) end(ctx context.Context, key string, end *wire.End, pr *coordinator.Projection, q *stepQueue, cps ...wire.CheckpointPut) error {
	_, err := c.send(ctx, key, cps, end, pr, q)
	return err
}

// send sends the pending writes and events, plus cps (with q, the step
// that made them) and end (with pr), as one commit, after any commit in
// flight. It uses a context that a cancellation does not interrupt, so a
// cancelled run can still record how it ended. A cancellation the commit
// reports stops the execution.
func (c *committer) send(ctx context.Context, key string, cps []wire.CheckpointPut, end *wire.End, pr *coordinator.Projection, q *stepQueue) (*wire.CommitResult, error) {
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	c.mu.Lock()
	if err := c.commitErr; err != nil {
		// An earlier commit failed: what it carried is lost, so nothing
		// after it may be written (a checkpoint without its parent).
		c.mu.Unlock()
		return nil, err
	}
	if c.ended || (end == nil && len(cps) == 0 && c.exitPut == nil && len(c.pending.Checkpoints) == 0 &&
		len(c.pending.Writes) == 0 && len(c.pending.Events) == 0) {
		// Nothing to send: a background commit that lost the race with
		// the end (which took what it had), or one with nothing pending.
		c.mu.Unlock()
		return &wire.CommitResult{}, nil
	}
	c.queue(q)
	for _, put := range cps {
		c.addCheckpoint(put)
	}
	req, own := c.pending, c.own
	c.pending, c.own = wire.CommitRequest{}, nil
	if end != nil {
		// The end marker goes only with the commit that ends the run, so a
		// stream never sees it before the run's status has changed.
		req.Events = append(req.Events, wire.Event{Event: "end", Data: map[string]any{"status": end.Status}})
	}
	if c.exitPut != nil && end != nil {
		req.Checkpoints = append(req.Checkpoints, *c.exitPut)
		c.exitPut = nil
	}
	if len(c.dropped) > 0 {
		req.Writes = slices.DeleteFunc(req.Writes, func(b wire.WriteBatch) bool { return c.dropped[b.CheckpointID] })
	}
	for _, b := range req.Writes {
		if b.CheckpointID != c.sentFor {
			c.sentFor, c.sent = b.CheckpointID, nil
		}
		c.sent = append(c.sent, b.Writes...)
	}
	c.mu.Unlock()
	req.ClaimToken, req.CommitID, req.End = c.token, key, end
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	res, err := c.io.Commit(cctx, &coordinator.Commit{CommitRequest: req, Projection: pr, Own: own})
	if err != nil {
		c.mu.Lock()
		if c.commitErr == nil {
			c.commitErr = err
		}
		c.mu.Unlock()
		return nil, err
	}
	if end != nil {
		c.mu.Lock()
		c.ended = true
		if c.endc != nil {
			close(c.endc)
		}
		c.mu.Unlock()
	}
	if res.Cancel != "" && end == nil && c.cancel != nil {
		c.cancel(ErrCancelRequested)
	}
	return res, nil
}

// checkpoint commits a step's checkpoint, with q (the step's writes and
// the events that repeat them), as the run's durability says: "sync" waits
// for it, "exit" keeps it for the end, "async" (the default, as in
// LangGraph) commits it in the background while the next step runs,
// unless a commit is in flight already (then it goes with the next one).
func (c *committer) checkpoint(ctx context.Context, put wire.CheckpointPut, q *stepQueue) error {
	c.mu.Lock()
	c.queue(q)
	c.addCheckpoint(put)
	if err := c.commitErr; err != nil {
		c.mu.Unlock()
		return err
	}
	switch {
	case c.durability == "exit":
		c.mu.Unlock()
		return nil
	case c.durability == "sync":
		c.mu.Unlock()
		return c.flush(ctx, "")
	}
	c.mu.Unlock()
	c.flushAsync(ctx)
	return nil
}

// flushAsync commits what is pending in the background, unless a commit
// is in flight already (what is pending then goes with the next one). What
// piled up while a commit was in flight follows it after flushLinger,
// unless the run's end (which takes it) comes first: a long step never
// holds back the checkpoint of the step before it.
func (c *committer) flushAsync(ctx context.Context) {
	c.mu.Lock()
	if c.inflight {
		c.mu.Unlock()
		return
	}
	c.inflight = true
	if c.endc == nil {
		c.endc = make(chan struct{})
	}
	endc := c.endc
	c.mu.Unlock()
	c.async.Go(func() {
		for {
			_ = c.flush(ctx, "") // a failure is kept in commitErr
			c.mu.Lock()
			more := c.commitErr == nil && !c.ended &&
				len(c.pending.Checkpoints)+len(c.pending.Writes)+len(c.pending.Events) > 0
			if !more {
				c.inflight = false
				c.mu.Unlock()
				return
			}
			c.mu.Unlock()
			t := time.NewTimer(flushLinger)
			select {
			case <-t.C:
			case <-endc:
				t.Stop()
			}
		}
	})
}

// flushLinger is how long what piled up during a background commit waits
// for the next commit (a quick next step's, or the end) before it is
// committed on its own.
const flushLinger = 20 * time.Millisecond

// addCheckpoint queues a checkpoint for the next commit (c.mu held). With
// "exit" durability only the run's last checkpoint is written, as in
// LangGraph: each new one replaces the one kept so far, taking over its
// parent (the last checkpoint written before the run) and the channel
// versions it changed (their blobs are written with it), and the pending
// writes under the one it replaces are dropped with it.
func (c *committer) addCheckpoint(put wire.CheckpointPut) {
	if c.durability != "exit" {
		c.pending.Checkpoints = append(c.pending.Checkpoints, put)
		return
	}
	if prev := c.exitPut; prev != nil {
		if c.dropped == nil {
			c.dropped = map[string]bool{}
		}
		c.dropped[prev.Checkpoint.ID] = true
		put.Parent = prev.Parent
		nv := maps.Clone(prev.NewVersions)
		maps.Copy(nv, put.NewVersions)
		put.NewVersions = nv
	}
	c.exitPut = &put
}

// settle waits for a commit in flight and returns its failure, if any.
func (c *committer) settle() error {
	c.async.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.commitErr
}

// writesUnder returns the pending writes of checkpoint t as the thread
// will hold them once what is pending is committed: t's own, those
// committed under it since t was read (or already in it), and those
// pending under it.
func (c *committer) writesUnder(t *checkpoints.Tuple) []checkpoints.Write {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Clone(t.PendingWrites)
	type key struct {
		task, channel string
		idx           int
	}
	seen := make(map[key]bool, len(t.PendingWrites))
	for _, w := range t.PendingWrites {
		seen[key{w.TaskID, w.Channel, w.Idx}] = true
	}
	var sent []checkpoints.Write
	if c.sentFor == t.Config.CheckpointID {
		sent = c.sent // committed since t was read, or already in it
	}
	for _, w := range sent {
		if !seen[key{w.TaskID, w.Channel, w.Idx}] {
			out = append(out, w)
		}
	}
	for _, b := range c.pending.Writes {
		if b.CheckpointID == t.Config.CheckpointID {
			out = append(out, b.Writes...)
		}
	}
	return out
}
