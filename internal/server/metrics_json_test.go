package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/metrics"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

// GET /metrics?format=json answers the JSON snapshot LangGraph's server
// answers there, with Weft's numbers: the database pool, the run queue
// (pending, running, how long the pending ones wait, and the unblocked ones:
// whose thread runs nothing), this process's in-process workers (the
// dispatches claimed under its worker id) and the HTTP requests by route
// template (/metrics and /ok left out, as there). Another format is a 422;
// none is the Prometheus text.
func TestMetricsJSON(t *testing.T) {
	t.Parallel()
	s := servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) { c.WorkerID = "weft-json-test" })
	snapshot := func() metrics.Snapshot {
		t.Helper()
		r := s.Must(http.StatusOK, "GET", "/metrics?format=json", nil)
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Fatalf("Content-Type %q", ct)
		}
		var snap metrics.Snapshot
		r.JSON(t, &snap)
		if snap.Postgres == nil || snap.Queue == nil || snap.Workers == nil {
			t.Fatalf("snapshot without postgres, queue or workers: %s", r.Body)
		}
		return snap
	}

	s.Must(http.StatusOK, "POST", "/dispatch/graphs", extGraph)
	tid := s.Must(http.StatusOK, "POST", "/threads", map[string]any{}).Map(t)["thread_id"].(string)
	s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "ext_echo", "input": map[string]any{"n": 1}})
	s.Must(http.StatusOK, "GET", "/ok", nil)

	snap := snapshot()
	q := snap.Queue
	if q.NPending != 1 || q.NRunning != 0 || q.PendingRunsWaitTimeMaxSecs == nil || q.PendingRunsWaitTimeMedSecs == nil ||
		q.PendingUnblockedRunsWaitTimeMax == nil || *q.PendingRunsWaitTimeMaxSecs < 0 {
		t.Errorf("one pending run: queue %+v", q)
	}
	if w := snap.Workers; w.Max != 2 || w.Active != 0 || w.Available != 2 {
		t.Errorf("idle workers: %+v", w)
	}
	if p := snap.Postgres; p.PoolMax <= 0 || p.PoolSize < 1 || p.PoolAvailable > p.PoolSize {
		t.Errorf("pool %+v", p)
	}
	counted := map[string]int64{}
	for _, c := range snap.API.HTTPRequestsTotal {
		counted[c.Method+" "+c.Path+" "+http.StatusText(c.Status)] = c.Count
	}
	if counted["POST /threads OK"] != 1 || counted["POST /threads/{thread_id}/runs OK"] != 1 {
		t.Errorf("http requests %v", counted)
	}
	for k := range counted {
		if strings.Contains(k, " /metrics ") || strings.Contains(k, " /ok ") {
			t.Errorf("%s counted: /metrics and /ok are left out", k)
		}
	}

	// Claimed under this process's worker id: a running run, an active
	// worker; a second run of the thread waits behind it (blocked).
	s.Must(http.StatusOK, "POST", "/dispatch/claim", map[string]any{"worker_id": "weft-json-test", "graph_ids": []string{"ext_echo"}, "wait_ms": 5000})
	s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "ext_echo", "input": map[string]any{"n": 2},
		"multitask_strategy": "enqueue"})
	snap = snapshot()
	q = snap.Queue
	if q.NPending != 1 || q.NRunning != 1 || q.PendingRunsWaitTimeMaxSecs == nil || q.PendingUnblockedRunsWaitTimeMax != nil {
		t.Errorf("a running run and one blocked behind it: queue %+v", q)
	}
	if w := snap.Workers; w.Max != 2 || w.Active != 1 || w.Available != 1 {
		t.Errorf("one claim: workers %+v", w)
	}

	for _, q := range []string{"?format=xml", "?format=", "?format=JSON"} {
		s.Must(http.StatusUnprocessableEntity, "GET", "/metrics"+q, nil)
	}
	for _, q := range []string{"", "?format=prometheus"} {
		if r := s.Must(http.StatusOK, "GET", "/metrics"+q, nil); !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
			t.Errorf("/metrics%s: %s", q, r.Header.Get("Content-Type"))
		}
	}
}
