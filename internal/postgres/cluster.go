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
	"syscall"
	"time"
)

// ErrNoBinaries is returned when no PostgreSQL server binaries can be found.
// Its message names exactly what to install.
var ErrNoBinaries = errors.New("PostgreSQL server binaries (initdb, pg_ctl, postgres) not found on PATH or in /usr/lib/postgresql/*/bin: " +
	"install them (Debian/Ubuntu: `apt-get install postgresql`; macOS: `brew install postgresql@16`) or set DATABASE_URL to an existing database")

// Cluster is a local PostgreSQL cluster managed by Weft: created with initdb
// on first use, started with pg_ctl, reached through a unix socket inside its
// directory (no TCP port to collide with), and stopped by Stop. A cluster
// that is already running (started by another Weft process on the same data
// directory) is reused and left running by Stop.
type Cluster struct {
	// Dir holds the cluster: pgdata/ (the PostgreSQL data directory) and the socket.
	Dir     string
	binDir  string
	cred    *syscall.Credential // unprivileged user when started as root
	owned   bool                // we started it, so Stop stops it
	log     *slog.Logger
	dbUser  string
	sockDir string
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
	c := &Cluster{Dir: abs, binDir: binDir, log: log, dbUser: "weft"}
	if os.Geteuid() == 0 {
		cred, err := unprivilegedUser()
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

func unprivilegedUser() (*syscall.Credential, error) {
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

// Start initialises the cluster if needed and starts it, unless a server is
// already running on it, in which case it is reused (and not stopped by Stop).
func (c *Cluster) Start(ctx context.Context) error {
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
	if _, err := os.Stat(filepath.Join(c.pgdata(), "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		c.log.Info("initialising local PostgreSQL cluster", "dir", c.pgdata(), "bin_dir", c.binDir)
		if err := c.run(ctx, "initdb", "-D", c.pgdata(), "-U", c.dbUser, "--auth=trust",
			"--encoding=UTF8", "--locale=C", "--no-sync"); err != nil {
			return err
		}
	}
	if c.command(ctx, "pg_ctl", "status", "-D", c.pgdata()).Run() == nil {
		c.log.Info("reusing running local PostgreSQL cluster", "dir", c.pgdata())
		return nil
	}
	opts := fmt.Sprintf("-c listen_addresses='' -c unix_socket_directories='%s' -c max_connections=200 "+
		"-c fsync=on -c shared_buffers=128MB -c deadlock_timeout=200ms", c.sockDir)
	if err := c.run(ctx, "pg_ctl", "start", "-w", "-t", "60", "-D", c.pgdata(),
		"-l", filepath.Join(c.Dir, "postgres.log"), "-o", opts); err != nil {
		return err
	}
	c.owned = true
	c.log.Info("local PostgreSQL cluster started", "dir", c.pgdata(), "socket_dir", c.sockDir)
	return nil
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

// Stop stops the cluster if this process started it (fast shutdown: open
// transactions roll back, committed data is kept).
func (c *Cluster) Stop() error {
	if !c.owned {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c.owned = false
	return c.run(ctx, "pg_ctl", "stop", "-w", "-m", "fast", "-D", c.pgdata())
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
