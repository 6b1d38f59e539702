package state_test

import (
	"context"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

type threadTTL struct {
	Strategy   string  `json:"strategy"`
	TTLMinutes float64 `json:"ttl_minutes"`
	ExpiresAt  *string `json:"expires_at"`
}

func getTTL(t *testing.T, s *servertest.Server, tid string) *threadTTL {
	t.Helper()
	var th struct {
		TTL *threadTTL `json:"ttl"`
	}
	s.Must(http.StatusOK, "GET", "/threads/"+tid+"?include=ttl", nil).JSON(t, &th)
	return th.TTL
}

// expire moves a thread's expiry into the past, as if its ttl had run out.
func expire(t *testing.T, s *servertest.Server, tid string) {
	t.Helper()
	if _, err := s.DB.Exec(context.Background(), `UPDATE threads SET expires_at = now() - interval '1 second' WHERE thread_id = $1`, tid); err != nil {
		t.Fatal(err)
	}
}

func minutesLeft(t *testing.T, ttl *threadTTL) float64 {
	t.Helper()
	if ttl == nil || ttl.ExpiresAt == nil {
		t.Fatalf("ttl = %+v; want an expiry", ttl)
	}
	at, err := time.Parse(time.RFC3339Nano, *ttl.ExpiresAt)
	if err != nil {
		t.Fatal(err)
	}
	return time.Until(at).Minutes()
}

func TestThreadTTLFieldsAndValidation(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)

	tid := s.Must(http.StatusOK, "POST", "/threads", map[string]any{"ttl": 30}).Map(t)["thread_id"].(string)
	if _, has := s.Must(http.StatusOK, "GET", "/threads/"+tid, nil).Map(t)["ttl"]; has {
		t.Fatal("ttl shown without include=ttl")
	}
	for _, q := range []string{"include=ttl", "include=%5B%22ttl%22%5D", "include=values,ttl", "include=x&include=ttl"} {
		if _, has := s.Must(http.StatusOK, "GET", "/threads/"+tid+"?"+q, nil).Map(t)["ttl"]; !has {
			t.Fatalf("%s: no ttl", q)
		}
	}
	ttl := getTTL(t, s, tid)
	if ttl.Strategy != "delete" || ttl.TTLMinutes != 30 || math.Abs(minutesLeft(t, ttl)-30) > 1 {
		t.Fatalf("ttl = %+v (%.2f min left); want delete, 30 min", ttl, minutesLeft(t, ttl))
	}
	// A thread without a ttl has none.
	plain := newThread(t, s, "")
	if got := getTTL(t, s, plain); got != nil {
		t.Fatalf("ttl of a thread without one = %+v", got)
	}

	// PATCH replaces the ttl; a patch without one restarts the clock.
	s.Must(http.StatusOK, "PATCH", "/threads/"+tid, map[string]any{"ttl": map[string]any{"ttl": 90, "strategy": "keep_latest"}})
	if ttl := getTTL(t, s, tid); ttl.Strategy != "keep_latest" || ttl.TTLMinutes != 90 || math.Abs(minutesLeft(t, ttl)-90) > 1 {
		t.Fatalf("after patch: ttl = %+v", ttl)
	}
	expire(t, s, tid)
	s.Must(http.StatusOK, "PATCH", "/threads/"+tid, map[string]any{"metadata": map[string]any{"a": 1}})
	if ttl := getTTL(t, s, tid); ttl.TTLMinutes != 90 || math.Abs(minutesLeft(t, ttl)-90) > 1 {
		t.Fatalf("a patch did not restart the ttl clock: %+v", ttl)
	}
	// A patch of a thread without ttl gives it none.
	s.Must(http.StatusOK, "PATCH", "/threads/"+plain, map[string]any{"metadata": map[string]any{"a": 1}})
	if got := getTTL(t, s, plain); got != nil {
		t.Fatalf("patch gave a ttl: %+v", got)
	}

	var before int
	count := func() int {
		var n int
		if err := s.DB.QueryRow(context.Background(), `SELECT count(*) FROM threads`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before = count()
	for _, bad := range []any{0, -5, "10", true, map[string]any{}, map[string]any{"ttl": 5, "strategy": "archive"},
		map[string]any{"ttl": 1e300}, []any{5}} {
		r := s.Must(http.StatusUnprocessableEntity, "POST", "/threads", map[string]any{"ttl": bad})
		if !strings.Contains(r.Detail(t), "ttl") {
			t.Fatalf("ttl %v: detail %q does not name the field", bad, r.Detail(t))
		}
		s.Must(http.StatusUnprocessableEntity, "PATCH", "/threads/"+tid, map[string]any{"ttl": bad, "metadata": map[string]any{"b": 2}})
	}
	if count() != before {
		t.Fatal("a refused create wrote a thread")
	}
	if md := s.Must(http.StatusOK, "GET", "/threads/"+tid, nil).Map(t)["metadata"].(map[string]any); md["b"] != nil {
		t.Fatal("a refused patch changed the thread")
	}
	// null leaves the ttl as it is.
	s.Must(http.StatusOK, "PATCH", "/threads/"+tid, map[string]any{"ttl": nil})
	if ttl := getTTL(t, s, tid); ttl.Strategy != "keep_latest" {
		t.Fatalf("ttl null changed the ttl: %+v", ttl)
	}
}

func TestThreadTTLSweeper(t *testing.T) {
	t.Parallel()
	s := servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) { c.TTLSweepInterval = 20 * time.Millisecond })

	run := func(tid string) {
		s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}})
	}
	newTTL := func(strategy string) string {
		return s.Must(http.StatusOK, "POST", "/threads", map[string]any{"ttl": map[string]any{"ttl": 60, "strategy": strategy}}).Map(t)["thread_id"].(string)
	}
	// Expired, strategy delete: goes, with its runs and checkpoints; its child stays as a root.
	gone := newTTL("delete")
	run(gone)
	kid := s.Must(http.StatusOK, "POST", "/threads", map[string]any{"parent_thread_id": gone}).Map(t)["thread_id"].(string)
	// Expired, keep_latest: stays with only its latest checkpoint.
	kept := newTTL("keep_latest")
	run(kept)
	run(kept)
	head := getState(t, s, "/threads/"+kept+"/state")
	if n := len(history(t, s, kept, map[string]any{"limit": 100})); n < 3 {
		t.Fatalf("history before the sweep has %d checkpoints", n)
	}
	// Not expired, no ttl, and expired but busy: all stay.
	fresh := newTTL("delete")
	plain := newThread(t, s, "")
	busy := newTTL("delete")
	if _, err := s.DB.Exec(context.Background(), `UPDATE threads SET status = 'busy' WHERE thread_id = $1`, busy); err != nil {
		t.Fatal(err)
	}
	for _, tid := range []string{gone, kept, busy} {
		expire(t, s, tid)
	}

	deadline := time.Now().Add(10 * time.Second)
	for s.Do("GET", "/threads/"+gone, nil).Status != http.StatusNotFound {
		if time.Now().After(deadline) {
			t.Fatal("the expired thread was not swept")
		}
		time.Sleep(20 * time.Millisecond)
	}
	var leftovers int
	if err := s.DB.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM runs WHERE thread_id = $1) +
		(SELECT count(*) FROM checkpoints WHERE thread_id = $2)`, gone, gone).Scan(&leftovers); err != nil {
		t.Fatal(err)
	}
	if leftovers != 0 {
		t.Fatalf("%d runs/checkpoints of the swept thread remain", leftovers)
	}
	if p := s.Must(http.StatusOK, "GET", "/threads/"+kid, nil).Map(t)["parent_thread_id"]; p != nil {
		t.Fatalf("child of the swept thread has parent %v; want a root", p)
	}
	for time.Now().Before(deadline) && getTTL(t, s, kept).ExpiresAt != nil {
		time.Sleep(20 * time.Millisecond)
	}
	if ttl := getTTL(t, s, kept); ttl.ExpiresAt != nil || ttl.Strategy != "keep_latest" {
		t.Fatalf("keep_latest thread after the sweep: ttl %+v", ttl)
	}
	h := history(t, s, kept, map[string]any{"limit": 100})
	if len(h) != 1 || h[0].Checkpoint.CheckpointID != head.Checkpoint.CheckpointID {
		t.Fatalf("keep_latest left %d checkpoints (want only the head %s)", len(h), head.Checkpoint.CheckpointID)
	}
	// Activity restarts the clock of a kept thread.
	s.Must(http.StatusOK, "PATCH", "/threads/"+kept, map[string]any{"metadata": map[string]any{"x": 1}})
	if left := minutesLeft(t, getTTL(t, s, kept)); math.Abs(left-60) > 1 {
		t.Fatalf("patch after keep_latest: %.2f minutes left", left)
	}
	for _, tid := range []string{fresh, plain, busy} {
		s.Must(http.StatusOK, "GET", "/threads/"+tid, nil)
	}
}
