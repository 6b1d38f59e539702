package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrNoBinaries is returned when no PostgreSQL server binaries can be found.
// Its message names exactly what to install.
var ErrNoBinaries = errors.New("PostgreSQL server binaries (initdb, pg_ctl, postgres) not found on PATH or in /usr/lib/postgresql/*/bin: " +
	"install them (Debian/Ubuntu: `apt-get install postgresql`; macOS: `brew install postgresql@16`) or set DATABASE_URL to an existing database")

// Cluster is a local PostgreSQL cluster managed by Weft: created with initdb
// on first use, started with pg_ctl, reached through a unix socket inside its
// directory (no TCP port to collide with), and stopped by Stop.
//
// One process at a time uses a cluster: Start takes an exclusive lock on
// weft.lock in the cluster directory (flock, released by the kernel when the
// process dies, so a crashed server never blocks the next one) and holds it
// until Stop; a second process gets ErrDataDirInUse. A postmaster that is
// already running when Start takes the lock was left by a process that died
// without stopping it: it is adopted, and Stop stops it. Supervise restarts a
// postmaster that dies while the cluster is in use.
type Cluster struct {
	// Dir holds the cluster: pgdata/ (the PostgreSQL data directory), the
	// lock file and the socket.
	Dir     string
	dataDir string // the directory asked for (Dir differs when relocated for root)
	binDir  string
	cred    *syscall.Credential // unprivileged user when started as root
	log     *slog.Logger
	dbUser  string
	sockDir string

	mu        sync.Mutex
	owned     bool     // started or adopted and not stopped yet: Stop stops it
	lock      *os.File // weft.lock, flocked while the cluster is in use
	stopWatch func()   // stops the supervisor, if one runs
}

// FindBinaries returns the directory holding initdb, pg_ctl and postgres:
// PATH first, then the newest /usr/lib/postgresql/<major>/bin.
func FindBinaries() (string, error) {
	return findBinaries(os.Getenv("PATH"), "/usr/lib/postgresql/*/bin")
}

func findBinaries(path, glob string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, "pg_ctl")
		if real, err := filepath.EvalSymlinks(p); err == nil && hasServerBinaries(filepath.Dir(real)) {
			return filepath.Dir(real), nil
		}
	}
	dirs, _ := filepath.Glob(glob)
	sort.Slice(dirs, func(i, j int) bool { return majorOf(dirs[i]) > majorOf(dirs[j]) })
	for _, d := range dirs {
		if hasServerBinaries(d) {
			return d, nil
		}
	}
	return "", ErrNoBinaries
}

func majorOf(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func hasServerBinaries(dir string) bool {
	for _, b := range []string{"initdb", "pg_ctl", "postgres"} {
		if fi, err := os.Stat(filepath.Join(dir, b)); err != nil || fi.IsDir() {
			return false
		}
	}
	return true
}

// NewCluster prepares (but does not start) a managed cluster under dir.
// When the process runs as root, PostgreSQL (which refuses to run as root)
// is run as the "postgres" user, or "nobody" when that user does not exist;
// if that user cannot reach dir (e.g. a checkout under a 0700 /root), the
// cluster is placed under /var/lib/weft/<hash of dir> instead and the
// choice is logged.
func NewCluster(dir string, log *slog.Logger) (*Cluster, error) {
	binDir, err := FindBinaries()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	c := &Cluster{Dir: abs, dataDir: abs, binDir: binDir, log: log, dbUser: "weft"}
	if os.Geteuid() == 0 {
		cred, err := UnprivilegedUser()
		if err != nil {
			return nil, err
		}
		c.cred = cred
		if !reachableBy(abs, cred) {
			sum := sha256.Sum256([]byte(abs))
			alt := filepath.Join("/var/lib/weft", hex.EncodeToString(sum[:8]))
			log.Info("data dir is not reachable by the PostgreSQL user; using another directory",
				"data_dir", abs, "cluster_dir", alt, "uid", cred.Uid)
			c.Dir = alt
		}
	}
	// A unix socket path is limited to ~107 bytes; fall back to a short
	// directory for deep data dirs.
	c.sockDir = c.Dir
	if len(c.sockDir) > 80 {
		sum := sha256.Sum256([]byte(c.Dir))
		c.sockDir = filepath.Join(os.TempDir(), "weft-"+hex.EncodeToString(sum[:6]))
	}
	return c, nil
}

// UnprivilegedUser is the user a process running as root starts
// PostgreSQL as (postgres, else nobody): PostgreSQL refuses to run as root.
func UnprivilegedUser() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New("running as root, but no unprivileged user (postgres or nobody) exists to run PostgreSQL as; create one (`useradd postgres`) or set DATABASE_URL")
}

