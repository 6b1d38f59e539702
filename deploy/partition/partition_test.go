package partition

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// lease is the servers' WEFT_LEASE: how long a cut-off worker keeps a run.
const lease = 3 * time.Second

// env is the whole deployment: the hosts, their processes, the client.
type env struct {
	t         *testing.T
	repo      string
	logDir    string
	weftBin   string
	python    string
	topo      *topology
	db        *database
	tp        *toxi
	servers   []*server
	workers   map[string]*worker
	client    *apiClient
	clientKey string
	workerKey string
	pool      *pgxpool.Pool // the checker's connection, through the socket
	started   time.Time
}

// Addresses: the last octet of each host in the topology's /24.
const (
	octetDB     = 2
	octetProxy  = 3
	octetServer = 11 // s1, s2, s3: 11, 12, 13
	octetWorker = 21 // py1, py2, js1: 21, 22, 23
	octetClient = 31
)

// Toxiproxy's ports on its host: pgBase+i is server i's way to
// PostgreSQL, clientBase+i the client's way to server i, workerBase+i
// worker i's way to its server.
const (
	pgBase     = 5431
	clientBase = 8101
	workerBase = 8201
)

// workerNames are the workers, worker i talking to server i.
var workerNames = []string{"py1", "py2", "js1"}

