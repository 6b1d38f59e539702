package pregel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/zeebo/xxh3"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/checkpoints"
)

// Channel names and task paths LangGraph uses for its own bookkeeping.
const (
	branchPrefix = "branch:to:"
	TasksChannel = "__pregel_tasks"
	PullPath     = "__pregel_pull"
	PushPath     = "__pregel_push"
	// NullTaskID files writes that belong to no task (a resume value, a
	// command's update), as LangGraph's NULL_TASK_ID.
	NullTaskID = "00000000-0000-0000-0000-000000000000"
	// InterruptNode is the versions_seen key that records the channel
	// versions at the last static interrupt (LangGraph's INTERRUPT).
	InterruptNode = "__interrupt__"
)

// Task is a task scheduled for the next superstep of a checkpoint, with
// the pending writes already recorded for it.
type Task struct {
	ID         string
	Name       string
	Path       []any
	Error      *string
	Interrupts []any
	// Result holds the task's state-channel writes (nil when none).
	Result map[string]any
	// Writes are every pending write recorded for the task, in idx order.
	Writes []checkpoints.Write
}

// Done reports whether the task already completed in an earlier attempt:
// it has writes and neither an error nor an interrupt.
func (t *Task) Done() bool {
	if t.Error != nil || len(t.Interrupts) > 0 {
		return false
	}
	for _, w := range t.Writes {
		if w.Channel != checkpoints.ChannelResume {
			return true
		}
	}
	return false
}

// Resumes returns the resume values recorded for the task (its own
// __resume__ write, which lists the answers in order).
func (t *Task) Resumes() []any {
	for _, w := range t.Writes {
		if w.Channel == checkpoints.ChannelResume {
			if l, ok := w.Value.([]any); ok {
				return l
			}
			return []any{w.Value}
		}
	}
	return nil
}

// IsStateChannel tells user state channels from LangGraph's internal ones
// (__start__, __pregel_tasks, branch:to:x, legacy start:x / x:inbox ...).
func IsStateChannel(name string) bool {
	return !strings.HasPrefix(name, "__") && !strings.Contains(name, ":")
}

// StateValues returns the user-visible values of a checkpoint: the graph's
// channels (with their defaults) when the graph declares them, else (no
// graph, or a stand-in for a worker's graph that names only its nodes)
// every non-internal channel.
func StateValues(raw map[string]any, g *graph.Graph) map[string]any {
	out := map[string]any{}
	if g != nil && len(g.Channels) > 0 && !StandIn(g) {
		for _, c := range g.Channels {
			if v, ok := raw[c.Name]; ok {
				out[c.Name] = v
			}
		}
		return g.Values(out)
	}
	for k, v := range raw {
		if IsStateChannel(k) {
			out[k] = v
		}
	}
	if g != nil {
		return g.Values(out) // a stand-in's registered defaults
	}
	return out
}

// StandIn reports whether g stands in for a graph a worker serves
// (assistants.WorkerGraph): its nodes have no bodies. Its channels, from
// the worker's schemas and registered defaults, need not name every
// channel the worker's runtime keeps, so its state values are every stored
// state channel, plus the default of each declared channel left unset (as
// LangGraph reads a fresh channel).
func StandIn(g *graph.Graph) bool {
	if len(g.Nodes) == 0 {
		return false
	}
	for _, n := range g.Nodes {
		if n.Func != nil || n.Command != nil {
			return false
		}
	}
	return true
}

// triggerOf returns the node a trigger channel schedules ("" if none):
// "branch:to:<node>" triggers <node>, "__start__" triggers the start node.
func triggerOf(channel string) string {
	switch {
	case channel == graph.START:
		return graph.START
	case strings.HasPrefix(channel, branchPrefix):
		return channel[len(branchPrefix):]
	}
	return ""
}

// TriggerChannel is the channel whose new value schedules node: "__start__"
// for START, "branch:to:<node>" otherwise.
func TriggerChannel(node string) string {
	if node == graph.START {
		return graph.START
	}
	return branchPrefix + node
}

// TaskID is the id of the task that runs node name (at path) from
// checkpoint cfg, whose metadata step is step. Pull tasks get LangGraph's
// own id: UUIDv5, in the namespace of the checkpoint id, of the JSON text
// [task namespace, step+1 as a string, name, "__pregel_pull", [trigger]]
// (the id LangGraph's executor gives the task and files its writes under).
// Push tasks (Sends) get [task namespace, step+1, name, "__pregel_push",
// the Send's index as a string] in the same namespace, as LangGraph.js
// hashes them.
func TaskID(cfg checkpoints.Config, step int, name string, path []any) string {
	ns, err := uuid.Parse(cfg.CheckpointID)
	if err != nil {
		ns = uuid.NameSpaceOID
	}
	taskNS := name
	if cfg.NS != "" {
		taskNS = cfg.NS + "|" + name
	}
	parts := []any{taskNS, strconv.Itoa(step + 1), name}
	if len(path) > 0 && path[0] == PullPath {
		parts = append(parts, PullPath, []string{TriggerChannel(name)})
	} else {
		for _, p := range path {
			parts = append(parts, fmt.Sprint(p))
		}
	}
	var key bytes.Buffer
	enc := json.NewEncoder(&key)
	enc.SetEscapeHTML(false) // JSON.stringify's form
	_ = enc.Encode(parts)
	return uuid.NewSHA1(ns, bytes.TrimSuffix(key.Bytes(), []byte("\n"))).String()
}

