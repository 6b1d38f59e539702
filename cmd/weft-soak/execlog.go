package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// Exec is one execution of a node of a counting graph, as the graph logs
// it when the execution starts (before any of its work, so an execution
// killed half-way is counted too). The Go worker (goworker.go) and the JS
// graph (worker-js/test/fixtures/soak/count.mjs) write the same JSON lines,
// one file per process incarnation.
type Exec struct {
	Exec     string `json:"exec"`      // unique id, also written into the graph's "execs" channel
	RunID    string `json:"run_id"`    // the run executing the node
	ThreadID string `json:"thread_id"` // its thread
	Step     int    `json:"step"`      // superstep (checkpoint metadata "step")
	Node     string `json:"node"`      // node name
	Worker   string `json:"worker"`    // worker id of the process incarnation (as in run_dispatch_attempts.worker)
	TMs      int64  `json:"t_ms"`      // wall clock at the start, Unix milliseconds
}

// task is what an execution executes: one node of one step of one run.
type task struct {
	run  string
	step int
	node string
}

func (e Exec) task() task { return task{e.RunID, e.Step, e.Node} }

// execLog appends Execs to a file. Each record is one write(2) on an
// O_APPEND file: once written it is in the kernel's page cache, so it
// survives a SIGKILL of the process (the soak kills processes, not the
// machine).
type execLog struct {
	mu     sync.Mutex
	f      *os.File
	worker string
	n      int
}

func openExecLog(path, worker string) (*execLog, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("exec log: %w", err)
	}
	return &execLog{f: f, worker: worker}, nil
}

// record logs an execution of node at step of run and returns its id.
func (l *execLog) record(run, thread string, step int, node string) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	e := Exec{Exec: fmt.Sprintf("%s:%d", l.worker, l.n), RunID: run, ThreadID: thread, Step: step, Node: node,
		Worker: l.worker, TMs: time.Now().UnixMilli()}
	b, err := json.Marshal(e)
	if err != nil {
		return "", err
	}
	if _, err := l.f.Write(append(b, '\n')); err != nil {
		return "", fmt.Errorf("exec log: %w", err)
	}
	return e.Exec, nil
}

// readExecLogs reads every *.jsonl file of dir. A torn last line (a process
// killed in the middle of a write, which a single small write(2) makes
// unlikely) is skipped and counted.
func readExecLogs(dir string) (execs []Exec, torn int, err error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, 0, err
	}
	sort.Strings(files)
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, 0, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var e Exec
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Exec == "" {
				torn++
				continue
			}
			execs = append(execs, e)
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, 0, fmt.Errorf("read %s: %w", name, err)
		}
	}
	return execs, torn, nil
}
