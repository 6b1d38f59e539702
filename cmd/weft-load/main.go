// Command weft-load measures Weft's thread, state and run APIs over HTTP on
// a real PostgreSQL: POST /threads (create) and GET /threads/{id} (get),
// state reads and updates, and create + runs/wait, each at several
// concurrencies, and prints throughput and latency percentiles.
//
// Without -url it starts a Weft server in-process on a loopback port with a
// fresh managed PostgreSQL cluster in a temporary directory (removed at the
// end), so the numbers include the real database with fsync on. Every
// phase is bounded by -duration and -max-requests; only loopback addresses
// are accepted as targets.
//
// The threads suite also runs a baseline at each concurrency: the bare
// durable INSERT INTO threads … RETURNING (one autocommit statement, i.e.
// its own transaction) through pgx on the same database, one connection
// per worker, and prints Weft's create throughput as a ratio of it. With
// -url the baseline needs -database-url (it is skipped otherwise).
// -cpuprofile writes a CPU profile of the whole process (client and, when
// in-process, server) taken during the create phases.
//
// The runs suite times create thread + POST /threads/{id}/runs/wait on
// foo_bar (the answer is checked), reads the created→claimed latency of
// the phase's run_dispatches rows from the database (with -url it needs
// -database-url), and prints PASS/MISS against the JS dev server targets;
// a miss does not fail the process.
//
// The stream suite (in-process only) measures Server-Sent Events: time to
// first event and events/s of a 200-superstep run on one stream, the
// memory of 1,000 concurrent idle join streams, and the latency of a join
// stream served by a second server (no workers, same database) behind the
// NOTIFY of each commit. The in-process servers register a "loop" graph
// besides the built-in ones for it.
//
// The long suite (-suite long, not part of all; needs the database: in
// process, or -database-url) is issue 16's long-thread benchmark:
// echo_chat conversations of -long-turns turns (one runs/wait per turn, a
// human message of 200 random characters), run one after another, with the
// row bytes each leaves per table (pg_column_size, stored and uncompressed)
// and the growth of pg_total_relation_size over schema public, as ratios of
// the final messages' JSON and per turn; the same conversations written by
// LangGraph.js's own PostgresSaver (worker-js/bench/long-saver.mjs, run by
// node on its own schema of the same database) at -long-saver-turns; state,
// history(10), windowed state (messages_window), the messages page and the
// thread (GET /threads/{id}) read on threads of -long-read-turns turns (n/a
// where the server has no such endpoint); stateless runs/wait on foo_bar at
// concurrency 16; and the targets, PASS/MISS. Run it from the
// repository root.
//
//	go run ./cmd/weft-load                      # self-contained
//	go run ./cmd/weft-load -suite threads -cpuprofile /tmp/create.pprof
//	go run ./cmd/weft-load -suite runs -duration 5s
//	go run ./cmd/weft-load -suite stream
//	go run ./cmd/weft-load -suite long -long-saver-turns 100,200,1000
//	go run ./cmd/weft-load -url http://127.0.0.1:8123 -duration 10s
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/tracing"
)

