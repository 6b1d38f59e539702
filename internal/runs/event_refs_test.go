package runs_test

import (
	"bytes"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

// anonymizer replaces what differs between two executions of the same
// scenario (uuids, 32-hex ids, timestamps) with placeholders numbered by
// first appearance, so two transcripts compare byte for byte.
type anonymizer struct{ seen map[string]string }

var (
	uuidRE  = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\b[0-9a-f]{32}\b`)
	tsRE    = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(\+00:00|Z)?`)
	idTSRE  = regexp.MustCompile(`(?m)^id: \d+\.`)
	versRE  = regexp.MustCompile(`\d{32}\.\d+\.\d+`)
	heartRE = regexp.MustCompile(`(?m)^: heartbeat\n\n`)
)

func (a *anonymizer) do(s string) string {
	s = heartRE.ReplaceAllString(s, "")
	s = tsRE.ReplaceAllString(s, "<ts>")
	s = idTSRE.ReplaceAllString(s, "id: <t>.")
	s = versRE.ReplaceAllString(s, "<v>")
	return uuidRE.ReplaceAllStringFunc(s, func(id string) string {
		if p, ok := a.seen[id]; ok {
			return p
		}
		p := fmt.Sprintf("<id%d>", len(a.seen))
		a.seen[id] = p
		return p
	})
}

// sameTranscripts fails the test unless transcripts a (a server storing
// whole) and b (one storing references) are the same up to ids and
// timestamps, naming the first line that differs.
func sameTranscripts(t *testing.T, a, b []string) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%d transcripts vs %d", len(a), len(b))
	}
	an, bn := &anonymizer{seen: map[string]string{}}, &anonymizer{seen: map[string]string{}}
	for i := range a {
		x, y := an.do(a[i]), bn.do(b[i])
		if x == y {
			continue
		}
		xl, yl := strings.Split(x, "\n"), strings.Split(y, "\n")
		for j := range min(len(xl), len(yl)) {
			if xl[j] != yl[j] {
				t.Fatalf("transcript %d differs at line %d:\nwhole: %s\nrefs:  %s", i, j, xl[j], yl[j])
			}
		}
		t.Fatalf("transcript %d: %d lines vs %d", i, len(xl), len(yl))
	}
}

// eventRefScenario drives the built-in graphs through s in every stream
// mode — chat turns, an interrupt and its resume, a run after
// update_state, a run that fails — and returns the raw bytes of every
// stream: each run live, each run replayed with Last-Event-ID -1 after it
// ended, and the thread stream replayed from the start.
func eventRefScenario(t *testing.T, s *servertest.Server) (tid string, transcripts []string) {
	t.Helper()
	modes := []string{"values", "updates", "messages-tuple", "checkpoints", "tasks", "debug", "custom"}
	var ran [][2]string // thread, run
	run := func(tid string, body map[string]any) {
		body["stream_mode"] = modes
		st := openStream(t, s, "POST", "/threads/"+tid+"/runs/stream", body, nil)
		st.all()
		rid := strings.TrimPrefix(st.resp.Header.Get("Content-Location"), "/threads/"+tid+"/runs/")
		ran = append(ran, [2]string{tid, rid})
		transcripts = append(transcripts, "live "+st.raw.String())
	}
	chat := newThread(t, s)
	for _, text := range []string{"hello", "a <b> & \"c\" é 😀", strings.Repeat("long ", 300)} {
		run(chat, map[string]any{"assistant_id": "echo_chat", "input": map[string]any{"messages": []any{map[string]any{"type": "human", "content": text}}}})
	}
	run(chat, map[string]any{"assistant_id": "echo_chat", "input": map[string]any{"messages": []any{map[string]any{"type": "human", "content": "exit"}}},
		"durability": "exit"})
	foo := newThread(t, s)
	run(foo, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}})
	s.Must(http.StatusOK, "POST", "/threads/"+foo+"/state", map[string]any{"values": map[string]any{"foo": "edited", "bar": []any{"x"}}, "as_node": "node_a"})
	run(foo, map[string]any{"assistant_id": "foo_bar"}) // continues after the update: node_b
	h := newThread(t, s)
	run(h, map[string]any{"assistant_id": "hitl", "input": map[string]any{"input": "draft"}})
	run(h, map[string]any{"assistant_id": "hitl", "command": map[string]any{"resume": map[string]any{"ok": 1.5}}})
	run(h, map[string]any{"assistant_id": "hitl", "input": map[string]any{"input": "again"}, "interrupt_after": []string{"prepare"}})
	for _, r := range ran {
		st := openStream(t, s, "GET", "/threads/"+r[0]+"/runs/"+r[1]+"/stream", nil, map[string]string{"Last-Event-ID": "-1"})
		st.all()
		transcripts = append(transcripts, "replay "+st.raw.String())
	}
	for _, tid := range []string{chat, foo, h} {
		n := dbCount(t, s, `SELECT count(*) FROM run_events WHERE thread_id = $1 AND event <> 'end'`, tid)
		st := openStream(t, s, "GET", "/threads/"+tid+"/stream", nil, map[string]string{"Last-Event-ID": "0.0.00000000-0000-0000-0000-000000000000"})
		for range n {
			if _, ok := st.next(); !ok {
				t.Fatalf("thread stream of %s ended early", tid)
			}
		}
		st.cancel()
		transcripts = append(transcripts, "thread "+st.raw.String())
	}
	return chat, transcripts
}

