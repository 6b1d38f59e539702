package partition

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftdev/weft/internal/postgres"
)

// What runs on the hosts: PostgreSQL, Toxiproxy, the Weft servers and the
// workers, each a process started in its host's namespace.

// repoRoot is the Weft repository (this package is deploy/partition).
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd/server")); err != nil {
		t.Fatalf("not the Weft repository: %s", root)
	}
	return root
}

// goBuild builds pkg into dir/name from module directory modDir.
func goBuild(t testing.TB, modDir, pkg, out string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = modDir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
}

// pgPort is where PostgreSQL listens on its host.
const pgPort = 5432

// database is the suite's PostgreSQL: a cluster of its own, listening on
// its host's address (and on a unix socket in its directory, which the
// checker uses: a socket is reached through the file system whatever the
// network does).
type database struct {
	host *host
	dir  string
	proc *proc
	// SocketDSN reaches database weft through the unix socket.
	SocketDSN string
}

// startPostgres initialises a cluster as the postgres user (PostgreSQL
// refuses root), lets the topology's /24 in without a password, starts the
// postmaster in host's namespace and creates database weft.
func startPostgres(t testing.TB, h *host, logDir string) *database {
	t.Helper()
	binDir, err := postgres.FindBinaries()
	if err != nil {
		t.Fatal(err)
	}
	cred, err := postgres.UnprivilegedUser()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", pgDirPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	sock := filepath.Join(dir, "sock")
	for _, d := range []string{dir, sock} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, int(cred.Uid), int(cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	pgdata := filepath.Join(dir, "pgdata")
	initdb := exec.Command(filepath.Join(binDir, "initdb"), "-D", pgdata, "-U", "weft", "--auth=trust",
		"--encoding=UTF8", "--locale=C", "--no-sync")
	initdb.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	hba, err := os.OpenFile(filepath.Join(pgdata, "pg_hba.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(hba, "host all all %s0/24 trust\n", h.topo.subnet)
	hba.Close()
	cmd := exec.Command(filepath.Join(binDir, "postgres"), "-D", pgdata,
		"-c", "listen_addresses="+h.Addr, "-c", "port="+strconv.Itoa(pgPort), "-c", "unix_socket_directories="+sock,
		"-c", "max_connections=300", "-c", "fsync=off", "-c", "deadlock_timeout=200ms", "-c", "log_min_messages=warning")
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	db := &database{host: h, dir: dir, SocketDSN: fmt.Sprintf("postgres:///weft?host=%s&user=weft&sslmode=disable", sock)}
	db.proc = h.Start(t, logDir, "postgres", cmd)
	// SIGINT is PostgreSQL's fast shutdown (SIGTERM would wait for every
	// client); this cleanup runs before the generic one, which then finds
	// the process gone.
	t.Cleanup(func() {
		if !db.proc.Exited() {
			_ = db.proc.cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-db.proc.done:
			case <-time.After(10 * time.Second):
			}
		}
	})
	admin := fmt.Sprintf("postgres:///postgres?host=%s&user=weft&sslmode=disable&connect_timeout=2", sock)
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		pool, err := postgres.Connect(ctx, admin)
		if err == nil {
			_, err = pool.Exec(ctx, `CREATE DATABASE weft`)
			pool.Close()
		}
		cancel()
		if err == nil {
			return db
		}
		if time.Now().After(deadline) || db.proc.Exited() {
			t.Fatalf("PostgreSQL did not start: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// pgDirPrefix starts the name of the cluster's temporary directory; the
// test process's id follows, so that a run killed before its cleanup has its
// directory removed by the next run (removeStale).
const pgDirPrefix = "weft-partition-pg-"

// Pool connects to the database through its socket (the checker's way in).
func (db *database) Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pool, err := postgres.Connect(ctx, db.SocketDSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// Toxiproxy

// toxiAPIPort is where Toxiproxy's API listens, on its host's loopback:
// only the test (dialling from that namespace) reaches it.
const toxiAPIPort = 8474

// proxySpec is one proxy of Toxiproxy's start configuration.
type proxySpec struct {
	Name     string `json:"name"`
	Listen   string `json:"listen"`
	Upstream string `json:"upstream"`
	Enabled  bool   `json:"enabled"`
}

// toxi drives a Toxiproxy server through its HTTP API (the official client
// package talks through http.DefaultClient, which cannot dial into the
// proxy's namespace: this one does, with the package's types).
type toxi struct {
	http    *http.Client
	base    string
	proxies []proxySpec
}

// startToxiproxy builds Toxiproxy's server (this module's dependency),
// starts it on host h with the given proxies and waits for its API.
func startToxiproxy(t testing.TB, h *host, dir string, proxies []proxySpec) *toxi {
	t.Helper()
	bin := filepath.Join(dir, "toxiproxy")
	goBuild(t, ".", "github.com/Shopify/toxiproxy/v2/cmd/server", bin)
	cfg := filepath.Join(dir, "toxiproxy.json")
	b, _ := json.Marshal(proxies)
	if err := os.WriteFile(cfg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-host", "127.0.0.1", "-port", strconv.Itoa(toxiAPIPort), "-config", cfg, "-seed", "1")
	cmd.Env = append(os.Environ(), "LOG_LEVEL=warn")
	p := h.Start(t, dir, "toxiproxy", cmd)
	tx := &toxi{http: &http.Client{Transport: &http.Transport{DialContext: h.DialContext, DisableKeepAlives: true}}, base: fmt.Sprintf("http://127.0.0.1:%d", toxiAPIPort), proxies: proxies}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var got map[string]toxiproxy.Proxy
		err := tx.call("GET", "/proxies", nil, &got)
		if err == nil && len(got) == len(proxies) {
			return tx
		}
		if time.Now().After(deadline) || p.Exited() {
			t.Fatalf("Toxiproxy did not start: %v (%d proxies)", err, len(got))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// call sends one request to the API. Each goes on a connection of its own
// (Toxiproxy's API server closes idle ones after 10 s, which a reused one
// would meet as an EOF), and a transport error is retried twice.
func (tx *toxi) call(method, path string, body, out any) error {
	var err error
	for attempt := range 3 {
		if attempt > 0 {
			time.Sleep(200 * time.Millisecond)
		}
		var status int
		status, err = tx.callOnce(method, path, body, out)
		if err == nil || status != 0 {
			if status == http.StatusNotFound && attempt > 0 && method == "DELETE" {
				return nil // the first try removed it; its answer was lost
			}
			return err
		}
	}
	return err
}

func (tx *toxi) callOnce(method, path string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, tx.base+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := tx.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("toxiproxy %s %s: %d %s", method, path, resp.StatusCode, bytes.TrimSpace(b))
	}
	if out != nil {
		return resp.StatusCode, json.Unmarshal(b, out)
	}
	return resp.StatusCode, nil
}

// Reset enables every proxy and removes every toxic.
func (tx *toxi) Reset() error { return tx.call("POST", "/reset", nil, nil) }

// SetEnabled enables or disables a proxy. Disabled, it closes every
// connection through it and refuses new ones.
func (tx *toxi) SetEnabled(name string, on bool) error {
	return tx.call("POST", "/proxies/"+name, map[string]any{"enabled": on}, nil)
}

// AddToxic adds a toxic to a proxy; it applies to its open connections too.
func (tx *toxi) AddToxic(proxy string, tox toxiproxy.Toxic) error {
	if tox.Toxicity == 0 {
		tox.Toxicity = 1
	}
	return tx.call("POST", "/proxies/"+proxy+"/toxics", tox, nil)
}

// RemoveToxic removes a toxic from a proxy.
func (tx *toxi) RemoveToxic(proxy, name string) error {
	return tx.call("DELETE", "/proxies/"+proxy+"/toxics/"+name, nil, nil)
}

// Weft

// apiPort is where every Weft server listens on its host.
const apiPort = 8123

// server is one Weft server process.
type server struct {
	host *host
	Name string
	proc *proc
	// URL is the server's own address; ClientURL and WorkerURL reach it
	// through Toxiproxy (the client's and the workers' ways in).
	URL, ClientURL, WorkerURL string
}

// startServer starts the weft binary on host h, its database reached at
// dbAddr (a Toxiproxy proxy), and waits until it answers GET /ok.
func startServer(t testing.TB, e *env, h *host, name, dbAddr string) *server {
	t.Helper()
	cmd := exec.Command(e.weftBin)
	cmd.Env = append(os.Environ(),
		"DATABASE_URL=postgres://weft@"+dbAddr+"/weft?sslmode=disable",
		fmt.Sprintf("WEFT_ADDR=%s:%d", h.Addr, apiPort),
		"WEFT_AUTH=keys",
		"WEFT_WORKERS=0", // runs go to the external workers, over the worker API
		"WEFT_LEASE="+lease.String(),
		"WEFT_MAX_ATTEMPTS=20",
		"WEFT_WORKER_ID="+name,
		"WEFT_BUILTIN_GRAPHS=false",
		"WEFT_LOG_LEVEL=info",
		"WEFT_SHUTDOWN_TIMEOUT=3s",
	)
	s := &server{host: h, Name: name, URL: fmt.Sprintf("http://%s:%d", h.Addr, apiPort)}
	s.proc = h.Start(t, e.logDir, name, cmd)
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, _, _ := e.client.get(s.URL+"/ok", 2*time.Second)
		if st == http.StatusOK {
			return s
		}
		if time.Now().After(deadline) || s.proc.Exited() {
			t.Fatalf("server %s did not come up (last /ok: %d)", name, st)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// createKey runs `weft keys create` on the database (through its socket).
func createKey(t testing.TB, e *env, args ...string) string {
	t.Helper()
	cmd := exec.Command(e.weftBin, append([]string{"keys", "create"}, args...)...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+e.db.SocketDSN)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("weft keys create %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return strings.TrimSpace(string(out))
}

// worker is one worker process (Python or JS).
type worker struct {
	host *host
	Name string // its worker id, as dispatch audits show it
	proc *proc
}

// startPyWorker runs the Python worker (worker-py, on PYTHONPATH, with the
// interpreter of the Python suites) serving testdata's count_py.
func startPyWorker(t testing.TB, e *env, h *host, name, url string) *worker {
	t.Helper()
	abs, _ := filepath.Abs("testdata/langgraph.json")
	cmd := exec.Command(e.python, "-m", "weft_worker", "--config", abs, "--url", url, "--worker-id", name,
		"--graphs", "count_py", "--concurrency", "8", "--wait-ms", "2000", "--grace-ms", "0", "--log-level", "info")
	cmd.Dir = filepath.Dir(abs)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(e.repo, "worker-py"), "PYTHONUNBUFFERED=1",
		"PYTHONDONTWRITEBYTECODE=1", "WEFT_API_KEY="+e.workerKey, "WEFT_PARENT_PID="+strconv.Itoa(os.Getpid()),
		"WEFT_PARTITION_WORKER="+name, "WEFT_PARTITION_EXEC_LOG="+filepath.Join(e.logDir, name+".exec.jsonl"))
	return &worker{host: h, Name: name, proc: h.Start(t, e.logDir, name, cmd)}
}

// startJSWorker runs the JS worker (worker-js) serving the soak's count_js.
func startJSWorker(t testing.TB, e *env, h *host, name, url string) *worker {
	t.Helper()
	cmd := exec.Command("node", filepath.Join(e.repo, "worker-js/bin/weft-worker.mjs"),
		"--config", filepath.Join(e.repo, "worker-js/test/fixtures/soak/langgraph.json"), "--url", url,
		"--worker-id", name, "--concurrency", "8", "--wait-ms", "2000", "--grace-ms", "0", "--log-level", "info")
	cmd.Env = append(os.Environ(), "WEFT_API_KEY="+e.workerKey, "WEFT_PARENT_PID="+strconv.Itoa(os.Getpid()),
		"WEFT_SOAK_WORKER="+name, "WEFT_SOAK_EXEC_LOG="+filepath.Join(e.logDir, name+".exec.jsonl"))
	return &worker{host: h, Name: name, proc: h.Start(t, e.logDir, name, cmd)}
}

// pythonBin is the interpreter with langgraph and the Python worker's
// dependencies: WEFT_TEST_PYTHON (as make test-go sets it), else the
// Python suites' virtualenv.
func pythonBin(t testing.TB, repo string) string {
	t.Helper()
	p := os.Getenv("WEFT_TEST_PYTHON")
	if p == "" {
		p = filepath.Join(repo, "sdk-tests/py/.venv/bin/python")
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no Python for the Python worker at %s: run `make sdk-tests/py/.venv/.installed` (or set WEFT_TEST_PYTHON)", p)
	}
	return p
}
