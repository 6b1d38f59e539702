package stream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/crypt"
	"github.com/weftdev/weft/internal/eventlog"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/runs"
)

// Protocol v2 ("thread-centric streaming", reference §12) shows a thread's
// events as one sequence across its runs. Its events are derived from the
// durable run log, never stored twice: each run_events row has a
// thread_seq (migration 008: one sequence, so it only grows and is never
// reused), and the k-th protocol event derived from a row gets
//
//	seq = thread_seq × protocolSeqScale + k
//
// A row's protocol events depend only on that row and the earlier rows of
// its run (which messages were started, which interrupts were asked), so a
// reconnecting client gets the same seq and event_id for the same event
// whatever stream it reads them on: resuming after seq S neither loses nor
// repeats anything.
const protocolSeqScale = 1000

// protocolEvent is one event frame of a protocol v2 stream.
type protocolEvent struct {
	Type    string         `json:"type"`
	EventID string         `json:"event_id"`
	Seq     int64          `json:"seq"`
	Method  string         `json:"method"`
	Params  protocolParams `json:"params"`
}

// protocolParams are an event's params: where it happened, when (Unix ms,
// the time its run wrote it), the node for updates and messages, and the
// channel's payload.
type protocolParams struct {
	Namespace []string `json:"namespace"`
	Timestamp int64    `json:"timestamp"`
	Node      string   `json:"node,omitempty"`
	Data      any      `json:"data"`
}

// logEvent is a run_events row as protocol streams read it, with its run's
// graph.
type logEvent struct {
	ThreadSeq int64           `db:"thread_seq"`
	RunID     uuid.UUID       `db:"run_id"`
	Seq       int64           `db:"seq"`
	Event     string          `db:"event"`
	Data      json.RawMessage `db:"data"`
	Ref       []byte          `db:"ref"` // see StoredEvent
	CreatedAt time.Time       `db:"created_at"`
	GraphID   string          `db:"graph_id"`
}

const logEventColumns = `e.thread_seq, e.run_id, e.seq, e.event, e.data, e.ref, e.created_at, r.graph_id`

// openLogEvents collects log events with their data decrypted (encryption
// at rest; plaintext rows pass through).
func openLogEvents(ctx context.Context, rows pgx.Rows) ([]logEvent, error) {
	evs, err := pgx.CollectRows(rows, pgx.RowToStructByName[logEvent])
	if err != nil {
		return nil, err
	}
	kr := crypt.FromContext(ctx)
	for i := range evs {
		if err := openData(kr, &evs[i].Data, evs[i].RunID, evs[i].Seq); err != nil {
			return nil, err
		}
	}
	return evs, nil
}

// protocolLogAfter returns up to limit events of the thread with a
// thread_seq above after, in order.
func (s *Service) protocolLogAfter(ctx context.Context, threadID uuid.UUID, after int64, limit int) ([]logEvent, error) {
	rows, err := s.db.Query(ctx, `SELECT `+logEventColumns+` FROM run_events e JOIN runs r USING (run_id)
		WHERE e.thread_id = $1 AND e.thread_seq > $2 AND r.tenant_id = $4 ORDER BY e.thread_seq LIMIT $3`,
		threadID, after, limit, auth.Tenant(ctx))
	if err != nil {
		return nil, err
	}
	evs, err := openLogEvents(ctx, rows)
	if err != nil {
		return nil, err
	}
	var items []eventlog.Item
	for i := range evs {
		// debug rows give no protocol event: left as stored.
		if e := &evs[i]; e.Ref != nil && !strings.HasPrefix(e.Event, "debug") {
			items = append(items, eventlog.Item{RunID: e.RunID, Seq: e.Seq, Data: &e.Data, Ref: &e.Ref})
		}
	}
	return evs, s.render.Render(ctx, s.db, threadID, items)
}

// protocolRunPrefix returns the events of run before its seq before that
// shape how later ones translate (messages, updates, values, error). They
// are not rendered: of a values event the view needs only its
// __interrupt__ entry, which is never part of a checkpoint reference.
func (s *Service) protocolRunPrefix(ctx context.Context, runID uuid.UUID, before int64) ([]logEvent, error) {
	rows, err := s.db.Query(ctx, `SELECT `+logEventColumns+` FROM run_events e JOIN runs r USING (run_id)
		WHERE e.run_id = $1 AND e.seq < $2 AND (e.event = 'error' OR e.event LIKE 'messages%'
			OR e.event LIKE 'updates%' OR e.event LIKE 'values%') AND r.tenant_id = $3 ORDER BY e.seq`, runID, before, auth.Tenant(ctx))
	if err != nil {
		return nil, err
	}
	return openLogEvents(ctx, rows)
}