// PythonTaskID is TaskID by Python LangGraph's rule (langgraph 1.x,
// checkpoints of format v > 1): the XXH3-128 hash of the checkpoint id's 16
// bytes followed by the text parts, concatenated without separators — task
// namespace, step+1, name, then "__pregel_pull" and the node's trigger
// channel for a pull task, or "__pregel_push" and the Send's index for a
// push task — written as a UUID (8-4-4-4-12 hex digits of the big-endian
// hash). A checkpoint id that is not a UUID falls back to TaskID.
func PythonTaskID(cfg checkpoints.Config, step int, name string, path []any) string {
	id, err := uuid.Parse(cfg.CheckpointID)
	if err != nil {
		return TaskID(cfg, step, name, path)
	}
	taskNS := name
	if cfg.NS != "" {
		taskNS = cfg.NS + "|" + name
	}
	buf := append([]byte(nil), id[:]...)
	buf = append(buf, taskNS...)
	buf = strconv.AppendInt(buf, int64(step+1), 10)
	buf = append(buf, name...)
	if len(path) > 0 && path[0] == PullPath {
		buf = append(buf, PullPath...)
		buf = append(buf, TriggerChannel(name)...)
	} else {
		for _, p := range path {
			buf = append(buf, fmt.Sprint(p)...)
		}
	}
	h := xxh3.Hash128(buf).Bytes()
	return uuid.UUID(h).String()
}

// Tasks lists the tasks checkpoint t schedules next, the way LangGraph's
// Pregel loop decides: a node runs when its trigger channel holds a value
// whose version is newer than the one the node last saw; every Send in
// __pregel_tasks is a task of its own. Pull tasks come in graph node order
// (name order for graphs this server does not know), then push tasks. Each
// task gets its id and the pending writes recorded for it (interrupts,
// errors, results); see AttachWrites.
func Tasks(t *checkpoints.Tuple, g *graph.Graph) []Task {
	cp := &t.Checkpoint
	// A graph that names its nodes schedules only those (LangGraph's
	// processes): a checkpoint of a graph run inside a node, read with the
	// root graph, has no task of its own nodes.
	known := func(n string) bool {
		if g == nil || len(g.Nodes) == 0 || n == graph.START {
			return true
		}
		_, ok := g.Node(n)
		return ok
	}
	var pull []string
	for ch := range cp.ChannelValues {
		node := triggerOf(ch)
		if node == "" || !known(node) {
			continue
		}
		seen := cp.VersionsSeen[node][ch]
		if checkpoints.CompareVersions(cp.ChannelVersions[ch], seen) > 0 {
			pull = append(pull, node)
		}
	}
	order := func(n string) int {
		if n == graph.START {
			return -1
		}
		if g != nil {
			for i, node := range g.Nodes {
				if node.Name == n {
					return i
				}
			}
		}
		return 1 << 30
	}
	sort.Slice(pull, func(i, j int) bool {
		oi, oj := order(pull[i]), order(pull[j])
		if oi != oj {
			return oi < oj
		}
		return pull[i] < pull[j]
	})
	tasks := []Task{}
	for _, n := range pull {
		tasks = append(tasks, Task{Name: n, Path: []any{PullPath, n}})
	}
	v, _ := checkpoints.Materialize(cp.ChannelValues[TasksChannel])
	if sends, ok := v.([]any); ok {
		for i, s := range sends {
			if m, ok := s.(map[string]any); ok {
				if n, ok := m["node"].(string); ok && known(n) {
					tasks = append(tasks, Task{Name: n, Path: []any{PushPath, i}})
				}
			}
		}
	}
	step, _ := t.Metadata.Step()
	python := g != nil && g.Language == graph.LanguagePython
	taskID := TaskID
	if python {
		taskID = PythonTaskID
	}
	for i := range tasks {
		tasks[i].ID = taskID(t.Config, step, tasks[i].Name, tasks[i].Path)
		tasks[i].Interrupts = []any{}
		if tasks[i].Path[0] == PushPath {
			// LangGraph's push task path ends with false: no functional
			// call (the id above hashes the path without it).
			tasks[i].Path = append(tasks[i].Path, false)
		}
	}
	AttachWrites(tasks, t.PendingWrites)
	if python {
		for i := range tasks {
			tasks[i].Result = pythonResult(&tasks[i])
		}
	}
	return tasks
}

