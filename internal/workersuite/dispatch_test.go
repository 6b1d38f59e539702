package workersuite_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

// external starts a server without in-process workers: runs wait for an
// external worker, here the test itself over HTTP.
func external(t *testing.T, edit func(*server.Config)) *servertest.Server {
	return startWith(t, func(c *server.Config) {
		c.Workers = 0
		if edit != nil {
			edit(c)
		}
	})
}

type claimed struct {
	Dispatch struct {
		DispatchID string `json:"dispatch_id"`
		Attempt    int    `json:"attempt"`
		ThreadID   string `json:"thread_id"`
	} `json:"dispatch"`
	Run struct {
		RunID  string         `json:"run_id"`
		Kwargs map[string]any `json:"kwargs"`
	} `json:"run"`
	ClaimToken string `json:"claim_token"`
}

func claim(t *testing.T, s *servertest.Server, worker string, limit, waitMS int) []claimed {
	t.Helper()
	var out []claimed
	s.Must(http.StatusOK, "POST", "/dispatch/claim", map[string]any{"worker_id": worker, "graph_ids": []string{"foo_bar"},
		"limit": limit, "wait_ms": waitMS}).JSON(t, &out)
	return out
}

// claimOne claims the one queued run of graph as worker "w" (long poll).
func claimOne(t *testing.T, s *servertest.Server, graph string) claimed {
	t.Helper()
	var c []claimed
	s.Must(http.StatusOK, "POST", "/dispatch/claim", map[string]any{"worker_id": "w", "graph_ids": []string{graph}, "wait_ms": 5000}).JSON(t, &c)
	if len(c) != 1 {
		t.Fatalf("claimed %s", js(c))
	}
	return c[0]
}

// fooBarCheckpoint is a checkpoint as an external LangGraph worker would
// commit it: the final state of foo_bar.
func fooBarCheckpoint(step int, parent string) map[string]any {
	v := "0000000000000000000000000000000" + string(rune('1'+step)) + ".0.5"
	return map[string]any{
		"parent_checkpoint_id": parent,
		"checkpoint": map[string]any{"v": 4, "id": uuid.Must(uuid.NewV7()).String(), "ts": "2026-11-23T00:00:00Z",
			"channel_values":   map[string]any{"foo": "b", "bar": []any{"a", "b"}},
			"channel_versions": map[string]any{"foo": v, "bar": v}, "versions_seen": map[string]any{}},
		"metadata":     map[string]any{"source": "loop", "step": step},
		"new_versions": map[string]any{"foo": v, "bar": v},
	}
}