// openMessage is a message whose chunks are streaming.
type openMessage struct {
	id, node string
	ns       []string
	text     strings.Builder
}

// runView is what translating a run's later events needs to know of its
// earlier ones.
type runView struct {
	started map[string]bool // message ids that had their message-start
	open    []*openMessage  // started, not finished, in start order
	asked   map[string]bool // interrupt ids that had their input.requested
	failed  bool            // a root lifecycle "failed" was sent
	paused  bool            // the run stopped on an interrupt
	// Subgraph namespaces seen, in order, and their last lifecycle
	// status; pending are those whose parent's update of their node has
	// come, marked completed at the next event (so the parent's update is
	// sent first), as LangGraph's lifecycle transformer does.
	spaces  []*subgraphSpace
	pending []*subgraphSpace
}

// subgraphSpace is a subgraph namespace of a run, for its lifecycle events.
type subgraphSpace struct {
	ns     []string
	status string
}

// protocolTranslator turns log events into protocol events, keeping a
// runView per run it is in the middle of.
type protocolTranslator struct {
	svc  *Service
	runs map[uuid.UUID]*runView
}

func newProtocolTranslator(svc *Service) *protocolTranslator {
	return &protocolTranslator{svc: svc, runs: map[uuid.UUID]*runView{}}
}

// translate returns e's protocol events. The first time it meets a run
// past that run's first event, it reads the run's earlier events to
// rebuild the run's view.
func (t *protocolTranslator) translate(ctx context.Context, e logEvent) ([]protocolEvent, error) {
	v, ok := t.runs[e.RunID]
	if !ok {
		v = &runView{started: map[string]bool{}, asked: map[string]bool{}}
		t.runs[e.RunID] = v
		if e.Seq > 1 {
			prior, err := t.svc.protocolRunPrefix(ctx, e.RunID, e.Seq)
			if err != nil {
				delete(t.runs, e.RunID)
				return nil, err
			}
			for _, p := range prior {
				v.translate(p)
			}
		}
	}
	out := v.translate(e)
	if base, _, _ := strings.Cut(e.Event, "|"); base == "end" {
		delete(t.runs, e.RunID)
	}
	return out, nil
}

// emitter numbers the protocol events derived from one log event.
type emitter struct {
	e   logEvent
	out []protocolEvent
}

func (m *emitter) add(method string, ns []string, node string, data any) {
	k := int64(len(m.out))
	if k >= protocolSeqScale {
		return // never happens with real runs; keeps seqs unique
	}
	seq := m.e.ThreadSeq*protocolSeqScale + k
	if ns == nil {
		ns = []string{}
	}
	m.out = append(m.out, protocolEvent{Type: "event", EventID: strconv.FormatInt(seq, 10), Seq: seq, Method: method,
		Params: protocolParams{Namespace: ns, Timestamp: m.e.CreatedAt.UnixMilli(), Node: node, Data: data}})
}

