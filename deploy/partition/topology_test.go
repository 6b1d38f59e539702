package partition

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The topology: a bridge in a network namespace of its own, and one
// namespace per host, each joined to the bridge by a veth pair and given an
// address of a private /24 (10.237.X.0/24, X random). No namespace has a
// default route and nothing links them to the root namespace, so the
// suite's traffic stays between the namespaces it made. A host is cut off by
// setting its veth's bridge end down (the host keeps its address and route:
// its packets are dropped silently, as by a cable pulled beyond its NIC,
// not refused), and joined again by setting it up.
//
// Processes run in a host's namespace by being started from an OS thread
// that entered it (setns on a locked thread, which then waits for the
// process: the thread exists exactly as long as the process, so Pdeathsig,
// which follows the thread that started a child, kills the child only when
// the test binary dies). The test itself talks from a host's namespace the
// same way: its dialer creates each socket on a thread inside that
// namespace, and a socket stays in the namespace it was made in.

// ipBin is iproute2's ip; the suite needs it, root, and the kernel's
// network namespaces, bridges and veths (no netem, iptables or nft).
const ipBin = "/usr/sbin/ip"

// nsPrefix starts the name of every namespace the suite makes; the next
// characters are the test process's id, so a namespace left by a run that
// was killed (no cleanup) is recognised and removed by the next run.
const nsPrefix = "wpt"

type topology struct {
	t      testing.TB
	id     string // nsPrefix + pid
	subnet string // "10.237.X."
	bridge string // the bridge's namespace

	mu    sync.Mutex
	hosts []*host
}

// host is one machine of the topology: a network namespace with one
// interface (eth0) on the bridge.
type host struct {
	topo *topology
	Name string // "db", "s1", …
	NS   string // its namespace
	Addr string // its address
	link string // its veth's end in the bridge's namespace
}

// newTopology makes the bridge; hosts are added with addHost. Everything
// is removed when the test ends (processes first: their cleanups run
// before this one, registered earlier).
func newTopology(t testing.TB) *topology {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the partition suite needs root (network namespaces, veths, a bridge); CI runs it as root")
	}
	if _, err := os.Stat(ipBin); err != nil {
		t.Fatalf("the partition suite needs iproute2 (%s): %v", ipBin, err)
	}
	removeStale(t)
	x, err := rand.Int(rand.Reader, big.NewInt(250))
	if err != nil {
		t.Fatal(err)
	}
	topo := &topology{t: t, id: nsPrefix + strconv.Itoa(os.Getpid()), subnet: fmt.Sprintf("10.237.%d.", x.Int64()+1)}
	topo.bridge = topo.id + "-br"
	t.Cleanup(topo.remove)
	topo.ip("netns", "add", topo.bridge)
	topo.ip("-n", topo.bridge, "link", "set", "lo", "up")
	topo.ip("-n", topo.bridge, "link", "add", "br0", "type", "bridge")
	topo.ip("-n", topo.bridge, "link", "set", "br0", "up")
	return topo
}

// addHost makes a namespace joined to the bridge, at subnet+octet.
func (topo *topology) addHost(name string, octet int) *host {
	topo.t.Helper()
	h := &host{topo: topo, Name: name, NS: topo.id + "-" + name, Addr: topo.subnet + strconv.Itoa(octet), link: "v-" + name}
	topo.mu.Lock()
	topo.hosts = append(topo.hosts, h)
	topo.mu.Unlock()
	topo.ip("netns", "add", h.NS)
	topo.ip("-n", h.NS, "link", "set", "lo", "up")
	topo.ip("-n", topo.bridge, "link", "add", h.link, "type", "veth", "peer", "name", "eth0", "netns", h.NS)
	topo.ip("-n", topo.bridge, "link", "set", h.link, "master", "br0")
	topo.ip("-n", topo.bridge, "link", "set", h.link, "up")
	topo.ip("-n", h.NS, "addr", "add", h.Addr+"/24", "dev", "eth0")
	topo.ip("-n", h.NS, "link", "set", "eth0", "up")
	return h
}

func (topo *topology) ip(args ...string) {
	topo.t.Helper()
	if err := runIP(args...); err != nil {
		topo.t.Fatal(err)
	}
}

