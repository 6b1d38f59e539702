package checkpoints

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/checkpoints/serde"
	"github.com/weftdev/weft/internal/crypt"
	"github.com/weftdev/weft/internal/postgres"
)

// checkpointPutSQL inserts the changed channels' blobs (keeping an existing
// row: a version, once written, never changes) and upserts the checkpoint
// row, like the JS saver's put, in one statement so it is atomic even on a
// pool.
const checkpointPutSQL = `
WITH blobs AS (
    INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
    SELECT $1, b.ns, b.channel, b.version, b.type, b.blob
    FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::bytea[]) AS b(ns, channel, version, type, blob)
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
), bases AS (
    INSERT INTO thread_checkpoint_metadata (thread_id, base, doc)
    SELECT $1, m.base, m.doc::jsonb FROM unnest($12::text[], $13::text[]) AS m(base, doc)
    ON CONFLICT (thread_id, base) DO NOTHING
)
INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
SELECT $1, c.ns, c.id, c.parent, c.checkpoint::jsonb, c.metadata::jsonb
FROM unnest($7::text[], $8::text[], $9::text[], $10::text[], $11::text[]) AS c(ns, id, parent, checkpoint, metadata)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata`

// PutItem is one checkpoint to store: checkpoint Checkpoint of thread
// Config.ThreadID in namespace Config.NS, with parent Config.CheckpointID,
// its metadata and the versions its step wrote (see Put).
type PutItem struct {
	Config      Config
	Checkpoint  Checkpoint
	Metadata    Metadata
	NewVersions map[string]string
	// Encoded is set by PutMany: each channel value it wrote that serde
	// encodes as JSON, as encoded (before any encryption) — the JSON a read
	// decodes. Callers repeating a value (the events of a commit) compare
	// with it instead of encoding the value again.
	Encoded map[string][]byte
}

// Put stores checkpoint cp of thread cfg.ThreadID in namespace
// cfg.NS, with parent cfg.CheckpointID ("" for a thread's first checkpoint),
// and returns the new checkpoint's Config. It is the saver's put.
//
// newVersions names the channels written by the step that made cp, with
// their new versions (normally equal to cp.ChannelVersions for them): one
// checkpoint_blobs row is written per entry that cp has a value for,
// holding cp.ChannelValues[ch] encoded by serde.Encode. A channel without a
// value (a consumed trigger) gets its version and no row: the stock savers
// write a row of type "empty" there, and every reader (theirs, an inner join
// on channel_versions, and ours) reads a missing row and an "empty" one
// alike, so the row would only cost space. An existing blob row for the same
// channel version is kept as it is (ON CONFLICT DO NOTHING): versions must
// be unique per value, which NextVersion guarantees. Channels not in
// newVersions are not written; their values are found again through
// cp.ChannelVersions. The checkpoint row itself is upserted (re-putting a
// checkpoint id replaces its content and metadata, not its parent). The
// jsonb column never holds channel_values.
//
// cp.ID is required. cp.V defaults to 4 and cp.TS to the current UTC time
// (ISO 8601, milliseconds, "Z") in the stored row. NUL characters are
// stripped from metadata. One statement: atomic even when db is a pool.
func Put(ctx context.Context, db postgres.DBTX, cfg Config, cp Checkpoint, md Metadata, newVersions map[string]string) (Config, error) {
	if err := PutMany(ctx, db, []PutItem{{Config: cfg, Checkpoint: cp, Metadata: md, NewVersions: newVersions}}); err != nil {
		return Config{}, err
	}
	return Config{ThreadID: cfg.ThreadID, NS: cfg.NS, CheckpointID: cp.ID}, nil
}