// pythonResult is a task's result as Python LangGraph's state snapshot
// shows it: nil until the task finished (it has a write that is not an
// error, interrupt or resume: finishing records at least one), else its
// writes to state channels, a channel written more than once as
// {"$writes": [each write]}; {} when it wrote none.
func pythonResult(t *Task) map[string]any {
	finished := false
	out := map[string]any{}
	for _, w := range t.Writes {
		switch w.Channel {
		case checkpoints.ChannelError, checkpoints.ChannelInterrupt, checkpoints.ChannelResume, errorSourceNode:
			continue
		}
		finished = true
		if !IsStateChannel(w.Channel) {
			continue
		}
		prev, seen := out[w.Channel]
		switch {
		case !seen:
			out[w.Channel] = w.Value
		case isMultipleWrites(prev):
			m := prev.(map[string]any)
			m["$writes"] = append(m["$writes"].([]any), w.Value)
		default:
			out[w.Channel] = map[string]any{"$writes": []any{prev, w.Value}}
		}
	}
	if !finished {
		return nil
	}
	return out
}

// errorSourceNode is LangGraph's ERROR_SOURCE_NODE control write.
const errorSourceNode = "__error_source_node__"

func isMultipleWrites(v any) bool {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return false
	}
	_, ok = m["$writes"].([]any)
	return ok
}

// AttachWrites puts each task's pending writes (interrupts, errors, normal
// writes as its result) on the task, matched by task id. Writes of a task
// id this server cannot derive (rows from other savers) go to the only
// pending task when there is exactly one. It returns every interrupt found,
// including those of writes no task claims.
func AttachWrites(tasks []Task, writes []checkpoints.Write) []any {
	byID := map[string]*Task{}
	for i := range tasks {
		byID[tasks[i].ID] = &tasks[i]
	}
	all := []any{}
	for _, w := range writes {
		task := byID[w.TaskID]
		if task == nil && len(tasks) == 1 && w.TaskID != NullTaskID {
			task = &tasks[0]
		}
		if task != nil {
			task.Writes = append(task.Writes, w)
		}
		switch w.Channel {
		case checkpoints.ChannelInterrupt:
			list, ok := w.Value.([]any)
			if !ok {
				list = []any{w.Value}
			}
			all = append(all, list...)
			if task != nil {
				task.Interrupts = append(task.Interrupts, list...)
			}
		case checkpoints.ChannelError:
			if task != nil {
				msg := errorText(w.Value)
				task.Error = &msg
			}
		case checkpoints.ChannelResume, checkpoints.ChannelScheduled:
		default:
			if task != nil && IsStateChannel(w.Channel) {
				if task.Result == nil {
					task.Result = map[string]any{}
				}
				task.Result[w.Channel] = w.Value
			}
		}
	}
	return all
}

// errorText renders an __error__ write: strings as they are, objects as
// JSON (the JS useStream hook parses the task error as JSON and shows its
// "message").
func errorText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// InterruptsByTask is the thread projection of a checkpoint's interrupts:
// task id → its interrupts, for tasks that have any.
func InterruptsByTask(tasks []Task) map[string][]any {
	out := map[string][]any{}
	for _, t := range tasks {
		if len(t.Interrupts) > 0 {
			out[t.ID] = slices.Clone(t.Interrupts)
		}
	}
	return out
}

// NextVersion mints the version of every channel a step (or an update) on
// top of base writes: above every version base has, as LangGraph's
// apply_writes mints them. On a thread in the JS saver's integer scheme
// (base's versions are all integers) it stays an integer, so the stock JS
// saver can continue the thread, and goes above every integer version of
// the thread (threadMax), so a fork never reuses a sibling branch's
// version; otherwise it is checkpoints.NextVersion's unique string.
func NextVersion(base *checkpoints.Checkpoint, threadMax int64) string {
	var maxVersion string
	if base != nil {
		for _, v := range base.ChannelVersions {
			if checkpoints.CompareVersions(v, maxVersion) > 0 {
				maxVersion = v
			}
		}
	}
	if !UsesIntVersions(base) {
		return checkpoints.NextVersion(maxVersion)
	}
	n, _ := strconv.ParseInt(maxVersion, 10, 64)
	return strconv.FormatInt(max(n, threadMax)+1, 10)
}

// UsesIntVersions reports whether base is in the JS saver's integer scheme.
func UsesIntVersions(base *checkpoints.Checkpoint) bool {
	if base == nil || len(base.ChannelVersions) == 0 {
		return false
	}
	for _, v := range base.ChannelVersions {
		if !checkpoints.IsIntVersion(v) {
			return false
		}
	}
	return true
}

// DeltaKinds are the delta channels of g (nil g: none) (graph.Channel.Delta) for
// checkpoints.ResolveDelta; nil when g has none.
func DeltaKinds(g *graph.Graph) map[string]string {
	if g == nil {
		return nil
	}
	var out map[string]string
	for _, c := range g.Channels {
		if c.Delta != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[c.Name] = c.Delta
		}
	}
	return out
}