func runIP(args ...string) error {
	out, err := exec.Command(ipBin, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// remove deletes every namespace of the topology (their veths go with
// them). The processes in them were stopped by their own cleanups.
func (topo *topology) remove() {
	topo.mu.Lock()
	hosts := topo.hosts
	topo.mu.Unlock()
	for _, h := range hosts {
		if err := runIP("netns", "del", h.NS); err != nil {
			topo.t.Logf("cleanup: %v", err)
		}
	}
	if err := runIP("netns", "del", topo.bridge); err != nil {
		topo.t.Logf("cleanup: %v", err)
	}
}

// removeStale deletes the namespaces and cluster directories of earlier
// runs whose process is gone (a run killed before its cleanup; its
// processes died with it, by Pdeathsig).
func removeStale(t testing.TB) {
	gone := func(name, prefix string) bool {
		pid, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(name, prefix), "-", 2)[0])
		if err != nil || pid == os.Getpid() {
			return false
		}
		_, err = os.Stat("/proc/" + strconv.Itoa(pid))
		return err != nil
	}
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		if name := e.Name(); strings.HasPrefix(name, nsPrefix) && gone(name, nsPrefix) {
			if err := runIP("netns", "del", name); err == nil {
				t.Logf("removed namespace %s left by an earlier run", name)
			}
		}
	}
	entries, _ = os.ReadDir(os.TempDir())
	for _, e := range entries {
		if name := e.Name(); strings.HasPrefix(name, pgDirPrefix) && gone(name, pgDirPrefix) {
			if err := os.RemoveAll(filepath.Join(os.TempDir(), name)); err == nil {
				t.Logf("removed %s left by an earlier run", name)
			}
		}
	}
}

// Cut sets the host's veth down at the bridge: from now on its packets
// (both ways) are dropped without an answer.
func (h *host) Cut() error { return runIP("-n", h.topo.bridge, "link", "set", h.link, "down") }

// Join sets the host's veth up again.
func (h *host) Join() error { return runIP("-n", h.topo.bridge, "link", "set", h.link, "up") }

// enter moves the calling OS thread into the host's namespace. The caller
// has locked its goroutine to the thread and never unlocks it, so the
// thread ends with the goroutine and no other code runs in the namespace.
func (h *host) enter() error {
	f, err := os.Open(filepath.Join("/run/netns", h.NS))
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("setns %s: %w", h.NS, err)
	}
	return nil
}

// DialContext opens a connection from the host's namespace.
func (h *host) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if err := h.enter(); err != nil {
			ch <- result{nil, err}
			return
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}

// HTTPClient is an HTTP client whose connections start in the host's
// namespace, with no overall timeout (each request brings its context).
func (h *host) HTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: h.DialContext, MaxIdleConnsPerHost: 32,
		IdleConnTimeout: 30 * time.Second, ResponseHeaderTimeout: 0}}
}

// proc is a process running in a host's namespace.
type proc struct {
	Name string
	Log  string // its stdout and stderr
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Start runs cmd in the host's namespace (its output appended to a log
// file named after it in dir). At the end of the test it is stopped:
// SIGTERM, SIGKILL after 5 s; it never outlives the test binary
// (Pdeathsig). A failed test shows the end of its log.
func (h *host) Start(t testing.TB, dir, name string, cmd *exec.Cmd) *proc {
	t.Helper()
	p := &proc{Name: name, Log: filepath.Join(dir, name+".log"), cmd: cmd, done: make(chan struct{})}
	logf, err := os.OpenFile(p.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	started := make(chan error, 1)
	go func() {
		defer close(p.done)
		runtime.LockOSThread() // never unlocked: the thread ends when the process has
		if err := h.enter(); err != nil {
			started <- err
			return
		}
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.err = cmd.Wait()
	}()
	if err := <-started; err != nil {
		logf.Close()
		t.Fatalf("start %s in %s: %v", name, h.NS, err)
	}
	t.Cleanup(func() {
		p.Stop(5 * time.Second)
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(p.Log)
			t.Logf("%s log (last 3 KiB):\n%s", name, b[max(0, len(b)-3072):])
		}
	})
	return p
}

// Stop sends SIGTERM and waits up to grace, then SIGKILLs; it returns once
// the process has exited.
func (p *proc) Stop(grace time.Duration) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Exited reports whether the process has ended.
func (p *proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}
