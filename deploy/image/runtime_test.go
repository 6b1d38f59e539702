package image_test

// A container runtime small enough for a test, as root: the image's layers
// unpacked into a directory (read through go-containerregistry), a network
// namespace of its own (so the image's port 8123 never meets another
// process's, as with docker run), and processes started the way the image's
// config says: chroot into the root, its user, its working directory, its
// environment, its entrypoint.

import (
	"archive/tar"
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// unpack extracts img's layers, in order, into root. Whiteouts are not
// applied (the image has one layer; a whiteout entry fails the test).
func unpack(t *testing.T, img v1.Image, root string) {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			clean := filepath.Clean("/" + h.Name)
			if strings.HasPrefix(filepath.Base(clean), ".wh.") {
				t.Fatalf("layer entry %s is a whiteout: not expected in a one-layer image", h.Name)
			}
			dst := filepath.Join(root, clean)
			mode := os.FileMode(h.Mode & 0o777)
			switch h.Typeflag {
			case tar.TypeDir:
				if err := os.MkdirAll(dst, 0o755); err != nil {
					t.Fatal(err)
				}
			case tar.TypeReg:
				if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
					t.Fatal(err)
				}
				f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := io.Copy(f, tr); err != nil {
					t.Fatal(err)
				}
				f.Close()
			case tar.TypeSymlink:
				if err := os.Symlink(h.Linkname, dst); err != nil {
					t.Fatal(err)
				}
			default:
				t.Fatalf("layer entry %s: type %c not handled", h.Name, h.Typeflag)
			}
			if err := os.Lchown(dst, h.Uid, h.Gid); err != nil {
				t.Fatal(err)
			}
			if h.Typeflag != tar.TypeSymlink {
				// After chown, which clears the set-id bits; Chmod keeps the sticky bit.
				if err := os.Chmod(dst, mode|fileModeBits(h.Mode)); err != nil {
					t.Fatal(err)
				}
			}
		}
		rc.Close()
	}
}

func fileModeBits(m int64) os.FileMode {
	var out os.FileMode
	if m&0o1000 != 0 {
		out |= os.ModeSticky
	}
	if m&0o2000 != 0 {
		out |= os.ModeSetgid
	}
	if m&0o4000 != 0 {
		out |= os.ModeSetuid
	}
	return out
}

// netns is a network namespace with its loopback up, held by one locked OS
// thread: what runs on that thread (ns.do) — dials, listens, process starts
// — happens inside it, and processes started there inherit it. The thread
// is never unlocked, so it ends with the namespace's goroutine.
type netns struct {
	work chan func()
	done chan struct{}
}

func newNetns(t *testing.T) *netns {
	t.Helper()
	ns := &netns{work: make(chan func()), done: make(chan struct{})}
	ready := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with this goroutine
		if err := syscall.Unshare(syscall.CLONE_NEWNET); err != nil {
			ready <- fmt.Errorf("unshare the network namespace: %w", err)
			return
		}
		if err := loopbackUp(); err != nil {
			ready <- err
			return
		}
		ready <- nil
		for {
			select {
			case f := <-ns.work:
				f()
			case <-ns.done:
				return
			}
		}
	}()
	if err := <-ready; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { close(ns.done) })
	return ns
}

// do runs f on the namespace's thread and waits for it.
func (ns *netns) do(f func()) {
	finished := make(chan struct{})
	ns.work <- func() { defer close(finished); f() }
	<-finished
}

// loopbackUp sets lo up (SIOCSIFFLAGS) in the calling thread's namespace.
func loopbackUp() error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var ifr [40]byte // struct ifreq: the name, then the flags (a short)
	copy(ifr[:], "lo")
	*(*uint16)(unsafe.Pointer(&ifr[syscall.IFNAMSIZ])) = syscall.IFF_UP | syscall.IFF_LOOPBACK | syscall.IFF_RUNNING
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCSIFFLAGS, uintptr(unsafe.Pointer(&ifr[0]))); errno != 0 {
		return fmt.Errorf("set lo up: %w", errno)
	}
	return nil
}

// client is an HTTP client whose connections are dialled inside ns.
func (ns *netns) client() *http.Client {
	dial := func(ctx context.Context, network, addr string) (conn net.Conn, err error) {
		ns.do(func() { conn, err = (&net.Dialer{Timeout: 2 * time.Second}).DialContext(ctx, network, addr) })
		return conn, err
	}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}}
}

