package coordinator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/crypt"
	"github.com/weftdev/weft/internal/dispatch"
	"github.com/weftdev/weft/internal/eventlog"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/metrics"
	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/runs"
	"github.com/weftdev/weft/internal/threads"
	"github.com/weftdev/weft/internal/tracing"
	"github.com/weftdev/weft/internal/webhook"
	"github.com/weftdev/weft/internal/wire"
)

// Commit is one commit as the coordinator applies it: the worker's request
// (wire.CommitRequest, as POST /dispatch/{id}/commit takes it), and what
// this process's executor knows besides. Nothing but the request is ever
// taken from a worker.
type Commit struct {
	wire.CommitRequest

	// InProcess commits come from this process's executor, which never
	// re-sends a commit whose outcome it did not learn (it gives the run
	// back instead), so they record no replay key; it names the run and
	// thread (RunID, ThreadID), so the commit can go in one round trip.
	InProcess       bool
	RunID, ThreadID uuid.UUID
	// Projection is what the thread shows of the run's last checkpoint,
	// with an end, when the committer knows it (the in-process executor
	// does; an external worker's end may let commitExternal compute it).
	Projection *Projection
	// Own names the root checkpoints, by id, that this run wrote: the
	// writes under them go with them on a rollback, so they need no
	// bookkeeping (set by the in-process executor).
	Own map[string]bool
}

// committed is a commit's answer, with how the run ended when the commit
// ended it (for metrics).
type committed struct {
	wire.CommitResult
	ended *runEnd
}

// runEnd is how a run ended, for the metrics: its outcome (its status, or
// metrics.OutcomeRolledBack) and how long it ran (seconds from its first
// claim to its end; < 0 unknown).
type runEnd struct {
	outcome string
	seconds float64
}

// Commit is the commit coordinator: the single durable write path of a run,
// for the in-process pool and external workers alike. In one transaction it
// checks the fence (dispatch_id, claim_token, unexpired lease; 409
// otherwise), writes the checkpoints with their blobs, the pending writes,
// the run's events (numbered by a per-run sequence), renews the lease, and
// with End finishes the run: run status, dispatch ended, thread projection
// (values, interrupts, status, error, run pointers). It is idempotent on
// the commit key.
func (s *Service) Commit(ctx context.Context, dispatchID uuid.UUID, req *Commit) (*wire.CommitResult, error) {
	start := time.Now()
	ctx, span := tracing.Start(ctx, s.cfg.Tracer, "weft.commit")
	defer span.End()
	res, err := s.commit(ctx, dispatchID, req)
	source := metrics.SourceWorker
	if req.InProcess {
		source = metrics.SourceInProcess
	}
	switch {
	case errors.Is(err, dispatch.ErrFenced):
		s.cfg.Metrics.Fenced(metrics.OpCommit)
		s.recordFenced(ctx, dispatchID, req.ClaimToken)
	case err != nil:
		s.cfg.Metrics.CommitFailed(source)
	default:
		writes := 0
		for _, b := range req.Writes {
			writes += len(b.Writes)
		}
		s.cfg.Metrics.Committed(source, time.Since(start), len(req.Checkpoints), writes, len(req.Events))
		if e := res.ended; e != nil {
			s.cfg.Metrics.RunEnded(e.outcome, e.seconds)
		}
	}
	if span.IsRecording() {
		span.SetAttributes(attribute.String("weft.dispatch_id", dispatchID.String()), attribute.String("weft.commit.source", source),
			attribute.Int("weft.commit.checkpoints", len(req.Checkpoints)), attribute.Int("weft.commit.events", len(req.Events)))
		if req.End != nil {
			span.SetAttributes(attribute.String("weft.run.status", string(req.End.Status)))
		}
		if res != nil && res.Replayed {
			span.SetAttributes(attribute.Bool("weft.commit.replayed", true))
		}
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
	}
	if res == nil {
		return nil, err
	}
	return &res.CommitResult, err
}

