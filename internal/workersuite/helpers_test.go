package workersuite_test

import (
	"encoding/json"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/builtin"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// start runs a server with the built-in graphs and two in-process workers.
func start(t *testing.T) *servertest.Server {
	return startWith(t, nil)
}

func startWith(t *testing.T, edit func(*server.Config)) *servertest.Server {
	t.Helper()
	t.Parallel()
	return servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) {
		c.Graphs = builtin.Graphs()
		if edit != nil {
			edit(c)
		}
	})
}

func newThread(t *testing.T, s *servertest.Server) string {
	t.Helper()
	return s.Must(http.StatusOK, "POST", "/threads", map[string]any{}).Map(t)["thread_id"].(string)
}

// wait creates a run with runs/wait and returns the result document.
func wait(t *testing.T, s *servertest.Server, tid string, body map[string]any) map[string]any {
	t.Helper()
	return s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs/wait", body).Map(t)
}

// create creates a run (POST /threads/{tid}/runs) and returns it.
func create(t *testing.T, s *servertest.Server, tid string, body map[string]any) map[string]any {
	t.Helper()
	return s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs", body).Map(t)
}

// runStatus polls until the run has status want (within 20 s).
func runStatus(t *testing.T, s *servertest.Server, tid, rid string, want ...string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := s.Do("GET", "/threads/"+tid+"/runs/"+rid, nil)
		if r.Status == http.StatusOK {
			run := r.Map(t)
			for _, w := range want {
				if run["status"] == w {
					return run
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %s: status %v, want %v", rid, run["status"], want)
			}
		} else if time.Now().After(deadline) {
			t.Fatalf("run %s: GET %d %s", rid, r.Status, r.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The reads and checks every suite of runs shares (servertest).
var (
	thread   = servertest.Thread
	state    = servertest.State
	history  = servertest.History
	js       = servertest.JS
	wantJSON = servertest.WantJSON
	dbCount  = servertest.DBCount
)

// slowBody is a run of the slow graph: each node sleeps ms and logs tag.
func slowBody(tag string, ms int, strategy string) map[string]any {
	b := map[string]any{"assistant_id": "slow", "input": map[string]any{"tag": tag, "ms": ms}}
	if strategy != "" {
		b["multitask_strategy"] = strategy
	}
	return b
}

// mustKwargs reads the kwargs of run as GET of the run shows them.
func mustKwargs(t *testing.T, s *servertest.Server, tid string, run map[string]any) map[string]any {
	t.Helper()
	var out struct {
		Kwargs map[string]any `json:"kwargs"`
	}
	if err := json.Unmarshal(s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs/"+run["run_id"].(string), nil).Body, &out); err != nil {
		t.Fatal(err)
	}
	return out.Kwargs
}
