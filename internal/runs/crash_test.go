package runs_test

import (
	"context"
	"testing"

	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server/servertest"
)

// client returns a servertest client for a server process.
func client(t *testing.T, dsn string, p *servertest.Process) *servertest.Server {
	pool, err := postgres.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return servertest.Client(t, p.URL, pool)
}

// A client joins, through a second server process, a run that executes in
// the first: every event, in order, live.
func TestStreamJoinAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs server processes")
	}
	t.Parallel()
	dsn := pgtest.DSN(t)
	a := client(t, dsn, servertest.StartProcess(t, dsn, "A"))
	b := client(t, dsn, servertest.StartProcess(t, dsn, "B", "WEFT_WORKERS=0"))
	tid := newThread(t, a)
	run := create(t, a, tid, map[string]any{"assistant_id": "slow", "input": map[string]any{"ms": 300, "tag": "p"},
		"stream_mode": []string{"values", "updates"}})
	st := openStream(t, b, "GET", "/threads/"+tid+"/runs/"+run["run_id"].(string)+"/stream", nil, map[string]string{"Last-Event-ID": "-1"})
	var got []string
	for {
		e, ok := st.next()
		if !ok {
			break
		}
		got = append(got, e.ID+" "+e.Event)
	}
	wantJSON(t, "joined on B", got, `["0 metadata","1 values","2 updates","3 values","4 updates","5 values"]`)
}