func TestExternalWorkerOverHTTP(t *testing.T) {
	s := external(t, nil)
	tid := newThread(t, s)
	run := create(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}})
	if got := claim(t, s, "other", 1, 0); len(got) != 1 {
		t.Fatalf("claim: %v", got) // the run is claimable right away
	} else {
		// Give it back so the worker under test takes it.
		s.Must(http.StatusOK, "POST", "/dispatch/"+got[0].Dispatch.DispatchID+"/nack", map[string]any{"claim_token": got[0].ClaimToken, "error": "not mine"})
	}
	var c []claimed
	deadline := time.Now().Add(5 * time.Second)
	for len(c) == 0 && time.Now().Before(deadline) {
		c = claim(t, s, "ext-1", 1, 1000)
	}
	if len(c) != 1 || c[0].Run.RunID != run["run_id"] || c[0].Dispatch.Attempt != 2 || js(c[0].Run.Kwargs["input"]) != `{"foo":""}` {
		t.Fatalf("claimed %s", js(c))
	}
	d := "/dispatch/" + c[0].Dispatch.DispatchID
	hb := s.Must(http.StatusOK, "POST", d+"/heartbeat", map[string]any{"claim_token": c[0].ClaimToken}).Map(t)
	if hb["cancel"] != "" || hb["lease_expires_at"] == nil {
		t.Fatalf("heartbeat %s", js(hb))
	}
	runStatus(t, s, tid, run["run_id"].(string), "running")
	commit := map[string]any{
		"claim_token": c[0].ClaimToken,
		"checkpoints": []any{fooBarCheckpoint(0, "")},
		"events":      []any{map[string]any{"event": "values", "data": map[string]any{"foo": "b", "bar": []any{"a", "b"}}}},
		"end":         map[string]any{"status": "success", "result": map[string]any{"foo": "b", "bar": []any{"a", "b"}}},
	}
	first := s.Must(http.StatusOK, "POST", d+"/commit", commit).Map(t)
	again := s.Must(http.StatusOK, "POST", d+"/commit", commit).Map(t)
	if again["replayed"] != true || js(again["checkpoint_ids"]) != js(first["checkpoint_ids"]) || again["last_seq"] != first["last_seq"] {
		t.Fatalf("replayed commit %s, first %s", js(again), js(first))
	}
	runStatus(t, s, tid, run["run_id"].(string), "success")
	wantJSON(t, "state", state(t, s, tid)["values"], `{"foo":"b","bar":["a","b"]}`)
	wantJSON(t, "join", s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs/"+run["run_id"].(string)+"/join", nil).Map(t), `{"foo":"b","bar":["a","b"]}`)
	if n := dbCount(t, s, `SELECT count(*) FROM checkpoints WHERE thread_id = $1`, tid); n != 1 {
		t.Fatalf("%d checkpoints after a replayed commit", n)
	}
	var hist []map[string]any
	s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs/"+run["run_id"].(string)+"/dispatches", nil).JSON(t, &hist)
	wantJSON(t, "dispatch history", []any{hist[0]["state"], len(hist[0]["attempts"].([]any)),
		hist[0]["attempts"].([]any)[0].(map[string]any)["outcome"], hist[0]["attempts"].([]any)[1].(map[string]any)["worker"],
		hist[0]["attempts"].([]any)[1].(map[string]any)["outcome"]},
		`["acked",2,"nacked","ext-1","success"]`)
	// The audit of the attempt: its heartbeat, the lease it renewed, no fenced write.
	second := hist[0]["attempts"].([]any)[1].(map[string]any)
	hbAt, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(second["heartbeat_at"]))
	leaseAt, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(second["lease_expires_at"]))
	if second["heartbeats"] != float64(1) || hbAt.IsZero() || !leaseAt.After(hbAt) || second["fenced_writes"] != float64(0) || second["fenced_at"] != nil {
		t.Fatalf("attempt audit %s", js(second))
	}
	if first := hist[0]["attempts"].([]any)[0].(map[string]any); first["heartbeats"] != float64(0) || first["heartbeat_at"] != nil || first["lease_expires_at"] == nil {
		t.Fatalf("nacked attempt audit %s", js(first))
	}
	// The finished dispatch is fenced for good.
	s.Must(http.StatusConflict, "POST", d+"/heartbeat", map[string]any{"claim_token": c[0].ClaimToken})
	s.Must(http.StatusUnprocessableEntity, "POST", d+"/heartbeat", map[string]any{"claim_token": "nope"})
	s.Must(http.StatusUnprocessableEntity, "POST", "/dispatch/claim", map[string]any{})
	// A malformed claim token is a 422 naming the field, on every fenced
	// call (ack and commit decode it as a UUID, heartbeat and nack parse it).
	for _, op := range []string{"ack", "commit", "heartbeat", "nack"} {
		for _, tok := range []string{"", "nope"} {
			r := s.Do("POST", d+"/"+op, map[string]any{"claim_token": tok, "status": "success"})
			if detail := r.Detail(t); r.Status != http.StatusUnprocessableEntity || !strings.Contains(detail, "claim") ||
				!strings.Contains(detail, "UUID") || strings.Contains(detail, "Invalid JSON") {
				t.Errorf("%s with claim_token %q: %d %s", op, tok, r.Status, r.Body)
			}
		}
	}
	// worker_id is bounded in characters, as its error says, not bytes.
	s.Must(http.StatusOK, "POST", "/dispatch/claim", map[string]any{"worker_id": strings.Repeat("é", 200), "graph_ids": []string{"none"}})
	s.Must(http.StatusOK, "POST", "/dispatch/cancellations", map[string]any{"worker_id": strings.Repeat("é", 200)})
	s.Must(http.StatusUnprocessableEntity, "POST", "/dispatch/claim", map[string]any{"worker_id": strings.Repeat("é", 201)})
	s.Must(http.StatusOK, "POST", "/dispatch/checkpoints/list", map[string]any{"thread_id": strings.Repeat("é", 200)})
	s.Must(http.StatusUnprocessableEntity, "POST", "/dispatch/checkpoints/list", map[string]any{"thread_id": strings.Repeat("é", 201)})
}

