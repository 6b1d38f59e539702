package runs_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

type sseEvent struct {
	Event, Data, ID string
}

// sseStream is an open event stream.
type sseStream struct {
	resp   *http.Response
	lines  *bufio.Reader
	cancel context.CancelFunc
	raw    bytes.Buffer // every byte read, comments included
}

// openStream sends a request whose answer is an event stream.
func openStream(t *testing.T, s *servertest.Server, method, path string, body any, header map[string]string) *sseStream {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	req, _ := http.NewRequestWithContext(ctx, method, s.URL+path, rd)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s %s: %d %s %s", method, path, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	st := &sseStream{resp: resp, cancel: cancel}
	st.lines = bufio.NewReader(io.TeeReader(resp.Body, &st.raw))
	return st
}

// next reads the next event (ok false at the end of the stream).
func (st *sseStream) next() (sseEvent, bool) {
	var e sseEvent
	for {
		line, err := st.lines.ReadString('\n')
		if err != nil {
			return e, false
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if e.Event != "" {
				return e, true
			}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "event: "):
			e.Event = line[7:]
		case strings.HasPrefix(line, "data: "):
			e.Data = line[6:]
		case strings.HasPrefix(line, "id: "):
			e.ID = line[4:]
		}
	}
}

// all reads every event until the server closes the stream.
func (st *sseStream) all() []sseEvent {
	var out []sseEvent
	for {
		e, ok := st.next()
		if !ok {
			return out
		}
		out = append(out, e)
	}
}

func shape(evs []sseEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.ID+" "+e.Event+" "+e.Data)
	}
	return out
}

// The exact stream of a foo_bar run in values and updates modes.
func TestStreamFooBar(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	st := openStream(t, s, "POST", "/threads/"+tid+"/runs/stream", map[string]any{"assistant_id": "foo_bar",
		"input": map[string]any{"foo": ""}, "stream_mode": []string{"values", "updates"}}, nil)
	cloc := st.resp.Header.Get("Content-Location")
	if !strings.HasPrefix(cloc, "/threads/"+tid+"/runs/") || st.resp.Header.Get("Location") != cloc+"/stream" {
		t.Fatalf("Content-Location %q Location %q", cloc, st.resp.Header.Get("Location"))
	}
	rid := strings.TrimPrefix(cloc, "/threads/"+tid+"/runs/")
	evs := st.all()
	wantJSON(t, "stream", shape(evs), js([]string{
		`0 metadata {"run_id":"` + rid + `","attempt":1}`,
		`1 values {"bar":[],"foo":""}`,
		`2 updates {"node_a":{"bar":["a"],"foo":"a"}}`,
		`3 values {"bar":["a"],"foo":"a"}`,
		`4 updates {"node_b":{"bar":["b"],"foo":"b"}}`,
		`5 values {"bar":["a","b"],"foo":"b"}`,
	}))
	if !strings.HasPrefix(st.raw.String(), "event: metadata\ndata: {\"run_id\":\""+rid+"\",\"attempt\":1}\nid: 0\n\n") {
		t.Fatalf("framing: %q", st.raw.String()[:80])
	}
	// Values only (the default mode).
	evs = openStream(t, s, "POST", "/threads/"+tid+"/runs/stream", map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}}, nil).all()
	var names []string
	for _, e := range evs {
		names = append(names, e.ID+" "+e.Event)
	}
	// Ids number the events the stream sends (LangGraph's servers' ids),
	// not the run's log, which holds its updates too.
	wantJSON(t, "values mode", names, `["0 metadata","1 values","2 values","3 values"]`)
	// Joining a finished run with Last-Event-ID replays after it and closes;
	// -1 replays everything; without it there is nothing new to send.
	evs = openStream(t, s, "GET", "/threads/"+tid+"/runs/"+rid+"/stream", nil, map[string]string{"Last-Event-ID": "3"}).all()
	wantJSON(t, "replay after 3", shape(evs), js([]string{`4 updates {"node_b":{"bar":["b"],"foo":"b"}}`, `5 values {"bar":["a","b"],"foo":"b"}`}))
	if n := len(openStream(t, s, "GET", "/threads/"+tid+"/runs/"+rid+"/stream", nil, map[string]string{"Last-Event-ID": "-1"}).all()); n != 6 {
		t.Fatalf("replay from -1: %d events", n)
	}
	// A join narrowed to one of the run's modes keeps the run's ids.
	evs = openStream(t, s, "GET", "/threads/"+tid+"/runs/"+rid+"/stream?stream_mode=updates", nil, map[string]string{"Last-Event-ID": "-1"}).all()
	if len(evs) != 3 || evs[0].ID != "0" || evs[1].ID != "2" || evs[2].ID != "4" {
		t.Fatalf("replay of updates only: %v (metadata and two updates)", shape(evs))
	}
	// An id past the end: nothing.
	if n := len(openStream(t, s, "GET", "/threads/"+tid+"/runs/"+rid+"/stream", nil, map[string]string{"Last-Event-ID": "9"}).all()); n != 0 {
		t.Fatalf("replay after 9: %d events", n)
	}
	if n := len(openStream(t, s, "GET", "/threads/"+tid+"/runs/"+rid+"/stream", nil, nil).all()); n != 0 {
		t.Fatalf("join without Last-Event-ID after the end: %d events", n)
	}
	r, _ := http.NewRequest("GET", s.URL+"/threads/"+tid+"/runs/"+rid+"/stream", nil)
	r.Header.Set("Last-Event-ID", "x")
	if resp, err := http.DefaultClient.Do(r); err != nil || resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("bad Last-Event-ID: %v %v", err, resp)
	}
}

