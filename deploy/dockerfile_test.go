package deploy_test

// The worker images `weft dockerfile` writes: each Dockerfile parsed with
// BuildKit's own parser, and its install script (.weft-build/install.sh)
// run here, as the Dockerfile's RUN runs it, against projects (the Python
// pybench fixture, a TypeScript one in testdata/tsgraphs, examples/langgraph
// with a graph of each language), then the worker started
// as the Dockerfile's ENTRYPOINT, ENV and WORKDIR say (the image's paths
// mapped to temporary ones) against a server with API keys, running a graph.
//
// Installs here are offline (install.sh --offline-from): Python packages come
// from the test virtualenv (sdk-tests/py/.venv, checked by pip --no-index to
// satisfy every requirement), npm packages from the npm cache, with npm ci
// --offline. An image build fetches them from PyPI and npm instead.

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
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"

	"github.com/weftdev/weft/internal/auth"
	weftcli "github.com/weftdev/weft/internal/cli"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

// workerDockerfile is a generated Dockerfile, parsed.
type workerDockerfile struct {
	base       string
	env        map[string]string // every ENV, in order (later wins)
	workdir    string
	copies     []*instructions.CopyCommand
	runs       []string // shell-form RUN lines
	user       string   // the last USER
	entrypoint []string
	cmds       []instructions.Command
}

