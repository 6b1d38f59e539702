package runs_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/threads"
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

// A thread a run creates on the way (if_not_exists "create") gets the
// server's default thread ttl (langgraph.json's checkpointer.ttl under
// weft dev), as one POST /threads creates does; on both paths of run
// creation (enqueue's one round trip, reject's transaction), and a thread
// a cron creates too.
func TestRunCreatedThreadGetsTheDefaultTTL(t *testing.T) {
	s := startWith(t, func(c *server.Config) {
		c.ThreadDefaultTTL = threads.TTLRequest{Set: true, Minutes: 60, Strategy: threads.TTLDelete}
	})
	for _, strategy := range []string{"enqueue", "reject"} {
		tid := uuid.NewString()
		wait(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""},
			"if_not_exists": "create", "multitask_strategy": strategy})
		if n := dbCount(t, s, `SELECT count(*) FROM threads WHERE thread_id = $1 AND ttl_minutes = 60
			AND ttl_strategy = 'delete' AND expires_at > now() + interval '59 minutes'`, tid); n != 1 {
			t.Fatalf("%s: the thread the run created has no default ttl", strategy)
		}
	}
	tid := uuid.NewString()
	s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs/crons", map[string]any{"assistant_id": "foo_bar",
		"schedule": "0 0 1 1 *", "input": map[string]any{"foo": ""}, "if_not_exists": "create"})
	if n := dbCount(t, s, `SELECT count(*) FROM threads WHERE thread_id = $1 AND ttl_minutes = 60
		AND ttl_strategy = 'delete' AND expires_at > now() + interval '59 minutes'`, tid); n != 1 {
		t.Fatal("the thread a cron created has no default ttl")
	}
	t.Run("without a default, none", func(t *testing.T) {
		s := start(t)
		tid := uuid.NewString()
		wait(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}, "if_not_exists": "create"})
		if n := dbCount(t, s, `SELECT count(*) FROM threads WHERE thread_id = $1 AND ttl_minutes IS NULL AND expires_at IS NULL`, tid); n != 1 {
			t.Fatal("a thread got a ttl no one set")
		}
	})
}
