package runs_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

// resultScenario runs chat turns, a foo_bar run, an interrupted and a
// resumed hitl run and a failing run through s with runs/wait, one chat
// turn with a webhook; it returns the threads, each run's wait body and,
// after they all ended, each run's join body.
func resultScenario(t *testing.T, s *servertest.Server, hook string) (chat string, runIDs, waits, joins []string) {
	t.Helper()
	var tids []string
	run := func(tid string, body map[string]any) {
		resp := s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs/wait", body)
		tids = append(tids, tid)
		runIDs = append(runIDs, strings.TrimPrefix(resp.Header.Get("Content-Location"), "/threads/"+tid+"/runs/"))
		waits = append(waits, string(resp.Body))
	}
	human := func(text string) map[string]any {
		return map[string]any{"messages": []any{map[string]any{"type": "human", "content": text}}}
	}
	chat = newThread(t, s)
	for _, text := range []string{"hello", "a <b> & \"c\" é 😀 \u2028", strings.Repeat("long ", 300)} {
		run(chat, map[string]any{"assistant_id": "echo_chat", "input": human(text)})
	}
	run(chat, map[string]any{"assistant_id": "echo_chat", "input": human("with a webhook"), "webhook": hook})
	foo := newThread(t, s)
	run(foo, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}})
	h := newThread(t, s)
	run(h, map[string]any{"assistant_id": "hitl", "input": map[string]any{"input": "draft"}})
	run(h, map[string]any{"assistant_id": "hitl", "command": map[string]any{"resume": map[string]any{"ok": 1.5}}})
	bad := newThread(t, s)
	run(bad, map[string]any{"assistant_id": "echo_chat", "input": map[string]any{"messages": "not a list"}})
	for i, rid := range runIDs {
		joins = append(joins, string(s.Must(http.StatusOK, "GET", "/threads/"+tids[i]+"/runs/"+rid+"/join", nil).Body))
	}
	return chat, runIDs, waits, joins
}

