package checkpoints

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/checkpoints/metabase"
	"github.com/weftdev/weft/internal/checkpoints/serde"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/postgres"
)

// ListOptions narrows List.
type ListOptions struct {
	// Before keeps checkpoints whose id is strictly less than this one
	// (the keyset cursor of history pages; "" = no bound).
	Before string
	// Limit caps the page; 0 or less means no limit.
	Limit int
	// Filter keeps checkpoints whose metadata contains it (jsonb @>).
	Filter map[string]any
	// AllNamespaces lists every namespace of the thread (subgraphs
	// included) instead of only cfg.NS. Such a listing is ordered by
	// checkpoint id across namespaces, which the primary key cannot serve
	// as an index scan: it sorts the thread's rows, unlike the
	// single-namespace listing.
	AllNamespaces bool

	// skip names channels whose values are not read
	// (GetTupleWithout).
	skip map[string]bool
}

// GetTuple reads one checkpoint with its values and pending
// writes: cfg.CheckpointID in namespace cfg.NS, or, when cfg.CheckpointID
// is "", the latest checkpoint of that namespace — the greatest
// checkpoint_id on any branch, i.e. the most recently created (a fork made
// after the main line's last step is the latest). A missing checkpoint is
// an apperr.NotFound error. Three indexed queries whatever the thread's
// length.
func GetTuple(ctx context.Context, db postgres.DBTX, cfg Config) (*Tuple, error) {
	return getTuple(ctx, db, cfg, nil)
}

// GetTupleWithout is GetTuple with the values of
// channels left out: their blobs are not read (their versions stay, and a
// value stored inline in the checkpoint stays), so a caller can open them
// with internal/messagelog's TupleListView and read a part.
func GetTupleWithout(ctx context.Context, db postgres.DBTX, cfg Config, channels ...string) (*Tuple, error) {
	skip := make(map[string]bool, len(channels))
	for _, ch := range channels {
		skip[ch] = true
	}
	return getTuple(ctx, db, cfg, skip)
}

// checkpointNotFound is the apperr.NotFound error of a read of cfg that
// found no checkpoint: cfg.CheckpointID, or any checkpoint of the thread.
func checkpointNotFound(cfg Config) error {
	if cfg.CheckpointID != "" {
		return apperr.Errorf(apperr.NotFound, "Checkpoint %s not found in thread %s", cfg.CheckpointID, cfg.ThreadID)
	}
	return apperr.Errorf(apperr.NotFound, "Thread %s has no checkpoints", cfg.ThreadID)
}

// getTuple reads one checkpoint, the values of the channels in skip left
// out.
func getTuple(ctx context.Context, db postgres.DBTX, cfg Config, skip map[string]bool) (*Tuple, error) {
	if cfg.ThreadID == "" {
		return nil, apperr.Errorf(apperr.Invalid, "checkpoint get: thread id is required")
	}
	tuples, err := List(ctx, db, cfg, ListOptions{Limit: 1, skip: skip})
	if err != nil {
		return nil, err
	}
	if len(tuples) == 0 {
		return nil, checkpointNotFound(cfg)
	}
	return &tuples[0], nil
}

// List reads checkpoints of thread cfg.ThreadID, newest first (by
// checkpoint_id, descending, every branch interleaved in creation order),
// with their values and pending writes: the saver's list. Only namespace
// cfg.NS ("" = the root graph) unless opt.AllNamespaces; only checkpoint
// cfg.CheckpointID when it is set.
//
// A page is a keyset query (checkpoint_id < Before ORDER BY checkpoint_id
// DESC LIMIT n) on the primary key, and its blobs and writes are fetched by
// key for the whole page: three queries in total, whose cost depends on the
// page and the size of its values, never on the thread's length (except for
// AllNamespaces, see ListOptions, and a Filter that skips many rows). A blob
// shared by several checkpoints of the page is fetched and decoded once;
// each tuple gets its own copy of a decoded value, while undecoded JSON
// text (json.RawMessage, see decodeValue) is shared: nothing modifies it.
func List(ctx context.Context, db postgres.DBTX, cfg Config, opt ListOptions) ([]Tuple, error) {
	if cfg.ThreadID == "" {
		return nil, apperr.Errorf(apperr.Invalid, "checkpoint list: thread id is required")
	}
	query, args, err := checkpointListQuery(cfg, opt)
	if err != nil {
		return nil, err
	}
	rows, err := db.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("checkpoint list: %w", err)
	}
	page, err := pgx.CollectRows(rows, pgx.RowToStructByName[checkpointRow])
	if err != nil {
		return nil, fmt.Errorf("checkpoint list: %w", err)
	}
	return loadTuples(ctx, db, cfg.ThreadID, page, opt.skip)
}