// A worker whose lease expired cannot commit: the reaper requeues its run,
// another worker finishes it, exactly once.
func TestExpiredLeaseIsFenced(t *testing.T) {
	s := external(t, func(c *server.Config) { c.Lease = time.Second })
	tid := newThread(t, s)
	run := create(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}})
	a := claim(t, s, "zombie", 1, 2000)[0]
	da := "/dispatch/" + a.Dispatch.DispatchID
	first := fooBarCheckpoint(0, "")
	s.Must(http.StatusOK, "POST", da+"/commit", map[string]any{"claim_token": a.ClaimToken, "checkpoints": []any{first}})
	time.Sleep(1200 * time.Millisecond) // no heartbeat: the lease runs out
	r := s.Do("POST", da+"/commit", map[string]any{"claim_token": a.ClaimToken, "checkpoints": []any{fooBarCheckpoint(1, "")}})
	if r.Status != http.StatusConflict {
		t.Fatalf("zombie commit: %d %s", r.Status, r.Body)
	}
	s.Must(http.StatusConflict, "POST", da+"/heartbeat", map[string]any{"claim_token": a.ClaimToken})
	var b []claimed
	deadline := time.Now().Add(10 * time.Second)
	for len(b) == 0 && time.Now().Before(deadline) {
		b = claim(t, s, "rescuer", 1, 1000)
	}
	if len(b) != 1 || b[0].Dispatch.DispatchID != a.Dispatch.DispatchID || b[0].Dispatch.Attempt != 2 {
		t.Fatalf("retry claim %s", js(b))
	}
	parent := first["checkpoint"].(map[string]any)["id"].(string)
	s.Must(http.StatusOK, "POST", "/dispatch/"+b[0].Dispatch.DispatchID+"/commit", map[string]any{"claim_token": b[0].ClaimToken,
		"checkpoints": []any{fooBarCheckpoint(1, parent)}, "end": map[string]any{"status": "success"}})
	// The zombie's late commit of the end is fenced too.
	s.Must(http.StatusConflict, "POST", da+"/commit", map[string]any{"claim_token": a.ClaimToken, "end": map[string]any{"status": "error"}})
	got := runStatus(t, s, tid, run["run_id"].(string), "success")
	if got["attempt"] != float64(2) {
		t.Fatalf("run %s", js(got))
	}
	if n := dbCount(t, s, `SELECT count(*) FROM checkpoints WHERE thread_id = $1`, tid); n != 2 {
		t.Fatalf("%d checkpoints, want 2 (one per committed step, none from the zombie)", n)
	}
	var hist []map[string]any
	s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs/"+run["run_id"].(string)+"/dispatches", nil).JSON(t, &hist)
	at := hist[0]["attempts"].([]any)
	if len(at) != 2 || at[0].(map[string]any)["outcome"] != "lease_expired" || at[1].(map[string]any)["outcome"] != "success" {
		t.Fatalf("attempts %s", js(at))
	}
	// The zombie's two refused commits are counted on its attempt (its
	// refused heartbeat is not a write); the rescuer's attempt has none.
	zombie, rescuer := at[0].(map[string]any), at[1].(map[string]any)
	claimedAt, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(zombie["claimed_at"]))
	lease, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(zombie["lease_expires_at"]))
	if zombie["fenced_writes"] != float64(2) || zombie["fenced_at"] == nil || zombie["heartbeats"] != float64(0) ||
		lease.Sub(claimedAt) < time.Second || rescuer["fenced_writes"] != float64(0) || rescuer["fenced_at"] != nil {
		t.Fatalf("attempt audit: zombie %s, rescuer %s", js(zombie), js(rescuer))
	}
}

