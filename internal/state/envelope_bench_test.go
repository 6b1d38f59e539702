package state_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

// workerListThread is a thread whose foo_bar run an external worker ran
// in two commits: a step that puts all of list but its last element as the
// channel bar, then the end with the whole list, its last checkpoint
// complete (the end's put extends a list the run put: the commit projects
// the thread itself, and its row references bar's blob). s runs no
// in-process workers.
func workerListThread(b *testing.B, s *servertest.Server, list []any) string {
	b.Helper()
	tid := s.Must(http.StatusOK, "POST", "/threads", map[string]any{}).Map(b)["thread_id"].(string)
	s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}})
	var claimed []struct {
		Dispatch struct {
			DispatchID string `json:"dispatch_id"`
		} `json:"dispatch"`
		ClaimToken string `json:"claim_token"`
	}
	s.Must(http.StatusOK, "POST", "/dispatch/claim", map[string]any{"worker_id": "bench", "graph_ids": []string{"foo_bar"},
		"limit": 1, "wait_ms": 5000}).JSON(b, &claimed)
	if len(claimed) != 1 {
		b.Fatalf("claimed %d runs", len(claimed))
	}
	path, parent := "/dispatch/"+claimed[0].Dispatch.DispatchID+"/commit", ""
	for step, bar := range [][]any{list[:len(list)-1], list} {
		id, v := uuid.Must(uuid.NewV7()).String(), fmt.Sprintf("%032d.0.5", step+1)
		commit := map[string]any{"claim_token": claimed[0].ClaimToken,
			"checkpoints": []any{map[string]any{"parent_checkpoint_id": parent, "complete": step == 1,
				"checkpoint": map[string]any{"v": 4, "id": id, "ts": "2026-11-28T00:00:00Z",
					"channel_values":   map[string]any{"foo": "b", "bar": bar},
					"channel_versions": map[string]any{"foo": v, "bar": v},
					"versions_seen":    map[string]any{"node_b": map[string]any{}}},
				"metadata": map[string]any{"source": "loop", "step": step}, "new_versions": map[string]any{"foo": v, "bar": v}}}}
		if step == 1 {
			commit["end"] = map[string]any{"status": "success", "result": map[string]any{"foo": "b"}}
		}
		s.Must(http.StatusOK, "POST", path, commit)
		parent = id
	}
	return tid
}

// BenchmarkThreadRowMessages measures GET /threads/{id} of a thread whose
// row references a list of 200 and 2,000 messages stored as LangChain's
// Python envelopes (what the Python worker stores: weft_thread_values
// renders each as the API shows it, migration 027), against the same
// messages stored as the plain dicts the API shows (concatenated as they
// are): the same response. Each iteration reads both threads in turn;
// ms-envelopes/op and ms-plain/op are their mean request times, and
// envelopes/plain their ratio, what rendering the envelopes costs a reader.
func BenchmarkThreadRowMessages(b *testing.B) {
	s := servertest.StartWith(b, pgtest.DSN(b), func(c *server.Config) { c.Workers = 0 })
	for _, n := range []int{200, 2000} {
		envelopes, plain := make([]any, n), make([]any, n)
		for i := range n {
			class, typ := "HumanMessage", "human"
			if i%2 == 1 {
				class, typ = "AIMessage", "ai"
			}
			content := fmt.Sprintf("%d %0200d", i, i)
			envelopes[i] = map[string]any{"lc": 1, "type": "constructor", "id": []any{"langchain", "schema", "messages", class},
				"kwargs": map[string]any{"content": content, "id": fmt.Sprintf("m%d", i), "type": typ}}
			m := map[string]any{"content": content, "id": fmt.Sprintf("m%d", i), "type": typ, "name": nil,
				"additional_kwargs": map[string]any{}, "response_metadata": map[string]any{}}
			if typ == "ai" {
				m["tool_calls"], m["invalid_tool_calls"], m["usage_metadata"] = []any{}, []any{}, nil
			}
			plain[i] = m
		}
		threads := map[string]string{"envelopes": workerListThread(b, s, envelopes), "plain": workerListThread(b, s, plain)}
		// Both rows reference bar, and read alike.
		sizes, values := map[string]int{}, map[string]string{}
		for kind, tid := range threads {
			var refs *string
			if err := s.DB.QueryRow(context.Background(), `SELECT values_refs->>'bar' FROM threads WHERE thread_id = $1`, tid).Scan(&refs); err != nil || refs == nil {
				b.Fatalf("%s: the row does not reference bar (%v)", kind, err)
			}
			r := s.Must(http.StatusOK, "GET", "/threads/"+tid, nil)
			var th struct {
				Values json.RawMessage `json:"values"`
			}
			r.JSON(b, &th)
			sizes[kind], values[kind] = len(r.Body), string(th.Values)
		}
		if values["envelopes"] != values["plain"] {
			b.Fatalf("the envelopes read %.300s, the plain messages %.300s", values["envelopes"], values["plain"])
		}
		// One request of each in turn, so a slowdown of the machine falls
		// on both alike.
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			spent := map[string]time.Duration{}
			for b.Loop() {
				for _, kind := range []string{"envelopes", "plain"} {
					start := time.Now()
					if r := s.Do("GET", "/threads/"+threads[kind], nil); r.Status != http.StatusOK || len(r.Body) != sizes[kind] {
						b.Fatalf("%s: status %d, %d bytes, want %d", kind, r.Status, len(r.Body), sizes[kind])
					}
					spent[kind] += time.Since(start)
				}
			}
			for kind, d := range spent {
				b.ReportMetric(float64(d.Microseconds())/1000/float64(b.N), "ms-"+kind+"/op")
			}
			b.ReportMetric(float64(spent["envelopes"])/float64(spent["plain"]), "envelopes/plain")
		})
	}
}