// PutMany is Put for several checkpoints of one thread,
// in order (a commit carrying a run's steps): one statement for all of
// them, except that the puts before a checkpoint with a list that may be
// stored compact (whose list statements may read what they wrote) or
// before a checkpoint id put again are sent first.
func PutMany(ctx context.Context, db postgres.DBTX, puts []PutItem) error {
	var b putBatch
	for i := range puts {
		p := &puts[i]
		if p.Config.ThreadID == "" {
			return apperr.Errorf(apperr.Invalid, "checkpoint put: thread id is required")
		}
		if p.Checkpoint.ID == "" {
			return apperr.Errorf(apperr.Invalid, "checkpoint put: checkpoint id is required")
		}
		if b.thread != "" && b.thread != p.Config.ThreadID {
			return fmt.Errorf("checkpoint put: one batch, one thread (%s, %s)", b.thread, p.Config.ThreadID)
		}
		cp := p.Checkpoint
		if cp.V == 0 {
			cp.V = 4
		}
		if cp.TS == "" {
			cp.TS = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
		}
		n := len(p.NewVersions)
		channels, versions, types := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
		blobs := make([][]byte, 0, n)
		compact := false
		for ch, ver := range p.NewVersions {
			v, ok := cp.ChannelValues[ch]
			if !ok {
				continue
			}
			typ, data, err := serde.Encode(v)
			if err != nil {
				return fmt.Errorf("checkpoint put: channel %q: %w", ch, err)
			}
			if typ == serde.TypeJSON {
				if p.Encoded == nil {
					p.Encoded = make(map[string][]byte, n)
				}
				p.Encoded[ch] = data
			}
			typ, data = crypt.FromContext(ctx).Seal(typ, data) // as encodeValue
			channels, versions, types, blobs = append(channels, ch), append(versions, ver), append(types, typ), append(blobs, data)
			compact = compact || compactCandidate(typ, data)
		}
		if compact || b.has(p.Config.NS, cp.ID) {
			if err := b.send(ctx, db); err != nil {
				return err
			}
		}
		// Without a candidate list it only records what the checkpoint
		// holds for its children's puts, in this process.
		written, err := compactLists(ctx, db, p.Config, cp.ID, p.Metadata, channels, versions, types, blobs)
		if err != nil {
			return fmt.Errorf("checkpoint put: %w", err)
		}
		if len(written) > 0 {
			channels, versions, types, blobs = dropIndexes(written, channels), dropIndexes(written, versions), dropIndexes(written, types), dropIndexes(written, blobs)
		}
		cpJSON, err := encodeCheckpoint(cp)
		if err != nil {
			return fmt.Errorf("checkpoint put: %w", err)
		}
		mdJSON, base, key, err := encodeStoredMetadata(p.Metadata)
		if err != nil {
			return fmt.Errorf("checkpoint put: %w", err)
		}
		if base != nil && !slices.Contains(b.mKeys, key) {
			b.mKeys, b.mDocs = append(b.mKeys, key), append(b.mDocs, string(base))
		}
		b.add(p.Config, cp.ID, channels, versions, types, blobs, string(cpJSON), string(mdJSON))
	}
	return b.send(ctx, db)
}

// putBatch is the rows of checkpoint puts sent as one statement.
type putBatch struct {
	thread                             string
	ids                                map[[2]string]bool
	bNS, bChannels, bVersions, bTypes  []string
	bBlobs                             [][]byte
	cNS, cIDs, cCheckpoints, cMetadata []string
	cParents                           []*string
	mKeys, mDocs                       []string // metadata bases (metabase)
}

func (b *putBatch) has(ns, id string) bool { return b.ids[[2]string{ns, id}] }

func (b *putBatch) add(cfg Config, id string, channels, versions, types []string, blobs [][]byte, cp, md string) {
	if b.ids == nil {
		b.ids = map[[2]string]bool{}
	}
	b.thread = cfg.ThreadID
	b.ids[[2]string{cfg.NS, id}] = true
	for range channels {
		b.bNS = append(b.bNS, cfg.NS)
	}
	b.bChannels, b.bVersions, b.bTypes, b.bBlobs = append(b.bChannels, channels...), append(b.bVersions, versions...), append(b.bTypes, types...), append(b.bBlobs, blobs...)
	var parent *string
	if cfg.CheckpointID != "" {
		parent = &cfg.CheckpointID
	}
	b.cNS, b.cIDs, b.cParents, b.cCheckpoints, b.cMetadata = append(b.cNS, cfg.NS), append(b.cIDs, id), append(b.cParents, parent), append(b.cCheckpoints, cp), append(b.cMetadata, md)
}

