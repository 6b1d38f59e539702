package runs_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

// pEvent is a decoded protocol v2 event frame.
type pEvent struct {
	Type    string `json:"type"`
	EventID string `json:"event_id"`
	Seq     int64  `json:"seq"`
	Method  string `json:"method"`
	Params  struct {
		Namespace []string       `json:"namespace"`
		Timestamp int64          `json:"timestamp"`
		Node      string         `json:"node"`
		Data      map[string]any `json:"data"`
	} `json:"params"`
	sseID, sseEvent string
}

// command sends a protocol command and returns the decoded answer.
func command(t *testing.T, s *servertest.Server, tid string, id int, method string, params any) map[string]any {
	t.Helper()
	return s.Must(http.StatusOK, "POST", "/threads/"+tid+"/commands",
		map[string]any{"id": id, "method": method, "params": params}).Map(t)
}

// readUntil reads protocol events until stop says so (or fails after 20 s).
func readUntil(t *testing.T, st *sseStream, stop func(pEvent) bool) []pEvent {
	t.Helper()
	var out []pEvent
	timer := time.AfterFunc(20*time.Second, st.cancel)
	defer timer.Stop()
	for {
		e, ok := st.next()
		if !ok {
			t.Fatalf("stream ended after %d events", len(out))
		}
		var p pEvent
		if err := json.Unmarshal([]byte(e.Data), &p); err != nil {
			t.Fatalf("event %s: %v", e.Data, err)
		}
		p.sseID, p.sseEvent = e.ID, e.Event
		out = append(out, p)
		if stop(p) {
			return out
		}
	}
}

func terminal(p pEvent) bool {
	if p.Method != "lifecycle" || len(p.Params.Namespace) != 0 {
		return false
	}
	ev := p.Params.Data["event"]
	return ev == "completed" || ev == "interrupted" || ev == "failed"
}

func TestProtocolRunStartStreamsMessagesAndValues(t *testing.T) {
	s := start(t)
	tid := uuid.NewString() // the client mints the id; run.start creates the thread
	res := command(t, s, tid, 1, "run.start", map[string]any{"assistant_id": "echo_chat",
		"input": map[string]any{"messages": []any{map[string]any{"type": "human", "content": "hello there"}}}})
	if res["type"] != "success" || res["id"] != json.Number("1") && res["id"] != float64(1) {
		t.Fatalf("run.start = %v", res)
	}
	runID, _ := res["result"].(map[string]any)["run_id"].(string)
	if meta, _ := res["meta"].(map[string]any); meta["thread_id"] != tid || runID == "" {
		t.Fatalf("run.start = %v", res)
	}
	st := openStream(t, s, "POST", "/threads/"+tid+"/stream/events",
		map[string]any{"channels": []string{"values", "messages", "lifecycle"}}, nil)
	evs := readUntil(t, st, terminal)

	var methods []string
	var text strings.Builder
	var last int64
	for _, e := range evs {
		if e.Type != "event" || e.sseEvent != e.Method || e.sseID != e.EventID || e.EventID != strconv.FormatInt(e.Seq, 10) {
			t.Fatalf("frame %+v", e)
		}
		if e.Seq <= last {
			t.Fatalf("seq %d after %d", e.Seq, last)
		}
		last = e.Seq
		m := e.Method
		if e.Method == "messages" {
			m += ":" + e.Params.Data["event"].(string)
			if e.Params.Node != "echo" {
				t.Fatalf("message event without its node: %+v", e)
			}
			if d, ok := e.Params.Data["delta"].(map[string]any); ok {
				text.WriteString(d["text"].(string))
			}
		}
		if e.Method == "lifecycle" {
			m += ":" + e.Params.Data["event"].(string)
		}
		if len(methods) == 0 || methods[len(methods)-1] != m {
			methods = append(methods, m)
		}
	}
	want := "lifecycle:running values messages:message-start messages:content-block-start messages:content-block-delta " +
		"messages:content-block-finish messages:message-finish values lifecycle:completed"
	if got := strings.Join(methods, " "); got != want {
		t.Fatalf("events %s\nwant   %s", got, want)
	}
	if text.String() != "echo: hello there" {
		t.Fatalf("streamed text %q", text.String())
	}
	final := evs[len(evs)-2].Params.Data["messages"].([]any)
	if len(final) != 2 || final[1].(map[string]any)["content"] != "echo: hello there" {
		t.Fatalf("final values %v", final)
	}

	// state.get and agent.getTree answer from the thread.
	sg := command(t, s, tid, 2, "state.get", nil)["result"].(map[string]any)
	if msgs, _ := sg["values"].(map[string]any)["messages"].([]any); len(msgs) != 2 || sg["checkpoint"] == nil {
		t.Fatalf("state.get = %v", sg)
	}
	tree := command(t, s, tid, 3, "agent.getTree", map[string]any{})["result"].(map[string]any)["tree"].(map[string]any)
	if tree["graph_name"] != "echo_chat" || tree["status"] != "completed" {
		t.Fatalf("agent.getTree = %v", tree)
	}
}

