package state_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/server/servertest"
)

// TestCompactThreadEditsAndForks drives a conversation long enough that its
// messages are stored once per element (lists of 1 KB or more) through the
// API: RemoveMessage, a replacement by id, RemoveAll and a fork from an old
// checkpoint each read back exactly — from state, state at each checkpoint
// and every history item — and the thread's element log holds each message
// once, not once per checkpoint.
func TestCompactThreadEditsAndForks(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	tid := newThread(t, s, "echo_chat")
	text := func(i int) string { return fmt.Sprintf("message %d %s", i, strings.Repeat("lorem ipsum ", 16)) }
	var want []string // the ids the messages list should hold, in order
	var ids []string  // checkpoint ids
	var wants [][]string
	put := func(body map[string]any) {
		t.Helper()
		u := update(t, s, tid, body)
		ids, wants = append(ids, u.CheckpointID), append(wants, append([]string(nil), want...))
	}
	for i := range 30 {
		want = append(want, fmt.Sprint("m", i))
		put(map[string]any{"as_node": "echo", "values": map[string]any{"messages": []any{
			map[string]any{"type": "human", "id": fmt.Sprint("m", i), "content": text(i)}}}})
	}
	want = append(want[:5:5], want[6:]...)
	put(map[string]any{"as_node": "echo", "values": map[string]any{"messages": []any{map[string]any{"type": "remove", "id": "m5"}}}})
	put(map[string]any{"as_node": "echo", "values": map[string]any{"messages": []any{map[string]any{"type": "ai", "id": "m7", "content": "replaced"}}}})
	fork := ids[9] // ten messages
	var n int
	if err := s.DB.QueryRow(t.Context(), `SELECT count(*) FROM checkpoint_blobs WHERE thread_id = $1 AND type = 'weft_list'`, tid).Scan(&n); err != nil || n < 20 {
		t.Fatalf("%d compact list versions (%v): the thread is not stored compactly", n, err)
	}

	check := func() {
		t.Helper()
		hist := history(t, s, tid, map[string]any{"limit": 1000})
		byID := map[string][]any{}
		for _, h := range hist {
			msgs, _ := h.Values["messages"].([]any)
			byID[h.Checkpoint.CheckpointID] = msgs
		}
		for i, id := range ids {
			st := getState(t, s, "/threads/"+tid+"/state/"+id)
			for _, msgs := range [][]any{st.Values["messages"].([]any), byID[id]} {
				var got []string
				for _, m := range msgs {
					got = append(got, m.(map[string]any)["id"].(string))
				}
				if strings.Join(got, ",") != strings.Join(wants[i], ",") {
					t.Fatalf("checkpoint %d: ids %v, want %v", i, got, wants[i])
				}
			}
		}
	}
	check()
	msgs := getState(t, s, "/threads/"+tid+"/state").Values["messages"].([]any)
	if m := msgs[6].(map[string]any); m["id"] != "m7" || m["content"] != "replaced" {
		t.Fatalf("replaced message = %v", m)
	}

	// A fork from the tenth checkpoint: the branch shares its first ten
	// messages with the original and adds its own.
	want = []string{"m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9", "f1"}
	put(map[string]any{"checkpoint_id": fork, "as_node": "echo", "values": map[string]any{"messages": []any{
		map[string]any{"type": "human", "id": "f1", "content": text(100)}}}})
	want = nil
	put(map[string]any{"as_node": "echo", "values": map[string]any{"messages": []any{map[string]any{"type": "remove", "id": "__remove_all__"}}}})
	check()
	s.Must(http.StatusOK, "GET", "/threads/"+tid+"/state", nil)

	// Each message is stored once (30 + the replacement + the fork's).
	if err := s.DB.QueryRow(t.Context(), `SELECT count(*) FROM thread_elements WHERE thread_id = $1`, tid).Scan(&n); err != nil || n > 32 {
		t.Fatalf("%d elements (%v), want at most 32", n, err)
	}
}
