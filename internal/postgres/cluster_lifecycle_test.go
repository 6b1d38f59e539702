package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a log sink safe for the supervisor's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// clusterDir is a data dir the PostgreSQL user can reach (when the tests
// run as root) that is removed, with any postmaster this test left
// running on it stopped by PID, when t ends.
func clusterDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "weft-cl-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	t.Cleanup(func() {
		stopPostmasterByPID(t, filepath.Join(data, "pgdata"))
		_ = os.RemoveAll(dir)
	})
	return data
}

// stopPostmasterByPID stops (SIGQUIT: immediate shutdown, which also ends
// its backends) a postmaster still running on pgdata, and waits for it.
func stopPostmasterByPID(t *testing.T, pgdata string) {
	b, err := os.ReadFile(filepath.Join(pgdata, "postmaster.pid"))
	if err != nil {
		return
	}
	var pid int
	if _, err := fmt.Sscan(string(b), &pid); err != nil || !ProcessAlive(pid) {
		return
	}
	t.Logf("stopping postmaster %d left running on %s", pid, pgdata)
	_ = syscall.Kill(pid, syscall.SIGQUIT)
	for deadline := time.Now().Add(10 * time.Second); ProcessAlive(pid) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
}

// gone waits (briefly: pg_ctl stop returns once postmaster.pid is removed,
// a moment before the process exits) for pid to exit.
func gone(pid int) bool {
	for deadline := time.Now().Add(10 * time.Second); ProcessAlive(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

func newTestCluster(t *testing.T, dir string, log *syncBuffer) *Cluster {
	t.Helper()
	c, err := NewCluster(dir, slog.New(slog.NewTextHandler(log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func startCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func ping(ctx context.Context, c *Cluster) error {
	pool, err := Connect(ctx, c.DSN("postgres"))
	if err != nil {
		return err
	}
	defer pool.Close()
	return pool.Ping(ctx)
}

// A second user of a data directory is refused with a message naming the
// directory and the holder's pid; once the first stops, the directory is
// free again.
func TestClusterLockRefusesSecondUser(t *testing.T) {
	t.Parallel()
	dir := clusterDir(t)
	var log1, log2 syncBuffer
	c1 := newTestCluster(t, dir, &log1)
	if err := c1.Start(startCtx(t)); err != nil {
		t.Fatal(err)
	}
	pid := c1.PostmasterPID()

	c2 := newTestCluster(t, dir, &log2)
	err := c2.Start(startCtx(t))
	want := fmt.Sprintf("data directory %s is in use by another Weft server (pid %d)", dir, os.Getpid())
	if !errors.Is(err, ErrDataDirInUse) || !strings.Contains(err.Error(), want) {
		t.Fatalf("second Start = %v; want ErrDataDirInUse with %q", err, want)
	}
	if err := c2.Stop(); err != nil { // nothing to stop; must not touch c1's postmaster
		t.Fatal(err)
	}
	if got := c1.PostmasterPID(); got != pid || ping(startCtx(t), c1) != nil {
		t.Fatalf("first cluster disturbed by the refused second: pid %d → %d", pid, got)
	}

	if err := c1.Stop(); err != nil {
		t.Fatal(err)
	}
	if !gone(pid) {
		t.Fatal("postmaster still running after Stop")
	}
	if err := c2.Start(startCtx(t)); err != nil {
		t.Fatalf("Start after the holder stopped: %v", err)
	}
	if err := c2.Stop(); err != nil {
		t.Fatal(err)
	}
}

// A postmaster left running by a process that died (its lock released by
// the kernel, simulated by closing the lock file) is adopted: Stop stops
// it.
func TestClusterAdoptsPostmasterLeftByCrashedProcess(t *testing.T) {
	t.Parallel()
	dir := clusterDir(t)
	var log1, log2 syncBuffer
	c1 := newTestCluster(t, dir, &log1)
	if err := c1.Start(startCtx(t)); err != nil {
		t.Fatal(err)
	}
	pid := c1.PostmasterPID()
	c1.releaseLock() // the "crash": the lock goes, the postmaster stays

	c2 := newTestCluster(t, dir, &log2)
	if err := c2.Start(startCtx(t)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log2.String(), "adopting running local PostgreSQL cluster") || c2.PostmasterPID() != pid {
		t.Fatalf("not adopted (pid %d, now %d):\n%s", pid, c2.PostmasterPID(), log2.String())
	}
	if err := ping(startCtx(t), c2); err != nil {
		t.Fatal(err)
	}
	if err := c2.Stop(); err != nil {
		t.Fatal(err)
	}
	if !gone(pid) || !strings.Contains(log2.String(), "local PostgreSQL stopped") {
		t.Fatalf("adopted postmaster not stopped:\n%s", log2.String())
	}
}

// kill -9 of the postmaster: the supervisor notices, restarts it (logging
// the outage and the restart) and the cluster answers again.
func TestSuperviseRestartsKilledPostmaster(t *testing.T) {
	t.Parallel()
	dir := clusterDir(t)
	var log syncBuffer
	c := newTestCluster(t, dir, &log)
	if err := c.Start(startCtx(t)); err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	failed := c.Supervise(SuperviseConfig{Interval: 50 * time.Millisecond, Backoff: 200 * time.Millisecond,
		MaxRestarts: 20}) // both kills count: the second comes before StableAfter)
	for round := 1; round <= 2; round++ {
		old := c.PostmasterPID()
		if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(60 * time.Second)
		for {
			if pid := c.PostmasterPID(); pid != 0 && pid != old && ping(startCtx(t), c) == nil &&
				strings.Count(log.String(), "local PostgreSQL restarted") == round {
				break
			}
			select {
			case err := <-failed:
				t.Fatalf("supervisor gave up: %v\n%s", err, log.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: postmaster not restarted\n%s", round, log.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	out := log.String()
	if strings.Count(out, "postmaster is gone; restarting it") != 2 || strings.Count(out, "local PostgreSQL restarted") != 2 {
		t.Fatalf("restarts not logged:\n%s", out)
	}
	pid := c.PostmasterPID()
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if !gone(pid) {
		t.Fatal("restarted postmaster still running after Stop")
	}
	if _, ok := <-failed; ok {
		t.Fatal("supervisor reported a failure")
	}
}

// A postmaster that cannot be restarted: the supervisor tries
// MaxRestarts times, logs each failure, then reports the error and stops.
func TestSuperviseGivesUpAfterBoundedRetries(t *testing.T) {
	t.Parallel()
	dir := clusterDir(t)
	var log syncBuffer
	c := newTestCluster(t, dir, &log)
	if err := c.Start(startCtx(t)); err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	pid := c.PostmasterPID()
	// Break the configuration so that every restart fails.
	conf := filepath.Join(c.pgdata(), "postgresql.auto.conf")
	if err := os.WriteFile(conf, []byte("this is not a setting\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	failed := c.Supervise(SuperviseConfig{Interval: 50 * time.Millisecond, MaxRestarts: 3, Backoff: 50 * time.Millisecond})
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-failed:
		if err == nil || !strings.Contains(err.Error(), "gave up after 3 restart attempts") {
			t.Fatalf("failure = %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("supervisor never gave up\n%s", log.String())
	}
	out := log.String()
	if strings.Count(out, "restarting local PostgreSQL failed") != 3 || !strings.Contains(out, "giving up restarting local PostgreSQL") {
		t.Fatalf("attempts not logged:\n%s", out)
	}
	if err := c.Stop(); err != nil {
		t.Fatalf("Stop with the postmaster gone: %v", err)
	}
}