// reachableBy reports whether every existing ancestor of dir is searchable
// by the given user (owner, group or other x bit).
func reachableBy(dir string, cred *syscall.Credential) bool {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err == nil {
			st := fi.Sys().(*syscall.Stat_t)
			mode := fi.Mode().Perm()
			ok := mode&0o001 != 0 ||
				(st.Uid == cred.Uid && mode&0o100 != 0) ||
				(st.Gid == cred.Gid && mode&0o010 != 0)
			if !ok {
				return false
			}
		}
		if d == "/" || d == "." {
			return true
		}
	}
}

func (c *Cluster) pgdata() string { return filepath.Join(c.Dir, "pgdata") }

// DSN is the connection string for database name on this cluster.
func (c *Cluster) DSN(name string) string {
	return fmt.Sprintf("postgres:///%s?host=%s&user=%s&sslmode=disable", name, c.sockDir, c.dbUser)
}

func (c *Cluster) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(c.binDir, name), args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	return cmd
}

func (c *Cluster) run(ctx context.Context, name string, args ...string) error {
	out, err := c.command(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Start locks the cluster directory, initialises the cluster if needed and
// starts it. A postmaster already running on it (left by a process that
// died without stopping it) is adopted: Stop stops it as if Start had
// started it. When another live process holds the directory, Start fails
// with ErrDataDirInUse and touches nothing.
func (c *Cluster) Start(ctx context.Context) (err error) {
	for _, d := range []string{c.Dir, c.sockDir} {
		if err := os.MkdirAll(filepath.Dir(d), 0o755); err != nil {
			return fmt.Errorf("create cluster dir: %w", err)
		}
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("create cluster dir: %w", err)
		}
		if c.cred != nil {
			if err := os.Chown(d, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
				return fmt.Errorf("chown cluster dir: %w", err)
			}
		}
	}
	if err := c.acquireLock(); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			c.releaseLock()
		}
	}()
	if _, err := os.Stat(filepath.Join(c.pgdata(), "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		c.log.Info("initialising local PostgreSQL cluster", "dir", c.pgdata(), "bin_dir", c.binDir)
		if err := c.run(ctx, "initdb", "-D", c.pgdata(), "-U", c.dbUser, "--auth=trust",
			"--encoding=UTF8", "--locale=C", "--no-sync"); err != nil {
			return err
		}
	}
	if c.command(ctx, "pg_ctl", "status", "-D", c.pgdata()).Run() == nil {
		// We hold the lock, so no live Weft process uses this postmaster:
		// it was left by one that crashed. Adopt it.
		c.log.Info("adopting running local PostgreSQL cluster left by a previous server; it will be stopped on shutdown",
			"dir", c.pgdata(), "postmaster_pid", c.postmasterPID())
	} else {
		if err := c.startPostmaster(ctx); err != nil {
			return err
		}
		c.log.Info("local PostgreSQL cluster started", "dir", c.pgdata(), "socket_dir", c.sockDir)
	}
	c.mu.Lock()
	c.owned = true
	c.mu.Unlock()
	return nil
}

func (c *Cluster) startPostmaster(ctx context.Context) error {
	opts := fmt.Sprintf("-c listen_addresses='' -c unix_socket_directories='%s' -c max_connections=200 "+
		"-c fsync=on -c shared_buffers=128MB -c deadlock_timeout=200ms", c.sockDir)
	return c.run(ctx, "pg_ctl", "start", "-w", "-t", "60", "-D", c.pgdata(),
		"-l", filepath.Join(c.Dir, "postgres.log"), "-o", opts)
}

// ErrDataDirInUse is returned by Start when another live process holds the
// cluster's directory.
var ErrDataDirInUse = errors.New("data directory in use")

type dirInUseError struct {
	dir string
	pid int
}

func (e *dirInUseError) Error() string {
	who := "another Weft server"
	if e.pid > 0 {
		who += fmt.Sprintf(" (pid %d)", e.pid)
	}
	return fmt.Sprintf("data directory %s is in use by %s: stop that server, or give this one another -data-dir (WEFT_DATA_DIR)", e.dir, who)
}

