package workerapi_test

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// external runs a server without in-process workers (with the built-in
// demo graphs): its runs wait for the test, playing an external worker.
func external(t *testing.T) *servertest.Server {
	t.Helper()
	t.Parallel()
	return servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) { c.Workers = 0 })
}

type claimedRun struct {
	Dispatch struct {
		DispatchID string `json:"dispatch_id"`
		Attempt    int    `json:"attempt"`
	} `json:"dispatch"`
	Run struct {
		RunID    string `json:"run_id"`
		ThreadID string `json:"thread_id"`
	} `json:"run"`
	ClaimToken  string `json:"claim_token"`
	ThreadEmpty bool   `json:"thread_empty"`
}

// queueAndClaim creates a foo_bar run on a new thread and claims it as
// worker "w".
func queueAndClaim(t *testing.T, s *servertest.Server) (tid string, c claimedRun) {
	t.Helper()
	tid = s.Must(http.StatusOK, "POST", "/threads", map[string]any{}).Map(t)["thread_id"].(string)
	run := s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}}).Map(t)
	var got []claimedRun
	s.Must(http.StatusOK, "POST", "/dispatch/claim", map[string]any{"worker_id": "w", "graph_ids": []string{"foo_bar"}, "wait_ms": 5000}).JSON(t, &got)
	if len(got) != 1 || got[0].Run.RunID != run["run_id"] || got[0].Dispatch.Attempt != 1 || !got[0].ThreadEmpty {
		t.Fatalf("claim: %s", js(got))
	}
	return tid, got[0]
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// status sends a request and checks its status, and that the body says
// why when it is an error.
func status(t *testing.T, s *servertest.Server, want int, method, path string, body any, says string) {
	t.Helper()
	r := s.Do(method, path, body)
	if r.Status != want || !strings.Contains(string(r.Body), says) {
		t.Fatalf("%s %s %s: %d %s, want %d saying %q", method, path, js(body), r.Status, r.Body, want, says)
	}
}

