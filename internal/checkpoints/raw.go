package checkpoints

import (
	"errors"
	"fmt"

	"github.com/weftdev/weft/internal/checkpoints/serde"
)

// StoredValue is a blob as stored: its serializer type and bytes (nil for
// an "empty" version or a NULL blob).
type StoredValue struct {
	Type string
	Data []byte
}

// StoredWrite is a pending write as stored, without its idx and task path
// (the worker API's raw reads list writes in their stored order instead).
type StoredWrite struct {
	TaskID  string
	Channel string
	Value   StoredValue
}

// TupleFromStored builds the Tuple that GetTuple would return
// from a checkpoint's stored columns (checkpoint and metadata as jsonb
// text), the blobs of its channel versions keyed by channel, and its
// pending writes in stored order: what a remote reader gets from the
// worker API's raw checkpoint reads. Writes get their idx back from their
// position within their task (the special channels' fixed indexes).
func TupleFromStored(cfg Config, parentID *string, checkpoint, metadata []byte, blobs map[string]StoredValue, writes []StoredWrite) (*Tuple, error) {
	cp, err := decodeCheckpoint(checkpoint)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", cfg.CheckpointID, err)
	}
	md, err := decodeMetadata(metadata)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", cfg.CheckpointID, err)
	}
	t := &Tuple{Config: cfg, Checkpoint: cp, Metadata: md, PendingWrites: []Write{}}
	if parentID != nil {
		t.Parent = &Config{ThreadID: cfg.ThreadID, NS: cfg.NS, CheckpointID: *parentID}
	}
	for ch := range cp.ChannelVersions {
		b, ok := blobs[ch]
		if _, inline := cp.ChannelValues[ch]; inline || !ok {
			continue
		}
		v, err := decodeValue(b.Type, b.Data)
		if errors.Is(err, serde.ErrEmpty) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("checkpoint %s channel %q: %w", cfg.CheckpointID, ch, err)
		}
		t.Checkpoint.ChannelValues[ch] = v
	}
	next := map[string]int{}
	for _, w := range writes {
		v, err := decodeValue(w.Value.Type, w.Value.Data)
		if err == nil {
			v, err = Materialize(v)
		}
		if err != nil && !errors.Is(err, serde.ErrEmpty) {
			return nil, fmt.Errorf("checkpoint %s write %s (%q): %w", cfg.CheckpointID, w.TaskID, w.Channel, err)
		}
		idx, special := specialIdx[w.Channel]
		if !special {
			idx = next[w.TaskID]
			next[w.TaskID]++
		}
		t.PendingWrites = append(t.PendingWrites, Write{TaskID: w.TaskID, Channel: w.Channel, Value: v, Idx: idx})
	}
	return t, nil
}
