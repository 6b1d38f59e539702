package messagelog

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/postgres"
)

// Partial reads of list channels: the thread's message log and windows
// (DESIGN §5, "layers as views, never lossy storage").
//
// A ListView is a list channel's value at one checkpoint, opened without
// reading its elements: for a compact list (checkpoints.TypeList) only its
// header, whose seq ranges give the seq of every position; Records then
// reads the elements of a range of positions, and only those. A plain list
// (a "json" blob under checkpoints.CompactMinBytes, a msgpack value, a
// value inline in the checkpoint) is decoded whole, which is cheap by
// construction.
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
// whole instead (checkpoints.GetTuple, checkpoints.ResolveDelta)
// and wraps it with ListViewOf.
var ErrListReplay = checkpoints.ErrListNotStored

// ListView is a list channel's value at a checkpoint; see the notes above.
// A nil header and nil plain list is an unset channel (length 0).
type ListView struct {
	// Config is the checkpoint the view reads (its id resolved).
	Config checkpoints.Config
	// Channel is the list channel.
	Channel string
	// Compact tells that the list is stored by reference to the element
	// log (seqs are element-log seqs; see the notes above).
	Compact bool

	header *checkpoints.StoredList // a compact list's ranges
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
	for _, r := range v.header.Ranges {
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
	for k := len(v.header.Ranges) - 1; k >= 0; k-- {
		r := v.header.Ranges[k]
		start := end - int(r[1]-r[0]+1)
		if s >= r[0] && s <= r[1] {
			return start + int(s-r[0])
		}
		end = start
	}
	return -1
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
	for _, r := range v.header.Ranges {
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
	return elementsBySeq(ctx, db, v.Config.ThreadID, seqs)
}

// ListViewOf wraps a list value already read (a delta channel rebuilt by
// checkpoints.ResolveDelta, say) as a plain view: seqs are positions. nil is
// the empty list; a value that is not a list is an apperr.BadRequest
// error.
func ListViewOf(cfg checkpoints.Config, channel string, value any) (*ListView, error) {
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

func notAList(cfg checkpoints.Config, channel string) error {
	return apperr.Errorf(apperr.BadRequest, "Channel %q is not a list at checkpoint %s", channel, cfg.CheckpointID)
}

// CheckpointListView opens list channel channel at checkpoint cfg (the
// latest of namespace cfg.NS when cfg.CheckpointID is ""): two indexed
// queries (the checkpoint row, the channel's blob), whatever the list's
// length. A missing checkpoint is an apperr.NotFound error; a channel
// whose value is not stored at the checkpoint is ErrListReplay; an unset
// channel is an empty list.
func CheckpointListView(ctx context.Context, db postgres.DBTX, cfg checkpoints.Config, channel string) (*ListView, error) {
	s, err := checkpoints.ListStored(ctx, db, cfg, channel)
	if err != nil {
		return nil, err
	}
	return viewOf(s, channel)
}

// TupleListView opens list channel channel of t, a tuple read with the
// channel left out (checkpoints.GetTupleWithout) or whole: a
// value t holds is wrapped as it is; otherwise the channel's blob is read
// (one query). Errors as CheckpointListView's.
func TupleListView(ctx context.Context, db postgres.DBTX, t *checkpoints.Tuple, channel string) (*ListView, error) {
	if v, ok := t.Checkpoint.ChannelValues[channel]; ok {
		return ListViewOf(t.Config, channel, v)
	}
	s, err := checkpoints.BlobListStored(ctx, db, t.Config, channel, t.Checkpoint.ChannelVersions[channel])
	if err != nil {
		return nil, err
	}
	return viewOf(s, channel)
}

// viewOf is the view of a stored list: its ranges, or its plain value.
func viewOf(s *checkpoints.StoredList, channel string) (*ListView, error) {
	if s.Compact {
		return &ListView{Config: s.At, Channel: channel, Compact: true, header: s}, nil
	}
	return ListViewOf(s.At, channel, s.Value)
}