// The claim's checks, and the fence: every call on a dispatch presents its
// claim token, and a wrong one (or any, once the run has ended) is a 409.
func TestClaimAndFence(t *testing.T) {
	s := external(t)
	t.Run("claim validation", func(t *testing.T) {
		status(t, s, http.StatusUnprocessableEntity, "POST", "/dispatch/claim", map[string]any{"worker_id": " \t"}, "worker_id is required")
		status(t, s, http.StatusUnprocessableEntity, "POST", "/dispatch/claim", map[string]any{"worker_id": strings.Repeat("w", 201)}, "worker_id is required")
		status(t, s, http.StatusUnprocessableEntity, "POST", "/dispatch/claim", map[string]any{"worker_id": "w", "limit": 33}, "Invalid limit")
		status(t, s, http.StatusUnprocessableEntity, "POST", "/dispatch/claim", map[string]any{"worker_id": "w", "wait_ms": 30001}, "Invalid wait_ms")
		var none []claimedRun
		s.Must(http.StatusOK, "POST", "/dispatch/claim", map[string]any{"worker_id": "w", "graph_ids": []string{"foo_bar"}}).JSON(t, &none)
		if len(none) != 0 {
			t.Fatalf("claim with nothing queued: %s", js(none))
		}
	})

	tid, c := queueAndClaim(t, s)
	d := "/dispatch/" + c.Dispatch.DispatchID
	wrong := uuid.NewString()
	t.Run("wrong token is fenced", func(t *testing.T) {
		status(t, s, http.StatusConflict, "POST", d+"/heartbeat", map[string]any{"claim_token": wrong}, "")
		status(t, s, http.StatusConflict, "POST", d+"/commit", map[string]any{"claim_token": wrong, "events": []any{map[string]any{"event": "custom", "data": 1}}}, "")
		status(t, s, http.StatusConflict, "POST", d+"/ack", map[string]any{"claim_token": wrong, "status": "success"}, "")
		status(t, s, http.StatusConflict, "POST", d+"/nack", map[string]any{"claim_token": wrong, "error": "x"}, "")
		// Another dispatch id with the right token is fenced too.
		status(t, s, http.StatusConflict, "POST", "/dispatch/"+uuid.NewString()+"/heartbeat", map[string]any{"claim_token": c.ClaimToken}, "")
	})
	t.Run("malformed fence and commit are 422", func(t *testing.T) {
		status(t, s, http.StatusUnprocessableEntity, "POST", d+"/heartbeat", map[string]any{"claim_token": "nope"}, "claim token")
		status(t, s, http.StatusUnprocessableEntity, "POST", "/dispatch/nope/heartbeat", map[string]any{"claim_token": c.ClaimToken}, "dispatch ID")
		status(t, s, http.StatusUnprocessableEntity, "POST", d+"/commit", map[string]any{}, "claim_token is required")
		status(t, s, http.StatusUnprocessableEntity, "POST", d+"/commit", map[string]any{"claim_token": c.ClaimToken, "end": map[string]any{"status": "done"}}, "end.status")
		status(t, s, http.StatusUnprocessableEntity, "POST", d+"/commit", map[string]any{"claim_token": c.ClaimToken,
			"writes": []any{map[string]any{"writes": []any{map[string]any{"task_id": "t", "channel": "foo", "value": 1, "idx": 0}}}}}, "checkpoint_id")
	})
	t.Run("the holder's heartbeat renews the lease", func(t *testing.T) {
		var hb struct {
			LeaseExpiresAt time.Time `json:"lease_expires_at"`
			Cancel         string    `json:"cancel"`
		}
		s.Must(http.StatusOK, "POST", d+"/heartbeat", map[string]any{"claim_token": c.ClaimToken}).JSON(t, &hb)
		if !hb.LeaseExpiresAt.After(time.Now()) || hb.Cancel != "" {
			t.Fatalf("heartbeat: %s", js(hb))
		}
	})
	t.Run("after the ack every call is fenced", func(t *testing.T) {
		s.Must(http.StatusOK, "POST", d+"/ack", map[string]any{"claim_token": c.ClaimToken, "status": "success"})
		run := s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs/"+c.Run.RunID, nil).Map(t)
		if run["status"] != "success" {
			t.Fatalf("run after ack: %s", js(run))
		}
		// The ack is idempotent; the fence holds for everything else.
		s.Must(http.StatusOK, "POST", d+"/ack", map[string]any{"claim_token": c.ClaimToken, "status": "success"})
		status(t, s, http.StatusConflict, "POST", d+"/heartbeat", map[string]any{"claim_token": c.ClaimToken}, "")
		status(t, s, http.StatusConflict, "POST", d+"/nack", map[string]any{"claim_token": c.ClaimToken, "error": "x"}, "")
	})
}

