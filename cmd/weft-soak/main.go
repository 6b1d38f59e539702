// Command weft-soak is a chaos soak of Weft: three server processes, two JS
// workers and a Go worker on one PostgreSQL, under a mixed load, while a
// seeded random process is SIGKILLed and restarted every few seconds and
// PostgreSQL is restarted once. Afterwards it checks, and prints:
//
//   - every run is in a final state;
//   - every committed step executed once (the workers' counting graphs log
//     each node execution; see exactly.go for the precise rule) and no
//     built-in slow-graph step was committed twice;
//   - every stream that dropped (on purpose, or because its server was
//     killed) and resumed with Last-Event-ID saw its run's events gap-free,
//     in order, once each;
//   - no 5xx other than 503, and 503 only while PostgreSQL was down;
//   - no claimed dispatch without a live lease, no queued dispatch of a
//     finished run, no attempt left open, no thread left busy;
//   - runs completed in every 10-second window (outside the outage), with
//     runs/s per window;
//   - no process exited by itself outside the outage.
//
// It exits 1 on any violation. Everything runs on loopback, bounded in time
// (-duration of load, then at most -grace for runs to settle). Run it from
// the repository root (it builds ./cmd/server and runs worker-js, whose
// node_modules must be installed):
//
//	go run ./cmd/weft-soak -duration 2m -seed 42
//
// Logs of every process incarnation, the execution logs and report.txt go
// to -out (default: a temporary directory, removed after a clean run).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/weftdev/weft/internal/postgres"
)

type config struct {
	duration    time.Duration
	seed        uint64
	concurrency int
	out         string
	repo        string
	killEvery   time.Duration
	lease       time.Duration
	grace       time.Duration
	keep        bool
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("weft-soak", flag.ContinueOnError)
	var cfg config
	var role, url, workerID, execLog string
	fs.DurationVar(&cfg.duration, "duration", 2*time.Minute, "how long the load and the chaos last")
	fs.Uint64Var(&cfg.seed, "seed", 0, "random seed of the load and the kills (0: from the clock; printed)")
	fs.IntVar(&cfg.concurrency, "concurrency", 12, "load clients")
	fs.StringVar(&cfg.out, "out", "", "directory for logs and report.txt (default: a temporary one, removed after a clean run)")
	fs.StringVar(&cfg.repo, "repo", ".", "the Weft repository (it builds ./cmd/server and runs worker-js from it)")
	fs.DurationVar(&cfg.killEvery, "kill-every", 4*time.Second, "mean time between kills (each wait is uniform in [0.5×, 1.5×])")
	fs.DurationVar(&cfg.lease, "lease", 4*time.Second, "the servers' WEFT_LEASE")
	fs.DurationVar(&cfg.grace, "grace", 90*time.Second, "how long runs may take to settle after the load")
	fs.StringVar(&role, "role", "", "internal: goworker runs the soak's Go worker")
	fs.StringVar(&url, "url", "", "internal (goworker): the server")
	fs.StringVar(&workerID, "worker-id", "", "internal (goworker): its worker id")
	fs.StringVar(&execLog, "exec-log", "", "internal (goworker): its execution log")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if role == "goworker" {
		return goWorkerMain(url, workerID, execLog)
	}
	if cfg.duration < 10*time.Second || cfg.concurrency < 1 || cfg.killEvery < 500*time.Millisecond {
		fmt.Fprintln(os.Stderr, "weft-soak: -duration must be at least 10s, -concurrency at least 1, -kill-every at least 500ms")
		return 2
	}
	if cfg.seed == 0 {
		cfg.seed = uint64(time.Now().UnixNano())
	}
	if cfg.out == "" {
		dir, err := os.MkdirTemp("", "weft-soak-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "weft-soak:", err)
			return 1
		}
		cfg.out = dir
	} else {
		cfg.keep = true
	}
	ok, err := soak(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "weft-soak:", err)
		fmt.Fprintln(os.Stderr, "weft-soak: logs in", cfg.out)
		return 1
	}
	if !ok {
		fmt.Println("logs in", cfg.out)
		return 1
	}
	if !cfg.keep {
		_ = os.RemoveAll(cfg.out)
	}
	return 0
}

