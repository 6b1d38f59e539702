package runs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
	"github.com/weftdev/weft/migrations"
)

// rawReceiver keeps the bodies of the webhooks it receives as they came.
type rawReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
}

func newRawReceiver(t *testing.T) *rawReceiver {
	t.Helper()
	r := &rawReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.bodies = append(r.bodies, b)
		r.mu.Unlock()
	}))
	t.Cleanup(r.Close)
	return r
}

// byRun returns the body received for each run, in the order of runIDs.
func (r *rawReceiver) byRun(t *testing.T, runIDs []string) []string {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(runIDs))
	for _, b := range r.bodies {
		var m struct {
			RunID string `json:"run_id"`
		}
		_ = json.Unmarshal(b, &m)
		if i := slices.Index(runIDs, m.RunID); i >= 0 {
			out[i] = strings.ReplaceAll(string(b), r.URL, "<hook>")
		}
	}
	return out
}

// human is echo_chat's input of one human message.
func human(text string) map[string]any {
	return map[string]any{"messages": []any{map[string]any{"type": "human", "content": text}}}
}

// valuesRefScenario is a long echo_chat conversation (well past 1 KB of
// messages, with characters encoding/json and jsonb write differently),
// with a webhook on a turn and on a run that fails (whose webhook carries
// the thread's values), and a foo_bar thread beside it. It returns the
// chat's id and every read of the threads' values projection, in order:
// GET /threads/{id}, searches (by ids, by a values filter matching inside
// the messages, on a small channel, matching nothing, with select), the
// protocol's state.get, the webhooks' bodies, and each run's join after a
// keep_latest prune (the earlier runs then answer the thread's values).
func valuesRefScenario(t *testing.T, s *servertest.Server, hook *rawReceiver) (chat string, out []string) {
	t.Helper()
	chat = newThread(t, s)
	var runIDs []string
	read := func(method, path string, body any) {
		r := s.Must(http.StatusOK, method, path, body)
		out = append(out, method+" "+path+" "+js(body)+" total="+r.Header.Get("X-Pagination-Total")+"\n"+string(r.Body))
	}
	run := func(tid string, status int, body map[string]any) {
		resp := s.Must(status, "POST", "/threads/"+tid+"/runs/wait", body)
		runIDs = append(runIDs, strings.TrimPrefix(resp.Header.Get("Content-Location"), "/threads/"+tid+"/runs/"))
	}
	for i, text := range []string{"hello", "a <b> & \"c\" é 😀 \u2028 \\u0041", strings.Repeat("long ", 120), "past a kilobyte"} {
		body := map[string]any{"assistant_id": "echo_chat", "input": human(text)}
		if i == 3 {
			body["webhook"] = hook.URL
		}
		run(chat, http.StatusOK, body)
	}
	// A run cancelled before it started records no result: its webhook and
	// its join carry the thread's values (projected again by the cancel).
	late := s.Must(http.StatusOK, "POST", "/threads/"+chat+"/runs", map[string]any{"assistant_id": "echo_chat", "webhook": hook.URL,
		"input": human("never answered"), "after_seconds": 600}).Map(t)["run_id"].(string)
	runIDs = append(runIDs, late)
	read("POST", "/threads/"+chat+"/runs/"+late+"/cancel?wait=1", nil)
	foo := newThread(t, s)
	wait(t, s, foo, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}})

	read("GET", "/threads/"+chat, nil)
	read("GET", "/threads/"+foo, nil)
	both := []string{chat, foo}
	read("POST", "/threads/search", map[string]any{"ids": both})
	read("POST", "/threads/search", map[string]any{"ids": both, "values": map[string]any{"messages": []any{map[string]any{"content": "echo: hello"}}}})
	read("POST", "/threads/search", map[string]any{"ids": both, "values": map[string]any{"messages": []any{map[string]any{"type": "human", "content": "a <b> & \"c\" é 😀 \u2028 \\u0041"}}},
		"select": []string{"thread_id", "values", "status"}})
	read("POST", "/threads/search", map[string]any{"ids": both, "values": map[string]any{"foo": "b"}})
	read("POST", "/threads/search", map[string]any{"ids": both, "values": map[string]any{"messages": []any{map[string]any{"content": "never said"}}}})
	read("POST", "/threads/search", map[string]any{"ids": both, "values": map[string]any{}, "select": []string{"values"}})
	read("POST", "/threads/count", map[string]any{"values": map[string]any{"messages": []any{map[string]any{"content": "echo: past a kilobyte"}}}})
	read("POST", "/threads/"+chat+"/commands", map[string]any{"id": 1, "method": "state.get"})
	read("POST", "/threads/"+chat+"/commands", map[string]any{"id": 2, "method": "state.get", "params": map[string]any{"keys": []string{"messages"}}})

	hookRuns := []string{runIDs[3], runIDs[4]}
	for _, rid := range hookRuns {
		webhookState(t, s, chat, rid, "delivered")
	}
	out = append(out, hook.byRun(t, hookRuns)...)

	s.Must(http.StatusOK, "POST", "/threads/prune", map[string]any{"thread_ids": []string{chat}, "strategy": "keep_latest"})
	read("GET", "/threads/"+chat, nil)
	for _, rid := range runIDs {
		read("GET", "/threads/"+chat+"/runs/"+rid+"/join", nil)
	}
	return chat, out
}