func (e *dirInUseError) Is(target error) bool { return target == ErrDataDirInUse }

func (c *Cluster) lockPath() string { return filepath.Join(c.Dir, "weft.lock") }

// acquireLock takes the exclusive flock on weft.lock and records this
// process's pid in it. The descriptor is close-on-exec, so pg_ctl and the
// postmaster never inherit (and never keep) the lock.
func (c *Cluster) acquireLock() error {
	f, err := os.OpenFile(c.lockPath(), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			b, _ := os.ReadFile(c.lockPath())
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return &dirInUseError{dir: c.dataDir, pid: pid}
		}
		return fmt.Errorf("lock %s: %w", c.lockPath(), err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	c.mu.Lock()
	c.lock = f
	c.mu.Unlock()
	return nil
}

func (c *Cluster) releaseLock() {
	c.mu.Lock()
	f := c.lock
	c.lock = nil
	c.mu.Unlock()
	if f != nil {
		_ = f.Truncate(0)
		f.Close() // closing the last descriptor releases the flock
	}
}

// postmasterPID is the PID recorded in pgdata/postmaster.pid, or 0.
func (c *Cluster) postmasterPID() int {
	return pidInFile(filepath.Join(c.pgdata(), "postmaster.pid"))
}

// clearZombieLocks removes postmaster.pid and the socket's lock file when
// the postmaster they name has exited but not been reaped yet (its parent,
// usually init, has not waited for it): PostgreSQL would take the zombie for
// a live postmaster and refuse to start. Orphaned backends of the dead
// postmaster are still detected by PostgreSQL's own shared-memory interlock.
func (c *Cluster) clearZombieLocks() {
	for _, f := range []string{filepath.Join(c.pgdata(), "postmaster.pid"), filepath.Join(c.sockDir, ".s.PGSQL.5432.lock")} {
		pid := pidInFile(f)
		if pid <= 0 || ProcessAlive(pid) || syscall.Kill(pid, 0) != nil {
			continue // live, or gone (PostgreSQL clears its stale files itself)
		}
		if err := os.Remove(f); err == nil {
			c.log.Info("removed a lock file of the dead postmaster (an unreaped zombie)", "file", f, "postmaster_pid", pid)
		}
	}
}

// pidInFile is the PID on the first line of a PostgreSQL lock file, or 0.
func pidInFile(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(line))
	return pid
}

// PostmasterPID returns the PID of the cluster's running postmaster, or 0
// when none runs.
func (c *Cluster) PostmasterPID() int {
	if pid := c.postmasterPID(); ProcessAlive(pid) {
		return pid
	}
	return 0
}

// ProcessAlive reports whether pid names a live process. A zombie counts as
// dead (and is reaped when it is ours, as when this process is PID 1 in a
// container and the postmaster was re-parented to it).
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no procfs: trust kill(0)
	}
	// pid (comm) state …: the state follows the last ')'.
	if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		return false
	}
	return true
}

// EnsureDatabase creates database name when it does not exist yet.
func (c *Cluster) EnsureDatabase(ctx context.Context, name string) error {
	pool, err := Connect(ctx, c.DSN("postgres"))
	if err != nil {
		return err
	}
	defer pool.Close()
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return fmt.Errorf("look up database: %w", err)
	}
	if exists {
		return nil
	}
	if _, err := pool.Exec(ctx, `CREATE DATABASE `+quoteIdent(name)); err != nil && !isDuplicateDatabase(err) {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}

