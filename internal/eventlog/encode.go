package eventlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/checkpoints/serde"
)

// DefaultMinBytes is the MinBytes of a zero Options: values smaller than
// this are cheaper to store again than to load back.
const DefaultMinBytes = 1024

// Options tune Encode.
type Options struct {
	// MinBytes is how many bytes of values a reference must stand for
	// (their JSON encoding) to be written instead of the whole event: 0
	// means DefaultMinBytes, a negative value never references.
	MinBytes int
}

func (o Options) minBytes() int {
	if o.MinBytes == 0 {
		return DefaultMinBytes
	}
	return o.MinBytes
}

// TaskMinBytes is the least a task reference stands for (an update's
// values, as JSON), or MinBytes when that is smaller: a task reference
// costs about 160 bytes and is read back by its primary key, so it pays
// off on far smaller values than a checkpoint reference, whose rendering
// reads a whole checkpoint.
const TaskMinBytes = 256

func (o Options) taskMinBytes() int {
	return min(o.minBytes(), TaskMinBytes)
}

// Event is one event of a commit.
type Event struct {
	Name string
	Data any
}

// Checkpoint is a checkpoint written in the same transaction as the
// events: its namespace and id, its channel values (at least those of
// Changed) and the channels whose blobs the commit writes.
type Checkpoint struct {
	NS, ID  string
	Values  map[string]any
	Changed map[string]string
	// Encoded holds, when known, channel values as the checkpoint store
	// encoded them for this put (checkpoints.PutItem.Encoded): not
	// encoded again here.
	Encoded map[string][]byte
}

// Writes is a batch of pending writes written in the same transaction as
// the events: recorded under checkpoint (NS, ID), the checkpoint their
// tasks started from (a step's parent).
type Writes struct {
	NS, ID string
	Writes []checkpoints.Write
}

// Row is an event as stored: Data is the whole event when Ref is nil,
// else the event without the values Ref names.
type Row struct {
	Name string
	Data []byte
	Ref  []byte
}

// Ref names what an event row leaves out. A checkpoint reference: the
// channels Keys of checkpoint (NS, ID) of the row's thread fill the object
// at Path of its data. A task reference (Task set, an updates event): the
// values task Task wrote to the channels Keys, recorded under checkpoint
// (NS, ID) (checkpoint_writes), fill the object at Path. A metadata
// reference (Prev > 0, a messages event): the row's data is [chunk], and
// the metadata is that of the event Prev seqs earlier in the same run.
//
// The root namespace and the top-level path are left out of the stored
// reference (every run's values events and result name them): a reader
// takes a missing "ns" as "" and a missing "path" as [].
type Ref struct {
	NS   string   `json:"ns,omitempty"`
	ID   string   `json:"id"`
	Task string   `json:"task,omitempty"`
	Path []string `json:"path,omitempty"`
	Keys []string `json:"keys"`
	Prev int64    `json:"prev,omitempty"`
}

// prevRef is how a metadata reference is stored: {"prev": n}.
type prevRef struct {
	Prev int64 `json:"prev"`
}

// MetadataMinBytes is how long a messages event's metadata must be for a
// repeat of it to be stored as a metadata reference.
const MetadataMinBytes = 64

// Encode returns the rows of events, written in one commit with cps and
// writes and given consecutive seqs in their order. An event that repeats
// the values of one of cps is stored as a checkpoint reference, an updates
// event that repeats what a task of writes wrote as a task reference. A
// messages event ([chunk, metadata]) whose metadata an earlier messages
// event of the same commit carries whole is stored as a metadata
// reference to it: a streamed message sends each token with the same
// metadata, which would otherwise be most of what the log stores.
func Encode(events []Event, cps []Checkpoint, writes []Writes, opt Options) ([]Row, error) {
	rows := make([]Row, len(events))
	forms := map[formKey]form{}
	firstMD := map[string]int{} // metadata JSON → the first event carrying it
	var tasks *taskIndex        // built at the first updates event
	for i, e := range events {
		row, ok, err := encodeRef(e, i, cps, writes, opt, forms, firstMD, &tasks)
		if err == nil && !ok {
			row, err = whole(e)
		}
		if err != nil {
			return nil, fmt.Errorf("event %s: %w", e.Name, err)
		}
		rows[i] = row
	}
	return rows, nil
}

