package checkpoints

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/checkpoints/serde"
	"github.com/weftdev/weft/internal/postgres"
)

// Partial reads of list channels: the thread's message log and windows
// (DESIGN §5, "layers as views, never lossy storage").
//
// A ListView is a list channel's value at one checkpoint, opened without
// reading its elements: for a compact list (TypeList) only its header,
// whose seq ranges give the seq of every position; Records then reads the
// elements of a range of positions, and only those. A plain list (a
// "json" blob under CompactMinBytes, a msgpack value, a value inline in
// the checkpoint) is decoded whole, which is cheap by construction.
//
// Seqs. The seq of an element of a compact list is its seq in the
// thread's element log (thread_elements): stable for the element's whole
// life, shared by every checkpoint and branch that holds it, and carrying
// the run and step of the checkpoint that first held it. The seq of an
// element of a plain list is its 1-based position, without run and step:
// the seqs a thread's first compaction gives a lone list channel, which
// stores its elements in list order from the thread's first seq (a thread
// whose lists are compact from the start numbers them the same way).

// ListRecord is one element of a list channel: its seq (see above), its
// JSON and, for a compact list, the run and step of the checkpoint that
// first held it (nil when unknown: a plain list, or an element written
// outside a run).
type ListRecord struct {
	Seq   int64
	Value json.RawMessage
	RunID *string
	Step  *int
}

// ErrListReplay reports a list channel whose value at a checkpoint is not
// stored as a value (no blob for its version: a LangGraph delta channel,
// or a channel emptied by an "empty" blob). The caller reads the value
// whole instead (CheckpointGetTuple, CheckpointDeltaResolve) and wraps it
// with ListViewOf.
var ErrListReplay = errors.New("list channel value is not stored as a value at this checkpoint")

// ListView is a list channel's value at a checkpoint; see the notes above.
// A nil header and nil plain list is an unset channel (length 0).
type ListView struct {
	// Config is the checkpoint the view reads (its id resolved).
	Config Config
	// Channel is the list channel.
	Channel string
	// Compact tells that the list is stored by reference to the element
	// log (seqs are element-log seqs; see the notes above).
	Compact bool

	header *listHeader
	plain  []json.RawMessage
}

// Len is the number of elements of the list.
func (v *ListView) Len() int {
	if v.header != nil {
		return v.header.N
	}
	return len(v.plain)
}

// SeqAt is the seq of the element at position i (0-based, 0 <= i < Len).
func (v *ListView) SeqAt(i int) int64 {
	if v.header == nil {
		return int64(i) + 1
	}
	for _, r := range v.header.R {
		n := int(r[1] - r[0] + 1)
		if i < n {
			return r[0] + int64(i)
		}
		i -= n
	}
	return 0
}

// IndexOf is the position of the element with seq s, or -1 when the list
// holds none. A list that holds one element several times (identical
// elements share a seq; never in a messages channel, whose reducer keys
// messages by id) gives its last position.
func (v *ListView) IndexOf(s int64) int {
	if v.header == nil {
		if s >= 1 && s <= int64(len(v.plain)) {
			return int(s - 1)
		}
		return -1
	}
	end := v.header.N
	for k := len(v.header.R) - 1; k >= 0; k-- {
		r := v.header.R[k]
		start := end - int(r[1]-r[0]+1)
		if s >= r[0] && s <= r[1] {
			return start + int(s-r[0])
		}
		end = start
	}
	return -1
}

// listElementsBySeqSQL reads the elements with the given seqs.
const listElementsBySeqSQL = `
SELECT seq, data, run_id, step FROM thread_elements
WHERE thread_id = $1 AND seq = ANY($2::bigint[])`

type elementRow struct {
	Seq   int64   `db:"seq"`
	Data  []byte  `db:"data"`
	RunID *string `db:"run_id"`
	Step  *int    `db:"step"`
}