// commit is Commit without its metrics and span.
func (s *Service) commit(ctx context.Context, dispatchID uuid.UUID, req *Commit) (*committed, error) {
	key := req.CommitID
	if key == "" && len(req.Checkpoints) > 0 {
		key = req.Checkpoints[len(req.Checkpoints)-1].Checkpoint.ID
	}
	if req.InProcess {
		key = ""
	}
	for _, c := range req.Checkpoints {
		if c.Checkpoint.ID == "" {
			return nil, apperr.Errorf(apperr.Invalid, "Every checkpoint needs an id")
		}
	}
	if req.InProcess {
		res, err := s.commitOneShot(ctx, dispatchID, req)
		if postgres.SQLState(err) != postgres.CodeCancelPending && !errors.Is(err, errFullPath) {
			return res, err
		}
		// A cancellation is pending (the full path decides what the end
		// means), or a list put needs reads.
	} else {
		res, err := s.commitExternal(ctx, dispatchID, key, req)
		if !errors.Is(err, errFullPath) {
			return res, err
		}
	}
	var res *committed
	err := postgres.WithTx(ctx, s.db, func(tx pgx.Tx) error {
		var err error
		res, err = s.commitTx(ctx, tx, dispatchID, key, req)
		return err
	})
	return res, err
}