func TestProtocolInterruptRespond(t *testing.T) {
	s := start(t)
	tid := uuid.NewString()
	command(t, s, tid, 1, "run.start", map[string]any{"assistant_id": "hitl", "input": map[string]any{"input": "x"}})
	st := openStream(t, s, "POST", "/threads/"+tid+"/stream/events",
		map[string]any{"channels": []string{"lifecycle", "input", "values"}}, nil)
	evs := readUntil(t, st, terminal)
	if ev := evs[len(evs)-1].Params.Data["event"]; ev != "interrupted" {
		t.Fatalf("terminal %v", ev)
	}
	var ask *pEvent
	for i, e := range evs {
		if e.Method == "input.requested" {
			if ask != nil {
				t.Fatalf("two input.requested for one interrupt: %+v", evs)
			}
			ask = &evs[i]
		}
		if e.Method == "values" && e.Params.Data["__interrupt__"] != nil {
			t.Fatalf("values with __interrupt__: %+v", e)
		}
	}
	if ask == nil || ask.Params.Data["payload"].(map[string]any)["question"] != "approve?" {
		t.Fatalf("no input.requested: %+v", evs)
	}
	iid := ask.Params.Data["interrupt_id"].(string)

	// An interrupt that is not pending, and an unknown method, are error frames.
	bad := command(t, s, tid, 2, "input.respond", map[string]any{"interrupt_id": "nope", "response": 1})
	if bad["type"] != "error" || bad["error"] != "no_such_interrupt" {
		t.Fatalf("respond to an unknown interrupt = %v", bad)
	}
	unk := command(t, s, tid, 3, "bogus.method", nil)
	if unk["type"] != "error" || unk["error"] != "unknown_command" || unk["id"] == nil {
		t.Fatalf("unknown method = %v", unk)
	}

	ok := command(t, s, tid, 4, "input.respond", map[string]any{"interrupt_id": iid, "response": "yes"})
	if ok["type"] != "success" {
		t.Fatalf("input.respond = %v", ok)
	}
	// The same stream follows the thread into the resumed run.
	evs = readUntil(t, st, terminal)
	if ev := evs[len(evs)-1].Params.Data["event"]; ev != "completed" {
		t.Fatalf("terminal after respond %v", ev)
	}
	if got := evs[len(evs)-2].Params.Data["result"]; got != "x:yes" {
		t.Fatalf("result %v (%+v)", got, evs[len(evs)-2])
	}
}

