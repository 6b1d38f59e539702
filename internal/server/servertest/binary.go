package servertest

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Binary builds the server command (cmd/server) once per test binary and
// returns its path, for tests that run the server as its own process
// (crashes, signals, several processes on one database).
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "weft-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "weft")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/weftdev/weft/cmd/server").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// FreeAddr returns a loopback address with a port that was free a moment
// ago.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Process is the server binary running as its own process, for tests
// that kill it or run several servers on one database.
type Process struct {
	// URL is the server's base URL; Log the file its output goes to.
	URL, Log string
	cmd      *exec.Cmd
	exited   chan struct{}
}

// StartProcess starts the server binary on database dsn, as worker id
// name, with env added to its environment, and waits until it answers
// /ok. At the end of the test it is stopped (SIGTERM, SIGKILL after 10 s)
// and, if the test failed, the end of its log is shown. It never outlives
// the test process.
func StartProcess(t testing.TB, dsn, name string, env ...string) *Process {
	t.Helper()
	addr := FreeAddr(t)
	p := &Process{URL: "http://" + addr, Log: filepath.Join(t.TempDir(), name+".log"), exited: make(chan struct{})}
	logf, err := os.Create(p.Log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(Binary(t))
	p.cmd.Env = append(os.Environ(), "DATABASE_URL="+dsn, "WEFT_ADDR="+addr, "WEFT_WORKER_ID="+name, "WEFT_LOG_LEVEL=warn")
	p.cmd.Env = append(p.cmd.Env, env...)
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.exited:
			case <-time.After(10 * time.Second):
				p.Kill()
			}
		}
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(p.Log)
			t.Logf("%s log (last 4 KiB):\n%s", name, b[max(0, len(b)-4096):])
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		r, err := http.Get(p.URL + "/ok")
		if err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(p.Log)
			t.Fatalf("server %s did not come up: %v\n%s", name, err, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Kill sends SIGKILL (no shutdown, no nack) and waits until the process
// has exited.
func (p *Process) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}
