package pgtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/weftdev/weft/internal/postgres"
)

// Cluster is a throw-away PostgreSQL cluster in a temporary directory whose
// lifetime is bound to the process that started it.
//
// pg_ctl starts the postmaster in a session of its own, re-parented to init:
// nothing in the kernel stops it when the test binary dies. So StartCluster
// first starts a watchdog: this same executable again (os.Executable), which
// the init function of this package turns into the watchdog before any test
// or main code runs. The watchdog runs in its own session (a Ctrl-C or a
// signal to the test's process group does not reach it) with its standard
// input the read end of a pipe whose only write end this process holds
// (close-on-exec, so no other child inherits it). Whatever ends this process
// — a normal exit, os.Exit after a failed test, a panic in any goroutine,
// the panic of go test's -timeout, SIGQUIT or SIGKILL from go test or a CI
// runner — the kernel closes the write end; the watchdog reads EOF, stops the
// postmaster recorded in the cluster's postmaster.pid (checked to be the one
// running in that data directory: SIGQUIT, then SIGKILL), removes the
// directory and exits. Close does the same in order and waits for the
// watchdog, so a clean run leaves no process behind either.
type Cluster struct {
	*postgres.Cluster
	dir string // the temporary directory, removed by Close

	mu      sync.Mutex
	closed  bool
	guard   *exec.Cmd
	guardIn *os.File // the write end of the watchdog's stdin
}

// watchdogEnv, when set, makes the executable a watchdog (see Cluster): its
// value lists the directories to clean up, separated by os.PathListSeparator.
const watchdogEnv = "WEFT_PGTEST_WATCHDOG"

func init() {
	if dirs, ok := os.LookupEnv(watchdogEnv); ok {
		os.Exit(watchdog(filepath.SplitList(dirs)))
	}
}

// live holds the clusters not closed yet, so that the write ends of their
// watchdogs' pipes stay reachable (an unreachable *os.File would be closed
// by its finalizer, ending the watchdog while the cluster is in use).
var live sync.Map

// StartCluster creates a temporary directory (os.MkdirTemp(prefix)),
// starts the watchdog that stops and removes the cluster when this process
// ends (see Cluster), then initialises and starts the cluster in it.
// Close stops it earlier.
func StartCluster(ctx context.Context, prefix string) (*Cluster, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, err
	}
	pc, err := postgres.NewCluster(dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	c := &Cluster{Cluster: pc, dir: dir}
	dirs := []string{dir}
	if pc.Dir != dir { // relocated (root, dir unreachable by the PostgreSQL user)
		dirs = append(dirs, pc.Dir)
	}
	if err := c.startWatchdog(dirs); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: start watchdog: %w", err)
	}
	if err := pc.Start(ctx); err != nil {
		_ = c.Close() // the watchdog stops a postmaster that a timed-out start left
		return nil, err
	}
	return c, nil
}

// TempDir is the temporary directory holding the cluster.
func (c *Cluster) TempDir() string { return c.dir }

// WatchdogPID is the process id of the cluster's watchdog (0 after Close).
func (c *Cluster) WatchdogPID() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.guard == nil || c.guard.Process == nil {
		return 0
	}
	return c.guard.Process.Pid
}

func (c *Cluster) startWatchdog(dirs []string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	r, w, err := os.Pipe() // both ends close-on-exec
	if err != nil {
		return err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), watchdogEnv+"="+strings.Join(dirs, string(os.PathListSeparator)))
	cmd.Stdin = r // stdout and stderr: /dev/null, so go test never waits for the watchdog's output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return err
	}
	c.guard, c.guardIn = cmd, w
	live.Store(c, struct{}{})
	return nil
}

// Close stops the cluster (fast shutdown), ends its watchdog (which stops
// whatever postmaster is still running in the directory and removes it)
// and removes the directory. Calling it again does nothing.
func (c *Cluster) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	guard, in := c.guard, c.guardIn
	c.guard, c.guardIn = nil, nil
	c.mu.Unlock()
	defer live.Delete(c)

	err := c.Cluster.Stop()
	if in != nil {
		in.Close() // EOF for the watchdog
		done := make(chan error, 1)
		go func() { done <- guard.Wait() }()
		select {
		case werr := <-done:
			if werr != nil {
				err = errors.Join(err, fmt.Errorf("pgtest: watchdog: %w", werr))
			}
		case <-time.After(time.Minute):
			_ = guard.Process.Kill()
			err = errors.Join(err, errors.New("pgtest: the watchdog did not end within a minute; killed it"))
		}
	}
	if rerr := os.RemoveAll(c.dir); rerr != nil {
		err = errors.Join(err, rerr)
	}
	return err
}

// watchdog waits until its standard input ends (its owner exited or closed
// the pipe) or it is told to stop by a signal, then stops the postmasters
// of dirs and removes them. It returns the exit code.
func watchdog(dirs []string) int {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	signal.Ignore(syscall.SIGQUIT, syscall.SIGPIPE)
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(eof)
	}()
	select {
	case <-eof:
	case <-sig:
	}
	// A pg_ctl start or an initdb under way when the owner died goes on
	// as an orphan: look again until a pass finds nothing left.
	for range 20 {
		found := false
		for _, d := range dirs {
			if stopPostmaster(filepath.Join(d, "pgdata")) {
				found = true
			}
			if _, err := os.Lstat(d); err == nil {
				found = true
				_ = os.RemoveAll(d)
			}
		}
		if !found {
			return 0
		}
		time.Sleep(250 * time.Millisecond)
	}
	return 1
}

// stopPostmaster stops the postmaster recorded in pgdata/postmaster.pid, if
// it runs and is the one of pgdata: SIGQUIT (immediate shutdown: the data
// is about to be removed), then SIGKILL after 5s. It reports whether there
// was one.
func stopPostmaster(pgdata string) bool {
	pid := pidInFile(filepath.Join(pgdata, "postmaster.pid"))
	if !postgres.ProcessAlive(pid) || !runsIn(pid, pgdata) {
		return false
	}
	_ = syscall.Kill(pid, syscall.SIGQUIT)
	for _, step := range []struct {
		wait time.Duration
		then syscall.Signal
	}{{5 * time.Second, syscall.SIGKILL}, {5 * time.Second, 0}} {
		for deadline := time.Now().Add(step.wait); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if !postgres.ProcessAlive(pid) {
				return true
			}
		}
		if step.then != 0 {
			_ = syscall.Kill(pid, step.then)
		}
	}
	return true
}

// runsIn reports whether process pid works in directory dir, as a
// postmaster does in its data directory, so that a pid reused by another
// process is never signalled. Without procfs it trusts postmaster.pid.
func runsIn(pid int, dir string) bool {
	cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	if err != nil {
		_, statErr := os.Stat("/proc/self/cwd")
		return statErr != nil // no procfs: trust the pid file
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return filepath.Clean(cwd) == filepath.Clean(dir)
}

// pidInFile is the pid on the first line of a PostgreSQL lock file, or 0.
func pidInFile(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	var pid int
	_, _ = fmt.Sscanf(strings.TrimSpace(line), "%d", &pid)
	return pid
}