// projectCopy copies the project at src (not its node_modules, virtualenvs
// or caches) into a temporary directory named like it and returns that
// directory.
func projectCopy(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() && slices.Contains([]string{"node_modules", ".venv", "__pycache__", ".weft", ".weft-build"}, d.Name()) {
			return filepath.SkipDir
		}
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// editConfig changes the copy's langgraph.json.
func editConfig(t *testing.T, dir string, edit func(map[string]any)) {
	t.Helper()
	path := filepath.Join(dir, "langgraph.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	edit(cfg)
	if b, err = json.MarshalIndent(cfg, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// weftDockerfile runs `weft dockerfile` on the project at dir with args
// and parses the Dockerfile it wrote with BuildKit.
func weftDockerfile(t *testing.T, dir string, args ...string) (*workerDockerfile, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	argv := append([]string{"dockerfile", "-c", filepath.Join(dir, "langgraph.json")}, args...)
	if code := weftcli.Run(nil, nil, argv, func(string) string { return "" }, &stdout, &stderr); code != 0 {
		t.Fatalf("weft %s: exit %d\n%s", strings.Join(argv, " "), code, stderr.String())
	}
	out := filepath.Join(dir, "Dockerfile")
	if i := slices.Index(args, "-o"); i >= 0 {
		out = args[i+1]
	}
	return parseDockerfile(t, out), stderr.String()
}

func parseDockerfile(t *testing.T, path string) *workerDockerfile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := parser.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("BuildKit cannot parse %s: %v\n%s", path, err, b)
	}
	if len(res.Warnings) > 0 {
		t.Errorf("BuildKit warns on %s: %v", path, res.Warnings)
	}
	stages, _, err := instructions.Parse(res.AST, nil)
	if err != nil {
		t.Fatalf("BuildKit instructions of %s: %v\n%s", path, err, b)
	}
	if len(stages) != 1 {
		t.Fatalf("%s: %d stages, want 1", path, len(stages))
	}
	df := &workerDockerfile{base: stages[0].BaseName, env: map[string]string{}, cmds: stages[0].Commands}
	for _, c := range stages[0].Commands {
		switch c := c.(type) {
		case *instructions.EnvCommand:
			for _, kv := range c.Env {
				df.env[kv.Key] = kv.Value
			}
		case *instructions.WorkdirCommand:
			df.workdir = c.Path
		case *instructions.CopyCommand:
			df.copies = append(df.copies, c)
		case *instructions.RunCommand:
			if !c.PrependShell {
				t.Errorf("%s: RUN %q in exec form, want the shell form", path, c.CmdLine)
			}
			df.runs = append(df.runs, strings.Join(c.CmdLine, " "))
		case *instructions.UserCommand:
			df.user = c.User
		case *instructions.EntrypointCommand:
			if c.PrependShell {
				t.Errorf("%s: ENTRYPOINT %q in shell form: signals would reach sh, not the worker", path, c.CmdLine)
			}
			df.entrypoint = c.CmdLine
		case *instructions.CmdCommand:
			t.Errorf("%s: CMD %q: arguments of docker run go after the ENTRYPOINT's", path, c.CmdLine)
		}
	}
	return df
}

// check checks what every worker Dockerfile holds: the project copied
// whole to workdir, the install script run from there, a non-root numeric
// user from then on, WEFT_URL, and an exec-form ENTRYPOINT.
func (df *workerDockerfile) check(t *testing.T, base, workdir, install string) {
	t.Helper()
	if df.base != base {
		t.Errorf("FROM %s, want %s", df.base, base)
	}
	if len(df.copies) != 1 || !slices.Equal(df.copies[0].SourcePaths, []string{"."}) || df.copies[0].DestPath != workdir {
		t.Errorf("COPY %+v, want the build context to %s", df.copies, workdir)
	}
	if df.workdir != workdir {
		t.Errorf("WORKDIR %s, want %s", df.workdir, workdir)
	}
	if !slices.ContainsFunc(df.runs, func(r string) bool {
		return strings.HasPrefix(strings.TrimSpace(r), install) || strings.Contains(r, " "+install)
	}) {
		t.Errorf("RUN %q: none runs %q", df.runs, install)
	}
	if df.user != "65532:65532" {
		t.Errorf("USER %q, want 65532:65532 (numeric, non-root: Kubernetes' runAsNonRoot checks it)", df.user)
	}
	if df.env["WEFT_URL"] == "" {
		t.Errorf("ENV %v: no WEFT_URL", df.env)
	}
	if _, ok := df.env["WEFT_API_KEY"]; ok {
		t.Errorf("ENV sets WEFT_API_KEY: a key must come at run time, never in an image")
	}
	// The order: copy, install, user, entrypoint — the install runs as root, the worker not.
	var order []string
	iCopy, iRun, iUser, iEntry := -1, -1, -1, -1
	for i, c := range df.cmds {
		order = append(order, strings.ToLower(c.Name()))
		switch c := c.(type) {
		case *instructions.CopyCommand:
			iCopy = i
		case *instructions.RunCommand:
			if strings.Contains(strings.Join(c.CmdLine, " "), install) {
				iRun = i
			}
		case *instructions.UserCommand:
			iUser = i
		case *instructions.EntrypointCommand:
			iEntry = i
		}
	}
	if !(iCopy >= 0 && iCopy < iRun && iRun < iUser && iUser < iEntry) {
		t.Errorf("instructions %v: want COPY, RUN (install), USER, ENTRYPOINT in that order", order)
	}
}

// TestWorkerDockerfiles parses the Dockerfiles of a Python and a JS
// project, and of a Python project with LangGraph's build settings
// (python_version, dockerfile_lines, pip_config_file), with BuildKit.
func TestWorkerDockerfiles(t *testing.T) {
	t.Parallel()
	t.Run("python", func(t *testing.T) {
		dir := projectCopy(t, "../sdk-tests/py/fixtures/pybench")
		df, _ := weftDockerfile(t, dir)
		df.check(t, "python:3.11-slim-bookworm", "/deps/pybench", "sh .weft-build/install.sh python --prefix /opt/weft --config langgraph.json")
		want := []string{"/opt/weft/venv/bin/python", "-m", "weft_worker", "--config", "/deps/pybench/langgraph.json"}
		if !slices.Equal(df.entrypoint, want) {
			t.Errorf("ENTRYPOINT %q, want %q", df.entrypoint, want)
		}
		if df.env["PYTHONUNBUFFERED"] != "1" {
			t.Errorf("ENV %v: want PYTHONUNBUFFERED=1 (logs as they happen)", df.env)
		}
		for _, f := range []string{".weft-build/install.sh", ".weft-build/requirements.txt", ".weft-build/worker-py/weft_worker/__main__.py", ".dockerignore"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("the build context lacks %s: %v", f, err)
			}
		}
	})
	t.Run("python settings", func(t *testing.T) {
		dir := projectCopy(t, "../sdk-tests/py/fixtures/pybench")
		if err := os.WriteFile(filepath.Join(dir, "pip.conf"), []byte("[global]\ntimeout = 60\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		editConfig(t, dir, func(c map[string]any) {
			c["python_version"] = "3.12"
			c["pip_config_file"] = "pip.conf"
			c["dockerfile_lines"] = []string{"RUN apt-get update && apt-get install -y --no-install-recommends git", "ARG GREETING=hi"}
		})
		df, _ := weftDockerfile(t, dir, "-o", filepath.Join(dir, "Dockerfile.py"))
		df.check(t, "python:3.12-slim-bookworm", "/deps/pybench", "PIP_CONFIG_FILE=/deps/pybench/pip.conf sh .weft-build/install.sh python")
		if len(df.runs) == 0 || !strings.Contains(df.runs[0], "apt-get install") {
			t.Errorf("RUN %q: dockerfile_lines should come first, right after FROM", df.runs)
		}
	})
	t.Run("js", func(t *testing.T) {
		dir := projectCopy(t, "../sdk-tests/agents-js")
		df, _ := weftDockerfile(t, dir)
		df.check(t, "node:20-bookworm-slim", "/deps/agents-js", "sh .weft-build/install.sh js --config langgraph.json")
		want := []string{"node", "/deps/agents-js/node_modules/.weft-worker/bin/weft-worker.mjs", "--config", "/deps/agents-js/langgraph.json"}
		if !slices.Equal(df.entrypoint, want) {
			t.Errorf("ENTRYPOINT %q, want %q", df.entrypoint, want)
		}
		ignore, err := os.ReadFile(filepath.Join(dir, ".dockerignore"))
		if err != nil || !slices.Contains(strings.Split(string(ignore), "\n"), "node_modules") || strings.Contains(string(ignore), ".weft-build") {
			t.Errorf(".dockerignore %q (%v): want node_modules left out, .weft-build kept", ignore, err)
		}
	})
	t.Run("mixed", func(t *testing.T) {
		dir := projectCopy(t, "../sdk-tests/agents-js")
		if err := os.WriteFile(filepath.Join(dir, "extra.py"), []byte("graph = None\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		editConfig(t, dir, func(c map[string]any) { c["graphs"].(map[string]any)["py_extra"] = "./extra.py:graph" })
		df, notes := weftDockerfile(t, dir, "-worker", "js")
		if i := slices.Index(df.entrypoint, "--graphs"); i < 0 || df.entrypoint[i+1] != "agent,deep,factory,reporter" {
			t.Errorf("ENTRYPOINT %q: the JS worker of a mixed project serves the JS graphs only (--graphs)", df.entrypoint)
		}
		if !strings.Contains(notes, "-worker python") {
			t.Errorf("notes %q: want how to build the Python graphs' image", notes)
		}
		py, _ := weftDockerfile(t, dir, "-worker", "python", "-o", filepath.Join(dir, "Dockerfile.py"))
		py.check(t, "python:3.11-slim-bookworm", "/deps/agents-js", "sh .weft-build/install.sh python")
	})
}

// installArgs is the install script's command of a Dockerfile's RUN, the
// image's prefix replaced by prefix (when given) and an offline source
// added: what the RUN does, into a temporary place.
func installArgs(t *testing.T, df *workerDockerfile, prefix, offline string) (env, argv []string) {
	t.Helper()
	for _, r := range df.runs {
		words := strings.Fields(r)
		i := slices.Index(words, ".weft-build/install.sh")
		if i < 1 || words[i-1] != "sh" {
			continue
		}
		env = words[:i-1] // VAR=value before sh
		argv = slices.Clone(words[i-1:])
		if j := slices.Index(argv, "--prefix"); j >= 0 && prefix != "" {
			argv[j+1] = prefix
		}
		return env, append(argv, "--offline-from", offline)
	}
	t.Fatalf("no RUN of the install script in %q", df.runs)
	return nil, nil
}

// runInstall runs the install script as the Dockerfile's RUN does, from
// the project's directory; it returns its output and error.
func runInstall(t *testing.T, dir string, df *workerDockerfile, prefix, offline string) (string, error) {
	t.Helper()
	env, argv := installArgs(t, df, prefix, offline)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "PIP_DISABLE_PIP_VERSION_CHECK=1"), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// mapPath maps a path of the image to this machine's (the image's prefix
// and workdir to temporary directories).
func mapPath(s string, from map[string]string) string {
	for img, here := range from {
		if s == img || strings.HasPrefix(s, img+"/") {
			return here + strings.TrimPrefix(s, img)
		}
	}
	return s
}

// workerServer is a server with API keys on and no graphs of its own (the
// built-in echo_chat would answer for the worker's), a worker key and a
// tenant key.
type workerServer struct {
	url, workerKey, tenantKey string
}

func startWorkerServer(t *testing.T) *workerServer {
	t.Helper()
	s := servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) { c.Auth, c.NoBuiltinGraphs = "keys", true })
	ctx := context.Background()
	wk, _, err := auth.APIKeyCreate(ctx, s.DB, "", []string{auth.ScopeWorker}, "worker image")
	if err != nil {
		t.Fatal(err)
	}
	tk, _, err := auth.APIKeyCreate(ctx, s.DB, "acme", []string{auth.ScopeTenant}, "test")
	if err != nil {
		t.Fatal(err)
	}
	return &workerServer{url: s.URL, workerKey: wk, tenantKey: tk}
}

func (s *workerServer) call(t *testing.T, method, path string, body any) (int, []byte) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, s.url+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", s.tenantKey)
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// startImageWorker starts the worker as the image would: its ENTRYPOINT
// (paths mapped), in its WORKDIR, with its ENV plus WEFT_URL and
// WEFT_API_KEY given at run time (docker run -e). It is stopped (SIGTERM,
// then SIGKILL) when the test ends; its output is shown if the test fails.
func startImageWorker(t *testing.T, df *workerDockerfile, paths map[string]string, s *workerServer) {
	t.Helper()
	argv := make([]string, len(df.entrypoint))
	for i, a := range df.entrypoint {
		argv[i] = mapPath(a, paths)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = mapPath(df.workdir, paths)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	for k, v := range df.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, "WEFT_URL="+s.url, "WEFT_API_KEY="+s.workerKey)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if t.Failed() {
			t.Logf("worker %q output:\n%s", argv, logs.String())
		}
	})
}