// Events stored as checkpoint references go out byte for byte as events
// stored whole: the same scenario on a server storing every event whole
// and on one storing every repeat of a checkpoint's values as a
// reference gives the same streams, live and replayed, up to ids and
// timestamps.
func TestEventRefsSameBytesAsWhole(t *testing.T) {
	t.Parallel()
	whole := servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) { c.EventRefMinBytes = -1 })
	refs := servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) { c.EventRefMinBytes = 1 })
	_, a := eventRefScenario(t, whole)
	chat, b := eventRefScenario(t, refs)
	if n := dbCount(t, whole, `SELECT count(*) FROM run_events WHERE ref IS NOT NULL`); n != 0 {
		t.Fatalf("whole server stored %d references", n)
	}
	for _, kind := range []string{"values", "checkpoints", "debug"} {
		if n := dbCount(t, refs, `SELECT count(*) FROM run_events WHERE ref ? 'id' AND NOT ref ? 'task' AND event = $1`, kind); n == 0 {
			t.Fatalf("no %s event stored as a reference", kind)
		}
	}
	// Updates events repeat their task's writes: stored as task references
	// (the resumed hitl run's too, whose writes go under the first run's
	// checkpoint).
	if n := dbCount(t, refs, `SELECT count(*) FROM run_events WHERE ref ? 'task' AND event = 'updates'`); n == 0 {
		t.Fatal("no updates event stored as a task reference")
	}
	if n := dbCount(t, refs, `SELECT count(*) FROM run_events e JOIN runs r USING (run_id)
		WHERE e.ref ? 'task' AND e.event = 'updates' AND r.kwargs->'command' ? 'resume'`); n == 0 {
		t.Fatal("no updates event of the resumed run stored as a task reference")
	}
	if n := dbCount(t, refs, `SELECT count(*) FROM run_events WHERE ref ? 'task' AND event <> 'updates'`); n != 0 {
		t.Fatalf("%d other events stored as task references", n)
	}
	// The chunks of a streamed message share their metadata: all but the
	// first of each commit store a metadata reference.
	if n := dbCount(t, refs, `SELECT count(*) FROM run_events WHERE ref ? 'prev' AND event = 'messages' AND jsonb_array_length(data) = 1`); n == 0 {
		t.Fatal("no messages event stored with a metadata reference")
	}
	sameTranscripts(t, a, b)

	// Pruning the chat's history stores the events that referenced the
	// pruned checkpoints whole: their replay does not change.
	before := replayAll(t, refs, chat)
	if dbCount(t, refs, `SELECT count(*) FROM run_events WHERE thread_id = $1 AND ref ? 'id' AND NOT ref ? 'task'`, chat) == 0 ||
		dbCount(t, refs, `SELECT count(*) FROM run_events WHERE thread_id = $1 AND ref ? 'task'`, chat) == 0 {
		t.Fatal("no references to prune")
	}
	refs.Must(http.StatusOK, "POST", "/threads/prune", map[string]any{"thread_ids": []string{chat}, "strategy": "keep_latest"})
	if n := dbCount(t, refs, `SELECT count(*) FROM run_events e WHERE thread_id = $1 AND ref ? 'id'
		AND NOT EXISTS (SELECT 1 FROM checkpoints c WHERE c.thread_id = e.thread_id::text AND c.checkpoint_ns = coalesce(e.ref->>'ns', '') AND c.checkpoint_id = e.ref->>'id')`, chat); n != 0 {
		t.Fatalf("%d events reference pruned checkpoints", n)
	}
	if n := dbCount(t, refs, `SELECT count(*) FROM run_events e WHERE thread_id = $1 AND ref ? 'task'
		AND NOT EXISTS (SELECT 1 FROM checkpoint_writes w WHERE w.thread_id = e.thread_id::text AND w.checkpoint_ns = coalesce(e.ref->>'ns', '')
			AND w.checkpoint_id = e.ref->>'id' AND w.task_id = e.ref->>'task')`, chat); n != 0 {
		t.Fatalf("%d events reference pruned writes", n)
	}
	if after := replayAll(t, refs, chat); !bytes.Equal(before, after) {
		t.Fatalf("replay after prune differs:\n%s\nbefore:\n%s", after, before)
	}
}