// send sends the batch's statement, if it holds a put, and empties it.
func (b *putBatch) send(ctx context.Context, db postgres.DBTX) error {
	if len(b.cIDs) == 0 {
		return nil
	}
	_, err := db.Exec(ctx, checkpointPutSQL, b.thread, b.bNS, b.bChannels, b.bVersions, b.bTypes, b.bBlobs,
		b.cNS, b.cIDs, b.cParents, b.cCheckpoints, b.cMetadata, b.mKeys, b.mDocs)
	*b = putBatch{thread: b.thread}
	if err != nil {
		return fmt.Errorf("checkpoint put: %w", err)
	}
	return nil
}

// dropIndexes is s without the elements at the given indexes.
func dropIndexes[T any](drop map[int]bool, s []T) []T {
	out := make([]T, 0, len(s)-len(drop))
	for i, v := range s {
		if !drop[i] {
			out = append(out, v)
		}
	}
	return out
}

// checkpointWritesPutSQL inserts writes; a row that exists is replaced only
// for the special channels (their fixed negative idx makes a second write
// overwrite the first), as both savers do.
const checkpointWritesPutSQL = `
INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
SELECT $1, w.ns, w.checkpoint_id, w.task_id, w.task_path, w.idx, w.channel, w.type, w.blob
FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[], $8::text[], $9::bytea[])
    AS w(ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob, task_path = EXCLUDED.task_path
WHERE EXCLUDED.channel IN ('__error__', '__scheduled__', '__interrupt__', '__resume__')`

// PutWrites records pending writes under checkpoint cfg (the
// checkpoint their task started from; cfg.CheckpointID is required). It is
// the saver's putWrites. Writes to the special channels (__error__,
// __scheduled__, __interrupt__, __resume__) are stored at their fixed
// negative idx (WriteIdx) and replace an existing row; any other write keeps
// an existing row with the same (task id, idx) — a retried task cannot
// change what was recorded. (The JS saver decides upsert-or-not for the
// whole batch, upserting only when every write is special; deciding per
// row gives the same result for those batches and the sensible one for
// mixed batches.) Within one call, a later write with the same key wins for
// special channels and loses otherwise. Values are encoded by serde.Encode.
// One statement: atomic even when db is a pool.
func PutWrites(ctx context.Context, db postgres.DBTX, cfg Config, writes []Write) error {
	return PutWritesMany(ctx, db, cfg.ThreadID, []WritesAt{{NS: cfg.NS, CheckpointID: cfg.CheckpointID, Writes: writes}})
}

// WritesAt are pending writes recorded under checkpoint (NS, CheckpointID).
type WritesAt struct {
	NS, CheckpointID string
	Writes           []Write
}

// PutWritesMany is PutWrites for the writes of several
// checkpoints of thread threadID (a commit carrying a run's steps), in one
// statement.
func PutWritesMany(ctx context.Context, db postgres.DBTX, threadID string, batches []WritesAt) error {
	type key struct {
		ns, cp, task string
		idx          int
	}
	n := 0
	for _, b := range batches {
		if threadID == "" || b.CheckpointID == "" {
			return apperr.Errorf(apperr.Invalid, "checkpoint writes put: thread id and checkpoint id are required")
		}
		n += len(b.Writes)
	}
	pos := make(map[key]int, n)
	nss, cps := make([]string, 0, n), make([]string, 0, n)
	taskIDs, taskPaths, channels, types := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	idxs, blobs := make([]int32, 0, n), make([][]byte, 0, n)
	for _, b := range batches {
		for _, w := range b.Writes {
			idx, special := WriteIdx(w.Channel, w.Idx)
			typ, data, err := encodeValue(ctx, w.Value)
			if err != nil {
				return fmt.Errorf("checkpoint writes put: task %s channel %q: %w", w.TaskID, w.Channel, err)
			}
			k := key{b.NS, b.CheckpointID, w.TaskID, idx}
			if i, dup := pos[k]; dup {
				if special {
					taskPaths[i], channels[i], types[i], blobs[i] = w.TaskPath, w.Channel, typ, data
				}
				continue
			}
			pos[k] = len(taskIDs)
			nss, cps = append(nss, b.NS), append(cps, b.CheckpointID)
			taskIDs, taskPaths, channels, types = append(taskIDs, w.TaskID), append(taskPaths, w.TaskPath), append(channels, w.Channel), append(types, typ)
			idxs, blobs = append(idxs, int32(idx)), append(blobs, data)
		}
	}
	if len(taskIDs) == 0 {
		return nil
	}
	if _, err := db.Exec(ctx, checkpointWritesPutSQL, threadID, nss, cps, taskIDs, taskPaths, idxs, channels, types, blobs); err != nil {
		return fmt.Errorf("checkpoint writes put: %w", err)
	}
	return nil
}