// A thread's values projection stored by reference reads byte for byte as
// one stored whole, everywhere it is read: the same scenario on a server
// storing every projection whole and on one storing long lists by
// reference gives the same responses and webhook bodies, up to ids and
// timestamps. The reference server's row holds the reference, not the
// list.
func TestThreadValuesRefsSameBytesAsWhole(t *testing.T) {
	wholeHook, refsHook := newRawReceiver(t), newRawReceiver(t)
	whole := startWith(t, func(c *server.Config) { allowPrivate(c); c.ValuesRefMinBytes = -1 })
	refs := servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) { c.Graphs = testGraphs(); allowPrivate(c) })
	_, a := valuesRefScenario(t, whole, wholeHook)
	chat, b := valuesRefScenario(t, refs, refsHook)
	if n := dbCount(t, whole, `SELECT count(*) FROM threads WHERE values_refs IS NOT NULL`); n != 0 {
		t.Fatalf("the whole server stored %d projections by reference", n)
	}
	var refsJSON, values string
	var stored int
	if err := refs.DB.QueryRow(context.Background(), `SELECT coalesce(values_refs::text, ''), "values"::text, pg_column_size("values")
		FROM threads WHERE thread_id = $1`, chat).Scan(&refsJSON, &values, &stored); err != nil {
		t.Fatal(err)
	}
	var rm map[string]string
	if err := json.Unmarshal([]byte(refsJSON), &rm); err != nil || len(rm) != 1 || rm["messages"] == "" {
		t.Fatalf("the chat's row: values_refs %q, want {\"messages\": <version>}", refsJSON)
	}
	if values != "{}" || stored > 16 {
		t.Fatalf("the chat's row stores %q (%d bytes), want {} (the messages by reference)", values, stored)
	}
	sameTranscripts(t, a, b)
	// The scenario read what it meant to: the conversation, the matches,
	// the cancelled run's webhook and join with the thread's values.
	for i, want := range map[int]string{0: "past a kilobyte", 1: "past a kilobyte", 4: "echo: hello", 5: `\u2028`, 9: "total=\n1",
		13: `"status":"interrupted"`, 14: `"type":"ai"`, 19: "past a kilobyte"} {
		if !strings.Contains(b[i], want) {
			t.Fatalf("read %d lacks %q: %.400s", i, want, b[i])
		}
	}
	if !strings.Contains(b[13], "past a kilobyte") || !strings.HasSuffix(strings.TrimSpace(b[7]), "\n[]") {
		t.Fatalf("the cancelled run's webhook lacks the thread's values, or a filter matching nothing found: %.400s\n%.400s", b[13], b[7])
	}
}

