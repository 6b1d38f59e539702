package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// kind is what a soak process is.
type kind string

const (
	kindServer   kind = "server"    // the weft binary, built-in graphs run by its in-process workers
	kindGoWorker kind = "go-worker" // this binary with -role goworker (weft.RunWorker, count_go)
	kindJSWorker kind = "js-worker" // node worker-js/bin/weft-worker.mjs (count_js)
)

// proc is one supervised process: started, restarted after it exits (at
// once after a kill by the chaos loop's chosen delay, after a second when
// it exited on its own), each start an incarnation with its own worker id.
type proc struct {
	name   string
	kind   kind
	addr   string // servers: the loopback address it listens on (the same every incarnation)
	server string // workers: the server URL they talk to

	mu           sync.Mutex
	cmd          *exec.Cmd
	gen          int           // incarnations started
	running      bool          // cmd has started and not been waited for
	killed       bool          // the running incarnation is being killed by the chaos loop
	restartAfter time.Duration // delay before the next start after a kill
	up           bool
}

// workerID names the current incarnation (as dispatch audits show it).
func (p *proc) workerID() string { return fmt.Sprintf("%s.%d", p.name, p.gen) }

func (p *proc) url() string { return "http://" + p.addr }

// fleet runs the soak's processes on one database.
type fleet struct {
	cfg      config
	dsn      string
	weftBin  string
	selfBin  string
	procs    []*proc
	timeline *timeline

	stopping chan struct{}
	wg       sync.WaitGroup
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// newFleet lays out three servers, a Go worker on the first server and two
// JS workers on the second and third.
func newFleet(cfg config, dsn, weftBin, selfBin string, tl *timeline) (*fleet, error) {
	f := &fleet{cfg: cfg, dsn: dsn, weftBin: weftBin, selfBin: selfBin, timeline: tl, stopping: make(chan struct{})}
	var servers []*proc
	for i := 1; i <= 3; i++ {
		addr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		servers = append(servers, &proc{name: fmt.Sprintf("s%d", i), kind: kindServer, addr: addr})
	}
	f.procs = append(f.procs, servers...)
	f.procs = append(f.procs,
		&proc{name: "go1", kind: kindGoWorker, server: servers[0].url()},
		&proc{name: "js1", kind: kindJSWorker, server: servers[1].url()},
		&proc{name: "js2", kind: kindJSWorker, server: servers[2].url()})
	for _, d := range []string{"logs", "exec"} {
		if err := os.MkdirAll(filepath.Join(cfg.out, d), 0o755); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func (f *fleet) servers() []*proc {
	var out []*proc
	for _, p := range f.procs {
		if p.kind == kindServer {
			out = append(out, p)
		}
	}
	return out
}

// command builds the next incarnation's command.
func (f *fleet) command(p *proc) (*exec.Cmd, *os.File, error) {
	logf, err := os.OpenFile(filepath.Join(f.cfg.out, "logs", p.name+".log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(logf, "==== %s incarnation %s at %s\n", p.name, p.workerID(), time.Now().Format(time.RFC3339Nano))
	execLog := filepath.Join(f.cfg.out, "exec", p.workerID()+".jsonl")
	var cmd *exec.Cmd
	switch p.kind {
	case kindServer:
		cmd = exec.Command(f.weftBin)
		cmd.Env = append(os.Environ(), "DATABASE_URL="+f.dsn, "WEFT_ADDR="+p.addr, "WEFT_WORKER_ID="+p.workerID(),
			"WEFT_LOG_LEVEL=warn", "WEFT_LEASE="+f.cfg.lease.String(), "WEFT_MAX_ATTEMPTS=10", "WEFT_WORKERS=4",
			"WEFT_SHUTDOWN_TIMEOUT=5s")
	case kindGoWorker:
		cmd = exec.Command(f.selfBin, "-role", "goworker", "-url", p.server, "-worker-id", p.workerID(), "-exec-log", execLog)
	case kindJSWorker:
		repo := f.cfg.repo
		cmd = exec.Command("node", filepath.Join(repo, "worker-js/bin/weft-worker.mjs"),
			"--config", filepath.Join(repo, "worker-js/test/fixtures/soak/langgraph.json"),
			"--url", p.server, "--worker-id", p.workerID(), "--concurrency", "8", "--grace-ms", "0",
			"--wait-ms", "5000", "--log-level", "warn")
		cmd.Env = append(os.Environ(), "WEFT_SOAK_EXEC_LOG="+execLog, "WEFT_SOAK_WORKER="+p.workerID())
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	// Never outlive the soak, even when it is killed itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd, logf, nil
}

// start starts every process and supervises it until stop.
func (f *fleet) start() {
	for _, p := range f.procs {
		f.wg.Add(1)
		go f.supervise(p)
		if p.kind == kindServer && p.name == "s1" {
			// The first server migrates the database before the others start.
			f.waitUp(p, 60*time.Second)
		}
	}
}

// supervise runs p's incarnations one after another until the fleet stops.
func (f *fleet) supervise(p *proc) {
	defer f.wg.Done()
	for {
		select {
		case <-f.stopping:
			return
		default:
		}
		p.mu.Lock()
		p.gen++
		p.killed = false
		cmd, logf, err := f.command(p)
		if err == nil {
			err = cmd.Start()
		}
		if err != nil {
			p.mu.Unlock()
			f.timeline.add(eventExit, p.name, fmt.Sprintf("cannot start: %v", err))
			if logf != nil {
				logf.Close()
			}
			time.Sleep(time.Second)
			continue
		}
		p.cmd, p.running = cmd, true
		p.mu.Unlock()
		if p.gen > 1 {
			f.timeline.add(eventStart, p.name, p.workerID())
		}
		if p.kind == kindServer {
			go f.markUp(p, cmd)
		}
		err = cmd.Wait()
		logf.Close()
		p.mu.Lock()
		p.up, p.running = false, false
		killed, delay := p.killed, p.restartAfter
		p.mu.Unlock()
		if !killed {
			select {
			case <-f.stopping:
				return
			default:
			}
			f.timeline.add(eventExit, p.name, fmt.Sprintf("%s exited on its own: %v", p.workerID(), err))
			delay = time.Second
		}
		select {
		case <-f.stopping:
			return
		case <-time.After(delay):
		}
	}
}

// markUp marks a server up once it answers GET /ok.
func (f *fleet) markUp(p *proc, cmd *exec.Cmd) {
	c := &http.Client{Timeout: time.Second}
	for {
		p.mu.Lock()
		current := p.cmd == cmd && p.running
		p.mu.Unlock()
		if !current {
			return
		}
		if r, err := c.Get(p.url() + "/ok"); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				p.mu.Lock()
				p.up = p.cmd == cmd
				p.mu.Unlock()
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (p *proc) isUp() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.up
}

// waitUp waits until server p answers, or limit passes.
func (f *fleet) waitUp(p *proc, limit time.Duration) bool {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if p.isUp() {
			return true
		}
	}
	return false
}

// kill SIGKILLs p's running incarnation; the supervisor starts the next
// one after restartAfter. It reports false when p was not running.
func (f *fleet) kill(p *proc, restartAfter time.Duration) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.running || p.killed {
		return false
	}
	p.killed, p.restartAfter, p.up = true, restartAfter, false
	if err := p.cmd.Process.Kill(); err != nil {
		return false
	}
	f.timeline.add(eventKill, p.name, fmt.Sprintf("%s (pid %d), restart in %v", p.workerID(), p.cmd.Process.Pid, restartAfter.Round(time.Millisecond)))
	return true
}

// stop ends supervision and stops every process: SIGTERM, then SIGKILL
// after a few seconds.
func (f *fleet) stop() {
	close(f.stopping)
	for _, p := range f.procs {
		p.mu.Lock()
		if p.running {
			p.killed = true
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
		}
		p.mu.Unlock()
	}
	done := make(chan struct{})
	go func() { f.wg.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-time.After(10 * time.Second):
	}
	for _, p := range f.procs {
		p.mu.Lock()
		if p.running {
			_ = p.cmd.Process.Kill()
		}
		p.mu.Unlock()
	}
	<-done
}

// waitAllUp waits until every server answers (workers have no probe; they
// retry their server by themselves).
func (f *fleet) waitAllUp(ctx context.Context) bool {
	for _, p := range f.servers() {
		for !p.isUp() {
			select {
			case <-ctx.Done():
				return false
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return true
}