func TestProtocolResumeWithoutLossOrRepeat(t *testing.T) {
	s := start(t)
	tid := uuid.NewString()
	for i, text := range []string{"one", "two words"} {
		res := command(t, s, tid, i+1, "run.start", map[string]any{"assistant_id": "echo_chat",
			"input": map[string]any{"messages": []any{map[string]any{"type": "human", "content": text}}}})
		runStatus(t, s, tid, res["result"].(map[string]any)["run_id"].(string), "success")
	}
	channels := []string{"values", "updates", "messages", "lifecycle", "input", "tasks", "custom"}
	key := func(e pEvent) string {
		b, _ := json.Marshal(e.Params)
		return e.EventID + " " + e.Method + " " + string(b)
	}
	read := func(body map[string]any, header map[string]string, lastSeq int64) []string {
		st := openStream(t, s, "POST", "/threads/"+tid+"/stream/events", body, header)
		var out []string
		for _, e := range readUntil(t, st, func(p pEvent) bool { return p.Seq == lastSeq }) {
			out = append(out, key(e))
		}
		st.cancel()
		return out
	}
	// The whole thread from the start: both runs, in order.
	st := openStream(t, s, "POST", "/threads/"+tid+"/stream/events", map[string]any{"channels": channels, "since": 0}, nil)
	terminals := 0
	full := readUntil(t, st, func(p pEvent) bool {
		if terminal(p) {
			terminals++
		}
		return terminals == 2
	})
	st.cancel()
	last := full[len(full)-1].Seq
	var keys []string
	for _, e := range full {
		keys = append(keys, key(e))
	}
	// Resuming after any event gives exactly the events after it, with the
	// same ids and payloads (a cut inside a streamed message included).
	for i := 0; i < len(full)-1; i++ {
		since := full[i].Seq
		var got []string
		if i%2 == 0 {
			got = read(map[string]any{"channels": channels, "since": since}, nil, last)
		} else {
			got = read(map[string]any{"channels": channels}, map[string]string{"Last-Event-ID": strconv.FormatInt(since, 10)}, last)
		}
		if strings.Join(got, "\n") != strings.Join(keys[i+1:], "\n") {
			t.Fatalf("resume after %d:\n%s\nwant\n%s", since, strings.Join(got, "\n"), strings.Join(keys[i+1:], "\n"))
		}
	}
	// Without since, the stream starts at the latest run's first event.
	first := readUntil(t, openStream(t, s, "POST", "/threads/"+tid+"/stream/events", map[string]any{"channels": channels}, nil),
		func(pEvent) bool { return true })[0]
	if first.Method != "lifecycle" || first.Params.Data["event"] != "running" || first.Seq <= full[0].Seq {
		t.Fatalf("default start %+v", first)
	}
	var secondRun int64
	for i, e := range full {
		if terminal(e) {
			secondRun = full[i+1].Seq
			break
		}
	}
	if first.Seq != secondRun {
		t.Fatalf("default start at %d, want the second run's first event %d", first.Seq, secondRun)
	}
}

// A thread stream opened before the run.start that creates the thread (as
// the SDK opens it) waits for the thread and sends its events from the
// first, as LangGraph's server does.
func TestProtocolStreamBeforeTheThreadExists(t *testing.T) {
	s := start(t)
	tid := uuid.NewString()
	st := openStream(t, s, "POST", "/threads/"+tid+"/stream/events",
		map[string]any{"channels": []string{"values", "lifecycle"}}, nil)
	res := command(t, s, tid, 1, "run.start", map[string]any{"assistant_id": "echo_chat",
		"input": map[string]any{"messages": []any{map[string]any{"type": "human", "content": "early"}}}})
	if res["type"] != "success" {
		t.Fatalf("run.start = %v", res)
	}
	evs := readUntil(t, st, terminal)
	if first := evs[0]; first.Method != "lifecycle" || first.Params.Data["event"] != "running" {
		t.Fatalf("first event %+v", first)
	}
	if last := evs[len(evs)-1]; last.Params.Data["event"] != "completed" {
		t.Fatalf("last event %+v", last)
	}
}