// setup builds the topology and starts everything: PostgreSQL, Toxiproxy,
// three servers, three workers, and the client.
func setup(t *testing.T) *env {
	e := &env{t: t, repo: repoRoot(t), workers: map[string]*worker{}, started: time.Now()}
	e.python = pythonBin(t, e.repo)
	if _, err := os.Stat(filepath.Join(e.repo, "worker-js/node_modules/@langchain/langgraph")); err != nil {
		t.Fatal("worker-js/node_modules is missing: run `make worker-js/node_modules`")
	}
	e.logDir = t.TempDir()
	if keep := os.Getenv("WEFT_PARTITION_LOGS"); keep != "" {
		e.logDir = keep
		if err := os.MkdirAll(keep, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.weftBin = filepath.Join(e.logDir, "weft")
	goBuild(t, e.repo, "./cmd/server", e.weftBin)
	e.topo = newTopology(t)
	dbHost := e.topo.addHost("db", octetDB)
	proxyHost := e.topo.addHost("tp", octetProxy)
	clientHost := e.topo.addHost("cl", octetClient)
	var serverHosts, workerHosts []*host
	for i := range 3 {
		serverHosts = append(serverHosts, e.topo.addHost(fmt.Sprintf("s%d", i+1), octetServer+i))
		workerHosts = append(workerHosts, e.topo.addHost(workerNames[i], octetWorker+i))
	}
	e.client = &apiClient{http: clientHost.HTTPClient()}

	e.db = startPostgres(t, dbHost, e.logDir)
	e.pool = e.db.Pool(t)
	var proxies []proxySpec
	for i, sh := range serverHosts {
		proxies = append(proxies,
			proxySpec{Name: fmt.Sprintf("pg-s%d", i+1), Listen: fmt.Sprintf("%s:%d", proxyHost.Addr, pgBase+i),
				Upstream: fmt.Sprintf("%s:%d", dbHost.Addr, pgPort), Enabled: true},
			proxySpec{Name: fmt.Sprintf("cl-s%d", i+1), Listen: fmt.Sprintf("%s:%d", proxyHost.Addr, clientBase+i),
				Upstream: fmt.Sprintf("%s:%d", sh.Addr, apiPort), Enabled: true},
			proxySpec{Name: "w-" + workerNames[i], Listen: fmt.Sprintf("%s:%d", proxyHost.Addr, workerBase+i),
				Upstream: fmt.Sprintf("%s:%d", sh.Addr, apiPort), Enabled: true})
	}
	e.tp = startToxiproxy(t, proxyHost, e.logDir, proxies)

	for i, sh := range serverHosts {
		s := startServer(t, e, sh, fmt.Sprintf("s%d", i+1), fmt.Sprintf("%s:%d", proxyHost.Addr, pgBase+i))
		s.ClientURL = fmt.Sprintf("http://%s:%d", proxyHost.Addr, clientBase+i)
		s.WorkerURL = fmt.Sprintf("http://%s:%d", proxyHost.Addr, workerBase+i)
		e.servers = append(e.servers, s)
		if i == 0 { // s1 has migrated the database: keys can be made
			e.clientKey = createKey(t, e, "--tenant", "partition", "--scope", "tenant,admin", "--name", "partition client")
			e.workerKey = createKey(t, e, "--scope", "worker", "--name", "partition workers")
			e.client.key = e.clientKey
		}
	}
	for i, wh := range workerHosts {
		name := workerNames[i]
		if strings.HasPrefix(name, "py") {
			e.workers[name] = startPyWorker(t, e, wh, name, e.servers[i].WorkerURL)
		} else {
			e.workers[name] = startJSWorker(t, e, wh, name, e.servers[i].WorkerURL)
		}
	}
	e.waitGraphs("count_py", "count_js")
	return e
}

// waitGraphs waits until the workers have registered the graphs.
func (e *env) waitGraphs(ids ...string) {
	e.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for _, id := range ids {
		for {
			r, err := e.client.do("POST", e.servers[0].ClientURL+"/assistants/search", map[string]any{"graph_id": id, "limit": 1}, 5*time.Second)
			if err == nil && r.status == http.StatusOK && strings.Contains(string(r.body), id) {
				break
			}
			if time.Now().After(deadline) {
				e.t.Fatalf("graph %s was not registered within 60 s (%v %d)", id, err, r.status)
			}
			for name, w := range e.workers {
				if w.proc.Exited() {
					e.t.Fatalf("worker %s exited: %v", name, w.proc.err)
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// since is how long the suite has been running, for logs.
func (e *env) since() time.Duration { return time.Since(e.started).Round(100 * time.Millisecond) }

func (e *env) logf(format string, args ...any) {
	e.t.Logf("+%v %s", e.since(), fmt.Sprintf(format, args...))
}

// TestPartitions spreads Weft over network namespaces — PostgreSQL, three
// servers, two Python workers and a JS worker, Toxiproxy in front of the
// database and the servers, the client — and, under a steady load, cuts and
// slows the links between them one fault after another; then it checks
// that every acknowledged run ended exactly once, no step was committed
// twice, every stream completed and no dispatch is left claimed, and prints
// a report per fault.
func TestPartitions(t *testing.T) {
	e := setup(t)
	e.logf("up: PostgreSQL, Toxiproxy, 3 servers, workers py1 py2 js1 (subnet %s0/24)", e.topo.subnet)
	seed := uint64(time.Now().UnixNano())
	e.logf("load: 3 clients, seed %d", seed)
	l := startLoad(e, 3, seed)
	stopped := false
	defer func() {
		if !stopped {
			l.Stop()
		}
	}()
	time.Sleep(6 * time.Second)
	var faults []*fault
	run := func(f *fault) {
		faults = append(faults, f)
		e.logf("fault %s", f.Name)
		f.fn(e, l, f)
		e.logf("fault %s: healed after %v, recovered in %v; %s", f.Name, f.End.Sub(f.Start).Round(10*time.Millisecond),
			f.Recovery().Round(10*time.Millisecond), strings.Join(f.Notes, "; "))
		time.Sleep(4 * time.Second) // the "after" window
	}
	run(&fault{Name: "a worker cut", fn: faultWorkerCut})
	run(&fault{Name: "b1 server-db refused", fn: refusedCut.run})
	run(&fault{Name: "b2 server-db silent", fn: silentCut.run})
	run(&fault{Name: "c client cut", fn: faultClientStream})
	run(&fault{Name: "d1 slow links", fn: faultSlowLinks})
	run(&fault{Name: "d2 db unreachable", fn: faultDBUnreachable})
	l.Stop()
	stopped = true
	e.logf("load stopped")
	// Whatever a fault left behind (a heal that failed is reported by its
	// fault), the checker reads through a whole network.
	if err := e.tp.Reset(); err != nil {
		t.Errorf("reset Toxiproxy: %v", err)
	}
	check(t, e, l, faults)
}
