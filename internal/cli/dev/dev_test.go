package dev_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server/servertest"
	"github.com/weftdev/weft/internal/store/storetest"
)

// logLines collects a process's JSON log lines.
type logLines struct {
	mu    sync.Mutex
	lines []map[string]any
	raw   bytes.Buffer
}

func (l *logLines) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		l.mu.Lock()
		l.raw.Write(append(sc.Bytes(), '\n'))
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			l.lines = append(l.lines, m)
		}
		l.mu.Unlock()
	}
}

// pids are the pids of the "JS worker started" lines, in order.
func (l *logLines) pids() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []int
	for _, m := range l.lines {
		if m["msg"] == "JS worker started" {
			out = append(out, int(m["pid"].(float64)))
		}
	}
	return out
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.raw.String()
}

// devProject copies testdata/devproject (TypeScript graphs named like the
// demos) to a temporary directory whose node_modules are worker-js's
// (@langchain/langgraph and tsx, as a LangGraph.js project has them).
func devProject(t *testing.T) string {
	t.Helper()
	return testProject(t, "devproject")
}

// testProject copies testdata/<name> as devProject does.
func testProject(t *testing.T, name string) string {
	t.Helper()
	modules, err := filepath.Abs("../../../worker-js/node_modules")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(modules, "@langchain", "langgraph")); err != nil {
		t.Fatalf("worker-js's packages are missing (cd worker-js && npm ci; make test does it): %v", err)
	}
	dir := t.TempDir()
	files, err := filepath.Glob(filepath.Join("testdata", name, "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "langgraph.json")
}

// `weft dev` serves the project's graphs, not the demos they are named
// like (with the config's env), indexes the store as the config's
// store.index says, restarts a worker that dies, and stops everything on
// SIGINT.
// devProcess is a running `weft dev`.
type devProcess struct {
	cmd    *exec.Cmd
	addr   string
	logs   *logLines
	exited chan error    // its exit, once
	done   chan struct{} // closed at its exit
}

// startDev starts `weft dev` with args on a free loopback address, the
// test's PostgreSQL and JSON logs, env added to this process's
// environment. It is killed when the test ends, and its log shown if the
// test failed.
func startDev(t *testing.T, args []string, env ...string) *devProcess {
	t.Helper()
	d := &devProcess{addr: servertest.FreeAddr(t), logs: &logLines{}, exited: make(chan error, 1), done: make(chan struct{})}
	d.cmd = exec.Command(servertest.Binary(t), append([]string{"dev"}, args...)...)
	d.cmd.Env = append(append(os.Environ(), "WEFT_ADDR="+d.addr, "DATABASE_URL="+pgtest.DSN(t), "WEFT_LOG_FORMAT=json"), env...)
	out, err := d.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go d.logs.read(out)
	go func() {
		d.exited <- d.cmd.Wait()
		close(d.done)
	}()
	t.Cleanup(func() {
		_ = d.cmd.Process.Kill() // an error once it exited
		select {
		case <-d.done:
		case <-time.After(10 * time.Second):
		}
		if t.Failed() {
			t.Log(d.logs.String())
		}
	})
	return d
}

func TestDevServesAProject(t *testing.T) {
	t.Parallel()
	config := devProject(t)
	embed := storetest.NewEmbedServer(t, 8)
	dev := startDev(t, []string{"--config", config, "-workers", "2"},
		"WEFT_STORE_INDEX=", "OPENAI_BASE_URL="+embed.URL, "OPENAI_API_KEY=test")
	cmd, addr, logs, exited := dev.cmd, dev.addr, dev.logs, dev.exited
	srv := servertest.Client(t, "http://"+addr, nil)
	ready := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(90 * time.Second); !ok(); time.Sleep(100 * time.Millisecond) {
			select {
			case err := <-exited:
				t.Fatalf("weft dev exited early (%v) before %s", err, what)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	graphIDs := func() string {
		resp, err := srv.Try("POST", "/assistants/search", map[string]any{})
		if err != nil || resp.Status != 200 {
			return ""
		}
		var as []map[string]any
		_ = json.Unmarshal(resp.Body, &as)
		var ids []string
		for _, a := range as {
			ids = append(ids, a["graph_id"].(string))
		}
		slices.Sort(ids)
		return strings.Join(ids, ",")
	}
	ready("the project's four graphs", func() bool { return graphIDs() == "echo_chat,foo_bar,hitl,slow" })

	wait := func() string {
		t.Helper()
		b, _ := json.Marshal(srv.Must(200, "POST", "/runs/wait", map[string]any{"assistant_id": "foo_bar", "input": map[string]any{}}).Map(t))
		return string(b)
	}
	if got := wait(); got != `{"bar":["project-a","project-b"],"foo":"project-b"}` {
		t.Fatalf("foo_bar answered %s: not the project's graph", got)
	}
	chat := srv.Must(200, "POST", "/runs/wait", map[string]any{"assistant_id": "echo_chat",
		"input": map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}}).Map(t)
	msgs := chat["messages"].([]any)
	if reply := msgs[len(msgs)-1].(map[string]any)["content"]; reply != "hello from the project's env: hi" {
		t.Fatalf("echo_chat replied %v: the config's env was not read", reply)
	}

	// Errors are plain text, as LangGraph.js's server writes them, unless the
	// client asks for JSON.
	missing := uuid.NewString()
	for _, accept := range []string{"", "application/json"} {
		req, _ := http.NewRequest("GET", "http://"+addr+"/threads/"+missing, nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want, wantType := "Thread with ID "+missing+" not found", "text/plain; charset=utf-8"
		if accept != "" {
			want, wantType = `{"detail":"`+want+`"}`+"\n", "application/json"
		}
		if resp.StatusCode != 404 || string(body) != want || resp.Header.Get("Content-Type") != wantType {
			t.Fatalf("GET a missing thread (Accept %q): %d %s %q, want 404 %s %q", accept, resp.StatusCode,
				resp.Header.Get("Content-Type"), body, wantType, want)
		}
	}

	// The store is indexed with the config's store.index: a query ranks with a score.
	srv.Must(204, "PUT", "/store/items", map[string]any{"namespace": []string{"notes"}, "key": "tea", "value": map[string]any{"text": "likes tea"}})
	ready("the item embedded", func() bool { return embed.Calls() > 0 })
	var found map[string][]map[string]any
	ready("a semantic hit", func() bool {
		resp, err := srv.Try("POST", "/store/items/search", map[string]any{"namespace_prefix": []string{"notes"}, "query": "tea"})
		return err == nil && resp.Status == 200 && json.Unmarshal(resp.Body, &found) == nil && len(found["items"]) == 1
	})
	if _, ok := found["items"][0]["score"].(float64); !ok {
		t.Fatalf("search result without a score: %v", found)
	}
	if models := embed.Models(); len(models) == 0 || models[0] != "fake-embedding" {
		t.Fatalf("embedding requests named models %v, want fake-embedding (the config's store.index)", models)
	}

	// A worker that dies is restarted, and serves again.
	first := logs.pids()[0]
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ready("a restarted worker", func() bool { return len(logs.pids()) >= 2 })
	if !strings.Contains(logs.String(), "JS worker exited; restarting") {
		t.Fatal("the restart was not logged")
	}
	if got := wait(); !strings.Contains(got, "project-b") {
		t.Fatalf("after the restart foo_bar answered %s", got)
	}

	// Ctrl-C stops the worker, then the server; the process exits 0.
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("weft dev exited with %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("weft dev did not stop on SIGINT")
	}
	pids := logs.pids()
	if err := syscall.Kill(pids[len(pids)-1], 0); err == nil {
		t.Fatalf("the worker (pid %d) outlived weft dev", pids[len(pids)-1])
	}
}

// A weft dev killed with no chance to stop its worker does not leave the
// worker running: the worker sees its parent gone and stops by itself.
func TestDevWorkerStopsWhenDevIsKilled(t *testing.T) {
	t.Parallel()
	dev := startDev(t, []string{"--config", devProject(t), "-workers", "0"},
		"WEFT_STORE_INDEX=", "OPENAI_BASE_URL=http://127.0.0.1:1", "OPENAI_API_KEY=unused")
	addr := dev.addr
	t.Cleanup(func() {
		if t.Failed() { // the worker we started, still running
			for _, pid := range dev.logs.pids() {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	srv := servertest.Client(t, "http://"+addr, nil)
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if resp, err := srv.Try("GET", "/assistants/foo_bar", nil); err == nil && resp.Status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the project's graphs were never registered")
		}
	}
	worker := dev.logs.pids()[0]
	if err := dev.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	running := func() bool { // a zombie nobody reaped yet has stopped
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", worker))
		return err == nil && !strings.Contains(string(stat), ") Z ")
	}
	for deadline := time.Now().Add(30 * time.Second); running(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the JS worker (pid %d) still runs 30 s after weft dev was killed", worker)
		}
	}
}