// A run's result stored as a reference to its last checkpoint answers
// wait, join and the webhook with the same JSON as a result stored whole
// (object members in another order: a reference renders the checkpoint's
// values as stored, without jsonb), and its wait and join with the same
// bytes; pruning the thread forgets the results of the runs whose
// checkpoints went away, whose join then answers the thread's values (as
// LangGraph's server answers a join after the run ended).
func TestRunResultRefsSameBytesAsWhole(t *testing.T) {
	wholeHook, refsHook := newReceiver(t), newReceiver(t)
	whole := startWith(t, func(c *server.Config) { allowPrivate(c); c.EventRefMinBytes = -1 })
	refs := servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) {
		c.Graphs = testGraphs()
		allowPrivate(c)
		c.EventRefMinBytes = 1
	})
	wChat, wIDs, wWaits, wJoins := resultScenario(t, whole, wholeHook.URL)
	chat, runIDs, rWaits, rJoins := resultScenario(t, refs, refsHook.URL)
	if n := dbCount(t, whole, `SELECT count(*) FROM runs WHERE result_ref IS NOT NULL`); n != 0 {
		t.Fatalf("the whole server stored %d results as references", n)
	}
	if n := dbCount(t, refs, `SELECT count(*) FROM runs WHERE result_ref IS NOT NULL`); n < 6 {
		t.Fatalf("the refs server stored %d results as references, want the 4 chat turns, foo_bar and the resumed hitl run at least", n)
	}
	// The stored rest of a chat turn's result is the empty object: the
	// messages are in the checkpoint only.
	if n := dbCount(t, refs, `SELECT count(*) FROM runs WHERE thread_id = $1 AND result_ref IS NOT NULL AND result = '{}'::jsonb`, chat); n != 4 {
		t.Fatalf("%d of the chat's 4 results are a bare reference", n)
	}
	an, bn := &anonymizer{seen: map[string]string{}}, &anonymizer{seen: map[string]string{}}
	for i := range wWaits {
		if x, y := an.do(sortedJSON(t, wWaits[i])), bn.do(sortedJSON(t, rWaits[i])); x != y {
			t.Fatalf("wait %d differs:\nwhole: %s\nrefs:  %s", i, x, y)
		}
		if x, y := an.do(sortedJSON(t, wJoins[i])), bn.do(sortedJSON(t, rJoins[i])); x != y {
			t.Fatalf("join %d differs:\nwhole: %s\nrefs:  %s", i, x, y)
		}
		if w, j := strings.TrimSpace(rWaits[i]), strings.TrimSpace(rJoins[i]); w != j {
			t.Fatalf("run %d: wait and join answer different bytes:\nwait: %s\njoin: %s", i, w, j)
		}
	}
	if !strings.Contains(rJoins[3], "with a webhook") || !strings.Contains(rJoins[2], "long long") {
		t.Fatalf("chat joins do not hold the conversation: %s / %s", rJoins[2], rJoins[3])
	}
	webhookState(t, whole, wChat, wIDs[3], "delivered")
	webhookState(t, refs, chat, runIDs[3], "delivered")
	wv, rv := wholeHook.received(), refsHook.received()
	if len(rv) != 1 || len(wv) != 1 {
		t.Fatalf("webhook POSTs: whole %d, refs %d", len(wv), len(rv))
	}
	wb, _ := json.Marshal(wv[0]["values"])
	rb, _ := json.Marshal(rv[0]["values"])
	if x, y := an.do(string(wb)), bn.do(string(rb)); x != y || !strings.Contains(y, "with a webhook") {
		t.Fatalf("webhook values differ:\nwhole: %s\nrefs:  %s", x, y)
	}

	// Prune: the latest run keeps its result; the others answer the
	// thread's values; no result references a pruned checkpoint.
	refs.Must(http.StatusOK, "POST", "/threads/prune", map[string]any{"thread_ids": []string{chat}, "strategy": "keep_latest"})
	if n := dbCount(t, refs, `SELECT count(*) FROM runs r WHERE thread_id = $1 AND result_ref IS NOT NULL
		AND NOT EXISTS (SELECT 1 FROM checkpoints c WHERE c.thread_id = r.thread_id::text AND c.checkpoint_ns = coalesce(r.result_ref->>'ns', '') AND c.checkpoint_id = r.result_ref->>'id')`, chat); n != 0 {
		t.Fatalf("%d results reference pruned checkpoints", n)
	}
	if n := dbCount(t, refs, `SELECT count(*) FROM runs WHERE thread_id = $1 AND result IS NULL`, chat); n != 3 {
		t.Fatalf("%d of the chat's runs forgot their result after the prune, want the 3 before the last", n)
	}
	values, _ := json.Marshal(refs.Must(http.StatusOK, "GET", "/threads/"+chat+"/state", nil).Map(t)["values"])
	for i := range 4 {
		got := refs.Must(http.StatusOK, "GET", "/threads/"+chat+"/runs/"+runIDs[i]+"/join", nil).Body
		var a, b any
		_ = json.Unmarshal(got, &a)
		_ = json.Unmarshal(values, &b)
		ga, _ := json.Marshal(a)
		gb, _ := json.Marshal(b)
		if !bytes.Equal(ga, gb) {
			t.Fatalf("join of run %d after the prune: %s, want the thread's values %s", i, got, values)
		}
	}
	if got := string(refs.Must(http.StatusOK, "GET", "/threads/"+chat+"/runs/"+runIDs[3]+"/join", nil).Body); got != rJoins[3] {
		t.Fatalf("the latest run's join changed with the prune:\n%s\nbefore:\n%s", got, rJoins[3])
	}
}

// sortedJSON is the JSON document s with every object's members in the
// encoder's order (sorted), numbers as written.
func sortedJSON(t *testing.T, s string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