// sameProjection fails unless the thread's values (GET /threads/{id}) are
// the values of its latest state, and returns the row's values_refs.
func sameProjection(t *testing.T, s *servertest.Server, tid string) map[string]string {
	t.Helper()
	th := s.Must(http.StatusOK, "GET", "/threads/"+tid, nil)
	st := s.Must(http.StatusOK, "GET", "/threads/"+tid+"/state", nil)
	var a, b struct {
		Values any `json:"values"`
	}
	th.JSON(t, &a)
	st.JSON(t, &b)
	if js(a.Values) != js(b.Values) {
		t.Fatalf("thread %s values:\n%.400s\nstate values:\n%.400s", tid, js(a.Values), js(b.Values))
	}
	var refs []byte
	if err := s.DB.QueryRow(context.Background(), `SELECT values_refs FROM threads WHERE thread_id = $1`, tid).Scan(&refs); err != nil {
		t.Fatal(err)
	}
	var m map[string]string
	if refs != nil {
		if err := json.Unmarshal(refs, &m); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// latestVersion is the thread's latest root checkpoint's version of ch.
func latestVersion(t *testing.T, s *servertest.Server, tid, ch string) string {
	t.Helper()
	var v string
	if err := s.DB.QueryRow(context.Background(), `SELECT checkpoint->'channel_versions'->>$2 FROM checkpoints
		WHERE thread_id = $1 AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1`, tid, ch).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// wantRef fails unless refs names exactly ch at the thread's latest version.
func wantRef(t *testing.T, s *servertest.Server, what, tid, ch string, refs map[string]string) {
	t.Helper()
	if len(refs) != 1 || refs[ch] != latestVersion(t, s, tid, ch) {
		t.Fatalf("%s: values_refs %v, want %s at the latest checkpoint's version %s", what, refs, ch, latestVersion(t, s, tid, ch))
	}
}

// longChat is a thread of echo_chat turns whose messages pass 1 KB.
func longChat(t *testing.T, s *servertest.Server) string {
	t.Helper()
	tid := newThread(t, s)
	for i := range 3 {
		wait(t, s, tid, map[string]any{"assistant_id": "echo_chat", "input": human(strings.Repeat("turn ", 40) + string(rune('a'+i)))})
	}
	return tid
}

// longTag makes slow's log pass 1 KB at its first entry.
var longTag = strings.Repeat("t", 1100)

// Every writer of the projection leaves one that reads as the thread's
// latest state, by reference where the list's blob is known to exist.
func TestThreadValuesRefsWriters(t *testing.T) {
	s := startWith(t, func(c *server.Config) { c.TTLSweepInterval = 20 * time.Millisecond })

	t.Run("run end, update_state and forks", func(t *testing.T) {
		tid := longChat(t, s)
		wantRef(t, s, "after the turns", tid, "messages", sameProjection(t, s, tid))
		// update_state appending a message: the put's new version.
		s.Must(http.StatusOK, "POST", "/threads/"+tid+"/state", map[string]any{"values": human("added"), "as_node": "echo"})
		wantRef(t, s, "after update_state", tid, "messages", sameProjection(t, s, tid))
		// A fork from an older checkpoint (the list already past 1 KB).
		h := history(t, s, tid)
		old := h[2]["checkpoint"].(map[string]any)["checkpoint_id"].(string)
		s.Must(http.StatusOK, "POST", "/threads/"+tid+"/state", map[string]any{"values": human("forked"), "as_node": "echo", "checkpoint_id": old})
		refs := sameProjection(t, s, tid)
		wantRef(t, s, "after a fork", tid, "messages", refs)
		if !strings.Contains(js(thread(t, s, tid)["values"]), "forked") || strings.Contains(js(thread(t, s, tid)["values"]), "added") {
			t.Fatalf("the fork's projection: %.300s", js(thread(t, s, tid)["values"]))
		}
		// A fork that copies an older checkpoint as it is (as_node
		// __copy__) writes no blob: it references the base's.
		s.Must(http.StatusOK, "POST", "/threads/"+tid+"/state", map[string]any{"values": nil, "as_node": "__copy__", "checkpoint_id": old})
		wantRef(t, s, "after a __copy__ fork", tid, "messages", sameProjection(t, s, tid))
	})

	t.Run("update_state of another channel references the base's list", func(t *testing.T) {
		tid := newThread(t, s)
		wait(t, s, tid, map[string]any{"assistant_id": "slow", "input": map[string]any{"tag": longTag, "ms": 0}})
		wantRef(t, s, "after the run", tid, "log", sameProjection(t, s, tid))
		s.Must(http.StatusOK, "POST", "/threads/"+tid+"/state", map[string]any{"values": map[string]any{"tag": "short"}, "as_node": "second"})
		wantRef(t, s, "after update_state of tag", tid, "log", sameProjection(t, s, tid))
	})

	t.Run("interrupt at a step boundary", func(t *testing.T) {
		tid := newThread(t, s)
		wait(t, s, tid, map[string]any{"assistant_id": "slow", "input": map[string]any{"tag": longTag, "ms": 0}, "interrupt_after": []string{"first"}})
		if th := thread(t, s, tid); th["status"] != "interrupted" {
			t.Fatalf("thread: %s", js(th))
		}
		wantRef(t, s, "after interrupt_after", tid, "log", sameProjection(t, s, tid))
	})

	t.Run("interrupt in a node", func(t *testing.T) {
		// hitl's ask interrupts after prepare wrote input: the end projects
		// prepare's checkpoint, which an earlier commit of the run put.
		tid := newThread(t, s)
		wait(t, s, tid, map[string]any{"assistant_id": "hitl", "input": map[string]any{"input": []any{longTag}}})
		if th := thread(t, s, tid); th["status"] != "interrupted" {
			t.Fatalf("thread: %s", js(th))
		}
		wantRef(t, s, "after interrupt()", tid, "input", sameProjection(t, s, tid))
	})

	t.Run("a command's update with nothing to run", func(t *testing.T) {
		// The run's input checkpoint holds the update and no task: the end
		// projects it.
		tid := longChat(t, s)
		wait(t, s, tid, map[string]any{"assistant_id": "echo_chat", "command": map[string]any{"update": human("no answer")}})
		wantRef(t, s, "after the command", tid, "messages", sameProjection(t, s, tid))
		if !strings.Contains(js(thread(t, s, tid)["values"]), "no answer") {
			t.Fatal("the update is not in the projection")
		}
	})

	t.Run("rollback", func(t *testing.T) {
		tid := newThread(t, s)
		wait(t, s, tid, map[string]any{"assistant_id": "slow", "input": map[string]any{"tag": longTag, "ms": 0}})
		// A run cancelled with rollback once it wrote a step: the thread is
		// projected again from what remains, in the rollback's transaction.
		first := create(t, s, tid, map[string]any{"assistant_id": "slow", "input": map[string]any{"tag": longTag + "1", "ms": 3000}})
		rid := first["run_id"].(string)
		stateUntil(t, s, tid, func(v map[string]any) bool { return v["tag"] == longTag+"1" })
		s.Must(http.StatusNoContent, "POST", "/threads/"+tid+"/runs/"+rid+"/cancel?wait=true&action=rollback", nil)
		wantRef(t, s, "after a cancel with rollback", tid, "log", sameProjection(t, s, tid))
		// multitask_strategy rollback.
		create(t, s, tid, map[string]any{"assistant_id": "slow", "input": map[string]any{"tag": "2", "ms": 3000}})
		stateUntil(t, s, tid, func(v map[string]any) bool { return v["tag"] == "2" })
		last := create(t, s, tid, map[string]any{"assistant_id": "slow", "input": map[string]any{"tag": "3", "ms": 0}, "multitask_strategy": "rollback"})
		runStatus(t, s, tid, last["run_id"].(string), "success")
		wantRef(t, s, "after multitask rollback", tid, "log", sameProjection(t, s, tid))
		if n := dbCount(t, s, `SELECT count(*) FROM thread_elements e WHERE thread_id = $1`, tid); n == 0 {
			t.Fatal("no list elements: the log was not stored per element")
		}
	})

	t.Run("copy and delete", func(t *testing.T) {
		tid := longChat(t, s)
		before := s.Must(http.StatusOK, "GET", "/threads/"+tid, nil).Map(t)["values"]
		cp := s.Must(http.StatusOK, "POST", "/threads/"+tid+"/copy", nil).Map(t)
		cid := cp["thread_id"].(string)
		if js(cp["values"]) != js(before) {
			t.Fatalf("the copy answered values %.300s, want %.300s", js(cp["values"]), js(before))
		}
		wantRef(t, s, "the copy", cid, "messages", sameProjection(t, s, cid))
		s.Must(http.StatusNoContent, "DELETE", "/threads/"+tid, nil)
		s.Must(http.StatusNotFound, "GET", "/threads/"+tid, nil)
		if n := dbCount(t, s, `SELECT (SELECT count(*) FROM checkpoint_blobs WHERE thread_id = $1) + (SELECT count(*) FROM thread_elements WHERE thread_id = $1)`, tid); n != 0 {
			t.Fatalf("%d blobs and elements of the deleted thread remain", n)
		}
		// The copy's references name its own blobs.
		if got := thread(t, s, cid)["values"]; js(got) != js(before) {
			t.Fatalf("the copy after the original's delete: %.300s", js(got))
		}
		wantRef(t, s, "the copy after the delete", cid, "messages", sameProjection(t, s, cid))
	})

	t.Run("keep_latest prune", func(t *testing.T) {
		tid := longChat(t, s)
		before := string(s.Must(http.StatusOK, "GET", "/threads/"+tid, nil).Body)
		s.Must(http.StatusOK, "POST", "/threads/prune", map[string]any{"thread_ids": []string{tid}, "strategy": "keep_latest"})
		if n := len(history(t, s, tid)); n != 1 {
			t.Fatalf("%d checkpoints after the prune", n)
		}
		if after := string(s.Must(http.StatusOK, "GET", "/threads/"+tid, nil).Body); after != before {
			t.Fatalf("the thread after the prune:\n%.400s\nbefore:\n%.400s", after, before)
		}
		wantRef(t, s, "after keep_latest", tid, "messages", sameProjection(t, s, tid))
	})

	t.Run("keep_latest prune of a busy thread", func(t *testing.T) {
		// The projection names the last run's blob of log; the running
		// run has written a newer version of it, in the only checkpoint a
		// prune keeps: the projection is stored whole first, and reads as
		// before.
		tid := newThread(t, s)
		wait(t, s, tid, map[string]any{"assistant_id": "slow", "input": map[string]any{"tag": longTag, "ms": 0}})
		before := string(s.Must(http.StatusOK, "GET", "/threads/"+tid, nil).Body)
		run := create(t, s, tid, map[string]any{"assistant_id": "slow", "input": map[string]any{"tag": longTag + "1", "ms": 1500}})
		stateUntil(t, s, tid, func(v map[string]any) bool { l, _ := v["log"].([]any); return len(l) == 3 }) // "first" wrote, "second" sleeps
		s.Must(http.StatusOK, "POST", "/threads/prune", map[string]any{"thread_ids": []string{tid}, "strategy": "keep_latest"})
		var refs []byte
		if err := s.DB.QueryRow(context.Background(), `SELECT values_refs FROM threads WHERE thread_id = $1`, tid).Scan(&refs); err != nil {
			t.Fatal(err)
		}
		if refs != nil {
			t.Fatalf("the busy thread's projection still references %s after the prune", refs)
		}
		after := s.Must(http.StatusOK, "GET", "/threads/"+tid, nil)
		var x, y map[string]any
		_ = json.Unmarshal([]byte(before), &x)
		after.JSON(t, &y)
		if js(x["values"]) != js(y["values"]) {
			t.Fatalf("the busy thread's values after the prune:\n%.400s\nbefore:\n%.400s", js(y["values"]), js(x["values"]))
		}
		runStatus(t, s, tid, run["run_id"].(string), "success")
		wantRef(t, s, "after the run that was busy", tid, "log", sameProjection(t, s, tid))
	})

	t.Run("ttl keep_latest", func(t *testing.T) {
		tid := longChat(t, s)
		s.Must(http.StatusOK, "PATCH", "/threads/"+tid, map[string]any{"ttl": map[string]any{"ttl": 60, "strategy": "keep_latest"}})
		before := s.Must(http.StatusOK, "GET", "/threads/"+tid, nil).Map(t)["values"]
		expireKeepLatest(t, s, tid)
		if got := thread(t, s, tid)["values"]; js(got) != js(before) {
			t.Fatalf("the thread after its ttl prune: %.300s", js(got))
		}
		wantRef(t, s, "after the ttl prune", tid, "messages", sameProjection(t, s, tid))
	})
}

// A projection row written before migration 023 (no references) reads as
// it always did, and so does one the langgraph views' delete left whole.
func TestThreadValuesRefsOldRowsAndForeignDeletes(t *testing.T) {
	s := start(t)
	tid := longChat(t, s)
	want := thread(t, s, tid)["values"]
	// As a row written before the migration: the values whole, no reference.
	if _, err := s.DB.Exec(context.Background(), `UPDATE threads SET "values" = weft_thread_values(thread_id, "values", values_refs),
		values_refs = NULL WHERE thread_id = $1`, tid); err != nil {
		t.Fatal(err)
	}
	if got := thread(t, s, tid)["values"]; js(got) != js(want) {
		t.Fatalf("a whole row reads %.300s", js(got))
	}
	// A stock saver's deleteThread through the "langgraph" views deletes
	// the blobs a projection references: the projection is stored whole
	// first, and still reads (as a projection left behind always did).
	other := longChat(t, s)
	want = thread(t, s, other)["values"]
	if refs := sameProjection(t, s, other); len(refs) == 0 {
		t.Fatal("no reference to delete under")
	}
	if _, err := s.DB.Exec(context.Background(), `DELETE FROM langgraph.checkpoint_blobs WHERE thread_id = $1`, other); err != nil {
		t.Fatal(err)
	}
	if n := dbCount(t, s, `SELECT count(*) FROM threads WHERE thread_id = $1 AND values_refs IS NULL`, other); n != 1 {
		t.Fatal("the projection still references deleted blobs")
	}
	if got := thread(t, s, other)["values"]; js(got) != js(want) {
		t.Fatalf("after the foreign delete: %.300s", js(got))
	}
	// A list element missing from the log is an error, never a shorter list.
	third := longChat(t, s)
	if _, err := s.DB.Exec(context.Background(), `DELETE FROM thread_elements WHERE thread_id = $1::text
		AND seq = (SELECT min(seq) FROM thread_elements WHERE thread_id = $1::text)`, third); err != nil {
		t.Fatal(err)
	}
	var v []byte
	err := s.DB.QueryRow(context.Background(), `SELECT weft_thread_values(thread_id, "values", values_refs) FROM threads WHERE thread_id = $1`, third).Scan(&v)
	if err == nil || !strings.Contains(err.Error(), "lacks 1 of its 6 elements") {
		t.Fatalf("a projection missing an element read %.200s (%v)", v, err)
	}
	// A reference to a blob that does not exist is refused at the write.
	_, err = s.DB.Exec(context.Background(), `UPDATE threads SET values_refs = weft_thread_values_refs(thread_id, '{"messages": "nope"}')
		WHERE thread_id = $1`, tid)
	if err == nil || !strings.Contains(err.Error(), "is not stored") {
		t.Fatalf("a dangling reference was written: %v", err)
	}
}

// An external worker's list of LangChain message envelopes (the JS and
// Python workers store messages so) is referenced like a plain list when
// SQL renders it as the API shows it (migration 027); a list holding any
// other envelope stays whole. Either way the thread reads as its state, and
// a values filter matches inside the normalised messages.
func TestThreadValuesRefsExternalWorker(t *testing.T) {
	s := external(t, nil)
	list := func(n int, elem func(i int) any) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = elem(i)
		}
		return out
	}
	envelope := func(path []any, kwargs map[string]any) map[string]any {
		return map[string]any{"lc": 1, "type": "constructor", "id": path, "kwargs": kwargs}
	}
	jsNS, pyNS := []any{"langchain_core", "messages"}, []any{"langchain", "schema", "messages"}
	class := func(ns []any, c string) []any { return append(slices.Clone(ns), c) }
	content := strings.Repeat("e", 60)
	bars := []struct {
		name   string
		bar    []any
		refs   bool // referenced when the end carries its checkpoint complete
		filter map[string]any
	}{
		{"plain", list(40, func(int) any { return strings.Repeat("p", 40) }), true, nil},
		{"JS messages", list(20, func(i int) any {
			return envelope(class(jsNS, []string{"HumanMessage", "AIMessageChunk"}[i%2]), map[string]any{"content": content, "id": fmt.Sprintf("m%d", i)})
		}), true, map[string]any{"content": content, "type": "ai", "id": "m1"}},
		{"Python messages", list(20, func(i int) any {
			kw := map[string]any{"content": content, "id": fmt.Sprintf("m%d", i)}
			if i == 3 {
				kw["type"], kw["name"] = "", "someone"
			}
			return envelope(class(pyNS, []string{"HumanMessage", "AIMessage", "ToolMessage", "SystemMessage"}[i%4]), kw)
		}), true, map[string]any{"type": "ai", "tool_calls": []any{}, "usage_metadata": nil, "name": nil, "id": "m1"}},
		{"messages and plain values", list(20, func(i int) any {
			if i%2 == 0 {
				return map[string]any{"text": content}
			}
			return envelope(class(pyNS, "HumanMessage"), map[string]any{"content": content})
		}), true, map[string]any{"type": "human", "additional_kwargs": map[string]any{}}},
		{"an envelope in a message's kwargs", list(20, func(i int) any {
			return envelope(class(jsNS, "AIMessage"), map[string]any{"content": content,
				"additional_kwargs": map[string]any{"x": envelope(class(jsNS, "HumanMessage"), map[string]any{"content": "inner"})}})
		}), false, map[string]any{"additional_kwargs": map[string]any{"x": map[string]any{"content": "inner", "type": "human"}}}},
		{"another constructor", list(20, func(int) any {
			return envelope([]any{"langchain_core", "documents", "Document"}, map[string]any{"page_content": content})
		}), false, map[string]any{"page_content": content}},
		{"a non-string type", list(20, func(int) any {
			return envelope(class(pyNS, "HumanMessage"), map[string]any{"content": content, "type": 5})
		}), false, map[string]any{"type": "human", "content": content}},
	}
	for _, complete := range []bool{true, false} {
		for _, b := range bars {
			tid := workerListRun(t, s, b.bar, complete)
			refs := sameProjection(t, s, tid)
			what := fmt.Sprintf("complete=%v, %s", complete, b.name)
			if b.refs && complete || b.name == "plain" {
				wantRef(t, s, what, tid, "bar", refs)
			} else if refs != nil {
				t.Fatalf("%s: the normalised list references %v", what, refs)
			}
			if b.filter == nil {
				continue
			}
			var found []map[string]any
			s.Must(http.StatusOK, "POST", "/threads/search", map[string]any{"values": map[string]any{"bar": []any{b.filter}},
				"metadata": map[string]any{}, "limit": 100}).JSON(t, &found)
			if !slices.ContainsFunc(found, func(th map[string]any) bool { return th["thread_id"] == tid }) {
				t.Fatalf("%s: a values filter %s does not find the thread", what, js(b.filter))
			}
		}
	}
}

// workerListRun is an external worker's run on a new thread whose two
// steps set foo_bar's list bar: to list, then (its end) to list and its
// second element again, the end's put extending a list this process put;
// complete: the end carries its checkpoint complete. It returns the thread.
func workerListRun(t *testing.T, s *servertest.Server, list []any, complete bool) string {
	t.Helper()
	tid, _, c := claimRun(t, s)
	d := "/dispatch/" + c.Dispatch.DispatchID + "/commit"
	first := pausedCheckpoint(uuid.Must(uuid.NewV7()).String(), "a", false)
	first["checkpoint"].(map[string]any)["channel_values"].(map[string]any)["bar"] = list
	s.Must(http.StatusOK, "POST", d, map[string]any{"claim_token": c.ClaimToken, "checkpoints": []any{first}})
	last := pausedCheckpoint(uuid.Must(uuid.NewV7()).String(), "b", complete)
	v3 := "00000000000000000000000000000003.0.5"
	last["parent_checkpoint_id"] = first["checkpoint"].(map[string]any)["id"]
	cp := last["checkpoint"].(map[string]any)
	cp["channel_values"].(map[string]any)["bar"] = append(slices.Clone(list), list[1])
	cp["channel_versions"].(map[string]any)["foo"], cp["channel_versions"].(map[string]any)["bar"] = v3, v3
	last["new_versions"] = map[string]any{"foo": v3, "bar": v3}
	s.Must(http.StatusOK, "POST", d, map[string]any{"claim_token": c.ClaimToken, "checkpoints": []any{last},
		"end": map[string]any{"status": "success", "result": map[string]any{"foo": "b"}}})
	return tid
}

// Migration 023's down stores every projection whole again (the values it
// rendered), and its up reads them as they are.
func TestThreadValuesRefsMigrationDown(t *testing.T) {
	s := start(t)
	migrateDownUp(t, s, longChat(t, s), "023_thread_values_refs")
}

// Migration 027's down stores a projection that references a list of
// message envelopes whole, normalised as the API shows it; its up reads it
// as it is.
func TestThreadValuesMessagesMigrationDown(t *testing.T) {
	s := external(t, nil)
	msgs := make([]any, 20)
	for i := range msgs {
		msgs[i] = map[string]any{"lc": 1, "type": "constructor", "id": []any{"langchain", "schema", "messages", "AIMessage"},
			"kwargs": map[string]any{"content": strings.Repeat("m", 60), "id": fmt.Sprintf("m%d", i)}}
	}
	migrateDownUp(t, s, workerListRun(t, s, msgs, true), "027_thread_values_messages")
}

// migrateDownUp runs migration name's down then its up in a transaction
// (rolled back), and fails unless thread tid, which references a list,
// stores the same values whole after each.
func migrateDownUp(t *testing.T, s *servertest.Server, tid, name string) {
	t.Helper()
	want := js(thread(t, s, tid)["values"])
	if refs := sameProjection(t, s, tid); len(refs) == 0 {
		t.Fatal("no reference to migrate down")
	}
	ctx := context.Background()
	tx, err := s.DB.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	for _, file := range []string{name + ".down.sql", name + ".up.sql"} {
		sql, err := migrations.FS.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, string(sql)); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var values []byte
		if err := tx.QueryRow(ctx, `SELECT "values" FROM threads WHERE thread_id = $1`, tid).Scan(&values); err != nil {
			t.Fatal(err)
		}
		var v any
		_ = json.Unmarshal(values, &v)
		if js(v) != want {
			t.Fatalf("after %s the row stores %.300s, want %.300s", file, values, want)
		}
	}
}