func TestDeadLetterAndRetry(t *testing.T) {
	s := external(t, func(c *server.Config) { c.MaxAttempts = 2 })
	tid := newThread(t, s)
	run := create(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}})
	rid := run["run_id"].(string)
	nack := func() map[string]any {
		var c []claimed
		deadline := time.Now().Add(10 * time.Second)
		for len(c) == 0 && time.Now().Before(deadline) {
			c = claim(t, s, "w", 1, 1000)
		}
		return s.Must(http.StatusOK, "POST", "/dispatch/"+c[0].Dispatch.DispatchID+"/nack", map[string]any{"claim_token": c[0].ClaimToken, "error": "boom"}).Map(t)
	}
	if got := nack(); got["state"] != "queued" {
		t.Fatalf("first nack: %s", js(got))
	}
	runStatus(t, s, tid, rid, "pending")
	if got := nack(); got["state"] != "dead_letter" {
		t.Fatalf("second nack: %s", js(got))
	}
	runStatus(t, s, tid, rid, "error")
	if th := thread(t, s, tid); th["status"] != "error" {
		t.Fatalf("thread %s", js(th))
	}
	var dl []map[string]any
	s.Must(http.StatusOK, "GET", "/dispatches?state=dead_letter&graph_id=foo_bar", nil).JSON(t, &dl)
	if len(dl) != 1 || dl[0]["run_id"] != rid || dl[0]["last_error"] != "boom" {
		t.Fatalf("dead letters %s", js(dl))
	}
	id := dl[0]["dispatch_id"].(string)
	res := s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs/"+rid+"/join", nil).Map(t)
	if e, _ := res["__error__"].(map[string]any); e == nil || e["error"] != "DeadLetter" {
		t.Fatalf("join of a dead letter: %s", js(res))
	}
	s.Must(http.StatusOK, "POST", "/dispatches/"+id+"/retry", nil)
	s.Must(http.StatusConflict, "POST", "/dispatches/"+id+"/retry", nil)
	s.Must(http.StatusNotFound, "POST", "/dispatches/"+uuid.NewString()+"/retry", nil)
	s.Must(http.StatusUnprocessableEntity, "GET", "/dispatches?state=lost", nil)
	runStatus(t, s, tid, rid, "pending")
	if th := thread(t, s, tid); th["status"] != "busy" {
		t.Fatalf("thread after retry %s", js(th))
	}
	c := claim(t, s, "w", 1, 2000)
	s.Must(http.StatusOK, "POST", "/dispatch/"+c[0].Dispatch.DispatchID+"/commit", map[string]any{"claim_token": c[0].ClaimToken,
		"checkpoints": []any{fooBarCheckpoint(0, "")}})
	ack := map[string]any{"claim_token": c[0].ClaimToken, "status": "success", "result": map[string]any{"ok": true}}
	s.Must(http.StatusOK, "POST", "/dispatch/"+c[0].Dispatch.DispatchID+"/ack", ack)
	if r := s.Must(http.StatusOK, "POST", "/dispatch/"+c[0].Dispatch.DispatchID+"/ack", ack).Map(t); r["replayed"] != true {
		t.Fatalf("second ack: %s", js(r))
	}
	runStatus(t, s, tid, rid, "success")
	wantJSON(t, "join", s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs/"+rid+"/join", nil).Map(t), `{"ok":true}`)
}

// Concurrent claimers: every run is claimed once, and a thread never has
// two claimed dispatches (its second run waits for the first).
func TestConcurrentClaims(t *testing.T) {
	s := external(t, nil)
	threads := []string{newThread(t, s), newThread(t, s), newThread(t, s)}
	for _, tid := range threads {
		for range 2 {
			create(t, s, tid, map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}})
		}
	}
	var mu sync.Mutex
	var all []claimed
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			r, err := s.Try("POST", "/dispatch/claim", map[string]any{"worker_id": "w" + string(rune('0'+i)), "limit": 4})
			if err != nil || r.Status != http.StatusOK {
				t.Errorf("claim: %v %v", err, r)
				return
			}
			var got []claimed
			r.JSON(t, &got)
			mu.Lock()
			all = append(all, got...)
			mu.Unlock()
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, c := range all {
		if seen[c.Dispatch.ThreadID] {
			t.Fatalf("two dispatches of thread %s claimed at once", c.Dispatch.ThreadID)
		}
		seen[c.Dispatch.ThreadID] = true
	}
	if len(all) != 3 {
		t.Fatalf("%d claimed, want 3 (one per thread)", len(all))
	}
}