func TestProtocolBadInput(t *testing.T) {
	s := start(t)
	tid := uuid.NewString()
	for _, c := range []struct {
		path string
		body any
		want int
	}{
		{"/threads/" + tid + "/commands", map[string]any{"method": "run.start"}, http.StatusUnprocessableEntity},
		{"/threads/" + tid + "/commands", map[string]any{"id": 1}, http.StatusUnprocessableEntity},
		{"/threads/" + tid + "/commands", map[string]any{"id": -1, "method": "x"}, http.StatusUnprocessableEntity},
		{"/threads/" + tid + "/commands", []any{1}, http.StatusUnprocessableEntity},
		{"/threads/nope/commands", map[string]any{"id": 1, "method": "state.get"}, http.StatusUnprocessableEntity},
		{"/threads/" + tid + "/stream/events", map[string]any{}, http.StatusUnprocessableEntity},
		{"/threads/" + tid + "/stream/events", map[string]any{"channels": []string{"nope"}}, http.StatusUnprocessableEntity},
		{"/threads/" + tid + "/stream/events", map[string]any{"channels": []string{"values"}, "depth": -1}, http.StatusUnprocessableEntity},
		{"/threads/" + tid + "/stream/events", map[string]any{"channels": []string{"values"}, "since": -5}, http.StatusUnprocessableEntity},
	} {
		if r := s.Do("POST", c.path, c.body); r.Status != c.want {
			t.Errorf("POST %s %v: %d %s, want %d", c.path, c.body, r.Status, r.Body, c.want)
		}
	}
	for params, code := range map[string]string{
		`{"assistant_id": ""}`:                                     "invalid_argument",
		`{"assistant_id": "no_such_graph"}`:                        "invalid_argument",
		`{"assistant_id": "echo_chat", "input": 5}`:                "invalid_argument",
		`{"assistant_id": "echo_chat", "config": "x"}`:             "invalid_argument",
		`{"assistant_id": "echo_chat", "multitask_strategy": "x"}`: "invalid_argument",
	} {
		res := command(t, s, tid, 7, "run.start", json.RawMessage(params))
		if res["type"] != "error" || res["error"] != code {
			t.Errorf("run.start %s = %v, want %s", params, res, code)
		}
	}
	if r := command(t, s, tid, 8, "input.respond", map[string]any{"interrupt_id": "x", "response": 1}); r["error"] != "no_such_run" {
		t.Errorf("input.respond on a thread without runs = %v", r)
	}
	if r := command(t, s, tid, 9, "state.get", nil); r["type"] != "success" {
		t.Errorf("state.get on a new thread = %v", r)
	}
	if n := dbCount(t, s, `SELECT count(*) FROM threads WHERE thread_id = $1`, tid); n != 0 {
		t.Errorf("bad commands created the thread")
	}
}

// A protocol stream sends only the channels and namespaces asked for, and a
// comment line while idle.
func TestProtocolFilterAndHeartbeat(t *testing.T) {
	s := startWith(t, func(c *server.Config) { c.StreamHeartbeat = 100 * time.Millisecond })
	tid := uuid.NewString()
	res := command(t, s, tid, 1, "run.start", map[string]any{"assistant_id": "hitl", "input": map[string]any{"input": "f"}})
	runStatus(t, s, tid, res["result"].(map[string]any)["run_id"].(string), "success")

	st := openStream(t, s, "POST", "/threads/"+tid+"/stream/events", map[string]any{"channels": []string{"updates", "input"}, "since": 0}, nil)
	evs := readUntil(t, st, func(p pEvent) bool { return p.Method == "input.requested" })
	var nodes []string
	for _, e := range evs {
		if e.Method == "updates" {
			nodes = append(nodes, e.Params.Node)
			if _, ok := e.Params.Data["input"]; e.Params.Node == "prepare" && !ok {
				t.Fatalf("updates of prepare without its values: %+v", e)
			}
		} else if e.Method != "input.requested" {
			t.Fatalf("channel not asked for: %+v", e)
		}
	}
	if strings.Join(nodes, ",") != "prepare" {
		t.Fatalf("updates nodes %v", nodes)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(st.raw.String(), ": heartbeat\n\n") {
		if time.Now().After(deadline) {
			t.Fatalf("no heartbeat: %q", st.raw.String())
		}
		buf := make([]byte, 64)
		_, _ = st.lines.Read(buf)
	}
	st.cancel()

	// A namespace prefix that matches nothing: root events are not sent.
	st = openStream(t, s, "POST", "/threads/"+tid+"/stream/events", map[string]any{"channels": []string{"lifecycle", "values"},
		"namespaces": [][]string{{"child"}}, "since": 0}, nil)
	go func() { time.Sleep(500 * time.Millisecond); st.cancel() }()
	if e, ok := st.next(); ok {
		t.Fatalf("event outside the namespaces: %+v", e)
	}
}