// Stop stops the supervisor, then the cluster if Start started or adopted
// it (fast shutdown: open transactions roll back, committed data is kept),
// and releases the directory lock. It logs what it did; calling it again
// does nothing.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	stopWatch, owned := c.stopWatch, c.owned
	c.stopWatch, c.owned = nil, false
	c.mu.Unlock()
	if stopWatch != nil {
		stopWatch()
	}
	defer c.releaseLock()
	if !owned {
		return nil
	}
	if c.PostmasterPID() == 0 {
		c.log.Warn("local PostgreSQL was not running at shutdown", "dir", c.pgdata())
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.run(ctx, "pg_ctl", "stop", "-w", "-m", "fast", "-D", c.pgdata()); err != nil {
		return err
	}
	c.log.Info("local PostgreSQL stopped", "dir", c.pgdata())
	return nil
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// SuperviseConfig bounds how Supervise restarts a postmaster that died.
// Zero fields take the defaults.
type SuperviseConfig struct {
	// Interval is how often the postmaster is checked (default 1s).
	Interval time.Duration
	// MaxRestarts is how many restart attempts are made before giving up
	// (default 5). Attempts are counted until the postmaster has stayed up
	// for StableAfter, so a postmaster that dies right after every restart
	// also exhausts them.
	MaxRestarts int
	// Backoff is the wait before the first retry after a failed attempt,
	// doubled per further failure up to 30s (default 1s).
	Backoff time.Duration
	// StableAfter is how long a restarted postmaster must stay up for the
	// attempt count to start again from zero (default 1m).
	StableAfter time.Duration
}

func (cfg SuperviseConfig) withDefaults() SuperviseConfig {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.MaxRestarts <= 0 {
		cfg.MaxRestarts = 5
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = time.Second
	}
	if cfg.StableAfter <= 0 {
		cfg.StableAfter = time.Minute
	}
	return cfg
}

// Supervise watches the started cluster's postmaster (the PID in
// postmaster.pid) and restarts it with pg_ctl when it dies, with at most
// cfg.MaxRestarts attempts and exponential backoff between failed ones,
// logging each. When the attempts are exhausted it logs, sends the error on
// the returned channel and stops watching; the channel is closed when the
// supervisor ends. Stop ends the supervisor (waiting for a restart in
// progress) before stopping the cluster. Supervise does nothing (and returns
// a closed channel) unless the cluster is started and not yet supervised.
func (c *Cluster) Supervise(cfg SuperviseConfig) <-chan error {
	cfg = cfg.withDefaults()
	failed := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	c.mu.Lock()
	if !c.owned || c.stopWatch != nil {
		c.mu.Unlock()
		cancel()
		close(failed)
		return failed
	}
	c.stopWatch = func() { cancel(); <-done }
	c.mu.Unlock()
	go func() {
		defer close(done)
		defer close(failed)
		if err := c.supervise(ctx, cfg); err != nil {
			failed <- err
		}
	}()
	return failed
}

func (c *Cluster) supervise(ctx context.Context, cfg SuperviseConfig) error {
	tick := time.NewTicker(cfg.Interval)
	defer tick.Stop()
	attempts := 0
	var upSince time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if pid := c.PostmasterPID(); pid != 0 {
			if attempts > 0 && !upSince.IsZero() && time.Since(upSince) >= cfg.StableAfter {
				attempts = 0
			}
			continue
		}
		c.log.Error("local PostgreSQL postmaster is gone; restarting it", "dir", c.pgdata())
		backoff := cfg.Backoff
		for {
			if attempts >= cfg.MaxRestarts {
				err := fmt.Errorf("local PostgreSQL in %s could not be kept running: gave up after %d restart attempts (see %s)",
					c.pgdata(), attempts, filepath.Join(c.Dir, "postgres.log"))
				c.log.Error("giving up restarting local PostgreSQL", "dir", c.pgdata(), "attempts", attempts, "error", err)
				return err
			}
			if attempts > 0 && c.PostmasterPID() != 0 {
				upSince = time.Now() // a slow attempt came up after all
				c.log.Warn("local PostgreSQL restarted", "dir", c.pgdata(), "attempt", attempts,
					"max_attempts", cfg.MaxRestarts, "postmaster_pid", c.postmasterPID())
				break
			}
			c.clearZombieLocks()
			attempts++
			// Not ctx: a restart in progress finishes (bounded by its own
			// timeout) so Stop never races a half-started postmaster.
			rctx, rcancel := context.WithTimeout(context.Background(), 90*time.Second)
			err := c.startPostmaster(rctx)
			rcancel()
			if err == nil {
				upSince = time.Now()
				c.log.Warn("local PostgreSQL restarted", "dir", c.pgdata(), "attempt", attempts,
					"max_attempts", cfg.MaxRestarts, "postmaster_pid", c.postmasterPID())
				break
			}
			c.log.Error("restarting local PostgreSQL failed", "dir", c.pgdata(), "attempt", attempts,
				"max_attempts", cfg.MaxRestarts, "retry_in", backoff.String(), "error", err)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 30*time.Second)
		}
	}
}