func TestStreamInterruptErrorAndMessages(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	evs := openStream(t, s, "POST", "/threads/"+tid+"/runs/stream", map[string]any{"assistant_id": "hitl",
		"input": map[string]any{"input": "x"}, "stream_mode": "updates"}, nil).all()
	last := evs[len(evs)-1]
	if last.Event != "updates" || !strings.Contains(last.Data, `"__interrupt__":[{"id":`) {
		t.Fatalf("interrupt: %v", shape(evs))
	}
	evs = openStream(t, s, "POST", "/threads/"+newThread(t, s)+"/runs/stream", map[string]any{"assistant_id": "slow",
		"input": map[string]any{"ms": "x"}}, nil).all()
	last = evs[len(evs)-1]
	if last.Event != "error" || !strings.Contains(last.Data, `"message":"slow: ms must be a number`) {
		t.Fatalf("error: %v", shape(evs))
	}
	evs = openStream(t, s, "POST", "/threads/"+newThread(t, s)+"/runs/stream", map[string]any{"assistant_id": "echo_chat",
		"input":       map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi", "id": "m1"}}},
		"stream_mode": []string{"messages-tuple", "values", "tools"}}, nil).all()
	// The reply streams as chunks of one message (its id), like model tokens.
	text, ids := "", map[any]bool{}
	for _, e := range evs {
		if e.Event != "messages" {
			continue
		}
		var tuple []map[string]any
		if err := json.Unmarshal([]byte(e.Data), &tuple); err != nil {
			t.Fatal(err)
		}
		if len(tuple) != 2 || tuple[0]["type"] != "AIMessageChunk" || tuple[1]["langgraph_node"] != "echo" || tuple[1]["langgraph_step"] != float64(1) {
			t.Fatalf("messages tuple: %s", e.Data)
		}
		text += tuple[0]["content"].(string)
		ids[tuple[0]["id"]] = true
	}
	if text != "echo: hi" || len(ids) != 1 {
		t.Fatalf("chunks %q of %d messages: %v", text, len(ids), shape(evs))
	}
	// Custom data that nodes stream.
	var custom []string
	for _, e := range openStream(t, s, "POST", "/threads/"+newThread(t, s)+"/runs/stream", map[string]any{"assistant_id": "fan",
		"input": map[string]any{"tag": "c"}, "stream_mode": "custom"}, nil).all() {
		if e.Event == "custom" {
			custom = append(custom, e.Data)
		}
	}
	sort.Strings(custom[:2]) // a and b run in parallel
	wantJSON(t, "custom", custom, js([]string{`{"node":"a"}`, `{"node":"b"}`, `{"node":"join"}`}))
	// The stateless stream answers on /runs paths.
	st := openStream(t, s, "POST", "/runs/stream", map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}}, nil)
	if loc := st.resp.Header.Get("Location"); !strings.HasPrefix(loc, "/runs/") || !strings.HasSuffix(loc, "/stream") {
		t.Fatalf("stateless Location %q", loc)
	}
	if n := len(st.all()); n != 4 {
		t.Fatalf("stateless stream: %d events", n)
	}
}

