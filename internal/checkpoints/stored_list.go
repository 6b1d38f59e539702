package checkpoints

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/checkpoints/serde"
	"github.com/weftdev/weft/internal/postgres"
)

// StoredList is a list channel's value at one checkpoint as the store
// holds it, read without its elements: the seq ranges of a compact list
// (TypeList), whose elements stay in the thread's element log, or a plain
// value, decoded whole (a "json" blob under CompactMinBytes, a msgpack
// value, a value inline in the checkpoint: cheap by construction).
// internal/messagelog builds its list views on it, reading a compact
// list's elements by seq.
type StoredList struct {
	// At is the checkpoint read (its id resolved).
	At Config
	// Compact tells that the list is stored by reference to the element
	// log: Ranges and N describe it, Value is nil.
	Compact bool
	// Ranges are the inclusive element-log seq ranges whose elements, in
	// order, are a compact list; N is their total count.
	Ranges [][2]int64
	N      int
	// Value is a plain list's value as a whole read decodes it (a delta
	// snapshot unwrapped); nil is an unset channel. It may not be a list:
	// the caller checks.
	Value any
}

// ErrListNotStored reports a list channel whose value at a checkpoint is
// not stored as a value (no blob for its version: a LangGraph delta
// channel, or a channel emptied by an "empty" blob): only a whole read
// (GetTuple, ResolveDelta) rebuilds it.
var ErrListNotStored = errors.New("list channel value is not stored as a value at this checkpoint")

// listCheckpointSQL reads what opening a list channel needs of a
// checkpoint row: its id, the channel's version and a value stored inline
// (Python's saver inlines primitives).
const listCheckpointSQL = `
SELECT checkpoint_id, coalesce(checkpoint -> 'channel_versions' ->> $3, '') AS version,
    checkpoint -> 'channel_values' -> $3 AS inline
FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2`

// ListStored reads list channel channel at checkpoint cfg (the
// latest of namespace cfg.NS when cfg.CheckpointID is ""): two indexed
// queries (the checkpoint row, the channel's blob), whatever the list's
// length. A missing checkpoint is an apperr.NotFound error; a channel
// whose value is not stored at the checkpoint is ErrListNotStored; an
// unset channel has a nil Value.
func ListStored(ctx context.Context, db postgres.DBTX, cfg Config, channel string) (*StoredList, error) {
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
		return nil, checkpointNotFound(cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("list view: %w", err)
	}
	at := Config{ThreadID: cfg.ThreadID, NS: cfg.NS, CheckpointID: id}
	if inline != nil {
		return &StoredList{At: at, Value: json.RawMessage(inline)}, nil
	}
	return BlobListStored(ctx, db, at, channel, version)
}

// listBlobSQL reads one blob by key.
const listBlobSQL = `
SELECT type, blob FROM checkpoint_blobs
WHERE thread_id = $1 AND checkpoint_ns = $2 AND channel = $3 AND version = $4`

// BlobListStored reads list channel channel of checkpoint at from its blob
// of version version (one query; none for version "", an unset channel).
// Errors as ListStored's.
func BlobListStored(ctx context.Context, db postgres.DBTX, at Config, channel, version string) (*StoredList, error) {
	if version == "" {
		return &StoredList{At: at}, nil // never written: unset
	}
	var typ string
	var blob []byte
	err := db.QueryRow(ctx, listBlobSQL, at.ThreadID, at.NS, channel, version).Scan(&typ, &blob)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && typ == serde.TypeEmpty {
		return nil, ErrListNotStored
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
		return &StoredList{At: at, Compact: true, Ranges: h.R, N: h.N}, nil
	}
	v, err := decodeValue(typ, blob)
	if errors.Is(err, serde.ErrEmpty) {
		return nil, ErrListNotStored
	}
	if err != nil {
		return nil, fmt.Errorf("thread %s channel %q version %s: %w", at.ThreadID, channel, version, err)
	}
	if m, err := Materialize(v); err == nil {
		if inner, ok := IsDeltaSnapshot(m); ok {
			v = inner
		}
	}
	return &StoredList{At: at, Value: v}, nil
}
