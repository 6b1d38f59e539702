package isolation_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
	"github.com/weftdev/weft/internal/store"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// start runs a server whose requests act for the tenant of their
// servertest.TenantHeader.
func start(t *testing.T, edit func(*server.Config)) *servertest.Server {
	t.Helper()
	return servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) {
		servertest.TestTenants(c)
		// Kept stateless threads stay put for the whole walk.
		c.TempRetention = time.Hour
		if edit != nil {
			edit(c)
		}
	})
}

// TestTenantIsolation is the adversarial suite (see doc.go): tenant A
// owns a full set of resources, tenant B walks every operation of the
// spec with A's ids, forged ids and A's filters, and A's view is the same
// afterwards.
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	srv := start(t, nil)
	a, b := newTenant(t, srv, "a"), newTenant(t, srv, "b")
	x := seedA(t, a)
	bThread := seedB(t, b)
	before := snapshot(t, a, x)

	rep := &reporter{t: t}
	walkAll(t, &walker{rep: rep, b: b, a: x, f: forged(), bThread: bThread})

	if after := snapshot(t, a, x); after != before {
		rep.leak("tenant B's walk changed what tenant A sees:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// B's view: its own thread and its own store item, nothing of A's.
	b.must(http.StatusOK, "GET", "/threads/"+bThread, nil)
	var mine []map[string]any
	b.must(http.StatusOK, "POST", "/threads/search", map[string]any{"metadata": map[string]any{"owner": "b"}, "limit": 1000}).JSON(t, &mine)
	if len(mine) < 1 {
		t.Errorf("B's search of its own threads found %d", len(mine))
	}
	// The default tenant (no header) sees neither A's nor B's threads.
	var none []map[string]any
	r := srv.Must(http.StatusOK, "POST", "/threads/search", map[string]any{"limit": 1000})
	if r.JSON(t, &none); len(none) != 0 {
		rep.leak("the default tenant sees %d threads of tenants a and b: %.300s", len(none), r.Body)
	}
	if len(rep.leaks) > 0 {
		t.Logf("%d leaks", len(rep.leaks))
	}
}

// TestSuiteCatchesMutant proves the suite can fail: built with the
// weft_tenant_mutant tag, the server reads a thread by id without its
// tenant predicate (internal/threads/tenant_mutant.go), and the suite must
// report the leak.
func TestSuiteCatchesMutant(t *testing.T) {
	if os.Getenv("WEFT_ISOLATION_MUTANT") != "" {
		t.Skip("this is the mutant run itself")
	}
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the mutant is built with the go command: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "test", "-tags", "weft_tenant_mutant", "-count=1",
		"-run", "^TestTenantIsolation$", ".")
	cmd.Env = append(os.Environ(), "WEFT_ISOLATION_MUTANT=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	text := out.String()
	if err == nil {
		t.Fatalf("the suite passed against a server without the thread read's tenant predicate:\n%s", text)
	}
	if _, isExit := err.(*exec.ExitError); !isExit || !strings.Contains(text, "LEAK:") || !strings.Contains(text, "GET /threads/") {
		t.Fatalf("the mutant run failed, but not by reporting the leak (%v):\n%s", err, text)
	}
}

// TestWorkerStoreActsForRunTenant: a worker serves every tenant; the store
// requests of a run it executes (sent with the dispatch id and claim
// token, as the JS worker's WeftStore does) read and write the run's
// tenant's store, whatever the worker's own tenant.
func TestWorkerStoreActsForRunTenant(t *testing.T) {
	t.Parallel()
	srv := start(t, func(c *server.Config) { c.Workers = 0 }) // external workers only
	a, b := newTenant(t, srv, "a"), newTenant(t, srv, "b")
	workerTenant := newTenant(t, srv, "workers")
	workerTenant.scopes = "worker" // a worker's credential: the worker API only
	th := id(t, a.must(http.StatusOK, "POST", "/threads", nil), "thread_id")
	a.must(http.StatusOK, "POST", "/threads/"+th+"/runs", map[string]any{"assistant_id": "foo_bar", "input": map[string]any{}})
	var claimed []struct {
		Dispatch struct {
			DispatchID string `json:"dispatch_id"`
		} `json:"dispatch"`
		ClaimToken string `json:"claim_token"`
	}
	workerTenant.must(http.StatusOK, "POST", "/dispatch/claim", map[string]any{"worker_id": "w1", "limit": 1}).JSON(t, &claimed)
	if len(claimed) != 1 {
		t.Fatalf("claimed %d dispatches", len(claimed))
	}
	hdr := map[string]string{store.HeaderDispatchID: claimed[0].Dispatch.DispatchID, store.HeaderClaimToken: claimed[0].ClaimToken}
	r, err := workerTenant.try("PUT", "/store/items", map[string]any{"namespace": []string{"mem"}, "key": "k",
		"value": map[string]any{"by": "run"}}, hdr)
	if err != nil || r.Status != http.StatusNoContent {
		t.Fatalf("the run's put: %v %+v", err, r)
	}
	if got := string(a.must(http.StatusOK, "GET", storeQuery([]string{"mem"}, "k"), nil).Body); !strings.Contains(got, `"run"`) {
		t.Errorf("the run's tenant does not see the item its run put: %s", got)
	}
	for _, c := range []*tenant{b, newTenant(t, srv, "workers")} {
		if got := strings.TrimSpace(string(c.must(http.StatusOK, "GET", storeQuery([]string{"mem"}, "k"), nil).Body)); got != "null" {
			t.Errorf("tenant %q sees the item of tenant a's run: %s", c.name, got)
		}
	}
	// Without a run's headers, a worker's credential has no store.
	workerTenant.must(http.StatusForbidden, "GET", storeQuery([]string{"mem"}, "k"), nil)
	if r, err := workerTenant.try("GET", storeQuery([]string{"mem"}, "k"), nil, hdr); err != nil || !strings.Contains(string(r.Body), `"run"`) {
		t.Errorf("the run's own read: %v %+v", err, r)
	}
	// A stale or forged token is refused and reads nothing.
	bad := map[string]string{store.HeaderDispatchID: claimed[0].Dispatch.DispatchID, store.HeaderClaimToken: "00000000-0000-4000-8000-000000000000"}
	if r, err := workerTenant.try("GET", storeQuery([]string{"mem"}, "k"), nil, bad); err != nil || r.Status != http.StatusConflict {
		t.Errorf("a forged claim token: %v %+v", err, r)
	}
	if r, err := workerTenant.try("GET", storeQuery([]string{"mem"}, "k"), nil, map[string]string{store.HeaderDispatchID: "x"}); err != nil || r.Status != http.StatusUnprocessableEntity {
		t.Errorf("a malformed dispatch id: %v %+v", err, r)
	}
}

// TestCronFiresInItsTenant: the scheduler serves every tenant; a cron's
// run and its new thread are its tenant's.
func TestCronFiresInItsTenant(t *testing.T) {
	t.Parallel()
	var offset atomic.Int64
	srv := start(t, func(c *server.Config) {
		c.CronInterval = 20 * time.Millisecond
		c.CronClock = func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	})
	a, b := newTenant(t, srv, "a"), newTenant(t, srv, "b")
	cron := id(t, a.must(http.StatusOK, "POST", "/runs/crons", map[string]any{"assistant_id": "foo_bar",
		"schedule": "* * * * *", "on_run_completed": "keep", "input": map[string]any{}}), "cron_id")
	offset.Store(int64(2 * time.Minute))
	filter := map[string]any{"metadata": map[string]any{"cron_id": cron}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var got []map[string]any
		a.must(http.StatusOK, "POST", "/threads/search", filter).JSON(t, &got)
		if len(got) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cron did not fire in its tenant")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, c := range []*tenant{b, newTenant(t, srv, "")} {
		if got := strings.TrimSpace(string(c.must(http.StatusOK, "POST", "/threads/search", filter).Body)); got != "[]" {
			t.Errorf("tenant %q sees the thread of tenant a's cron: %s", c.name, got)
		}
	}
}