// encodeRef stores e, the i-th event of its commit, as a metadata, task
// or checkpoint reference when it can be one; ok is false when it must be
// stored whole.
func encodeRef(e Event, i int, cps []Checkpoint, writes []Writes, opt Options, forms map[formKey]form,
	firstMD map[string]int, tasks **taskIndex) (Row, bool, error) {
	if opt.minBytes() < 0 {
		return Row{}, false, nil
	}
	e = decoded(e)
	if row, ok, err := encodeRepeat(e, i, firstMD); err != nil || ok {
		return row, ok, err
	}
	if ns, data, node, obj := updateOf(e); obj != nil && len(writes) > 0 {
		if *tasks == nil {
			*tasks = indexTasks(writes)
		}
		return (*tasks).encodeUpdate(e, ns, data, node, obj, opt.taskMinBytes())
	}
	return encodeOne(e, cps, forms, opt.minBytes())
}

// decoded is e with its data decoded when it is JSON text of an event
// that may be stored as a reference (an external
// worker's plain JSON events are kept as text: wire.Event), with
// numbers kept as written, as the worker API decodes checkpoints and
// writes. Encoding it again changes no value, and every read normalises
// the stored row through jsonb, so the bytes a stream sends are the same.
func decoded(e Event) Event {
	raw, ok := e.Data.(json.RawMessage)
	if !ok {
		return e
	}
	switch base, _, _ := strings.Cut(e.Name, "|"); base {
	case "values", "checkpoints", "debug", "updates", "messages":
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) == nil {
			e.Data = v
		}
	}
	return e
}

// encodeRepeat stores messages event e, the i-th of its commit, as a
// metadata reference when an earlier one (firstMD) carries the same
// metadata whole; otherwise it remembers e's metadata and says no.
func encodeRepeat(e Event, i int, firstMD map[string]int) (Row, bool, error) {
	base, _, _ := strings.Cut(e.Name, "|")
	pair, _ := e.Data.([]any)
	if base != "messages" || len(pair) != 2 || asObject(pair[1]) == nil {
		return Row{}, false, nil
	}
	md, err := encodeJSON(pair[1])
	if err != nil || len(md) < MetadataMinBytes {
		return Row{}, false, nil
	}
	first, seen := firstMD[string(md)]
	if !seen {
		firstMD[string(md)] = i
		return Row{}, false, nil
	}
	data, err := json.Marshal(pair[:1])
	if err != nil {
		return Row{}, false, err
	}
	ref, err := json.Marshal(prevRef{Prev: int64(i - first)})
	if err != nil {
		return Row{}, false, err
	}
	return Row{Name: e.Name, Data: data, Ref: ref}, true, nil
}

// formKey is a channel of one of a commit's checkpoints.
type formKey struct {
	cp      int
	channel string
}

// encodeOne stores e as a reference to the checkpoint of cps whose values
// it repeats most, worth minBytes; ok is false when none qualifies.
func encodeOne(e Event, cps []Checkpoint, forms map[formKey]form, minBytes int) (Row, bool, error) {
	path, obj := valuesOf(e)
	if obj == nil || len(cps) == 0 {
		return Row{}, false, nil
	}
	enc := make(map[string][]byte, len(obj))
	best, bestBytes := -1, 0
	var bestKeys []string
	for ci := len(cps) - 1; ci >= 0; ci-- {
		cp := &cps[ci]
		var keys []string
		n := 0
		for k, v := range obj {
			if _, ok := cp.Changed[k]; !ok {
				continue
			}
			cv, ok := cp.Values[k]
			if !ok {
				continue
			}
			fk := formKey{ci, k}
			f, seen := forms[fk]
			if !seen {
				f = storedForm(cv, cp.Encoded[k])
				forms[fk] = f
			}
			if f.json == nil {
				continue
			}
			ev, ok := enc[k]
			if !ok {
				if f.plain && same(v, cv) {
					ev = f.json // the value the checkpoint holds, encoded as the store encodes it
				} else {
					ev, _ = encodeJSON(v) // nil: not encodable, never matches
				}
				enc[k] = ev
			}
			if ev != nil && bytes.Equal(ev, f.json) {
				keys = append(keys, k)
				n += len(ev)
			}
		}
		if n > bestBytes {
			best, bestBytes, bestKeys = ci, n, keys
		}
	}
	if best < 0 || bestBytes < minBytes {
		return Row{}, false, nil
	}
	slices.Sort(bestKeys)
	data, err := json.Marshal(without(e.Data, path, bestKeys))
	if err != nil {
		return Row{}, false, err
	}
	ref, err := json.Marshal(Ref{NS: cps[best].NS, ID: cps[best].ID, Path: path, Keys: bestKeys})
	if err != nil {
		return Row{}, false, err
	}
	return Row{Name: e.Name, Data: data, Ref: ref}, true, nil
}