type checkpointRow struct {
	NS           string  `db:"checkpoint_ns"`
	CheckpointID string  `db:"checkpoint_id"`
	ParentID     *string `db:"parent_checkpoint_id"`
	Checkpoint   []byte  `db:"checkpoint"`
	Metadata     []byte  `db:"metadata"`
}

// checkpointListQuery builds the page query with only the conditions in
// use, so that every variant gets a plan that walks the primary key
// backwards (no "$n IS NULL OR …" that a generic plan cannot index).
func checkpointListQuery(cfg Config, opt ListOptions) (string, []any, error) {
	var b strings.Builder
	args := []any{cfg.ThreadID}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	b.WriteString(`SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint,
    weft_checkpoint_metadata(thread_id, metadata) AS metadata
FROM checkpoints WHERE thread_id = $1`)
	if !opt.AllNamespaces {
		b.WriteString(" AND checkpoint_ns = " + arg(cfg.NS))
	}
	if cfg.CheckpointID != "" {
		b.WriteString(" AND checkpoint_id = " + arg(cfg.CheckpointID))
	}
	if opt.Before != "" {
		b.WriteString(" AND checkpoint_id < " + arg(opt.Before))
	}
	if len(opt.Filter) > 0 {
		f, err := json.Marshal(opt.Filter)
		if err != nil {
			return "", nil, apperr.Errorf(apperr.Invalid, "checkpoint list: bad metadata filter: %v", err)
		}
		// The row's own keys first: a run_id filter needs no base.
		fa := arg(string(f))
		b.WriteString(" AND (metadata @> " + fa + "::jsonb OR (metadata ? '" + metabase.Key +
			"' AND weft_checkpoint_metadata(thread_id, metadata) @> " + fa + "::jsonb))")
	}
	if opt.AllNamespaces {
		b.WriteString(" ORDER BY checkpoint_id DESC, checkpoint_ns")
	} else {
		b.WriteString(" ORDER BY checkpoint_id DESC")
	}
	if opt.Limit > 0 {
		b.WriteString(" LIMIT " + arg(opt.Limit))
	}
	return b.String(), args, nil
}

// checkpointBlobsByKeySQL fetches blobs by (namespace, channel, version).
// The LATERAL … LIMIT 1 keeps one primary-key probe per key (it cannot be
// flattened into a join that scans the thread's blobs).
const checkpointBlobsByKeySQL = `
SELECT k.ns AS checkpoint_ns, k.channel, k.version, bl.type, bl.blob
FROM unnest($2::text[], $3::text[], $4::text[]) AS k(ns, channel, version),
LATERAL (
    SELECT type, blob FROM checkpoint_blobs
    WHERE thread_id = $1 AND checkpoint_ns = k.ns AND channel = k.channel AND version = k.version
    LIMIT 1
) bl
WHERE bl.type <> 'empty'`

// checkpointWritesByCheckpointSQL fetches the writes of a set of
// checkpoints, one primary-key range probe per checkpoint, in the order the
// savers use (task_path, task_id, idx).
const checkpointWritesByCheckpointSQL = `
SELECT k.ns AS checkpoint_ns, k.id AS checkpoint_id, w.task_id, w.task_path, w.idx, w.channel, w.type, w.blob
FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS k(ns, id, ord),
LATERAL (
    SELECT task_id, task_path, idx, channel, type, blob FROM checkpoint_writes
    WHERE thread_id = $1 AND checkpoint_ns = k.ns AND checkpoint_id = k.id
    ORDER BY task_path, task_id, idx
    OFFSET 0
) w
ORDER BY k.ord, w.task_path, w.task_id, w.idx`