// Graph registration: the graph id, the language and the drawing are
// checked (422), a compiled-in graph cannot be shadowed (409), and a load
// error needs an id and a reason.
func TestGraphRegistrationChecks(t *testing.T) {
	s := external(t)
	drawable := map[string]any{
		"nodes": []any{map[string]any{"id": "__start__"}, map[string]any{"id": "talk"}, map[string]any{"id": "__end__"}},
		"edges": []any{map[string]any{"source": "__start__", "target": "talk"}, map[string]any{"source": "talk", "target": "__end__"}},
	}
	reg := func(over map[string]any) map[string]any {
		b := map[string]any{"graph_id": "g1", "worker_id": "w", "drawable": drawable}
		for k, v := range over {
			b[k] = v
		}
		return b
	}
	t.Run("invalid registrations", func(t *testing.T) {
		for _, c := range []struct {
			name string
			over map[string]any
			want int
			says string
		}{
			{"empty id", map[string]any{"graph_id": ""}, 422, "Invalid graph_id"},
			{"id starting with a dash", map[string]any{"graph_id": "-g"}, 422, "Invalid graph_id"},
			{"id too long", map[string]any{"graph_id": strings.Repeat("g", 129)}, 422, "Invalid graph_id"},
			{"uuid id", map[string]any{"graph_id": uuid.NewString()}, 422, "would read as an assistant id"},
			{"unknown language", map[string]any{"language": "ruby"}, 422, "language"},
			{"compiled-in graph", map[string]any{"graph_id": "foo_bar"}, 409, "WEFT_BUILTIN_GRAPHS=false"},
		} {
			t.Run(c.name, func(t *testing.T) {
				status(t, s, c.want, "POST", "/dispatch/graphs", reg(c.over), c.says)
			})
		}
		var found []map[string]any
		s.Must(http.StatusOK, "POST", "/assistants/search", map[string]any{"graph_id": "g1"}).JSON(t, &found)
		if len(found) != 0 {
			t.Fatalf("a refused registration left an assistant: %s", js(found))
		}
	})
	t.Run("valid registration", func(t *testing.T) {
		got := s.Must(http.StatusOK, "POST", "/dispatch/graphs", reg(map[string]any{"language": "python"})).Map(t)
		if got["graph_id"] != "g1" || js(got["nodes"]) != `["talk"]` {
			t.Fatalf("registration: %s", js(got))
		}
		aid, _ := got["assistant_id"].(string)
		a := s.Must(http.StatusOK, "GET", "/assistants/"+aid, nil).Map(t)
		if a["graph_id"] != "g1" {
			t.Fatalf("system assistant: %s", js(a))
		}
	})
	t.Run("load errors", func(t *testing.T) {
		status(t, s, http.StatusUnprocessableEntity, "POST", "/dispatch/graphs/errors", map[string]any{"graph_id": "-x", "error": "boom"}, "Invalid graph_id")
		status(t, s, http.StatusUnprocessableEntity, "POST", "/dispatch/graphs/errors", map[string]any{"graph_id": "g2", "error": " \n"}, "error must say why")
		s.Must(http.StatusNoContent, "POST", "/dispatch/graphs/errors", map[string]any{"graph_id": "g2", "worker_id": "w", "error": "ImportError: no module\ntrace"})
	})
}