func whole(e Event) (Row, error) {
	b, err := json.Marshal(e.Data)
	if err != nil {
		return Row{}, err
	}
	return Row{Name: e.Name, Data: b}, nil
}

// valuesOf returns where an event carries a checkpoint's values, if it
// does: the whole data of a values event, the "values" of a checkpoints
// event, the payload's "values" of a debug checkpoint event (subgraph
// events, "<mode>|<namespace>", alike).
func valuesOf(e Event) (path []string, obj map[string]any) {
	base, _, _ := strings.Cut(e.Name, "|")
	switch base {
	case "values":
		return []string{}, asObject(e.Data)
	case "checkpoints":
		if m := asObject(e.Data); m != nil {
			return []string{"values"}, asObject(m["values"])
		}
	case "debug":
		if m := asObject(e.Data); m != nil && m["type"] == "checkpoint" {
			if p := asObject(m["payload"]); p != nil {
				return []string{"payload", "values"}, asObject(p["values"])
			}
		}
	}
	return nil, nil
}

func asObject(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// without returns data with keys removed from the object at path, copying
// only the objects on the path (data itself is left as it is).
func without(data any, path, keys []string) any {
	m := maps.Clone(asObject(data))
	if len(path) == 0 {
		for _, k := range keys {
			delete(m, k)
		}
		return m
	}
	m[path[0]] = without(m[path[0]], path[1:], keys)
	return m
}

// encodeJSON encodes v as the checkpoint store encodes a channel value
// (serde.Encode: no HTML escaping).
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// form is the JSON of a checkpoint's channel value as a read of the
// store returns it (nil when it cannot be told); plain when that is the
// value's own JSON, as encodeJSON writes it.
type form struct {
	json  []byte
	plain bool
}

// storedForm is v's form: encoded as the store encodes it (unless encoded
// is that already), then decoded as its reads decode it — JSON without
// LangChain envelopes as it is, envelopes normalised
// (serde.NormalizeLC), other serde types decoded.
func storedForm(v any, encoded []byte) form {
	typ, data := serde.TypeJSON, encoded
	if encoded == nil {
		var err error
		if typ, data, err = serde.Encode(v); err != nil {
			return form{}
		}
	}
	if typ == serde.TypeJSON && !bytes.Contains(data, serde.LCMarker) {
		if encoded == nil && !json.Valid(data) { // the store's own encoding is valid
			return form{}
		}
		return form{json: data, plain: true}
	}
	out, err := serde.Decode(typ, data)
	if err != nil {
		return form{}
	}
	if typ == serde.TypeJSON {
		out = serde.NormalizeLC(out)
	}
	b, err := encodeJSON(out)
	if err != nil {
		return form{}
	}
	return form{json: b}
}

// same reports whether a and b are the same value in memory: one list (the
// same elements, by their array) or one object (the same map), as an
// in-process run's values event and its checkpoint share them. Other
// values are never the same (they are small to encode).
func same(a, b any) bool {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		return ok && len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && len(x) == len(y) && reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer()
	}
	return false
}