// A client joins, on a second server process sharing the database, a run
// that executes on the first: it sees every event, in order, live.
func TestStreamJoinFromAnotherServer(t *testing.T) {
	a := start(t)
	b := servertest.StartWith(t, a.DSN, func(c *server.Config) { c.Graphs = testGraphs(); c.Workers = 0 })
	tid := newThread(t, a)
	run := create(t, a, tid, slowBody("x", 300, ""))
	rid := run["run_id"].(string)
	st := openStream(t, b, "GET", "/threads/"+tid+"/runs/"+rid+"/stream", nil, map[string]string{"Last-Event-ID": "-1"})
	var got []string
	for {
		e, ok := st.next()
		if !ok {
			break
		}
		got = append(got, e.ID+" "+e.Event)
	}
	wantJSON(t, "joined", got, `["0 metadata","1 values","2 values","3 values"]`)
	runStatus(t, a, tid, rid, "success")
}

// A dropped connection resumed with Last-Event-ID loses nothing.
func TestStreamResumeAfterDrop(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	st := openStream(t, s, "POST", "/threads/"+tid+"/runs/stream", map[string]any{"assistant_id": "slow",
		"input": map[string]any{"ms": 300, "tag": "r"}, "stream_mode": []string{"values", "updates"}, "stream_resumable": true}, nil)
	loc := st.resp.Header.Get("Location")
	first, _ := st.next()
	second, _ := st.next()
	st.cancel() // the connection drops
	rest := openStream(t, s, "GET", loc, nil, map[string]string{"Last-Event-ID": second.ID}).all()
	all := append([]sseEvent{first, second}, rest...)
	for i, e := range all {
		if e.ID != js(i) {
			t.Fatalf("event %d has id %s: %v", i, e.ID, shape(all))
		}
	}
	if len(all) != 6 {
		t.Fatalf("resumed stream: %v", shape(all))
	}
	var final any
	_ = json.Unmarshal([]byte(all[5].Data), &final)
	wantJSON(t, "final values", final, `{"log":["first:r","second:r"],"ms":300,"tag":"r"}`)
}

