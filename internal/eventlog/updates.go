package eventlog

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/weftdev/weft/internal/checkpoints"
)

// An updates event ({node: update}, a subgraph's "updates|<ns>" too) repeats
// what the node's task wrote: each key of the update is a write of the task
// to that channel. When the task's writes are in the same commit, the
// event is stored as a task reference (Ref.Task): the row keeps
// {node: {}} and the ref names the writes' checkpoint, the task and the
// keys. The node's key stays: protocol v2 reads a run's earlier updates
// rows as stored, for their node names (stream's protocolRunPrefix).

// updateOf returns what an updates event carries (decoded: see decoded):
// its namespace ("" for the root graph's), its data, its node and the
// object of the node's update. obj is nil for any other event, and for an
// updates event that is not one node's object (an interrupt's
// {"__interrupt__": …}, an empty update).
func updateOf(e Event) (ns string, data any, node string, obj map[string]any) {
	base, ns, _ := strings.Cut(e.Name, "|")
	if base != "updates" {
		return "", nil, "", nil
	}
	data = e.Data
	m := asObject(data)
	if len(m) != 1 {
		return "", nil, "", nil
	}
	for k, v := range m {
		node, obj = k, asObject(v)
	}
	if node == checkpoints.ChannelInterrupt || len(obj) == 0 {
		return "", nil, "", nil
	}
	return ns, data, node, obj
}

// taskKey is the writes of one task in a commit: task's, recorded under
// checkpoint (ns, id).
type taskKey struct{ ns, id, task string }

// taskIndex is a commit's writes by task, for its updates events.
type taskIndex struct {
	byNS  map[string][]taskKey // each namespace's tasks, in the order of their first write
	chans map[taskKey]map[string][]*checkpoints.Write
	forms map[*checkpoints.Write][]byte // the stored forms computed so far (nil: cannot be told)
}

func indexTasks(batches []Writes) *taskIndex {
	x := &taskIndex{byNS: map[string][]taskKey{}, chans: map[taskKey]map[string][]*checkpoints.Write{},
		forms: map[*checkpoints.Write][]byte{}}
	for bi := range batches {
		b := &batches[bi]
		for wi := range b.Writes {
			w := &b.Writes[wi]
			if w.TaskID == "" || b.ID == "" {
				continue // not a task's write a reference could name
			}
			k := taskKey{b.NS, b.ID, w.TaskID}
			chans := x.chans[k]
			if chans == nil {
				chans = map[string][]*checkpoints.Write{}
				x.chans[k] = chans
				x.byNS[b.NS] = append(x.byNS[b.NS], k)
			}
			chans[w.Channel] = append(chans[w.Channel], w)
		}
	}
	return x
}

// encodeUpdate stores updates event e (namespace ns, data decoded, node's
// update obj) as a task reference when a task of namespace ns in the commit wrote
// each key of obj exactly once, to that channel, a value whose stored form
// (what a read of the write returns) is the event's value, worth minBytes
// (the JSON of the values left out); otherwise it says no.
func (x *taskIndex) encodeUpdate(e Event, ns string, data any, node string, obj map[string]any, minBytes int) (Row, bool, error) {
	enc := make(map[string][]byte, len(obj))
	n := 0
	for k, v := range obj {
		if _, special := checkpoints.WriteIdx(k, 0); special {
			return Row{}, false, nil // a special channel's write can be replaced
		}
		b, err := encodeJSON(v)
		if err != nil {
			return Row{}, false, nil
		}
		enc[k] = b
		n += len(b)
	}
	if n < minBytes {
		return Row{}, false, nil
	}
	for _, tk := range x.byNS[ns] {
		if !x.wrote(tk, enc) {
			continue
		}
		keys := slices.Sorted(maps.Keys(obj))
		rest, err := json.Marshal(without(data, []string{node}, keys))
		if err != nil {
			return Row{}, false, err
		}
		ref, err := json.Marshal(Ref{NS: tk.ns, ID: tk.id, Task: tk.task, Path: []string{node}, Keys: keys})
		if err != nil {
			return Row{}, false, err
		}
		return Row{Name: e.Name, Data: rest, Ref: ref}, true, nil
	}
	return Row{}, false, nil
}

// wrote reports whether task tk wrote each channel of enc exactly once,
// a value whose stored form is enc's JSON.
func (x *taskIndex) wrote(tk taskKey, enc map[string][]byte) bool {
	chans := x.chans[tk]
	for k, want := range enc {
		ws := chans[k]
		if len(ws) != 1 {
			return false
		}
		form, ok := x.forms[ws[0]]
		if !ok {
			form = storedForm(ws[0].Value, nil).json
			x.forms[ws[0]] = form
		}
		if form == nil || !bytes.Equal(form, want) {
			return false
		}
	}
	return true
}

// taskValues returns the values task writes (as read back, in idx order)
// hold for keys, each the value of the task's one write to that channel;
// ok is false when a key has no write or more than one.
func taskValues(writes []checkpoints.Write, keys []string) (vals map[string]any, ok bool) {
	vals = make(map[string]any, len(keys))
	count := make(map[string]int, len(keys))
	for _, k := range keys {
		count[k] = 0
	}
	for _, w := range writes {
		if n, want := count[w.Channel]; want {
			count[w.Channel] = n + 1
			vals[w.Channel] = w.Value
		}
	}
	for _, n := range count {
		if n != 1 {
			return nil, false
		}
	}
	return vals, true
}