type blobRow struct {
	NS      string `db:"checkpoint_ns"`
	Channel string `db:"channel"`
	Version string `db:"version"`
	Type    string `db:"type"`
	Blob    []byte `db:"blob"`
}

type writeRow struct {
	NS           string  `db:"checkpoint_ns"`
	CheckpointID string  `db:"checkpoint_id"`
	TaskID       string  `db:"task_id"`
	TaskPath     string  `db:"task_path"`
	Idx          int     `db:"idx"`
	Channel      string  `db:"channel"`
	Type         *string `db:"type"`
	Blob         []byte  `db:"blob"`
}

type blobKey struct{ ns, channel, version string }

type decodedBlob struct {
	value     any
	used      bool
	canonical bool // value is a json.RawMessage in encoding/json's output form
	asStored  bool // value is a json.RawMessage of the row's plaintext JSON (Tuple.AsStored)
}

// loadTuples turns a page of checkpoint rows into tuples: the checkpoint and
// metadata columns, the blobs named by channel_versions (one query for the
// page) and the pending writes (one query for the page). Channels in skip
// are left out (not read, absent from ChannelValues unless inline).
func loadTuples(ctx context.Context, db postgres.DBTX, threadID string, page []checkpointRow, skip map[string]bool) ([]Tuple, error) {
	if len(page) == 0 {
		return []Tuple{}, nil
	}
	tuples := make([]Tuple, len(page))
	keys := map[blobKey]*decodedBlob{}
	var nss, chs, vers []string
	for i, r := range page {
		cp, err := decodeCheckpoint(r.Checkpoint)
		if err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", r.CheckpointID, err)
		}
		md, err := decodeMetadata(r.Metadata)
		if err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", r.CheckpointID, err)
		}
		t := Tuple{Config: Config{ThreadID: threadID, NS: r.NS, CheckpointID: r.CheckpointID}, Checkpoint: cp, Metadata: md, PendingWrites: []Write{}}
		if r.ParentID != nil {
			t.Parent = &Config{ThreadID: threadID, NS: r.NS, CheckpointID: *r.ParentID}
		}
		tuples[i] = t
		for ch, ver := range cp.ChannelVersions {
			if _, inline := cp.ChannelValues[ch]; inline {
				continue // Python stored the value in the checkpoint itself
			}
			if skip[ch] {
				continue
			}
			k := blobKey{r.NS, ch, ver}
			if _, seen := keys[k]; !seen {
				keys[k] = nil
				nss, chs, vers = append(nss, k.ns), append(chs, k.channel), append(vers, k.version)
			}
		}
	}
	if len(nss) > 0 {
		rows, err := db.Query(ctx, checkpointBlobsByKeySQL, threadID, nss, chs, vers)
		if err != nil {
			return nil, fmt.Errorf("checkpoint blobs: %w", err)
		}
		blobs, err := pgx.CollectRows(rows, pgx.RowToStructByName[blobRow])
		if err != nil {
			return nil, fmt.Errorf("checkpoint blobs: %w", err)
		}
		types, data := make([]*string, len(blobs)), make([]*[]byte, len(blobs))
		for i := range blobs {
			types[i], data[i] = &blobs[i].Type, &blobs[i].Blob
		}
		lists, err := resolveLists(ctx, db, threadID, types, data)
		if err != nil {
			return nil, fmt.Errorf("checkpoint blobs: %w", err)
		}
		for i, b := range blobs {
			if i < len(lists) && lists[i] != nil && !lists[i].LC {
				// Rebuilt from validated elements: valid JSON, no re-scan.
				l := lists[i]
				keys[blobKey{b.NS, b.Channel, b.Version}] = &decodedBlob{value: json.RawMessage(l.Data), canonical: l.Canonical, asStored: !l.Rewritten}
				continue
			}
			typ, data, err := openValue(ctx, b.Type, b.Blob)
			if err != nil {
				return nil, fmt.Errorf("thread %s channel %q version %s: %w", threadID, b.Channel, b.Version, err)
			}
			v, err := decodeValue(typ, data)
			if errors.Is(err, serde.ErrEmpty) || v == nil && typ == serde.TypeJSON && undefinedJSON(data) {
				continue // no value (LangGraph.js's undefined included)
			}
			if err != nil {
				return nil, fmt.Errorf("thread %s channel %q version %s: %w", threadID, b.Channel, b.Version, err)
			}
			_, raw := v.(json.RawMessage)
			keys[blobKey{b.NS, b.Channel, b.Version}] = &decodedBlob{value: v, asStored: raw && b.Type == serde.TypeJSON}
		}
	}
	for i := range tuples {
		t := &tuples[i]
		for ch, ver := range t.Checkpoint.ChannelVersions {
			d := keys[blobKey{t.Config.NS, ch, ver}]
			if d == nil {
				continue // inline, empty, or missing: the channel has no blob value
			}
			if d.used {
				t.Checkpoint.ChannelValues[ch] = jsonv.Clone(d.value)
			} else {
				t.Checkpoint.ChannelValues[ch], d.used = d.value, true
			}
			if d.canonical {
				t.markVerbatim(ch, d.value.(json.RawMessage))
			}
			if d.asStored {
				t.markAsStored(ch, t.Checkpoint.ChannelValues[ch].(json.RawMessage))
			}
		}
	}
	return tuples, loadWrites(ctx, db, threadID, tuples)
}