// commitOneShot is the commit of this process's executor, which knows the
// run and thread: the fence (weft_fence, which raises when the claim is no
// longer valid) and every write go as one batch in one implicit
// transaction, one round trip. An end that needs the full path (no
// projection given) or meets a pending cancellation (SQLSTATE WF499) is
// left to commitTx.
func (s *Service) commitOneShot(ctx context.Context, dispatchID uuid.UUID, req *Commit) (*committed, error) {
	if req.End != nil && req.Projection == nil {
		return nil, &pgconn.PgError{Code: postgres.CodeCancelPending}
	}
	res := &committed{CommitResult: wire.CommitResult{CheckpointIDs: []string{}}}
	p := &postgres.Pipeline{}
	if req.End != nil {
		p.Exec(ctx, `SELECT 1 FROM threads WHERE thread_id = $1 FOR UPDATE`, req.ThreadID)
	}
	p.Queue(`SELECT weft_fence($1, $2, $3)`, dispatchID, req.ClaimToken, req.End != nil).QueryRow(func(row pgx.Row) error {
		return row.Scan(&res.Cancel)
	})
	d := &dispatch.Dispatch{DispatchID: dispatchID, RunID: req.RunID, ThreadID: req.ThreadID}
	if err := s.queueCommit(ctx, p, d, "", req, res); err != nil {
		if errors.Is(err, postgres.ErrPipelineRead) {
			return nil, errFullPath // a list put needs reads: commitTx has a transaction for them
		}
		return nil, err
	}
	err := p.Send(ctx, s.db)
	if postgres.SQLState(err) == postgres.CodeFenced {
		return nil, dispatch.Fenced(dispatchID)
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// fenceSQL locks the dispatch and reads it with whether a commit of the
// same key was applied and its result, in one round trip.
var fenceSQL = `SELECT ` + dispatch.ColumnsOf("d") + `, c.commit_key IS NOT NULL AS applied, c.result FROM run_dispatches d
	LEFT JOIN run_commits c ON c.run_id = d.run_id AND c.commit_key = $2
	WHERE d.dispatch_id = $1 FOR UPDATE OF d`

type fenceRow struct {
	dispatch.Dispatch
	Applied bool   `db:"applied"`
	Result  []byte `db:"result"`
}

// commitTx is Commit's transaction: one round trip to lock and check the
// dispatch (after the thread, for an end), one that sends every write.
func (s *Service) commitTx(ctx context.Context, tx pgx.Tx, dispatchID uuid.UUID, key string, req *Commit) (*committed, error) {
	if req.End != nil {
		// Thread before dispatch: the lock order of run creation and cancel.
		if _, err := tx.Exec(ctx, `SELECT 1 FROM threads WHERE thread_id =
			(SELECT thread_id FROM run_dispatches WHERE dispatch_id = $1) FOR UPDATE`, dispatchID); err != nil {
			return nil, err
		}
	}
	rows, err := tx.Query(ctx, fenceSQL, dispatchID, key)
	if err != nil {
		return nil, err
	}
	fr, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[fenceRow])
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, dispatch.Fenced(dispatchID)
	}
	if err != nil {
		return nil, err
	}
	if fr.Applied {
		return s.replayed(ctx, tx, &fr, req)
	}
	d := &fr.Dispatch
	if err := dispatch.CheckFence(d, req.ClaimToken); err != nil {
		return nil, err
	}
	res := &committed{CommitResult: wire.CommitResult{CheckpointIDs: []string{}}}
	if d.CancelAction != nil {
		res.Cancel = *d.CancelAction
	}
	p := &postgres.Pipeline{Reader: tx}
	if err := s.queueCommit(ctx, p, d, key, req, res); err != nil {
		return nil, err
	}
	if err := p.Send(ctx, tx); err != nil {
		return nil, err
	}
	if req.End != nil && (d.CancelAction != nil || req.Projection == nil) {
		if res.ended, err = s.finish(ctx, tx, d, *req.End, req.Checkpoints); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// replayed is the answer to a commit whose key fr says was applied: the
// result recorded with the key, or, for a run's end (recorded without
// one), the same answer made again: nothing it holds changes once the run
// has ended (its events, its dispatch's cancellation), and the checkpoint
// ids are the request's own.
func (s *Service) replayed(ctx context.Context, tx pgx.Tx, fr *fenceRow, req *Commit) (*committed, error) {
	res := wire.CommitResult{CheckpointIDs: []string{}, Replayed: true}
	if fr.Result != nil {
		if err := json.Unmarshal(fr.Result, &res); err != nil {
			return nil, err
		}
		res.Replayed = true
		return &committed{CommitResult: res}, nil
	}
	for _, c := range req.Checkpoints {
		res.CheckpointIDs = append(res.CheckpointIDs, c.Checkpoint.ID)
	}
	if fr.CancelAction != nil {
		res.Cancel = *fr.CancelAction
	}
	err := tx.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM run_events WHERE run_id = $1`, fr.RunID).Scan(&res.LastSeq)
	return &committed{CommitResult: res}, err
}

// queueCommit queues the writes of req for claimed dispatch d: the
// checkpoints with their blobs, the pending writes, the events, the replay
// key, and either the lease renewal or, when no cancellation is pending and
// the projection is known, the end of the run. res gets the results.
func (s *Service) queueCommit(ctx context.Context, p *postgres.Pipeline, d *dispatch.Dispatch, key string, req *Commit, res *committed) error {
	tid := d.ThreadID.String()
	puts := make([]checkpoints.PutItem, len(req.Checkpoints))
	for i, c := range req.Checkpoints {
		puts[i] = checkpoints.PutItem{Config: checkpoints.Config{ThreadID: tid, NS: c.NS, CheckpointID: c.Parent},
			Checkpoint: c.Checkpoint, Metadata: c.Metadata, NewVersions: c.NewVersions}
		res.CheckpointIDs = append(res.CheckpointIDs, c.Checkpoint.ID)
	}
	if err := checkpoints.PutMany(ctx, p, puts); err != nil {
		return err
	}
	ecps := eventCheckpoints(req.Checkpoints, puts)
	if ver := inputVersion(req.Checkpoints, d.RunID, s.cfg.InputRefMinBytes); ver != "" && crypt.FromContext(ctx) == nil {
		// The run's input is now stored in its input checkpoint: its row
		// need not repeat it (with encryption at rest both are sealed).
		if err := runs.InputRefSet(ctx, p, d.RunID, d.ThreadID, ver, s.cfg.InputRefMinBytes); err != nil {
			return err
		}
	}
	// Writes under a checkpoint this commit writes with the run's id in its
	// metadata (a worker's usual step) are the run's own: recordWrites' check
	// of the stored row would find exactly that, so it is skipped.
	var mine map[[2]string]bool
	for _, c := range req.Checkpoints {
		if id, _ := c.Metadata["run_id"].(string); id == d.RunID.String() {
			if mine == nil {
				mine = map[[2]string]bool{}
			}
			mine[[2]string{c.NS, c.Checkpoint.ID}] = true
		}
	}
	batches := make([]checkpoints.WritesAt, 0, len(req.Writes))
	for _, b := range req.Writes {
		batches = append(batches, checkpoints.WritesAt{NS: b.NS, CheckpointID: b.CheckpointID, Writes: b.Writes})
	}
	if err := checkpoints.PutWritesMany(ctx, p, tid, batches); err != nil {
		return err
	}
	for _, b := range req.Writes {
		if (b.NS == "" && req.Own[b.CheckpointID]) || mine[[2]string{b.NS, b.CheckpointID}] {
			continue
		}
		if err := recordWrites(ctx, p, d.RunID, checkpoints.Config{ThreadID: tid, NS: b.NS, CheckpointID: b.CheckpointID}, b.Writes); err != nil {
			return err
		}
	}
	if len(req.Events) > 0 {
		if err := appendEvents(ctx, p, d.RunID, d.ThreadID, req, ecps, eventlog.Options{MinBytes: s.cfg.EventRefMinBytes}, &res.LastSeq); err != nil {
			return err
		}
	} else if !req.InProcess {
		p.Queue(`SELECT coalesce(max(seq), 0) FROM run_events WHERE run_id = $1`, d.RunID).QueryRow(func(row pgx.Row) error {
			return row.Scan(&res.LastSeq)
		})
	}
	switch {
	case key != "" && req.End != nil:
		// An end's key is recorded without its result (replayed makes it
		// again): a long thread keeps a row of a few dozen bytes a run.
		p.Exec(ctx, `INSERT INTO run_commits (run_id, commit_key) VALUES ($1, $2)`, d.RunID, key)
	case key != "":
		// Recorded before the end: a rollback deletes the run, and this row
		// with it (a replay then meets the fence).
		p.Exec(ctx, `INSERT INTO run_commits (run_id, commit_key, result)
			VALUES ($1, $2, jsonb_build_object('checkpoint_ids', $3::jsonb,
				'last_seq', (SELECT coalesce(max(seq), 0) FROM run_events WHERE run_id = $1),
				'cancel', (SELECT coalesce(cancel_action, '') FROM run_dispatches WHERE dispatch_id = $4)))`,
			d.RunID, key, jsonv.Must(res.CheckpointIDs), d.DispatchID)
	}
	if req.End != nil && !req.InProcess {
		// Only the end's answer is asked again once the run has ended (a
		// worker sends its commits in order, the end last; a fenced one
		// gets 409 whatever it replays): the other keys go, so a long
		// thread does not keep one row per step of every run. In-process
		// runs record no keys: nothing to delete.
		p.Exec(ctx, `DELETE FROM run_commits WHERE run_id = $1 AND commit_key <> $2`, d.RunID, key)
	}
	switch {
	case req.End == nil:
		// A commit renews a lease that is past its half (heartbeats renew
		// the rest), sparing the queue an update per step.
		p.Exec(ctx, `UPDATE run_dispatches SET lease_expires_at = clock_timestamp() + $2::interval, updated_at = now()
			WHERE dispatch_id = $1 AND lease_expires_at < clock_timestamp() + $2::interval / 2`, d.DispatchID, s.cfg.Lease)
	case d.CancelAction == nil && req.Projection != nil:
		return s.endRunFast(ctx, p, d, *req.End, req.Projection, ecps, res)
	}
	return nil
}

// inputVersion is the version of the __start__ blob that the put of run
// runID's input checkpoint among cps writes, "" when none does. That put
// is LangGraph's (the in-process executor's and a worker's alike): in the
// root namespace, with metadata source "input" and the run's run_id, and
// __start__, which holds the run's input, among its new versions with a
// value (a command's input checkpoint writes the channels it updates); ""
// too when minBytes (the reference threshold, <= 0: never) rules it out.
func inputVersion(cps []wire.CheckpointPut, runID uuid.UUID, minBytes int) string {
	if minBytes <= 0 {
		return ""
	}
	for _, c := range cps {
		if c.NS != "" || c.Metadata["source"] != "input" || c.Metadata["run_id"] != runID.String() {
			continue
		}
		v, ok := c.Checkpoint.ChannelValues[graph.START]
		if !ok {
			continue
		}
		// The threshold is on jsonb's text of the input, seldom more than
		// twice its compact JSON (a space after each ':' and ','): an input
		// under half of it stays whole without a statement asking (whole is
		// always correct; the reference only saves space).
		if b, err := json.Marshal(v); err == nil && 2*len(b) < minBytes {
			return ""
		}
		return c.NewVersions[graph.START]
	}
	return ""
}

// recordWrites remembers that this run made writes recorded under a
// checkpoint it may not have written (a rollback deletes them with it).
func recordWrites(ctx context.Context, db postgres.DBTX, runID uuid.UUID, cfg checkpoints.Config, writes []checkpoints.Write) error {
	if len(writes) == 0 {
		return nil
	}
	taskIDs, idxs := make([]string, len(writes)), make([]int32, len(writes))
	for i, w := range writes {
		idx, _ := checkpoints.WriteIdx(w.Channel, w.Idx)
		taskIDs[i], idxs[i] = w.TaskID, int32(idx)
	}
	// Writes under the run's own checkpoints go with them on a rollback;
	// only those under an older checkpoint need remembering.
	_, err := db.Exec(ctx, `INSERT INTO run_writes (run_id, thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
		SELECT $1, $2, $3, $4, t, i FROM unnest($5::text[], $6::int[]) AS w(t, i)
		WHERE NOT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = $2 AND checkpoint_ns = $3 AND checkpoint_id = $4
			AND metadata @> jsonb_build_object('run_id', $7::text))
		ON CONFLICT DO NOTHING`,
		runID, cfg.ThreadID, cfg.NS, cfg.CheckpointID, taskIDs, idxs, runID.String())
	return err
}

// appendEvents queues the append of req's events to the run's log with
// the next sequence numbers, and a notification of the last one, stored in
// *last. An event that repeats the values of one of req's checkpoints, or
// an updates event that repeats the writes of one of its tasks (both
// written in the same commit), is stored as a reference to them
// (eventlog.Encode). With encryption at rest (ctx's keyring) every event
// is stored whole, its data sealed; the names stay plain.
func appendEvents(ctx context.Context, p *postgres.Pipeline, runID, threadID uuid.UUID, req *Commit, cps []eventlog.Checkpoint, opt eventlog.Options, last *int64) error {
	kr := crypt.FromContext(ctx)
	if kr != nil {
		opt.MinBytes = -1
	}
	evs := make([]eventlog.Event, len(req.Events))
	for i, e := range req.Events {
		evs[i] = eventlog.Event{Name: e.Event, Data: e.Data}
	}
	rows, err := eventlog.Encode(evs, cps, eventWrites(req.Writes), opt)
	if err != nil {
		return err
	}
	names, datas, refs := make([]string, len(rows)), make([]string, len(rows)), make([]*string, len(rows))
	for i, r := range rows {
		names[i], datas[i] = r.Name, string(r.Data)
		if r.Ref != nil {
			ref := string(r.Ref)
			refs[i] = &ref
		}
		if kr != nil {
			datas[i] = string(kr.SealJSON(r.Data))
		}
	}
	// The caller holds the dispatch's row lock: one writer per run, so the
	// next number is the last one plus one (an index-only lookup).
	p.Queue(`
		WITH ins AS (
			INSERT INTO run_events (run_id, seq, thread_id, event, data, ref)
			SELECT $1, coalesce((SELECT max(seq) FROM run_events WHERE run_id = $1), 0) + e.ord, $2, e.name, e.data::jsonb, e.ref::jsonb
			FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS e(name, data, ref, ord)
			RETURNING seq
		)
		SELECT max(seq), pg_notify('`+runs.ChannelRunEvent+`', $1::text || ' ' || $2::text) FROM ins`,
		runID, threadID, names, datas, refs).QueryRow(func(row pgx.Row) error {
		return row.Scan(last, nil)
	})
	return nil
}

// eventCheckpoints are a commit's checkpoints as eventlog references them,
// with the encodings of their puts (puts[i] is cps[i]'s; nil: unknown).
func eventCheckpoints(cps []wire.CheckpointPut, puts []checkpoints.PutItem) []eventlog.Checkpoint {
	out := make([]eventlog.Checkpoint, len(cps))
	for i, c := range cps {
		out[i] = eventlog.Checkpoint{NS: c.NS, ID: c.Checkpoint.ID, Values: c.Checkpoint.ChannelValues, Changed: c.NewVersions}
		if i < len(puts) {
			out[i].Encoded = puts[i].Encoded
		}
	}
	return out
}

// eventWrites are a commit's write batches as eventlog references them.
func eventWrites(batches []wire.WriteBatch) []eventlog.Writes {
	out := make([]eventlog.Writes, len(batches))
	for i, b := range batches {
		out[i] = eventlog.Writes{NS: b.NS, ID: b.CheckpointID, Writes: b.Writes}
	}
	return out
}

// Projection is what the thread shows of its latest checkpoint, when the
// committer knows it (the in-process executor does; it saves reading the
// checkpoint back): threads.Project of it, with Blobs naming the channels
// of Values whose value is exactly what the put of the projected
// checkpoint stores for them (channel → version: checkpoints.WrittenVersions
// of the put), that put being in this commit or committed before it by the
// same run: the thread row may reference those blobs instead of copying
// the lists (threads.Store.Stored). The write refuses a reference to a
// blob that does not exist.
type Projection = threads.Projection

// endRunSQL ends run $1 with status $2, error $3, result $4 and result
// reference $5 (marking
// its webhook pending), notifies runs.ChannelRunEnd, and returns how many
// seconds it ran since its first claim (-1: never claimed); no row when
// the run is gone.
var endRunSQL = `WITH r AS (
		UPDATE runs SET status = $2, error = $3, result = $4, result_ref = $5, finished_at = now(), updated_at = now(),
			` + webhook.PendingSet() + `
		WHERE run_id = $1 RETURNING run_id, started_at
	)
	SELECT pg_notify('` + runs.ChannelRunEnd + `', run_id::text), coalesce(extract(epoch FROM now() - started_at)::float8, -1) FROM r`

// scanRunSeconds reads endRunSQL's answer into *seconds (left alone when
// there is no row).
func scanRunSeconds(rows pgx.Rows, seconds *float64) error {
	defer rows.Close()
	for rows.Next() {
		if err := rows.Scan(nil, seconds); err != nil {
			return err
		}
	}
	return rows.Err()
}

// endRunFast queues the end of run d (no cancellation requested) with a
// known projection: run status, dispatch acked, thread projection; res
// learns how the run ended. cps are the checkpoints of the ending commit.
func (s *Service) endRunFast(ctx context.Context, p *postgres.Pipeline, d *dispatch.Dispatch, end wire.End, pr *Projection, cps []eventlog.Checkpoint, res *committed) error {
	runErr, result, ref, err := s.endDocs(ctx, end, cps)
	if err != nil {
		return err
	}
	e := &runEnd{outcome: string(end.Status), seconds: -1}
	p.Queue(endRunSQL, d.RunID, end.Status, runErr, result, ref).Query(func(rows pgx.Rows) error {
		return scanRunSeconds(rows, &e.seconds)
	})
	res.ended = e
	if err := dispatch.End(ctx, p, d.DispatchID, dispatch.Acked, string(end.Status), ""); err != nil {
		return err
	}
	// The puts of this commit come before in the same transaction: a
	// reference to a blob one of them writes is readable when this commits,
	// and the encoding that put made is the value's.
	for _, c := range cps {
		for ch, ver := range pr.Blobs {
			if c.NS == "" && c.Changed[ch] == ver && c.Encoded[ch] != nil {
				if pr.Encoded == nil {
					pr.Encoded = map[string][]byte{}
				}
				pr.Encoded[ch] = c.Encoded[ch]
			}
		}
	}
	return s.threads.SetRunEnded(ctx, p, d.ThreadID, pr, runErr)
}

// endDocs renders an end's error and result documents as stored. A
// result that repeats the values of one of cps (the checkpoints of the
// ending commit, usually the run's last) is stored as a reference to it,
// ref, and the rest (eventlog.EncodeResult): each run would otherwise
// store the whole conversation again. With encryption at rest the result
// is stored whole, sealed.
func (s *Service) endDocs(ctx context.Context, end wire.End, cps []eventlog.Checkpoint) (runErr, result, ref []byte, err error) {
	if end.Error != nil {
		return jsonv.Must(end.Error), jsonv.Must(map[string]any{"__error__": end.Error}), nil, nil
	}
	if end.Result == nil {
		return nil, nil, nil, nil
	}
	if kr := crypt.FromContext(ctx); kr != nil {
		return nil, kr.SealJSON(jsonv.Must(end.Result)), nil, nil
	}
	row, err := eventlog.EncodeResult(end.Result, cps, eventlog.Options{MinBytes: s.cfg.EventRefMinBytes})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("run result: %w", err)
	}
	return nil, row.Data, row.Ref, nil
}

// finish ends the run of claimed dispatch d (locked) with end: the run's
// status, error and result; the dispatch acked (cancelled when a
// cancellation was requested); the thread's projection. A requested
// rollback deletes the run and everything it wrote instead. cps are the
// checkpoints of the ending commit.
func (s *Service) finish(ctx context.Context, tx pgx.Tx, d *dispatch.Dispatch, end wire.End, cps []wire.CheckpointPut) (*runEnd, error) {
	action := ""
	if d.CancelAction != nil {
		action = *d.CancelAction
	}
	dstate, outcome := dispatch.Acked, string(end.Status)
	if action != "" {
		dstate, outcome = dispatch.Cancelled, "cancelled:"+action
	}
	return s.endRun(ctx, tx, d, end, cps, action, dstate, outcome, "")
}

// endRun records the end of run d.RunID and of its dispatch's attempt, and
// returns how the run ended. cps are the checkpoints written with the end
// (none when the run ends outside a commit).
func (s *Service) endRun(ctx context.Context, tx pgx.Tx, d *dispatch.Dispatch, end wire.End, cps []wire.CheckpointPut, action string, dstate dispatch.State, outcome, errText string) (*runEnd, error) {
	if action == runs.ActionRollback {
		if err := s.rollbackRun(ctx, tx, d.ThreadID, d.RunID); err != nil {
			return nil, err
		}
		return &runEnd{outcome: metrics.OutcomeRolledBack, seconds: -1}, s.threads.ProjectLatest(ctx, tx, d.ThreadID, s.projectionGraphs(), d.GraphID, nil)
	}
	if action == runs.ActionInterrupt && end.Status != runs.StatusError {
		end.Status = runs.StatusInterrupted
	}
	runErr, result, ref, err := s.endDocs(ctx, end, eventCheckpoints(cps, nil))
	if err != nil {
		return nil, err
	}
	e := &runEnd{outcome: string(end.Status), seconds: -1}
	rows, err := tx.Query(ctx, endRunSQL, d.RunID, end.Status, runErr, result, ref)
	if err == nil {
		err = scanRunSeconds(rows, &e.seconds)
	}
	if err != nil {
		return nil, err
	}
	if err := dispatch.End(ctx, tx, d.DispatchID, dstate, outcome, errText); err != nil {
		return nil, err
	}
	return e, s.threads.ProjectLatest(ctx, tx, d.ThreadID, s.projectionGraphs(), d.GraphID, runErr)
}

// rollbackRun deletes a run and every checkpoint and pending write it
// produced, and the blobs no remaining checkpoint uses.
func (s *Service) rollbackRun(ctx context.Context, tx pgx.Tx, threadID, runID uuid.UUID) error {
	tid := threadID.String()
	if _, err := tx.Exec(ctx, `
		WITH cps AS (
			SELECT checkpoint_ns, checkpoint_id FROM checkpoints
			WHERE thread_id = $1 AND metadata @> jsonb_build_object('run_id', $2::text)
		), w1 AS (
			DELETE FROM checkpoint_writes w USING run_writes r
			WHERE r.run_id = $3 AND w.thread_id = r.thread_id AND w.checkpoint_ns = r.checkpoint_ns
			  AND w.checkpoint_id = r.checkpoint_id AND w.task_id = r.task_id AND w.idx = r.idx
		), w2 AS (
			DELETE FROM checkpoint_writes w USING cps
			WHERE w.thread_id = $1 AND w.checkpoint_ns = cps.checkpoint_ns AND w.checkpoint_id = cps.checkpoint_id
		)
		DELETE FROM checkpoints c USING cps
		WHERE c.thread_id = $1 AND c.checkpoint_ns = cps.checkpoint_ns AND c.checkpoint_id = cps.checkpoint_id`,
		tid, runID.String(), runID); err != nil {
		return fmt.Errorf("rollback run %s: %w", runID, err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM checkpoint_blobs b WHERE b.thread_id = $1 AND NOT EXISTS (
		SELECT 1 FROM checkpoints c WHERE c.thread_id = $1 AND c.checkpoint_ns = b.checkpoint_ns
		  AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version)`, tid); err != nil {
		return fmt.Errorf("rollback run %s: blobs: %w", runID, err)
	}
	if err := checkpoints.CollectElements(ctx, tx, tid); err != nil {
		return fmt.Errorf("rollback run %s: %w", runID, err)
	}
	_, err := tx.Exec(ctx, `WITH r AS (DELETE FROM runs WHERE run_id = $1 RETURNING run_id)
		SELECT pg_notify('`+runs.ChannelRunEnd+`', run_id::text) FROM r`, runID)
	return err
}