func TestStreamOnDisconnectCancelAndHeartbeat(t *testing.T) {
	s := startWith(t, func(c *server.Config) { c.StreamHeartbeat = 100 * time.Millisecond })
	tid := newThread(t, s)
	st := openStream(t, s, "POST", "/threads/"+tid+"/runs/stream", map[string]any{"assistant_id": "slow",
		"input": map[string]any{"ms": 5000}, "on_disconnect": "cancel"}, nil)
	rid := strings.TrimPrefix(st.resp.Header.Get("Content-Location"), "/threads/"+tid+"/runs/")
	if e, _ := st.next(); e.Event != "metadata" {
		t.Fatalf("first event %v", e)
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
	runStatus(t, s, tid, rid, "interrupted")

	// on_disconnect continue (the default): the run goes on.
	st = openStream(t, s, "POST", "/threads/"+tid+"/runs/stream", map[string]any{"assistant_id": "slow", "input": map[string]any{"ms": 200}}, nil)
	rid = strings.TrimPrefix(st.resp.Header.Get("Content-Location"), "/threads/"+tid+"/runs/")
	st.next()
	st.cancel()
	runStatus(t, s, tid, rid, "success")
}

// The thread stream carries every run of the thread, in order, and resumes
// after an id.
func TestThreadStream(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	wait(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}}) // before: not sent
	st := openStream(t, s, "GET", "/threads/"+tid+"/stream", nil, nil)
	lc := openStream(t, s, "GET", "/threads/"+tid+"/stream?stream_modes=lifecycle", nil, nil)
	var rids []string
	for range 2 {
		run := create(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}})
		rids = append(rids, run["run_id"].(string))
	}
	read := func(st *sseStream, n int) []sseEvent {
		var got []sseEvent
		for len(got) < n {
			e, ok := st.next()
			if !ok {
				t.Fatalf("thread stream ended after %v", shape(got))
			}
			got = append(got, e)
		}
		return got
	}
	got := read(st, 12)
	var names []string
	for _, e := range got {
		names = append(names, e.Event)
	}
	wantJSON(t, "two runs", names, `["metadata","values","updates","values","updates","values","metadata","values","updates","values","updates","values"]`)
	if !strings.Contains(got[0].Data, rids[0]) || !strings.Contains(got[6].Data, rids[1]) {
		t.Fatalf("runs out of order: %v", shape(got))
	}
	life := read(lc, 4)
	wantJSON(t, "lifecycle", []string{life[0].Event, life[1].Data, life[2].Event, life[3].Data},
		js([]string{"metadata", `{"run_id":"` + rids[0] + `","status":"run_done"}`, "metadata", `{"run_id":"` + rids[1] + `","status":"run_done"}`}))
	// Resume after the third event: the nine that follow.
	again := openStream(t, s, "GET", "/threads/"+tid+"/stream", nil, map[string]string{"Last-Event-ID": got[2].ID})
	wantJSON(t, "resumed", shape(read(again, 9)), js(shape(got[3:])))
	s.Must(http.StatusNotFound, "GET", "/threads/00000000-0000-0000-0000-000000000009/stream", nil)
}

// A slow reader of a long run still gets every event, in order: streams
// read the durable log at their own pace, so nothing is dropped.
func TestStreamSlowReader(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	st := openStream(t, s, "POST", "/threads/"+tid+"/runs/stream", map[string]any{"assistant_id": "loop",
		"input": map[string]any{"n": 800}, "config": map[string]any{"recursion_limit": 300}}, nil)
	prev, count := int64(-1), 0
	last := -1.0
	for {
		e, ok := st.next()
		if !ok {
			break
		}
		id, _ := strconv.ParseInt(e.ID, 10, 64)
		if id <= prev {
			t.Fatalf("event %s after %d", e.ID, prev)
		}
		prev = id
		if e.Event == "values" {
			var v struct{ N float64 }
			_ = json.Unmarshal([]byte(e.Data), &v)
			if last >= 0 && v.N != last+1 {
				t.Fatalf("values n=%v after n=%v: an event was lost", v.N, last)
			}
			last = v.N
			count++
		}
		if count%20 == 0 {
			time.Sleep(20 * time.Millisecond) // fall behind the run
		}
	}
	if last != 1000 || count != 201 {
		t.Fatalf("last n %v after %d values events, want 1000 after 201", last, count)
	}
}