func loadWrites(ctx context.Context, db postgres.DBTX, threadID string, tuples []Tuple) error {
	nss, ids := make([]string, len(tuples)), make([]string, len(tuples))
	byKey := make(map[[2]string]*Tuple, len(tuples))
	for i := range tuples {
		nss[i], ids[i] = tuples[i].Config.NS, tuples[i].Config.CheckpointID
		byKey[[2]string{nss[i], ids[i]}] = &tuples[i]
	}
	rows, err := db.Query(ctx, checkpointWritesByCheckpointSQL, threadID, nss, ids)
	if err != nil {
		return fmt.Errorf("checkpoint writes: %w", err)
	}
	writes, err := pgx.CollectRows(rows, pgx.RowToStructByName[writeRow])
	if err != nil {
		return fmt.Errorf("checkpoint writes: %w", err)
	}
	for _, w := range writes {
		pw, err := w.decode(ctx)
		if err != nil {
			return err
		}
		t := byKey[[2]string{w.NS, w.CheckpointID}]
		t.PendingWrites = append(t.PendingWrites, pw)
	}
	return nil
}

// decode is the pending write w as reads return it. Writes are small and
// read by logic (interrupts, errors, resume values), so they are always
// decoded: never json.RawMessage.
func (w *writeRow) decode(ctx context.Context) (Write, error) {
	typ := ""
	if w.Type != nil {
		typ = *w.Type
	}
	typ, data, err := openValue(ctx, typ, w.Blob)
	if err != nil {
		return Write{}, fmt.Errorf("checkpoint %s write %s/%d (%q): %w", w.CheckpointID, w.TaskID, w.Idx, w.Channel, err)
	}
	v, err := decodeValue(typ, data)
	if err == nil {
		v, err = Materialize(v)
	}
	if err != nil && !errors.Is(err, serde.ErrEmpty) {
		return Write{}, fmt.Errorf("checkpoint %s write %s/%d (%q): %w", w.CheckpointID, w.TaskID, w.Idx, w.Channel, err)
	}
	return Write{TaskID: w.TaskID, Channel: w.Channel, Value: v, Idx: w.Idx, TaskPath: w.TaskPath}, nil
}

// TaskKey names the pending writes of one task of a thread: those of task
// TaskID recorded under checkpoint CheckpointID of namespace NS.
type TaskKey struct {
	NS, CheckpointID, TaskID string
}

// checkpointWritesByTaskSQL fetches the writes of a set of tasks, one
// primary-key range probe per task, in idx order.
const checkpointWritesByTaskSQL = `
SELECT k.ns AS checkpoint_ns, k.id AS checkpoint_id, w.task_id, w.task_path, w.idx, w.channel, w.type, w.blob
FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS k(ns, id, task, ord),
LATERAL (
    SELECT task_id, task_path, idx, channel, type, blob FROM checkpoint_writes
    WHERE thread_id = $1 AND checkpoint_ns = k.ns AND checkpoint_id = k.id AND task_id = k.task
    ORDER BY idx
    OFFSET 0
) w
ORDER BY k.ord, w.idx`