// translate maps one log event (named "<mode>" or "<mode>|<ns1>|<ns2>…")
// to protocol events:
//
//	metadata  → lifecycle running (root only)
//	values    → values (without __interrupt__, whose entries become
//	            input.requested once per interrupt id)
//	updates   → open messages of that node finish; then one updates event
//	            per node, node in params; __interrupt__ → input.requested
//	messages  → message-start + content-block-start on a message's first
//	            chunk, content-block-delta per chunk with text; a whole
//	            (non-chunk) message also finishes at once
//	custom    → custom {payload}; tasks, checkpoints as they are
//	tools     → tools: tool-started {tool_call_id, tool_name, input},
//	            tool-output-delta {delta}, tool-finished {output},
//	            tool-error {message}, from LangGraph's tools mode
//	error     → lifecycle failed (root)
//	end       → open messages finish; lifecycle completed, interrupted
//	            (stopped on an interrupt, or cancelled) or failed (root)
//
// Subgraph namespaces get lifecycle events of their own, as LangGraph's
// lifecycle transformer gives them: "started" (graph_name: the node that
// runs the subgraph) before the first event in them (each prefix of a
// nested one too), "completed" once the parent's updates of that node has
// been sent (at the next event), and the root's terminal status for those
// still started when the run ends.
//
// debug and events rows have no protocol channel and give nothing.
func (v *runView) translate(e logEvent) []protocolEvent {
	m := &emitter{e: e}
	base, rest, _ := strings.Cut(e.Event, "|")
	var ns []string
	if rest != "" {
		ns = strings.Split(rest, "|")
	}
	root := len(ns) == 0
	var data any
	if err := jsonv.Decode(e.Data, &data); err != nil {
		return nil
	}
	v.flushCompleted(m)
	if !root && base != "end" {
		v.ensureStarted(m, ns)
	}
	switch base {
	case "metadata":
		if root {
			m.add("lifecycle", ns, "", map[string]any{"event": "running", "graph_name": e.GraphID, "run_id": e.RunID.String()})
		}
	case "values":
		obj, isObj := data.(map[string]any)
		if isObj {
			if raw, ok := obj["__interrupt__"]; ok {
				v.askInterrupts(m, ns, raw)
				obj = withoutKey(obj, "__interrupt__")
				data = obj
			}
			if len(obj) == 0 {
				break
			}
		}
		m.add("values", ns, "", data)
	case "updates":
		for _, node := range orderedKeys(e.Data) {
			obj, _ := data.(map[string]any)
			if node == "__interrupt__" {
				v.paused = true
				v.askInterrupts(m, ns, obj[node])
				continue
			}
			v.finishMessages(m, func(o *openMessage) bool { return o.node == node && slices.Equal(o.ns, ns) })
			m.add("updates", ns, node, obj[node])
			v.nodeDone(ns, node)
		}
	case "messages":
		v.message(m, ns, data)
	case "custom":
		m.add("custom", ns, "", map[string]any{"payload": data})
	case "tools":
		m.add("tools", ns, "", toolEvent(data))
	case "tasks", "checkpoints":
		m.add(base, ns, "", data)
	default:
		// A graph's named extension channel ("custom:<name>"): the final
		// value of a stream transformer's projection, which clients read
		// as thread.extensions.<name>.
		if name, ok := strings.CutPrefix(base, "custom:"); ok && name != "" {
			m.add("custom", ns, "", map[string]any{"name": name, "payload": data})
		}
	case "error":
		v.finishMessages(m, func(o *openMessage) bool { return true })
		if root {
			v.endSpaces(m, "failed")
			v.failed = true
			msg := ""
			if obj, ok := data.(map[string]any); ok {
				msg, _ = obj["message"].(string)
			}
			m.add("lifecycle", ns, "", map[string]any{"event": "failed", "graph_name": e.GraphID, "error": msg})
		}
	case "end":
		v.finishMessages(m, func(o *openMessage) bool { return true })
		end, _ := data.(map[string]any)
		s, _ := end["status"].(string)
		status := runs.Status(s)
		event := "completed"
		switch {
		case status == runs.StatusError:
			if v.failed {
				return m.out
			}
			event = "failed"
		case status == runs.StatusInterrupted, status == runs.StatusTimeout, v.paused:
			event = "interrupted"
		}
		v.endSpaces(m, event)
		m.add("lifecycle", ns, "", map[string]any{"event": event, "graph_name": e.GraphID})
	}
	return m.out
}

// ensureStarted sends lifecycle started for each prefix of ns not seen yet.
func (v *runView) ensureStarted(m *emitter, ns []string) {
	for n := 1; n <= len(ns); n++ {
		prefix := ns[:n]
		if v.space(prefix) != nil {
			continue
		}
		sp := &subgraphSpace{ns: slices.Clone(prefix), status: "started"}
		v.spaces = append(v.spaces, sp)
		m.add("lifecycle", sp.ns, "", map[string]any{"event": "started", "graph_name": subgraphName(sp.ns)})
	}
}

func (v *runView) space(ns []string) *subgraphSpace {
	for _, sp := range v.spaces {
		if slices.Equal(sp.ns, ns) {
			return sp
		}
	}
	return nil
}

// nodeDone marks for completion the started child namespace of parent
// that node ran ("<node>:<task id>" or "<node>").
func (v *runView) nodeDone(parent []string, node string) {
	if strings.HasPrefix(node, "__") {
		return
	}
	for _, sp := range v.spaces {
		if sp.status != "started" || len(sp.ns) != len(parent)+1 || !slices.Equal(sp.ns[:len(parent)], parent) {
			continue
		}
		if last := sp.ns[len(parent)]; (last == node || strings.HasPrefix(last, node+":")) && !slices.Contains(v.pending, sp) {
			v.pending = append(v.pending, sp)
			return
		}
	}
}