func logf(format string, args ...any) {
	fmt.Printf("%s  %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

// soak runs the whole soak; ok is false when a check failed.
func soak(cfg config) (ok bool, err error) {
	logf("weft-soak: seed %d, %v of load by %d clients, a kill every ~%v, lease %v; out %s",
		cfg.seed, cfg.duration, cfg.concurrency, cfg.killEvery, cfg.lease, cfg.out)
	repo, err := filepath.Abs(cfg.repo)
	if err != nil {
		return false, err
	}
	cfg.repo = repo
	if _, err := os.Stat(filepath.Join(repo, "worker-js/node_modules/@langchain/langgraph")); err != nil {
		return false, fmt.Errorf("worker-js/node_modules is missing under %s: run `cd worker-js && npm ci` first", repo)
	}
	weftBin := filepath.Join(cfg.out, "weft")
	build := exec.Command("go", "build", "-o", weftBin, "./cmd/server")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		return false, fmt.Errorf("go build ./cmd/server: %v\n%s", err, out)
	}
	self, err := os.Executable()
	if err != nil {
		return false, err
	}

	// PostgreSQL: a cluster of the soak's own, whose restart it controls.
	pgDir, err := os.MkdirTemp("", "weft-soak-pg-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(pgDir)
	cluster, err := postgres.NewCluster(pgDir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := cluster.Start(ctx); err != nil {
		return false, fmt.Errorf("start PostgreSQL: %w", err)
	}
	defer func() {
		if err := cluster.Stop(); err != nil {
			logf("stop PostgreSQL: %v", err)
		}
		if b, err := os.ReadFile(filepath.Join(cluster.Dir, "postgres.log")); err == nil {
			_ = os.WriteFile(filepath.Join(cfg.out, "logs", "postgres.log"), b, 0o644)
		}
		if cluster.Dir != pgDir {
			_ = os.RemoveAll(cluster.Dir)
		}
	}()
	if err := cluster.EnsureDatabase(ctx, "weft"); err != nil {
		return false, err
	}
	dsn := cluster.DSN("weft")

	tl := &timeline{}
	f, err := newFleet(cfg, dsn, weftBin, self, tl)
	if err != nil {
		return false, err
	}
	f.start()
	defer f.stop()
	upCtx, upCancel := context.WithTimeout(ctx, 60*time.Second)
	defer upCancel()
	if !f.waitAllUp(upCtx) {
		return false, fmt.Errorf("the servers did not come up within 60 s (logs in %s/logs)", cfg.out)
	}
	probe := &client{fleet: f, http: &http.Client{}, rng: rand.New(rand.NewPCG(cfg.seed, 0)), st: newStats()}
	if err := waitGraphs(probe, 60*time.Second); err != nil {
		return false, err
	}
	logf("3 servers, the Go worker and 2 JS workers are up; load and chaos for %v", cfg.duration)

	// Load and chaos.
	st := newStats()
	stop := make(chan struct{})
	tl.start = time.Now()
	var bg sync.WaitGroup
	bg.Go(func() { runLoad(f, cfg.concurrency, cfg.seed, st, stop) })
	chaosDone := make(chan struct{})
	bg.Go(func() { chaos(f, cluster, cfg, stop, chaosDone) })
	progress(st, tl, cfg.duration)
	close(stop)
	<-chaosDone
	loadEnd := time.Now()
	logf("load stopped; waiting for the clients' last actions")
	bg.Wait()

	// Settle: every process up, every run final.
	settleCtx, settleCancel := context.WithTimeout(context.Background(), cfg.grace+30*time.Second)
	defer settleCancel()
	if !f.waitAllUp(settleCtx) {
		logf("not every server is up again")
	}
	db, err := postgres.Connect(settleCtx, dsn)
	if err != nil {
		return false, err
	}
	defer db.Close()
	left, err := settle(settleCtx, db, cfg.grace)
	if err != nil {
		return false, fmt.Errorf("settle: %w", err)
	}
	logf("settled in %v (%d runs still pending or running)", time.Since(loadEnd).Round(time.Millisecond), left)

	fd := &findings{}
	if err := checkDatabase(settleCtx, db, fd); err != nil {
		return false, fmt.Errorf("check database: %w", err)
	}
	if err := checkExactlyOnce(settleCtx, db, probe, filepath.Join(cfg.out, "exec"), fd); err != nil {
		return false, fmt.Errorf("check exactly once: %w", err)
	}
	if err := checkSlowLogs(settleCtx, db, probe, fd); err != nil {
		return false, fmt.Errorf("check slow logs: %w", err)
	}
	if err := checkStreams(settleCtx, db, fd, st); err != nil {
		return false, fmt.Errorf("check streams: %w", err)
	}
	checkResponses(fd, st, tl)
	if err := checkServerLogs(fd, filepath.Join(cfg.out, "logs"), tl); err != nil {
		return false, fmt.Errorf("check server logs: %w", err)
	}
	checkExits(fd, tl)
	if fd.windows, err = runWindows(settleCtx, db, tl.start, loadEnd); err != nil {
		return false, err
	}
	checkStalls(fd, tl.start, tl)
	rep := report(cfg, fd, st, tl, loadEnd)
	fmt.Print(rep)
	_ = os.WriteFile(filepath.Join(cfg.out, "report.txt"), []byte(rep), 0o644)
	return len(fd.violations) == 0, nil
}

// waitGraphs waits until the workers' graphs are registered.
func waitGraphs(c *client, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for _, g := range countingGraphs {
		for {
			r := c.do("POST", "/assistants/search", map[string]any{"graph_id": g, "limit": 1}, 5*time.Second)
			if r.status == http.StatusOK && strings.Contains(string(r.body), g) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("graph %s was not registered within %v (worker logs in %s/logs)", g, limit, c.fleet.cfg.out)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return nil
}

// chaos kills a random process every few seconds (restarted after a short
// delay) and restarts PostgreSQL once, at 40% of the duration, until stop.
func chaos(f *fleet, cluster *postgres.Cluster, cfg config, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	rng := rand.New(rand.NewPCG(cfg.seed, 1<<32))
	pgAt := time.After(cfg.duration * 2 / 5)
	pgDone := make(chan struct{})
	pgRestarted := false
	for {
		wait := cfg.killEvery/2 + time.Duration(rng.Int64N(int64(cfg.killEvery)))
		select {
		case <-stop:
			if pgRestarted {
				<-pgDone
			}
			return
		case <-pgAt:
			pgRestarted = true
			go func() {
				defer close(pgDone)
				restartPostgres(f, cluster)
			}()
		case <-time.After(wait):
			p := f.procs[rng.IntN(len(f.procs))]
			f.kill(p, 200*time.Millisecond+time.Duration(rng.Int64N(int64(1300*time.Millisecond))))
		}
	}
}

// restartPostgres stops PostgreSQL (fast shutdown: connections are cut,
// open transactions roll back) and starts it again after 3 seconds.
func restartPostgres(f *fleet, cluster *postgres.Cluster) {
	f.timeline.add(eventPGStop, "postgres", "pg_ctl stop -m fast")
	logf("stopping PostgreSQL")
	if err := cluster.Stop(); err != nil {
		logf("stop PostgreSQL: %v", err)
	}
	time.Sleep(3 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := cluster.Start(ctx); err != nil {
		logf("start PostgreSQL again: %v", err)
		f.timeline.add(eventExit, "postgres", "could not be started again: "+err.Error())
		return
	}
	f.timeline.add(eventPGStart, "postgres", "started again")
	logf("PostgreSQL started again")
}

// progress prints a line every 10 s until d has passed.
func progress(st *stats, tl *timeline, d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		time.Sleep(min(10*time.Second, time.Until(end)))
		st.mu.Lock()
		n := 0
		for _, v := range st.actions {
			n += v
		}
		codes := fmtCodes(st.byStatus)
		st.mu.Unlock()
		kills := 0
		for _, e := range tl.all() {
			if e.kind == eventKill {
				kills++
			}
		}
		logf("%v: %d actions, %d kills; responses %s", time.Since(tl.start).Round(time.Second), n, kills, codes)
	}
}

// checkExits: a process that exited by itself (not killed) outside the
// PostgreSQL outage crashed.
func checkExits(fd *findings, tl *timeline) {
	for _, e := range tl.all() {
		if e.kind == eventExit && (e.who == "postgres" || !tl.duringOutage(e.at, outageSlack)) {
			fd.violate("%s: %s", e.who, e.detail)
		}
	}
}