func main() {
	target := flag.String("url", "", "server to load (loopback only); empty starts one in-process")
	duration := flag.Duration("duration", 5*time.Second, "length of each phase")
	maxReq := flag.Int("max-requests", 200000, "request cap per phase")
	concs := flag.String("concurrency", "1,16", "comma-separated concurrencies")
	suites := flag.String("suite", "all", "threads, state, runs, stream, all (those four) or long")
	dsn := flag.String("database-url", "", "with -url: the server's database, for the INSERT baseline and created→claimed")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the create phases to this file")
	workers := flag.Int("workers", 4*runtime.NumCPU(), "in-process server only: its run workers (the server's -workers default)")
	streamRuns := flag.Int("stream-runs", 10, "stream suite: runs measured in the first-event and join-latency phases (also bounded by -duration, -max-requests)")
	idleN := flag.Int("idle-streams", 1000, "stream suite: concurrent idle streams")
	idleHold := flag.Duration("idle-hold", 5*time.Second, "stream suite: how long the idle streams are held open")
	longTurns := flag.String("long-turns", "100,200,1000", "long suite: turns of the echo_chat threads whose storage is measured (run one after another)")
	longReadTurns := flag.String("long-read-turns", "10,100,1000", "long suite: turns of the threads read (the storage threads of that length are reused)")
	longSaverTurns := flag.String("long-saver-turns", "100,200", "long suite: turns of LangGraph.js PostgresSaver's conversations (quadratic: 1000 takes minutes); empty skips it")
	longReads := flag.Int("long-reads", 50, "long suite: requests per read measurement")
	longNode := flag.String("node", "node", "long suite: the node binary for the PostgresSaver baseline")
	longScript := flag.String("long-saver-script", "worker-js/bench/long-saver.mjs", "long suite: the PostgresSaver baseline script (its ../node_modules must hold @langchain/langgraph-checkpoint-postgres)")
	flag.Parse()
	switch *suites {
	case "all", "threads", "state", "runs", "stream", "long":
	default:
		fmt.Fprintf(os.Stderr, "weft-load: unknown suite %q (threads, state, runs, stream, all or long)\n", *suites)
		os.Exit(2)
	}
	lo := longOpts{reads: *longReads, node: *longNode, script: *longScript}
	for _, f := range []struct {
		name, value string
		dst         *[]int
		max         int
	}{{"-long-turns", *longTurns, &lo.turns, 10000}, {"-long-read-turns", *longReadTurns, &lo.readTurns, 10000}, {"-long-saver-turns", *longSaverTurns, &lo.saverTurns, 2000}} {
		var err error
		if *f.dst, err = parseCounts(f.value, f.max); err != nil {
			fmt.Fprintf(os.Stderr, "weft-load: %s: %v\n", f.name, err)
			os.Exit(2)
		}
	}
	if len(lo.turns) == 0 || len(lo.readTurns) == 0 || lo.reads < 1 || lo.reads > 10000 {
		fmt.Fprintf(os.Stderr, "weft-load: -long-turns and -long-read-turns must not be empty, -long-reads must be in 1..10000\n")
		os.Exit(2)
	}
	if *streamRuns < 1 || *streamRuns > 1000 || *idleN < 1 || *idleN > 10000 || *idleHold <= 0 || *idleHold > time.Minute {
		fmt.Fprintf(os.Stderr, "weft-load: -stream-runs must be in 1..1000, -idle-streams in 1..10000, -idle-hold in (0, 1m]\n")
		os.Exit(2)
	}
	if *workers < 1 || *workers > 1024 {
		fmt.Fprintf(os.Stderr, "weft-load: -workers %d must be in 1..1024\n", *workers)
		os.Exit(2)
	}
	so := streamOpts{runs: *streamRuns, idleN: *idleN, idleHold: *idleHold}
	if err := run(*target, *duration, *maxReq, *concs, *suites, *dsn, *cpuProfile, *workers, so, lo); err != nil {
		fmt.Fprintln(os.Stderr, "weft-load:", err)
		os.Exit(1)
	}
}

// streamOpts are the stream suite's bounds.
type streamOpts struct {
	runs, idleN int
	idleHold    time.Duration
}