// flushCompleted sends lifecycle completed for the namespaces marked so.
func (v *runView) flushCompleted(m *emitter) {
	for _, sp := range v.pending {
		if sp.status == "started" {
			sp.status = "completed"
			m.add("lifecycle", sp.ns, "", map[string]any{"event": "completed", "graph_name": subgraphName(sp.ns)})
		}
	}
	v.pending = nil
}

// endSpaces gives the namespaces still started the run's terminal status.
func (v *runView) endSpaces(m *emitter, status string) {
	v.pending = nil
	for _, sp := range v.spaces {
		if sp.status == "started" {
			sp.status = status
			m.add("lifecycle", sp.ns, "", map[string]any{"event": status, "graph_name": subgraphName(sp.ns)})
		}
	}
}

// subgraphName is a subgraph namespace's graph name as LangGraph guesses
// it: its last segment's node name.
func subgraphName(ns []string) string {
	name, _, _ := strings.Cut(ns[len(ns)-1], ":")
	return name
}

// askInterrupts sends input.requested for each interrupt ({id, value}) not
// asked for yet.
func (v *runView) askInterrupts(m *emitter, ns []string, raw any) {
	list, _ := raw.([]any)
	for _, it := range list {
		in, _ := it.(map[string]any)
		id, _ := in["id"].(string)
		v.paused = true
		if id == "" || v.asked[id] {
			continue
		}
		v.asked[id] = true
		m.add("input.requested", ns, "", map[string]any{"interrupt_id": id, "payload": in["value"]})
	}
}

// message translates a messages-tuple event [message, metadata].
func (v *runView) message(m *emitter, ns []string, data any) {
	pair, _ := data.([]any)
	if len(pair) == 0 {
		return
	}
	msg, _ := pair[0].(map[string]any)
	md := map[string]any{}
	if len(pair) > 1 {
		md, _ = pair[1].(map[string]any)
	}
	id, _ := msg["id"].(string)
	if msg == nil || id == "" {
		return
	}
	typ, _ := msg["type"].(string)
	chunk := strings.HasSuffix(typ, "Chunk")
	node, _ := md["langgraph_node"].(string)
	var o *openMessage
	for _, c := range v.open {
		if c.id == id {
			o = c
		}
	}
	if o == nil {
		if v.started[id] {
			return // a message already finished: nothing new to say
		}
		v.started[id] = true
		o = &openMessage{id: id, node: node, ns: ns}
		v.open = append(v.open, o)
		start := map[string]any{"event": "message-start", "role": messageRole(typ), "id": id}
		if len(md) > 0 {
			start["metadata"] = md
		}
		m.add("messages", ns, node, start)
		m.add("messages", ns, node, map[string]any{"event": "content-block-start", "index": 0,
			"content": map[string]any{"type": "text", "text": ""}})
	}
	text := messageText(msg["content"])
	if !chunk && o.text.Len() > 0 {
		// A whole message after its chunks: only what they did not say.
		text = strings.TrimPrefix(text, o.text.String())
	}
	if text != "" {
		o.text.WriteString(text)
		m.add("messages", o.ns, o.node, map[string]any{"event": "content-block-delta", "index": 0,
			"delta": map[string]any{"type": "text-delta", "text": text}})
	}
	if !chunk {
		v.finishMessages(m, func(c *openMessage) bool { return c == o })
	}
}

// finishMessages sends content-block-finish and message-finish for the
// open messages that match, in start order.
func (v *runView) finishMessages(m *emitter, match func(*openMessage) bool) {
	v.open = slices.DeleteFunc(v.open, func(o *openMessage) bool {
		if !match(o) {
			return false
		}
		m.add("messages", o.ns, o.node, map[string]any{"event": "content-block-finish", "index": 0,
			"content": map[string]any{"type": "text", "text": o.text.String()}})
		m.add("messages", o.ns, o.node, map[string]any{"event": "message-finish", "reason": "stop"})
		return true
	})
}

// messageRole is the protocol role of a LangChain message type:
// "AIMessageChunk" → "ai", "human" → "human", … ("ai" when unknown).
func messageRole(typ string) string {
	t := strings.ToLower(strings.TrimSuffix(strings.TrimSuffix(typ, "Chunk"), "Message"))
	switch t {
	case "ai", "human", "tool", "system", "function":
		return t
	case "user":
		return "human"
	case "assistant":
		return "ai"
	}
	return "ai"
}

