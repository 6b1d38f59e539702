package runs_test

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// A run makes its merged config (the assistant's under the run's) the
// thread's config, and restarts the thread's ttl clock.
func TestRunSetsThreadConfigAndRestartsTTL(t *testing.T) {
	s := start(t)
	a := s.Must(http.StatusOK, "POST", "/assistants", map[string]any{"graph_id": "foo_bar",
		"config": map[string]any{"tags": []any{"from-assistant"}, "configurable": map[string]any{"model": "a", "temp": 1}}}).Map(t)
	tid := s.Must(http.StatusOK, "POST", "/threads", map[string]any{"ttl": 30}).Map(t)["thread_id"].(string)
	if _, err := s.DB.Exec(context.Background(), `UPDATE threads SET expires_at = now() + interval '1 minute' WHERE thread_id = $1`, tid); err != nil {
		t.Fatal(err)
	}
	for _, strategy := range []string{"enqueue", "reject"} { // the one-round-trip path and the transactional one
		s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": a["assistant_id"],
			"multitask_strategy": strategy, "input": map[string]any{"foo": ""},
			"config": map[string]any{"configurable": map[string]any{"model": "run-" + strategy}}})
		th := thread(t, s, tid)
		wantJSON(t, "thread config", th["config"], `{"tags":["from-assistant"],"configurable":{"model":"run-`+strategy+`","temp":1,"user-agent":"Go-http-client/1.1"}}`)
		var left time.Duration
		if err := s.DB.QueryRow(context.Background(), `SELECT expires_at - now() FROM threads WHERE thread_id = $1`, tid).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left < 29*time.Minute || left > 31*time.Minute {
			t.Fatalf("%s: ttl left after a run = %v; want about 30m", strategy, left)
		}
		if _, err := s.DB.Exec(context.Background(), `UPDATE threads SET expires_at = now() + interval '1 minute' WHERE thread_id = $1`, tid); err != nil {
			t.Fatal(err)
		}
	}
}