// forwardDB makes the test's PostgreSQL database (dsn, usually a unix
// socket outside the container's root) reachable inside ns at
// 127.0.0.1:5432, and returns the URL a container uses for it.
func forwardDB(t *testing.T, ns *netns, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	host, port, user := q.Get("host"), q.Get("port"), q.Get("user")
	if host == "" {
		host = u.Hostname()
	}
	if port == "" {
		port = u.Port()
	}
	if port == "" {
		port = "5432"
	}
	if user == "" && u.User != nil {
		user = u.User.Username()
	}
	upNet, upAddr := "tcp", net.JoinHostPort(host, port)
	if strings.HasPrefix(host, "/") {
		upNet, upAddr = "unix", filepath.Join(host, ".s.PGSQL."+port)
	}
	var ln net.Listener
	ns.do(func() { ln, err = net.Listen("tcp", "127.0.0.1:5432") })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial(upNet, upAddr)
				if err != nil {
					return
				}
				defer up.Close()
				go func() { _, _ = io.Copy(up, c); up.Close() }()
				_, _ = io.Copy(c, up)
			}()
		}
	}()
	out := url.URL{Scheme: "postgres", Host: "127.0.0.1:5432", Path: u.Path, RawQuery: "sslmode=disable"}
	if user != "" {
		if pw, ok := u.User.Password(); ok {
			out.User = url.UserPassword(user, pw)
		} else {
			out.User = url.User(user)
		}
	}
	return out.String()
}

// container runs processes from an unpacked image as its config says.
type container struct {
	root string
	cfg  v1.Config
	env  []string // added to the config's Env (docker run -e)
	ns   *netns
}

// command is a process of the container: argv inside the root, the
// config's user, working directory and environment, in its network
// namespace (started by start or run).
func (c *container) command(t *testing.T, argv ...string) *exec.Cmd {
	t.Helper()
	uid, gid := c.user(t)
	cmd := &exec.Cmd{Path: argv[0], Args: argv, Dir: c.cfg.WorkingDir, Env: append(append([]string(nil), c.cfg.Env...), c.env...)}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Chroot:     c.root,
		Credential: &syscall.Credential{Uid: uid, Gid: gid, Groups: []uint32{}},
		Setpgid:    true,
		Pdeathsig:  syscall.SIGKILL, // sent when the namespace's thread ends: never outlives the test
	}
	return cmd
}

// user is the config's User, numeric or a name of the image's /etc/passwd.
func (c *container) user(t *testing.T) (uint32, uint32) {
	t.Helper()
	u, g, _ := strings.Cut(c.cfg.User, ":")
	uid, err := strconv.ParseUint(u, 10, 32)
	if err != nil {
		f, ferr := os.Open(filepath.Join(c.root, "etc", "passwd"))
		if ferr != nil {
			t.Fatal(ferr)
		}
		defer f.Close()
		found := false
		for s := bufio.NewScanner(f); s.Scan(); {
			fields := strings.Split(s.Text(), ":")
			if len(fields) > 3 && fields[0] == u {
				uid, _ = strconv.ParseUint(fields[2], 10, 32)
				if g == "" {
					g = fields[3]
				}
				found = true
			}
		}
		if !found {
			t.Fatalf("user %q is not in the image's /etc/passwd", u)
		}
	}
	gid, err := strconv.ParseUint(g, 10, 32)
	if err != nil {
		t.Fatalf("group %q: want a number", g)
	}
	return uint32(uid), uint32(gid)
}

// start starts cmd in the namespace.
func (c *container) start(cmd *exec.Cmd) error {
	var err error
	c.ns.do(func() { err = cmd.Start() })
	return err
}

// run runs argv to its end in the container and returns its exit code and
// its output.
func (c *container) run(t *testing.T, timeout time.Duration, argv ...string) (int, string, string) {
	t.Helper()
	cmd := c.command(t, argv...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := c.start(cmd); err != nil {
		t.Fatalf("%v: %v", argv, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%v: still running after %s", argv, timeout)
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatalf("%v: %v", argv, err)
	return 0, "", ""
}

// procIDs are the real, effective, saved and file-system ids of a process
// (Uid: or Gid: of /proc/pid/status).
func procIDs(t *testing.T, pid int, field string) []string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.Fields(rest)
		}
	}
	t.Fatalf("/proc/%d/status has no %s line", pid, field)
	return nil
}