// runGraph waits until graph is registered (the worker started), then runs
// it on a new thread with input and returns the run's values.
func runGraph(t *testing.T, s *workerServer, graph string, input any) map[string]any {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, body := s.call(t, "POST", "/assistants/search", map[string]any{"graph_id": graph})
		var found []any
		if code == http.StatusOK && json.Unmarshal(body, &found) == nil && len(found) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("graph %s not registered within 60 s (last answer %d %s)", graph, code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	code, body := s.call(t, "POST", "/threads", map[string]any{})
	var thread struct {
		ID string `json:"thread_id"`
	}
	if code != http.StatusOK || json.Unmarshal(body, &thread) != nil {
		t.Fatalf("POST /threads: %d %s", code, body)
	}
	code, body = s.call(t, "POST", "/threads/"+thread.ID+"/runs/wait", map[string]any{"assistant_id": graph, "input": input})
	var values map[string]any
	if code != http.StatusOK || json.Unmarshal(body, &values) != nil {
		t.Fatalf("runs/wait on %s: %d %s", graph, code, body)
	}
	return values
}

// lastMessage is the content of the last of values' messages.
func lastMessage(t *testing.T, values map[string]any) string {
	t.Helper()
	msgs, _ := values["messages"].([]any)
	if len(msgs) == 0 {
		t.Fatalf("values %v: no messages", values)
	}
	m, _ := msgs[len(msgs)-1].(map[string]any)
	s, _ := m["content"].(string)
	return s
}

// TestWorkerImagePython installs the Python project's image with its
// install script (the project's own pin honoured: a pin nothing satisfies
// fails the install) and runs one of its graphs through the installed
// worker, started as the image starts it.
func TestWorkerImagePython(t *testing.T) {
	t.Parallel()
	began := time.Now()
	venv, err := filepath.Abs("../sdk-tests/py/.venv")
	if err != nil {
		t.Fatal(err)
	}
	httpx := installedVersion(t, venv, "httpx")

	dir := projectCopy(t, "../sdk-tests/py/fixtures/pybench")
	// The project pins a package (its requirements.txt, the "." dependency's) and sets its env.
	if err := os.WriteFile(filepath.Join(dir, "requirements.txt"), []byte("httpx=="+httpx+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	editConfig(t, dir, func(c map[string]any) { c["env"] = map[string]any{"ECHO_PREFIX": "from the image"} })
	df, _ := weftDockerfile(t, dir)
	prefix := filepath.Join(t.TempDir(), "opt-weft")
	if out, err := runInstall(t, dir, df, prefix, venv); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	t.Logf("install: %s", time.Since(began).Round(time.Millisecond))
	// The worker imported is the one installed, not another on the path.
	out, err := exec.Command(filepath.Join(prefix, "venv", "bin", "python"), "-c", "import weft_worker; print(weft_worker.__file__)").CombinedOutput()
	if err != nil || !strings.HasPrefix(strings.TrimSpace(string(out)), prefix+"/worker-py/") {
		t.Fatalf("weft_worker imports from %s (%v), want %s/worker-py", out, err, prefix)
	}

	s := startWorkerServer(t)
	startImageWorker(t, df, map[string]string{"/opt/weft": prefix, df.workdir: dir}, s)
	values := runGraph(t, s, "echo_chat", map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}})
	if got := lastMessage(t, values); got != "from the image: hi" {
		t.Fatalf("echo_chat answered %q, want %q (the config's env applied)", got, "from the image: hi")
	}
	t.Logf("TestWorkerImagePython: %s", time.Since(began).Round(time.Millisecond))

	t.Run("a pin nothing satisfies fails the install", func(t *testing.T) {
		dir := projectCopy(t, "../sdk-tests/py/fixtures/pybench")
		if err := os.WriteFile(filepath.Join(dir, "requirements.txt"), []byte("httpx==0.0.1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		df, _ := weftDockerfile(t, dir)
		out, err := runInstall(t, dir, df, filepath.Join(t.TempDir(), "opt-weft"), venv)
		if err == nil || !strings.Contains(out, "httpx==0.0.1") {
			t.Fatalf("install with httpx==0.0.1: %v, want a failure naming the pin\n%s", err, out)
		}
	})
}

// installedVersion is the version of pkg in the virtualenv venv.
func installedVersion(t *testing.T, venv, pkg string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(venv, "bin", "python"), "-c",
		fmt.Sprintf("import importlib.metadata as m; print(m.version(%q))", pkg)).Output()
	if err != nil {
		t.Fatalf("the test virtualenv %s (make test-py makes it): %v", venv, err)
	}
	return strings.TrimSpace(string(out))
}

// TestWorkerImageJS installs a TypeScript project's image with its install
// script (npm ci from its lockfile, tsx among its devDependencies, the
// worker into node_modules) and runs its graph through the installed
// worker, started as the image starts it: loaded with tsx, the config's env
// applied.
func TestWorkerImageJS(t *testing.T) {
	t.Parallel()
	began := time.Now()
	cache, err := exec.Command("npm", "config", "get", "cache").Output()
	if err != nil {
		t.Fatalf("npm config get cache: %v", err)
	}
	dir := projectCopy(t, "testdata/tsgraphs")
	df, _ := weftDockerfile(t, dir)
	df.check(t, "node:20-bookworm-slim", "/deps/tsgraphs", "sh .weft-build/install.sh js --config langgraph.json")
	if out, err := runInstall(t, dir, df, "", strings.TrimSpace(string(cache))); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	t.Logf("install: %s", time.Since(began).Round(time.Millisecond))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".weft-worker", "bin", "weft-worker.mjs")); err != nil {
		t.Fatalf("the worker is not in the project's node_modules: %v", err)
	}

	s := startWorkerServer(t)
	startImageWorker(t, df, map[string]string{df.workdir: dir}, s)
	values := runGraph(t, s, "typed", map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}})
	if got := lastMessage(t, values); got != "typed: hi" {
		t.Fatalf("typed answered %q, want %q", got, "typed: hi")
	}
	t.Logf("TestWorkerImageJS: %s", time.Since(began).Round(time.Millisecond))
}