// replayAll is the replay of every run of thread tid, in order.
func replayAll(t *testing.T, s *servertest.Server, tid string) []byte {
	t.Helper()
	rows, err := s.DB.Query(t.Context(), `SELECT run_id::text FROM runs WHERE thread_id = $1 ORDER BY created_at`, tid)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for rows.Next() {
		var id string
		_ = rows.Scan(&id)
		ids = append(ids, id)
	}
	rows.Close()
	var out bytes.Buffer
	for _, rid := range ids {
		st := openStream(t, s, "GET", "/threads/"+tid+"/runs/"+rid+"/stream", nil, map[string]string{"Last-Event-ID": "-1"})
		st.all()
		out.Write(st.raw.Bytes())
	}
	return out.Bytes()
}

// A step's values event shares its checkpoint's commit however the
// background commits of streamed chunks interleave with the step, so every
// values event of a chat is stored as a reference: the conversation's log
// grows by the turn, not by the whole list per turn. Messages events are
// stored only for runs that asked for the messages-tuple mode (as the
// Agent Server streams only the modes a run asked for).
func TestEventRefsEveryStepOfAChat(t *testing.T) {
	s := startWith(t, func(c *server.Config) { c.EventRefMinBytes = 1 })
	tid := newThread(t, s)
	const turns = 60
	for i := range turns {
		body := map[string]any{"assistant_id": "echo_chat", "input": map[string]any{"messages": []any{
			map[string]any{"type": "human", "content": fmt.Sprintf("turn %d %s", i, strings.Repeat("x", 200))}}}}
		if i%2 == 1 {
			body["stream_mode"] = []string{"values", "messages-tuple"}
		}
		wait(t, s, tid, body)
	}
	if n := dbCount(t, s, `SELECT count(*) FROM run_events WHERE thread_id = $1 AND event = 'values' AND ref IS NULL`, tid); n != 0 {
		t.Errorf("%d values events of %d turns stored whole", n, turns)
	}
	if n := dbCount(t, s, `SELECT count(*) FROM run_events WHERE thread_id = $1 AND event = 'values'`, tid); n != 2*turns {
		t.Errorf("%d values events, want %d", n, 2*turns)
	}
	// Only the runs that asked for messages-tuple stored their message chunks.
	if n := dbCount(t, s, `SELECT count(DISTINCT e.run_id) FROM run_events e JOIN runs r USING (run_id)
		WHERE e.thread_id = $1 AND e.event = 'messages' AND NOT r.kwargs->'stream_mode' ? 'messages-tuple'`, tid); n != 0 {
		t.Errorf("%d runs without messages-tuple stored messages events", n)
	}
	if n := dbCount(t, s, `SELECT count(DISTINCT run_id) FROM run_events WHERE thread_id = $1 AND event = 'messages'`, tid); n != turns/2 {
		t.Errorf("%d runs stored messages events, want %d", n, turns/2)
	}
}

// A step's updates events share its writes' commit however the background
// commits of streamed chunks interleave with the step, so every updates
// event of a chat but an interrupt's is stored as a reference to its
// task's writes, and renders as the node's update.
func TestEventRefsEveryUpdateOfAChat(t *testing.T) {
	s := startWith(t, func(c *server.Config) { c.EventRefMinBytes = 1 })
	tid := newThread(t, s)
	const turns = 60
	for i := range turns {
		text := fmt.Sprintf("turn %d %s", i, strings.Repeat("x", 200))
		body := map[string]any{"assistant_id": "echo_chat", "input": map[string]any{"messages": []any{
			map[string]any{"type": "human", "content": text}}}}
		if i%2 == 1 {
			body["stream_mode"] = []string{"values", "messages-tuple"}
		}
		wait(t, s, tid, body)
	}
	if n := dbCount(t, s, `SELECT count(*) FROM run_events WHERE thread_id = $1 AND event = 'updates' AND NOT data ? '__interrupt__'`, tid); n != turns {
		t.Fatalf("%d updates events, want %d", n, turns)
	}
	if n := dbCount(t, s, `SELECT count(*) FROM run_events WHERE thread_id = $1 AND event = 'updates' AND NOT data ? '__interrupt__'
		AND (ref IS NULL OR NOT ref ? 'task' OR data <> '{"echo": {}}')`, tid); n != 0 {
		t.Errorf("%d updates events of %d turns stored whole", n, turns)
	}
	// The last turn's updates event renders as the node's update.
	rid := ""
	if err := s.DB.QueryRow(t.Context(), `SELECT run_id::text FROM runs WHERE thread_id = $1 ORDER BY created_at DESC LIMIT 1`, tid).Scan(&rid); err != nil {
		t.Fatal(err)
	}
	st := openStream(t, s, "GET", "/threads/"+tid+"/runs/"+rid+"/stream?stream_mode=updates", nil, map[string]string{"Last-Event-ID": "-1"})
	st.all()
	want := fmt.Sprintf(`"name":null,"type":"ai","content":"echo: turn %d x`, turns-1)
	if got := st.raw.String(); !strings.Contains(got, "event: updates\ndata: {\"echo\":{\"messages\":[{\"id\":") || !strings.Contains(got, want) {
		t.Fatalf("replay of the last turn's updates:\n%.600s", got)
	}
}