// Records returns the elements at positions from..to-1, in list order
// (bounds are clamped to the list). A compact list reads those elements
// only: one indexed query whatever the list's length.
func (v *ListView) Records(ctx context.Context, db postgres.DBTX, from, to int) ([]ListRecord, error) {
	from, to = max(from, 0), min(to, v.Len())
	if from >= to {
		return []ListRecord{}, nil
	}
	out := make([]ListRecord, 0, to-from)
	if v.header == nil {
		for i := from; i < to; i++ {
			out = append(out, ListRecord{Seq: int64(i) + 1, Value: v.plain[i]})
		}
		return out, nil
	}
	// The seqs of positions from..to-1, walking the ranges once.
	seqs := make([]int64, 0, to-from)
	pos := 0
	for _, r := range v.header.R {
		n := int(r[1] - r[0] + 1)
		if pos+n > from && pos < to {
			lo := max(from-pos, 0)
			hi := min(to-pos, n)
			for j := lo; j < hi; j++ {
				seqs = append(seqs, r[0]+int64(j))
			}
		}
		pos += n
		if pos >= to {
			break
		}
	}
	rows, err := db.Query(ctx, listElementsBySeqSQL, v.Config.ThreadID, seqs)
	if err != nil {
		return nil, fmt.Errorf("list records: %w", err)
	}
	found, err := pgx.CollectRows(rows, pgx.RowToStructByName[elementRow])
	if err != nil {
		return nil, fmt.Errorf("list records: %w", err)
	}
	bySeq := make(map[int64]*elementRow, len(found))
	for i := range found {
		bySeq[found[i].Seq] = &found[i]
	}
	for _, s := range seqs {
		e, ok := bySeq[s]
		if !ok {
			return nil, fmt.Errorf("thread %s: %w: seq %d", v.Config.ThreadID, errElementMissing, s)
		}
		val, err := elementJSON(e.Data)
		if err != nil {
			return nil, fmt.Errorf("thread %s seq %d: %w", v.Config.ThreadID, s, err)
		}
		out = append(out, ListRecord{Seq: s, Value: val, RunID: e.RunID, Step: e.Step})
	}
	return out, nil
}