func run(target string, duration time.Duration, maxReq int, concs, suites, dsn, cpuProfile string, workers int, so streamOpts, lo longOpts) error {
	var inproc *server.Server
	if target == "" {
		dir, err := os.MkdirTemp("", "weft-load-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		// Workers must be set: a zero Config has none, and runs would wait
		// for external workers forever.
		cfg := server.Config{Addr: "127.0.0.1:0", DataDir: dir, Migrate: true, MaxBodyBytes: 1 << 20, ShutdownTimeout: 10 * time.Second,
			Workers: workers, Graphs: loadGraphs()}
		// The OTEL_* variables trace the in-process server as they do weft's
		// (to measure tracing's cost: run twice, with and without them).
		if cfg.Tracing, err = tracing.SettingsFromEnv(os.Getenv); err != nil {
			return err
		}
		srv, err := server.Start(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			return err
		}
		defer srv.Shutdown(context.Background())
		inproc = srv
		target = srv.URL()
		dsn = srv.DSN()
		fmt.Printf("server: in-process Weft %s on %s, %d in-process run workers, managed PostgreSQL (fsync on) in %s, tracing %v\n", server.Version, target, cfg.Workers, dir, cfg.Tracing.On())
	} else {
		fmt.Printf("server: %s\n", target)
	}
	if err := checkLoopback(target); err != nil {
		return err
	}
	var levels []int
	for _, s := range strings.Split(concs, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 256 {
			return fmt.Errorf("bad concurrency %q", s)
		}
		levels = append(levels, n)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}, Timeout: 60 * time.Second}
	l := &load{client: client, target: target, dsn: dsn, duration: duration, maxReq: maxReq, levels: levels, cpuProfile: cpuProfile,
		streamRuns: so.runs, idleN: so.idleN, idleHold: so.idleHold, workers: workers}
	fmt.Printf("method: each phase runs N workers in a closed loop for %s (or %d requests); latency is per request, client side\n", duration, maxReq)
	if suites == "all" || suites == "threads" {
		if err := l.threads(); err != nil {
			return err
		}
	}
	if suites == "all" || suites == "state" {
		if err := l.state(); err != nil {
			return err
		}
	}
	if suites == "all" || suites == "runs" {
		if err := l.runs(); err != nil {
			return err
		}
	}
	if suites == "all" || suites == "stream" {
		if err := l.streamSuite(inproc, workers); err != nil {
			return err
		}
	}
	if suites == "long" {
		if err := l.longSuite(lo); err != nil {
			return err
		}
	}
	return nil
}

// parseCounts parses a comma-separated list of counts in 1..max ("" is
// an empty list).
func parseCounts(s string, maxN int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > maxN {
			return nil, fmt.Errorf("%q is not a count in 1..%d", f, maxN)
		}
		out = append(out, n)
	}
	return out, nil
}

func checkLoopback(target string) error {
	u, err := url.Parse(target)
	if err != nil {
		return err
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("refusing to load %s: only loopback targets are allowed", target)
}

// load is one benchmark session against one server.
type load struct {
	client     *http.Client
	target     string
	dsn        string // the server's database ("" = unknown: no baseline)
	duration   time.Duration
	maxReq     int
	levels     []int
	cpuProfile string

	// stream suite
	streamRuns int
	idleN      int
	idleHold   time.Duration
	workers    int // the in-process server's run workers
}

// post sends a JSON body and decodes a JSON answer into out (when not nil).
func (l *load) post(path string, body any, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	resp, err := l.client.Post(l.target+path, "application/json", bytes.NewReader(b))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, msg)
	}
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// get fetches path and discards the body.
func (l *load) get(path string) error {
	_, err := l.getSize(path)
	return err
}

// getSize fetches path and returns the body's size.
func (l *load) getSize(path string) (int64, error) {
	resp, err := l.client.Get(l.target + path)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, _ := io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return n, fmt.Errorf("GET %s: %d", path, resp.StatusCode)
	}
	return n, nil
}

type result struct {
	lat     []time.Duration
	errs    int64
	elapsed time.Duration
}

func (r result) opsPerSec() float64 { return float64(len(r.lat)) / r.elapsed.Seconds() }

func (r result) pct(p float64) float64 {
	if len(r.lat) == 0 {
		return 0
	}
	i := min(int(p*float64(len(r.lat))), len(r.lat)-1)
	return float64(r.lat[i].Microseconds()) / 1000
}

func (r result) print(op string, c int, ref string) {
	fmt.Printf("%-8s %5d %9d %9.0f %8.2f %8.2f %8.2f %8.2f %8d %s\n", op, c, len(r.lat), r.opsPerSec(),
		r.pct(0.50), r.pct(0.90), r.pct(0.99), r.pct(1), r.errs, ref)
}

// phase runs fn from c workers until the duration or the request cap is
// reached and returns the sorted latencies of the successful calls.
func phase(c int, d time.Duration, maxReq int, fn func(i int) error) result {
	var next, errs atomic.Int64
	lats := make([][]time.Duration, c)
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range c {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				i := int(next.Add(1))
				if i > maxReq {
					return
				}
				t0 := time.Now()
				if err := fn(i); err != nil {
					errs.Add(1)
					continue
				}
				lats[w] = append(lats[w], time.Since(t0))
			}
		})
	}
	wg.Wait()
	all := slices.Concat(lats...)
	slices.Sort(all)
	return result{lat: all, errs: errs.Load(), elapsed: time.Since(start)}
}