// messageText is the text of a message's content: the string, or its text
// blocks joined.
func messageText(content any) string {
	switch c := content.(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, part := range c {
			switch p := part.(type) {
			case string:
				b.WriteString(p)
			case map[string]any:
				if p["type"] == "text" {
					s, _ := p["text"].(string)
					b.WriteString(s)
				}
			}
		}
		return b.String()
	}
	return ""
}

// orderedKeys returns the keys of a JSON object in the order they appear
// (nil for anything else).
func orderedKeys(raw json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return keys
		}
		k, _ := tok.(string)
		keys = append(keys, k)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return keys
		}
	}
	return keys
}

func withoutKey(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// protocolFilter is what a protocol stream sends: events of these channels
// (custom:<name> for one named custom channel) under these namespace
// prefixes (none: all), at most depth levels below a prefix (-1: any).
type protocolFilter struct {
	channels   map[string]bool
	namespaces [][]string
	depth      int
}

// protocolChannels are the channels a stream may ask for.
var protocolChannels = []string{"values", "updates", "messages", "tools", "lifecycle", "input", "tasks", "custom", "checkpoints"}

// channelOf is the channel a protocol event belongs to.
func channelOf(ev *protocolEvent) string {
	switch ev.Method {
	case "input.requested", "input.answered":
		return "input"
	case "custom":
		if d, ok := ev.Params.Data.(map[string]any); ok {
			if name, ok := d["name"].(string); ok {
				return "custom:" + name
			}
		}
	}
	return ev.Method
}

func (f *protocolFilter) match(ev *protocolEvent) bool {
	ch := channelOf(ev)
	if !f.channels[ch] && !(strings.HasPrefix(ch, "custom:") && f.channels["custom"]) {
		return false
	}
	if len(f.namespaces) == 0 {
		return true
	}
	ns := ev.Params.Namespace
	for _, prefix := range f.namespaces {
		if namespaceHasPrefix(ns, prefix) && (f.depth < 0 || len(ns)-len(prefix) <= f.depth) {
			return true
		}
	}
	return false
}

// namespaceHasPrefix reports whether ns starts with prefix; a prefix
// segment without ":" also matches a segment "<it>:<task id>" (clients
// name subgraphs by node, the log by node and task).
func namespaceHasPrefix(ns, prefix []string) bool {
	if len(prefix) > len(ns) {
		return false
	}
	for i, seg := range prefix {
		if ns[i] == seg {
			continue
		}
		if strings.Contains(seg, ":") {
			return false
		}
		if name, _, _ := strings.Cut(ns[i], ":"); name != seg {
			return false
		}
	}
	return true
}

// toolEvent is a tools-mode payload of LangGraph (on_tool_start,
// on_tool_event, on_tool_end, on_tool_error, with toolCallId and name) as
// the protocol's tools channel carries it.
func toolEvent(data any) map[string]any {
	p, _ := data.(map[string]any)
	if p == nil {
		return map[string]any{"event": "tool-error", "tool_call_id": "", "message": "tools event is not an object"}
	}
	id := ""
	if v, ok := p["toolCallId"].(string); ok {
		id = v
	} else if v, ok := p["tool_call_id"].(string); ok {
		id = v
	}
	switch p["event"] {
	case "on_tool_start":
		name, _ := p["name"].(string)
		if name == "" {
			name = "unknown"
		}
		return map[string]any{"event": "tool-started", "tool_call_id": id, "tool_name": name, "input": p["input"]}
	case "on_tool_event":
		delta, ok := p["data"].(string)
		if !ok {
			b, _ := json.Marshal(p["data"])
			delta = string(b)
		}
		return map[string]any{"event": "tool-output-delta", "tool_call_id": id, "delta": delta}
	case "on_tool_end":
		return map[string]any{"event": "tool-finished", "tool_call_id": id, "output": p["output"]}
	case "on_tool_error":
		msg := fmt.Sprint(p["error"])
		if e, ok := p["error"].(map[string]any); ok {
			if m, ok := e["message"].(string); ok {
				msg = m
			}
		}
		return map[string]any{"event": "tool-error", "tool_call_id": id, "message": msg}
	}
	return map[string]any{"event": "tool-error", "tool_call_id": id, "message": fmt.Sprintf("unknown tools event %v", p["event"])}
}
