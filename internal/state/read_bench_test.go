package state_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"

	"github.com/weftdev/weft/internal/server/servertest"
)

// longChatThread writes an echo_chat thread of turns turns through
// update_state (as_node echo): each turn appends a human message of 200
// random characters of [a-zA-Z0-9] and the echo's answer, as a run of
// weft-load's long suite leaves them, one checkpoint per turn. Lists of
// 1 KB or more are stored once per element (the compact form).
func longChatThread(b *testing.B, s *servertest.Server, turns int) string {
	b.Helper()
	tid := s.Must(http.StatusOK, "POST", "/threads", map[string]any{"metadata": map[string]any{"graph_id": "echo_chat"}}).Map(b)["thread_id"].(string)
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	rng := rand.New(rand.NewPCG(1, uint64(turns)))
	text := make([]byte, 200)
	for i := range turns {
		for j := range text {
			text[j] = alphabet[rng.IntN(len(alphabet))]
		}
		s.Must(http.StatusOK, "POST", "/threads/"+tid+"/state", map[string]any{"as_node": "echo", "values": map[string]any{"messages": []any{
			map[string]any{"type": "human", "id": fmt.Sprintf("h%d", i), "content": string(text)},
			map[string]any{"type": "ai", "id": fmt.Sprintf("a%d", i), "content": "echo: " + string(text)},
		}}})
	}
	return tid
}

// BenchmarkLongThreadRead measures the full-value reads of issue 16 over
// HTTP on a loopback server: GET /threads/{id}/state, POST
// /threads/{id}/history {"limit":10} and GET /threads/{id} (the thread's
// values projection) of an echo_chat thread of 100 and 1000 turns (200
// and 2000 messages; a history page of the 1000-turn thread is cut at its
// 4 MiB cap). Each iteration is one request, client
// side, body read in full; MB/s is response bytes per second of one
// request at a time (b.SetBytes), the figure weft-load's long suite
// reports from its p50.
func BenchmarkLongThreadRead(b *testing.B) {
	s := servertest.Start(b)
	for _, turns := range []int{100, 1000} {
		tid := longChatThread(b, s, turns)
		for _, c := range []struct {
			name, method, path string
			body               any
		}{
			{"state", "GET", "/threads/" + tid + "/state", nil},
			{"history10", "POST", "/threads/" + tid + "/history", map[string]any{"limit": 10}},
			{"thread", "GET", "/threads/" + tid, nil},
		} {
			b.Run(fmt.Sprintf("turns=%d/%s", turns, c.name), func(b *testing.B) {
				size := len(s.Must(http.StatusOK, c.method, c.path, c.body).Body)
				b.SetBytes(int64(size))
				for b.Loop() {
					if r := s.Do(c.method, c.path, c.body); r.Status != http.StatusOK || len(r.Body) != size {
						b.Fatalf("status %d, %d bytes, want %d", r.Status, len(r.Body), size)
					}
				}
			})
		}
	}
}
