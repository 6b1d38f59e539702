package runs_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

// BenchmarkEventRefsEchoChat measures what storing events as checkpoint
// references saves and costs, on an echo_chat thread of 200 turns
// (~200-character messages; stream_mode values, updates and
// messages-tuple, as useStream asks), with references off (whole) and on
// (the default threshold):
//
//   - event-KiB: the thread's run_events as stored (pg_column_size of
//     data and ref, after compression; no row headers or indexes);
//   - msg-KiB: the conversation itself (the messages' JSON), for scale;
//   - cold-replay-ms: replaying the last turn's run (Last-Event-ID -1,
//     every event) the first time, when each of its values events is
//     rendered from its checkpoint (one sample);
//   - ns/op: the same replay again (references then come from the
//     renderer's cache).
func BenchmarkEventRefsEchoChat(b *testing.B) {
	const turns = 200
	for _, c := range []struct {
		name string
		min  int
	}{{"whole", -1}, {"refs", 0}} {
		b.Run(c.name, func(b *testing.B) {
			s := servertest.StartWith(b, pgtest.DSN(b), func(cfg *server.Config) { cfg.EventRefMinBytes = c.min })
			tid := s.Must(http.StatusOK, "POST", "/threads", map[string]any{}).Map(b)["thread_id"].(string)
			body := func(i int) map[string]any {
				text := strings.Repeat(string(rune('a'+i%26)), 190)
				return map[string]any{"assistant_id": "echo_chat", "stream_mode": []string{"values", "updates", "messages-tuple"},
					"input": map[string]any{"messages": []any{map[string]any{"type": "human", "content": text}}}}
			}
			for i := range turns - 1 {
				s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs/wait", body(i))
			}
			run := s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs", body(turns-1)).Map(b)
			rid := run["run_id"].(string)
			s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs/"+rid+"/join", nil)
			var eventBytes, msgBytes int64
			if err := s.DB.QueryRow(b.Context(), `SELECT coalesce(sum(pg_column_size(data) + coalesce(pg_column_size(ref), 0)), 0)
				FROM run_events WHERE thread_id = $1`, tid).Scan(&eventBytes); err != nil {
				b.Fatal(err)
			}
			if err := s.DB.QueryRow(b.Context(), `SELECT length(("values" -> 'messages')::text) FROM threads WHERE thread_id = $1`, tid).Scan(&msgBytes); err != nil {
				b.Fatal(err)
			}
			replay := func() {
				req, _ := http.NewRequestWithContext(b.Context(), "GET", s.URL+"/threads/"+tid+"/runs/"+rid+"/stream", nil)
				req.Header.Set("Last-Event-ID", "-1")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				var buf bytes.Buffer
				if _, err := buf.ReadFrom(resp.Body); err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
				if !strings.Contains(buf.String(), "event: values") {
					b.Fatalf("replay without values: %.200s", buf.String())
				}
			}
			t0 := time.Now()
			replay()
			cold := time.Since(t0)
			b.ResetTimer()
			for b.Loop() {
				replay()
			}
			b.ReportMetric(float64(eventBytes)/1024, "event-KiB")
			b.ReportMetric(float64(msgBytes)/1024, "msg-KiB")
			b.ReportMetric(float64(cold.Microseconds())/1000, "cold-replay-ms")
		})
	}
}