// Checkpoint reads as stored: their checks (422), a thread without
// checkpoints (404, an empty list), and a committed checkpoint read back
// with its parent, metadata, blobs and pending writes.
func TestCheckpointReads(t *testing.T) {
	s := external(t)
	t.Run("invalid reads", func(t *testing.T) {
		status(t, s, http.StatusUnprocessableEntity, "POST", "/dispatch/checkpoints/get", map[string]any{}, "thread_id is required")
		status(t, s, http.StatusUnprocessableEntity, "POST", "/dispatch/checkpoints/get", map[string]any{"thread_id": "t", "checkpoint_id": strings.Repeat("c", 201)}, "Invalid checkpoint_id")
		status(t, s, http.StatusUnprocessableEntity, "POST", "/dispatch/checkpoints/list", map[string]any{"thread_id": "t", "limit": 1001}, "Invalid limit")
		status(t, s, http.StatusUnprocessableEntity, "POST", "/dispatch/checkpoints/delta-history", map[string]any{"thread_id": ""}, "thread_id is required")
		chans := make([]string, 101)
		for i := range chans {
			chans[i] = "c"
		}
		status(t, s, http.StatusUnprocessableEntity, "POST", "/dispatch/checkpoints/delta-history", map[string]any{"thread_id": "t", "channels": chans}, "Invalid channels")
	})

	tid, c := queueAndClaim(t, s)
	t.Run("a thread without checkpoints", func(t *testing.T) {
		status(t, s, http.StatusNotFound, "POST", "/dispatch/checkpoints/get", map[string]any{"thread_id": tid}, "No checkpoint")
		if got := s.Must(http.StatusOK, "POST", "/dispatch/checkpoints/list", map[string]any{"thread_id": tid}).Body; string(got) != "[]\n" && string(got) != "[]" {
			t.Fatalf("list of a thread without checkpoints: %s", got)
		}
	})

	v1, v2 := "00000000000000000000000000000001.0.5", "00000000000000000000000000000002.0.5"
	cp1 := map[string]any{"v": 4, "id": "1f000000-0000-6000-8000-000000000001", "ts": "2026-11-23T00:00:00Z",
		"channel_values": map[string]any{"foo": "a"}, "channel_versions": map[string]any{"foo": v1}, "versions_seen": map[string]any{}}
	cp2 := map[string]any{"v": 4, "id": "1f000000-0000-6000-8000-000000000002", "ts": "2026-11-23T00:00:01Z",
		"channel_values": map[string]any{"foo": "b"}, "channel_versions": map[string]any{"foo": v2}, "versions_seen": map[string]any{}}
	s.Must(http.StatusOK, "POST", "/dispatch/"+c.Dispatch.DispatchID+"/commit", map[string]any{"claim_token": c.ClaimToken, "commit_id": "c1",
		"checkpoints": []any{
			map[string]any{"parent_checkpoint_id": "", "checkpoint": cp1, "metadata": map[string]any{"source": "input", "step": -1}, "new_versions": map[string]any{"foo": v1}},
			map[string]any{"parent_checkpoint_id": cp1["id"], "checkpoint": cp2, "metadata": map[string]any{"source": "loop", "step": 0}, "new_versions": map[string]any{"foo": v2}},
		},
		"writes": []any{map[string]any{"checkpoint_id": cp2["id"], "writes": []any{map[string]any{"task_id": "t1", "channel": "foo", "value": "c", "idx": 0}}}},
	})

	type raw struct {
		Config             map[string]string `json:"config"`
		ParentCheckpointID *string           `json:"parent_checkpoint_id"`
		Metadata           map[string]any    `json:"metadata"`
		ChannelValues      [][]any           `json:"channel_values"`
		PendingWrites      [][]any           `json:"pending_writes"`
	}
	t.Run("get the latest and by id", func(t *testing.T) {
		var latest raw
		s.Must(http.StatusOK, "POST", "/dispatch/checkpoints/get", map[string]any{"thread_id": tid}).JSON(t, &latest)
		if latest.Config["checkpoint_id"] != cp2["id"] || latest.ParentCheckpointID == nil || *latest.ParentCheckpointID != cp1["id"] ||
			latest.Metadata["step"] != float64(0) || latest.Metadata["source"] != "loop" {
			t.Fatalf("latest: %s", js(latest))
		}
		if len(latest.ChannelValues) != 1 || latest.ChannelValues[0][0] != "foo" || latest.ChannelValues[0][1] != "json" ||
			latest.ChannelValues[0][2] != "ImIi" { // base64 of "b" as JSON
			t.Fatalf("latest's blobs: %s", js(latest.ChannelValues))
		}
		if len(latest.PendingWrites) != 1 || latest.PendingWrites[0][0] != "t1" || latest.PendingWrites[0][1] != "foo" {
			t.Fatalf("latest's pending writes: %s", js(latest.PendingWrites))
		}
		var first raw
		s.Must(http.StatusOK, "POST", "/dispatch/checkpoints/get", map[string]any{"thread_id": tid, "checkpoint_id": cp1["id"]}).JSON(t, &first)
		if first.Config["checkpoint_id"] != cp1["id"] || first.ParentCheckpointID != nil || len(first.PendingWrites) != 0 {
			t.Fatalf("first: %s", js(first))
		}
		status(t, s, http.StatusNotFound, "POST", "/dispatch/checkpoints/get", map[string]any{"thread_id": tid, "checkpoint_id": "1f000000-0000-6000-8000-000000000009"}, "No checkpoint")
	})
	t.Run("list newest first, before, limit", func(t *testing.T) {
		ids := func(body map[string]any) string {
			var got []raw
			s.Must(http.StatusOK, "POST", "/dispatch/checkpoints/list", body).JSON(t, &got)
			out := make([]string, len(got))
			for i, g := range got {
				out[i] = g.Config["checkpoint_id"]
			}
			return strings.Join(out, ",")
		}
		one, two := cp1["id"].(string), cp2["id"].(string)
		for _, c := range []struct {
			body map[string]any
			want string
		}{
			{map[string]any{"thread_id": tid}, two + "," + one},
			{map[string]any{"thread_id": tid, "limit": 1}, two},
			{map[string]any{"thread_id": tid, "before": two}, one},
			{map[string]any{"thread_id": tid, "filter": map[string]any{"source": "input"}}, one},
		} {
			if got := ids(c.body); got != c.want {
				t.Errorf("list %s = %s, want %s", js(c.body), got, c.want)
			}
		}
	})
}