// The checkpoints, tasks and debug modes describe the Pregel loop.
func TestStreamCheckpointsTasksDebug(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	evs := openStream(t, s, "POST", "/threads/"+tid+"/runs/stream", map[string]any{"assistant_id": "foo_bar",
		"input": map[string]any{"foo": ""}, "stream_mode": []string{"checkpoints", "tasks", "debug"}}, nil).all()
	var got []string
	for _, e := range evs {
		var d map[string]any
		_ = json.Unmarshal([]byte(e.Data), &d)
		switch e.Event {
		case "checkpoints":
			got = append(got, js([]any{"checkpoint", d["metadata"].(map[string]any)["step"], d["next"]}))
		case "tasks":
			if _, done := d["result"]; done {
				got = append(got, js([]any{"result", d["name"], d["result"]}))
			} else {
				got = append(got, js([]any{"task", d["name"], d["triggers"]}))
			}
		case "debug":
			got = append(got, js([]any{"debug", d["type"], d["step"]}))
		}
	}
	wantJSON(t, "loop events", got, js([]string{
		`["checkpoint",-1,["__start__"]]`, `["debug","checkpoint",-1]`,
		`["checkpoint",0,["node_a"]]`, `["debug","checkpoint",0]`,
		`["task","node_a",["branch:to:node_a"]]`, `["debug","task",1]`,
		`["result","node_a",{"bar":["a"],"foo":"a"}]`, `["debug","task_result",1]`,
		`["checkpoint",1,["node_b"]]`, `["debug","checkpoint",1]`,
		`["task","node_b",["branch:to:node_b"]]`, `["debug","task",2]`,
		`["result","node_b",{"bar":["b"],"foo":"b"}]`, `["debug","task_result",2]`,
		`["checkpoint",2,[]]`, `["debug","checkpoint",2]`,
	}))
}

// Shutting the server down ends open streams at once instead of waiting
// for them for the whole drain timeout.
func TestShutdownEndsStreams(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	st := openStream(t, s, "GET", "/threads/"+tid+"/stream", nil, nil)
	begin := time.Now()
	if err := s.Srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d > 3*time.Second {
		t.Fatalf("shutdown took %v with a stream open", d)
	}
	if _, ok := st.next(); ok {
		t.Fatal("the stream is still open")
	}
}

// A stream of a run that ends without running (cancelled while queued)
// closes as soon as that happens, not at the next poll.
func TestStreamOfCancelledQueuedRunCloses(t *testing.T) {
	s := start(t) // heartbeat and safety poll every 5 s
	tid := newThread(t, s)
	create(t, s, tid, slowBody("1", 3000, ""))
	queued := create(t, s, tid, slowBody("2", 0, ""))
	rid := queued["run_id"].(string)
	st := openStream(t, s, "GET", "/threads/"+tid+"/runs/"+rid+"/stream", nil, map[string]string{"Last-Event-ID": "-1"})
	time.Sleep(100 * time.Millisecond)
	begin := time.Now()
	s.Must(http.StatusAccepted, "POST", "/threads/"+tid+"/runs/"+rid+"/cancel", nil)
	if evs := st.all(); len(evs) != 0 {
		t.Fatalf("events of a run that never ran: %v", shape(evs))
	}
	if d := time.Since(begin); d > 2*time.Second {
		t.Fatalf("the stream closed %v after the cancel", d)
	}
}

// EventSource cannot send Last-Event-ID on its first request: the
// last_event_id query parameter stands in for it, and the header (sent by
// EventSource's reconnects) wins over it.
func TestStreamJoinLastEventIDQuery(t *testing.T) {
	s := start(t)
	tid := newThread(t, s)
	rid := create(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""},
		"stream_mode": []string{"values", "updates"}})["run_id"].(string)
	runStatus(t, s, tid, rid, "success")
	join := "/threads/" + tid + "/runs/" + rid + "/stream"
	if n := len(openStream(t, s, "GET", join+"?last_event_id=-1", nil, nil).all()); n != 6 {
		t.Fatalf("last_event_id=-1: %d events, want 6", n)
	}
	evs := openStream(t, s, "GET", join+"?last_event_id=1", nil, map[string]string{"Last-Event-ID": "3"}).all()
	wantJSON(t, "header wins", shape(evs), js([]string{`4 updates {"node_b":{"bar":["b"],"foo":"b"}}`, `5 values {"bar":["a","b"],"foo":"b"}`}))
	if r := s.Do("GET", join+"?last_event_id=x", nil); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("bad last_event_id: %d %s", r.Status, r.Body)
	}
}