// TaskWrites returns the pending writes of the tasks keys
// name in thread threadID, each task's in idx order, decoded as
// GetTuple decodes its PendingWrites. A task without writes
// (none recorded, or deleted with their checkpoint) has no entry. One
// query, one primary-key range probe per task.
func TaskWrites(ctx context.Context, db postgres.DBTX, threadID string, keys []TaskKey) (map[TaskKey][]Write, error) {
	out := map[TaskKey][]Write{}
	if len(keys) == 0 {
		return out, nil
	}
	var nss, ids, tasks []string
	seen := make(map[TaskKey]bool, len(keys))
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			nss, ids, tasks = append(nss, k.NS), append(ids, k.CheckpointID), append(tasks, k.TaskID)
		}
	}
	rows, err := db.Query(ctx, checkpointWritesByTaskSQL, threadID, nss, ids, tasks)
	if err != nil {
		return nil, fmt.Errorf("checkpoint writes of tasks: %w", err)
	}
	found, err := pgx.CollectRows(rows, pgx.RowToStructByName[writeRow])
	if err != nil {
		return nil, fmt.Errorf("checkpoint writes of tasks: %w", err)
	}
	for i := range found {
		w := &found[i]
		pw, err := w.decode(ctx)
		if err != nil {
			return nil, err
		}
		k := TaskKey{NS: w.NS, CheckpointID: w.CheckpointID, TaskID: w.TaskID}
		out[k] = append(out[k], pw)
	}
	return out, nil
}

// decodeValue decodes a blob and rewrites the JS saver's LangChain
// envelopes (serde.NormalizeLC) in "json" values. A valid "json" value without
// any LangChain envelope is returned undecoded, as json.RawMessage: most
// reads only pass values through to a response, and decoding then
// re-encoding a long message list would dominate their cost (see
// Materialize).
func decodeValue(typ string, data []byte) (any, error) {
	if typ == serde.TypeJSON && !bytes.Contains(data, serde.LCMarker) && json.Valid(data) {
		return json.RawMessage(data), nil
	}
	v, err := serde.Decode(typ, data)
	if err != nil {
		return nil, err
	}
	if typ == serde.TypeJSON {
		v = serde.NormalizeLC(v)
	}
	return v, nil
}

// undefinedJSON: data is the JSON of LangGraph.js's undefined
// (serde.IsUndefined).
func undefinedJSON(data []byte) bool {
	v, err := serde.Decode(serde.TypeJSON, data)
	return err == nil && serde.IsUndefined(v)
}

// Materialize returns v as a decoded JSON value: values read from the store
// may be json.RawMessage (undecoded JSON text); anything else is returned
// as it is. Numbers decode as json.Number.
func Materialize(v any) (any, error) {
	raw, ok := v.(json.RawMessage)
	if !ok {
		return v, nil
	}
	return serde.Decode(serde.TypeJSON, raw)
}

// LatestNamespaces returns, for each namespace in nss that has
// checkpoints in the thread, its latest checkpoint id (one indexed lookup
// per namespace, in one query). Callers use it to find which pending tasks
// are subgraphs that have started.
func LatestNamespaces(ctx context.Context, db postgres.DBTX, threadID string, nss []string) (map[string]string, error) {
	out := map[string]string{}
	if len(nss) == 0 {
		return out, nil
	}
	rows, err := db.Query(ctx, `SELECT ns, latest FROM unnest($2::text[]) AS ns,
		LATERAL (SELECT checkpoint_id AS latest FROM checkpoints
		         WHERE thread_id = $1 AND checkpoint_ns = ns ORDER BY checkpoint_id DESC LIMIT 1) l`, threadID, nss)
	if err != nil {
		return nil, fmt.Errorf("checkpoint namespaces: %w", err)
	}
	type nsLatest struct {
		NS     string `db:"ns"`
		Latest string `db:"latest"`
	}
	found, err := pgx.CollectRows(rows, pgx.RowToStructByName[nsLatest])
	if err != nil {
		return nil, fmt.Errorf("checkpoint namespaces: %w", err)
	}
	for _, f := range found {
		out[f.NS] = f.Latest
	}
	return out, nil
}