// TestWorkerImagesExample builds both images of examples/langgraph, a
// project with a Python and a JS graph (the one docker-compose.yml runs):
// each install, each worker started as its image starts it, both on one
// server, each graph answered by its own worker (the JS image's worker
// serves the JS graph only).
func TestWorkerImagesExample(t *testing.T) {
	t.Parallel()
	began := time.Now()
	venv, err := filepath.Abs("../sdk-tests/py/.venv")
	if err != nil {
		t.Fatal(err)
	}
	cache, err := exec.Command("npm", "config", "get", "cache").Output()
	if err != nil {
		t.Fatalf("npm config get cache: %v", err)
	}
	dir := projectCopy(t, "../examples/langgraph")
	for _, f := range []string{"Dockerfile.py", "Dockerfile.js", ".dockerignore"} {
		_ = os.Remove(filepath.Join(dir, f)) // make compose-files' output, when there
	}
	py, _ := weftDockerfile(t, dir, "-worker", "python", "-o", filepath.Join(dir, "Dockerfile.py"))
	js, _ := weftDockerfile(t, dir, "-worker", "js", "-o", filepath.Join(dir, "Dockerfile.js"))
	workdir := "/deps/" + filepath.Base(dir)
	py.check(t, "python:3.11-slim-bookworm", workdir, "sh .weft-build/install.sh python")
	js.check(t, "node:20-bookworm-slim", workdir, "sh .weft-build/install.sh js")

	prefix := filepath.Join(t.TempDir(), "opt-weft")
	if out, err := runInstall(t, dir, py, prefix, venv); err != nil {
		t.Fatalf("Python install: %v\n%s", err, out)
	}
	if out, err := runInstall(t, dir, js, "", strings.TrimSpace(string(cache))); err != nil {
		t.Fatalf("JS install: %v\n%s", err, out)
	}
	t.Logf("installs: %s", time.Since(began).Round(time.Millisecond))

	s := startWorkerServer(t)
	startImageWorker(t, py, map[string]string{"/opt/weft": prefix, workdir: dir}, s)
	startImageWorker(t, js, map[string]string{workdir: dir}, s)
	for graph, want := range map[string]string{"greeter_py": "Hello from Python, Ada!", "greeter_js": "Hello from JavaScript, Ada!"} {
		values := runGraph(t, s, graph, map[string]any{"messages": []any{map[string]any{"role": "user", "content": "Ada"}}})
		if got := lastMessage(t, values); got != want {
			t.Errorf("%s answered %q, want %q", graph, got, want)
		}
	}
	t.Logf("TestWorkerImagesExample: %s", time.Since(began).Round(time.Millisecond))
}
