package main_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/server/servertest"
)

// weftProc is a server process on a managed cluster.
type weftProc struct {
	cmd    *exec.Cmd
	url    string
	log    *syncBuf
	exited chan struct{}
	err    error // set when exited is closed
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// launch starts the binary on dataDir (loopback, a free port). The process
// gets SIGKILL if the test process dies, and SIGTERM (then SIGKILL) when
// the test ends if it is still running.
func launch(t *testing.T, name, dataDir string) *weftProc {
	t.Helper()
	addr := servertest.FreeAddr(t)
	p := &weftProc{url: "http://" + addr, log: &syncBuf{}, exited: make(chan struct{})}
	p.cmd = exec.Command(servertest.Binary(t))
	p.cmd.Env = append(os.Environ(), "WEFT_ADDR="+addr, "WEFT_DATA_DIR="+dataDir, "DATABASE_URL=",
		"WEFT_LOG_FORMAT=json", "WEFT_WORKERS=1")
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the test
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.exited:
			case <-time.After(30 * time.Second):
				_ = p.cmd.Process.Kill()
				<-p.exited
			}
		}
		if t.Failed() {
			t.Logf("%s (pid %d) log:\n%s", name, p.cmd.Process.Pid, p.log.String())
		}
	})
	return p
}

// waitServing waits until p creates a thread (so its database is up) and
// returns the thread's id.
func (p *weftProc) waitServing(t *testing.T, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		resp, err := http.Post(p.url+"/threads", "application/json", nil)
		if err == nil {
			var th struct {
				ThreadID string `json:"thread_id"`
			}
			derr := json.NewDecoder(resp.Body).Decode(&th)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && derr == nil && th.ThreadID != "" {
				return th.ThreadID
			}
		}
		select {
		case <-p.exited:
			t.Fatalf("server exited (%v) before serving\n%s", p.err, p.log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not serving after %s (last error %v)\n%s", within, err, p.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (p *weftProc) waitExit(t *testing.T, within time.Duration) error {
	t.Helper()
	select {
	case <-p.exited:
		return p.err
	case <-time.After(within):
		t.Fatalf("server did not exit within %s\n%s", within, p.log.String())
		return nil
	}
}

func getStatus(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// postmasterPID reads the PID in pgdata/postmaster.pid (0 when absent).
func postmasterPID(pgdata string) int {
	b, err := os.ReadFile(filepath.Join(pgdata, "postmaster.pid"))
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(line))
	return pid
}

func waitDead(pid int, within time.Duration) bool {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if !postgres.ProcessAlive(pid) {
			return true
		}
	}
	return !postgres.ProcessAlive(pid)
}

// The managed cluster's faults, through the real binary on one data
// directory: a second server on it is refused with a clear message; kill -9
// of the postmaster is repaired by the server, which serves again; after
// kill -9 of the server, the next one adopts the running cluster and stops
// it on SIGTERM, leaving no PostgreSQL behind.
func TestManagedClusterFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs server processes")
	}
	t.Parallel()
	dir, err := os.MkdirTemp("", "weft-faults-")
	if err != nil {
		t.Fatal(err)
	}
	// Let the PostgreSQL user reach the data dir inside (as root the server
	// would otherwise place the cluster under /var/lib/weft).
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	pgdata := filepath.Join(data, "pgdata")
	// Registered first, so it runs last: stop (by PID) a postmaster a
	// failed step left running, then remove the directory.
	t.Cleanup(func() {
		if pid := postmasterPID(pgdata); postgres.ProcessAlive(pid) {
			t.Logf("stopping postmaster %d left running", pid)
			_ = syscall.Kill(pid, syscall.SIGQUIT)
			waitDead(pid, 10*time.Second)
		}
		_ = os.RemoveAll(dir)
	})

	a := launch(t, "A", data)
	before := a.waitServing(t, 90*time.Second)

	t.Run("second server on the same data directory is refused", func(t *testing.T) {
		b := launch(t, "B", data)
		err := b.waitExit(t, 30*time.Second)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("second server: exit %v; want status 1\n%s", err, b.log.String())
		}
		want := fmt.Sprintf("data directory %s is in use by another Weft server (pid %d)", data, a.cmd.Process.Pid)
		if !strings.Contains(b.log.String(), want) {
			t.Fatalf("second server's output lacks %q:\n%s", want, b.log.String())
		}
		if code := getStatus(t, a.url+"/threads/"+before); code != http.StatusOK {
			t.Fatalf("first server after the refused second: GET thread = %d", code)
		}
	})

	t.Run("kill -9 of the postmaster: restarted, serving again", func(t *testing.T) {
		old := postmasterPID(pgdata)
		if !postgres.ProcessAlive(old) {
			t.Fatalf("no live postmaster (pid %d)", old)
		}
		if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if pid := postmasterPID(pgdata); pid != old && postgres.ProcessAlive(pid) &&
				strings.Contains(a.log.String(), "local PostgreSQL restarted") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("postmaster not restarted (pid %d → %d)\n%s", old, postmasterPID(pgdata), a.log.String())
			}
		}
		a.waitServing(t, 60*time.Second)
		if code := getStatus(t, a.url+"/threads/"+before); code != http.StatusOK {
			t.Fatalf("thread written before the kill: GET = %d", code)
		}
		if !strings.Contains(a.log.String(), "postmaster is gone; restarting it") {
			t.Errorf("outage not logged")
		}
	})

	t.Run("crash of the server: the next one adopts the cluster and stops it", func(t *testing.T) {
		pm := postmasterPID(pgdata)
		if err := a.cmd.Process.Kill(); err != nil { // SIGKILL: no shutdown
			t.Fatal(err)
		}
		a.waitExit(t, 10*time.Second)
		if !postgres.ProcessAlive(pm) {
			t.Fatalf("postmaster %d died with the server; nothing to adopt", pm)
		}
		c := launch(t, "C", data)
		c.waitServing(t, 60*time.Second)
		if got := postmasterPID(pgdata); got != pm {
			t.Fatalf("postmaster %d replaced by %d; want it adopted", pm, got)
		}
		if !strings.Contains(c.log.String(), "adopting running local PostgreSQL cluster") {
			t.Fatalf("adoption not logged:\n%s", c.log.String())
		}
		if code := getStatus(t, c.url+"/threads/"+before); code != http.StatusOK {
			t.Fatalf("thread written before the crash: GET = %d", code)
		}
		if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := c.waitExit(t, 60*time.Second); err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, c.log.String())
		}
		if !waitDead(pm, 10*time.Second) {
			t.Fatalf("adopted postmaster %d still running after the server stopped\n%s", pm, c.log.String())
		}
		if _, err := os.Stat(filepath.Join(pgdata, "postmaster.pid")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("postmaster.pid left behind: %v", err)
		}
		if !strings.Contains(c.log.String(), "local PostgreSQL stopped") {
			t.Fatalf("stop not logged:\n%s", c.log.String())
		}
	})
}