// elementJSON is an element as a whole-list read shows it: LangChain
// envelopes rewritten (decodeValue), anything else as stored.
func elementJSON(data []byte) (json.RawMessage, error) {
	if !bytes.Contains(data, lcMarker) {
		return json.RawMessage(data), nil
	}
	v, err := decodeValue(serde.TypeJSON, data)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// ListViewOf wraps a list value already read (a delta channel rebuilt by
// CheckpointDeltaResolve, say) as a plain view: seqs are positions. nil is
// the empty list; a value that is not a list is an apperr.BadRequest
// error.
func ListViewOf(cfg Config, channel string, value any) (*ListView, error) {
	v := &ListView{Config: cfg, Channel: channel, plain: []json.RawMessage{}}
	if value == nil {
		return v, nil
	}
	if raw, ok := value.(json.RawMessage); ok {
		if err := json.Unmarshal(raw, &v.plain); err != nil {
			return nil, notAList(cfg, channel)
		}
		return v, nil
	}
	list, ok := value.([]any)
	if !ok {
		return nil, notAList(cfg, channel)
	}
	for _, e := range list {
		b, err := json.Marshal(e)
		if err != nil {
			return nil, fmt.Errorf("channel %q: %w", channel, err)
		}
		v.plain = append(v.plain, b)
	}
	return v, nil
}

func notAList(cfg Config, channel string) error {
	return apperr.Errorf(apperr.BadRequest, "Channel %q is not a list at checkpoint %s", channel, cfg.CheckpointID)
}

// listCheckpointSQL reads what opening a list channel needs of a
// checkpoint row: its id, the channel's version and a value stored inline
// (Python's saver inlines primitives).
const listCheckpointSQL = `
SELECT checkpoint_id, coalesce(checkpoint -> 'channel_versions' ->> $3, '') AS version,
    checkpoint -> 'channel_values' -> $3 AS inline
FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2`

// CheckpointListView opens list channel channel at checkpoint cfg (the
// latest of namespace cfg.NS when cfg.CheckpointID is ""): two indexed
// queries (the checkpoint row, the channel's blob), whatever the list's
// length. A missing checkpoint is an apperr.NotFound error; a channel
// whose value is not stored at the checkpoint is ErrListReplay; an unset
// channel is an empty list.
func CheckpointListView(ctx context.Context, db postgres.DBTX, cfg Config, channel string) (*ListView, error) {
	if cfg.ThreadID == "" {
		return nil, apperr.Errorf(apperr.Invalid, "list view: thread id is required")
	}
	q, args := listCheckpointSQL, []any{cfg.ThreadID, cfg.NS, channel}
	if cfg.CheckpointID != "" {
		q += " AND checkpoint_id = $4"
		args = append(args, cfg.CheckpointID)
	}
	q += " ORDER BY checkpoint_id DESC LIMIT 1"
	var id, version string
	var inline []byte
	err := db.QueryRow(ctx, q, args...).Scan(&id, &version, &inline)
	if errors.Is(err, pgx.ErrNoRows) {
		if cfg.CheckpointID != "" {
			return nil, apperr.Errorf(apperr.NotFound, "Checkpoint %s not found in thread %s", cfg.CheckpointID, cfg.ThreadID)
		}
		return nil, apperr.Errorf(apperr.NotFound, "Thread %s has no checkpoints", cfg.ThreadID)
	}
	if err != nil {
		return nil, fmt.Errorf("list view: %w", err)
	}
	at := Config{ThreadID: cfg.ThreadID, NS: cfg.NS, CheckpointID: id}
	if inline != nil {
		return ListViewOf(at, channel, json.RawMessage(inline))
	}
	return openListView(ctx, db, at, channel, version)
}

// TupleListView opens list channel channel of t, a tuple read with the
// channel left out (CheckpointGetTupleWithout) or whole: a value t holds
// is wrapped as it is; otherwise the channel's blob is read (one query).
// Errors as CheckpointListView's.
func TupleListView(ctx context.Context, db postgres.DBTX, t *Tuple, channel string) (*ListView, error) {
	if v, ok := t.Checkpoint.ChannelValues[channel]; ok {
		return ListViewOf(t.Config, channel, v)
	}
	return openListView(ctx, db, t.Config, channel, t.Checkpoint.ChannelVersions[channel])
}

// listBlobSQL reads one blob by key.
const listBlobSQL = `
SELECT type, blob FROM checkpoint_blobs
WHERE thread_id = $1 AND checkpoint_ns = $2 AND channel = $3 AND version = $4`

func openListView(ctx context.Context, db postgres.DBTX, at Config, channel, version string) (*ListView, error) {
	if version == "" {
		return ListViewOf(at, channel, nil) // never written: unset
	}
	var typ string
	var blob []byte
	err := db.QueryRow(ctx, listBlobSQL, at.ThreadID, at.NS, channel, version).Scan(&typ, &blob)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && typ == serde.TypeEmpty {
		return nil, ErrListReplay
	}
	if err != nil {
		return nil, fmt.Errorf("list view: %w", err)
	}
	if typ == TypeList {
		h, err := parseListHeader(blob)
		if err != nil {
			return nil, err
		}
		n := 0
		for _, r := range h.R {
			if r[1] < r[0] {
				return nil, fmt.Errorf("%w: list header range %v", serde.ErrMalformed, r)
			}
			n += int(r[1] - r[0] + 1)
		}
		if n != h.N {
			return nil, fmt.Errorf("%w: list header counts %d elements, ranges name %d", serde.ErrMalformed, h.N, n)
		}
		return &ListView{Config: at, Channel: channel, Compact: true, header: h}, nil
	}
	v, err := decodeValue(typ, blob)
	if errors.Is(err, serde.ErrEmpty) {
		return nil, ErrListReplay
	}
	if err != nil {
		return nil, fmt.Errorf("thread %s channel %q version %s: %w", at.ThreadID, channel, version, err)
	}
	if m, err := Materialize(v); err == nil {
		if inner, ok := IsDeltaSnapshot(m); ok {
			v = inner
		}
	}
	return ListViewOf(at, channel, v)
}

// CheckpointGetTupleWithout is CheckpointGetTuple with the values of
// channels left out: their blobs are not read (their versions stay, and a
// value stored inline in the checkpoint stays), so a caller can open them
// with TupleListView and read a part.
func CheckpointGetTupleWithout(ctx context.Context, db postgres.DBTX, cfg Config, channels ...string) (*Tuple, error) {
	skip := make(map[string]bool, len(channels))
	for _, ch := range channels {
		skip[ch] = true
	}
	if cfg.ThreadID == "" {
		return nil, apperr.Errorf(apperr.Invalid, "checkpoint get: thread id is required")
	}
	tuples, err := CheckpointList(ctx, db, cfg, ListOptions{Limit: 1, skip: skip})
	if err != nil {
		return nil, err
	}
	if len(tuples) == 0 {
		if cfg.CheckpointID != "" {
			return nil, apperr.Errorf(apperr.NotFound, "Checkpoint %s not found in thread %s", cfg.CheckpointID, cfg.ThreadID)
		}
		return nil, apperr.Errorf(apperr.NotFound, "Thread %s has no checkpoints", cfg.ThreadID)
	}
	return &tuples[0], nil
}

// ElementSeqsLast is the greatest seq the thread's element log has handed
// out (0 when none): seqs above it name no element yet.
func ElementSeqsLast(ctx context.Context, db postgres.DBTX, threadID string) (int64, error) {
	var last int64
	err := db.QueryRow(ctx, `SELECT coalesce((SELECT last FROM thread_element_seqs WHERE thread_id = $1), 0)`, threadID).Scan(&last)
	if err != nil {
		return 0, fmt.Errorf("element seqs: %w", err)
	}
	return last, nil
}

// ElementSeqOf is the seq of value in the thread's element log (the
// newest when it was stored more than once), found by its hash; ok is
// false when the log does not hold it (a list under CompactMinBytes, an
// element not committed yet).
func ElementSeqOf(ctx context.Context, db postgres.DBTX, threadID string, value any) (seq int64, ok bool, err error) {
	typ, data, err := serde.Encode(value)
	if err != nil || typ != serde.TypeJSON {
		return 0, false, err
	}
	h := sha256.Sum256(data)
	var s *int64
	if err := db.QueryRow(ctx, `SELECT max(seq) FROM thread_elements WHERE thread_id = $1 AND hash = $2`, threadID, h[:]).Scan(&s); err != nil {
		return 0, false, fmt.Errorf("element seq: %w", err)
	}
	if s == nil {
		return 0, false, nil
	}
	return *s, true, nil
}