// checkpointMetadataMergeSQL merges top-level metadata keys into one
// checkpoint's metadata.
const checkpointMetadataMergeSQL = `
UPDATE checkpoints SET metadata = metadata || $4::jsonb
WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3`

// MergeMetadata merges md into the metadata of checkpoint cfg
// (cfg.CheckpointID is required): each top-level key of md replaces the
// stored one (jsonb ||); other keys are kept. NUL characters are stripped
// as in Put. A missing checkpoint is an apperr.NotFound error.
func MergeMetadata(ctx context.Context, db postgres.DBTX, cfg Config, md Metadata) error {
	if cfg.ThreadID == "" || cfg.CheckpointID == "" {
		return apperr.Errorf(apperr.Invalid, "checkpoint metadata merge: thread id and checkpoint id are required")
	}
	mdJSON, err := encodeMetadata(md)
	if err != nil {
		return fmt.Errorf("checkpoint metadata merge: %w", err)
	}
	tag, err := db.Exec(ctx, checkpointMetadataMergeSQL, cfg.ThreadID, cfg.NS, cfg.CheckpointID, string(mdJSON))
	if err != nil {
		return fmt.Errorf("checkpoint metadata merge: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return apperr.Errorf(apperr.NotFound, "Checkpoint %s not found in thread %s", cfg.CheckpointID, cfg.ThreadID)
	}
	return nil
}

// checkpointThreadDeleteSQL removes every row of the given threads from the
// three tables, all namespaces, in one statement.
const checkpointThreadDeleteSQL = `
WITH blobs AS (DELETE FROM checkpoint_blobs WHERE thread_id = ANY($1::text[])),
     writes AS (DELETE FROM checkpoint_writes WHERE thread_id = ANY($1::text[])),
     elements AS (DELETE FROM thread_elements WHERE thread_id = ANY($1::text[])),
     seqs AS (DELETE FROM thread_element_seqs WHERE thread_id = ANY($1::text[])),
     summaries AS (DELETE FROM thread_summaries WHERE thread_id = ANY($1::text[])),
     bases AS (DELETE FROM thread_checkpoint_metadata WHERE thread_id = ANY($1::text[]))
DELETE FROM checkpoints WHERE thread_id = ANY($1::text[])`

// DeleteThread deletes every checkpoint, blob, write, list
// element and summary of the given threads, in all namespaces (the saver's
// deleteThread; the summaries go because the thread's seqs start again
// from 1). Unknown ids are not an error. One statement: atomic even when db is a pool.
func DeleteThread(ctx context.Context, db postgres.DBTX, threadIDs ...string) error {
	if len(threadIDs) == 0 {
		return nil
	}
	if _, err := db.Exec(ctx, checkpointThreadDeleteSQL, threadIDs); err != nil {
		return fmt.Errorf("checkpoint thread delete: %w", err)
	}
	return nil
}

// checkpointThreadCopySQL duplicates a thread's three tables, its list
// elements and its summaries under a new thread id in one statement. The rows keep their
// checkpoint ids, versions, parents and element seqs, so the copy has the
// same history, branches and latest checkpoint as the original; a
// checkpoint's metadata.thread_id names the copy, as LangGraph's copy does.
const checkpointThreadCopySQL = `
WITH blobs AS (
    INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
    SELECT $2, checkpoint_ns, channel, version, type, blob
    FROM checkpoint_blobs WHERE thread_id = $1
), writes AS (
    INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path)
    SELECT $2, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path
    FROM checkpoint_writes WHERE thread_id = $1
), elements AS (
    INSERT INTO thread_elements (thread_id, seq, hash, data, run_id, step)
    SELECT $2, seq, hash, data, run_id, step FROM thread_elements WHERE thread_id = $1
), seqs AS (
    INSERT INTO thread_element_seqs (thread_id, last)
    SELECT $2, last FROM thread_element_seqs WHERE thread_id = $1
), summaries AS (
    INSERT INTO thread_summaries (thread_id, channel, from_seq, to_seq, summary, created_at)
    SELECT $2, channel, from_seq, to_seq, summary, created_at FROM thread_summaries WHERE thread_id = $1
), bases AS (
    INSERT INTO thread_checkpoint_metadata (thread_id, base, doc)
    SELECT $2, base, CASE WHEN jsonb_typeof(doc -> 'thread_id') = 'string' THEN jsonb_set(doc, '{thread_id}', to_jsonb($2::text))
        ELSE doc END
    FROM thread_checkpoint_metadata WHERE thread_id = $1
)
INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
SELECT $2, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint,
    CASE WHEN jsonb_typeof(metadata -> 'thread_id') = 'string' THEN jsonb_set(metadata, '{thread_id}', to_jsonb($2::text))
        ELSE metadata END
FROM checkpoints WHERE thread_id = $1`

// CopyThread duplicates every checkpoint, blob, write, list
// element and summary of thread from (all namespaces) under thread id to, with INSERT … SELECT (nothing
// passes through Go). The target must have no checkpoints yet, else the
// result is an apperr.Conflict and nothing is copied. Copying a thread
// without checkpoints copies nothing. One statement: atomic even when db is
// a pool.
func CopyThread(ctx context.Context, db postgres.DBTX, from, to string) error {
	if from == "" || to == "" {
		return apperr.Errorf(apperr.Invalid, "checkpoint thread copy: thread ids are required")
	}
	if from == to {
		return apperr.Errorf(apperr.Invalid, "checkpoint thread copy: cannot copy thread %s onto itself", from)
	}
	var exists bool
	if err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = $1)`, to).Scan(&exists); err != nil {
		return fmt.Errorf("checkpoint thread copy: %w", err)
	}
	if exists {
		return apperr.Errorf(apperr.Conflict, "thread %s already has checkpoints", to)
	}
	if _, err := db.Exec(ctx, checkpointThreadCopySQL, from, to); err != nil {
		if postgres.IsUniqueViolation(err) {
			return apperr.Errorf(apperr.Conflict, "thread %s already has checkpoints", to)
		}
		return fmt.Errorf("checkpoint thread copy: %w", err)
	}
	return nil
}

// BlobMaxIntVersion returns the greatest integer version (the JS
// saver's scheme) of any blob in the thread's namespace, 0 when there is
// none. A writer that continues a thread in that scheme mints above it, so
// its versions cannot collide with any branch's: the JS saver's own minting
// (max of the checkpoint's versions + 1) reuses numbers across forks. It
// reads only the primary key index of the thread's blob rows.
func BlobMaxIntVersion(ctx context.Context, db postgres.DBTX, cfg Config) (int64, error) {
	var n int64
	err := db.QueryRow(ctx, `SELECT coalesce(max(version::bigint), 0) FROM checkpoint_blobs
		WHERE thread_id = $1 AND checkpoint_ns = $2 AND version ~ '^[1-9][0-9]{0,17}$'`, cfg.ThreadID, cfg.NS).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("checkpoint blob versions: %w", err)
	}
	return n, nil
}

// checkpointThreadPruneSQL keeps only the root-namespace checkpoints $2:
// every other checkpoint (subgraph namespaces included) and its writes go,
// and so does every blob no kept checkpoint names.
const checkpointThreadPruneSQL = `
WITH kept AS (
    SELECT DISTINCT v.key AS channel, v.value AS version
    FROM checkpoints c, jsonb_each_text(c.checkpoint -> 'channel_versions') v
    WHERE c.thread_id = $1 AND c.checkpoint_ns = '' AND c.checkpoint_id = ANY($2::text[])
), w AS (
    DELETE FROM checkpoint_writes WHERE thread_id = $1 AND NOT (checkpoint_ns = '' AND checkpoint_id = ANY($2::text[]))
), c AS (
    DELETE FROM checkpoints WHERE thread_id = $1 AND NOT (checkpoint_ns = '' AND checkpoint_id = ANY($2::text[]))
)
DELETE FROM checkpoint_blobs b WHERE b.thread_id = $1
  AND NOT (b.checkpoint_ns = '' AND EXISTS (SELECT 1 FROM kept k WHERE k.channel = b.channel AND k.version = b.version))`

// deltaSnapshotPutSQL stores a snapshot as the value of a delta channel's
// version that had none (its row is "empty" or absent).
const deltaSnapshotPutSQL = `
INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
VALUES ($1, '', $2, $3, $4, $5)
ON CONFLICT (thread_id, checkpoint_ns, channel, version)
DO UPDATE SET type = EXCLUDED.type, blob = EXCLUDED.blob WHERE checkpoint_blobs.type = 'empty'`

// PruneThread deletes a thread's history except checkpoint keep
// (a root-namespace checkpoint id): other checkpoints, their writes, the
// blobs keep does not use and the list elements no kept blob names.
//
// It never breaks a LangGraph delta channel (DeltaChannels of keep with
// kinds): one whose value keep does not store is first given one — a
// DeltaSnapshot of its rebuilt value at keep's version, for the messages
// reducer Weft implements — or, for a reducer Weft cannot replay, keep's
// parent chain back to the nearest stored value is kept with its writes.
// Several statements: run it in a transaction.
func PruneThread(ctx context.Context, db postgres.DBTX, threadID, keep string, kinds map[string]string) error {
	keepIDs, err := deltaPreserve(ctx, db, threadID, keep, kinds)
	if err != nil {
		return fmt.Errorf("checkpoint prune: %w", err)
	}
	if _, err := db.Exec(ctx, checkpointThreadPruneSQL, threadID, keepIDs); err != nil {
		return fmt.Errorf("checkpoint prune: %w", err)
	}
	return CollectElements(ctx, db, threadID)
}

// deltaPreserve makes keep's delta channels readable without the history
// a prune deletes and returns the checkpoint ids the prune must keep.
func deltaPreserve(ctx context.Context, db postgres.DBTX, threadID, keep string, kinds map[string]string) ([]string, error) {
	keepIDs := []string{keep}
	t, err := GetTuple(ctx, db, Config{ThreadID: threadID, CheckpointID: keep})
	if apperr.CodeOf(err) == apperr.NotFound {
		return keepIDs, nil
	}
	if err != nil {
		return nil, err
	}
	var rebuild, chainOnly []string
	for ch, kind := range DeltaChannels(t, kinds) {
		if _, stored := t.Checkpoint.ChannelValues[ch]; stored {
			continue
		}
		if _, versioned := t.Checkpoint.ChannelVersions[ch]; !versioned {
			continue
		}
		if kind == DeltaMessages {
			rebuild = append(rebuild, ch)
		} else {
			chainOnly = append(chainOnly, ch)
		}
	}
	if len(rebuild) > 0 {
		resolved := []Tuple{*t}
		resolved[0].Checkpoint.ChannelValues = maps.Clone(t.Checkpoint.ChannelValues)
		if err := ResolveDelta(ctx, db, resolved, kinds); err != nil {
			return nil, err
		}
		for _, ch := range rebuild {
			v, ok := resolved[0].Checkpoint.ChannelValues[ch]
			if !ok {
				continue
			}
			typ, data, err := serde.Encode(map[string]any{"lc": 2, "type": "delta_snapshot", "value": v})
			if err != nil {
				return nil, err
			}
			if _, err := db.Exec(ctx, deltaSnapshotPutSQL, threadID, ch, t.Checkpoint.ChannelVersions[ch], typ, data); err != nil {
				return nil, fmt.Errorf("delta snapshot of %q: %w", ch, err)
			}
		}
	}
	if len(chainOnly) > 0 {
		slices.Sort(chainOnly)
		chain, err := deltaChainLoad(ctx, db, threadID, "", []string{keep}, chainOnly)
		if err != nil {
			return nil, err
		}
		for id := range chain.parent {
			if id != keep {
				keepIDs = append(keepIDs, id)
			}
		}
	}
	return keepIDs, nil
}

// CollectElements deletes the list elements of a thread that no
// list blob of the thread names any more (after blobs were deleted: a prune,
// a rollback). It reads the thread's list headers, not its elements' data.
func CollectElements(ctx context.Context, db postgres.DBTX, threadID string) error {
	if _, err := db.Exec(ctx, `SELECT weft_elements_collect($1)`, threadID); err != nil {
		return fmt.Errorf("checkpoint elements: %w", err)
	}
	return nil
}
