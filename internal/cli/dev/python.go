package dev

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/weftdev/weft/internal/cli"
	"github.com/weftdev/weft/internal/store"
	workerpy "github.com/weftdev/weft/worker-py"
)

// The Python side of `weft dev`: a langgraph.json graph whose path is a .py
// file ("./agent.py:graph") or a module ("my_pkg.agent:graph") is served
// by the Python worker (worker-py), run by the project's interpreter from
// modules embedded in this binary; the other graphs by the JS worker.

// splitGraphs sorts a config's graphs into JS (id → path) and Python ids.
func splitGraphs(graphs map[string]json.RawMessage) (js map[string]string, py []string) {
	js = map[string]string{}
	for id, spec := range graphs {
		if path := cli.GraphPath(spec); cli.IsPythonGraph(path) {
			py = append(py, id)
		} else {
			js[id] = path
		}
	}
	sort.Strings(py)
	return js, py
}

// pyProject is what runs a project's Python graphs.
type pyProject struct {
	python string   // the interpreter
	root   string   // the unpacked worker (its parent of weft_worker goes on PYTHONPATH)
	graphs []string // the Python graph ids
}

// findPython picks the project's interpreter: WEFT_PYTHON, the active
// virtualenv ($VIRTUAL_ENV), a .venv in the project's directory or above,
// else python3 on PATH. A uv project (uv.lock) without its .venv is told to
// run `uv sync`: weft dev installs nothing.
func findPython(dir string, getenv func(string) string) (string, error) {
	if p := getenv("WEFT_PYTHON"); p != "" {
		return p, nil
	}
	if v := getenv("VIRTUAL_ENV"); v != "" {
		if p := filepath.Join(v, "bin", "python"); fileExists(p) {
			return p, nil
		}
	}
	for d := dir; ; d = filepath.Dir(d) {
		if p := filepath.Join(d, ".venv", "bin", "python"); fileExists(p) {
			return p, nil
		}
		if fileExists(filepath.Join(d, "uv.lock")) {
			return "", fmt.Errorf("%s is a uv project without its environment: run `uv sync` in %s first", d, d)
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	p, err := exec.LookPath("python3")
	if err != nil {
		return "", errors.New("no Python for the project's Python graphs: activate its virtualenv, create ./.venv, or set WEFT_PYTHON to an interpreter with langgraph installed")
	}
	return p, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// loadPythonProject finds the interpreter, checks that it has langgraph
// (saying exactly what to run when not) and unpacks the worker.
func loadPythonProject(config string, ids []string, getenv func(string) string) (*pyProject, error) {
	python, err := findPython(filepath.Dir(config), getenv)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	check := exec.CommandContext(ctx, python, "-c",
		"import sys; assert sys.version_info >= (3, 10), 'Python 3.10 or later is needed, this is ' + sys.version.split()[0]; import langgraph.graph")
	check.Dir = filepath.Dir(config)
	if out, err := check.CombinedOutput(); err != nil {
		msg := strings.TrimSpace(string(out))
		if i := strings.LastIndex(msg, "\n"); i >= 0 {
			msg = msg[i+1:]
		}
		if strings.Contains(msg, "No module named") {
			return nil, fmt.Errorf("the Python graphs (%s) need langgraph, which %s cannot import: run `%s -m pip install langgraph` (or `uv add langgraph` in a uv project), or point WEFT_PYTHON at an interpreter that has it",
				strings.Join(ids, ", "), python, python)
		}
		return nil, fmt.Errorf("the Python graphs (%s): %s failed: %s", strings.Join(ids, ", "), python, msg)
	}
	root, err := unpackPyWorker(getenv)
	if err != nil {
		return nil, fmt.Errorf("unpack the Python worker: %w", err)
	}
	return &pyProject{python: python, root: root, graphs: ids}, nil
}

// unpackPyWorker writes the embedded weft_worker package into
// <user cache>/weft/worker-py-<hash>/weft_worker (WEFT_CACHE_DIR instead of
// <user cache>/weft; once per version, unpackEmbedded) and returns the
// directory to put on PYTHONPATH.
func unpackPyWorker(getenv func(string) string) (string, error) {
	base := getenv("WEFT_CACHE_DIR")
	if base == "" {
		var err error
		if base, err = os.UserCacheDir(); err != nil {
			base = os.TempDir()
		}
		base = filepath.Join(base, "weft")
	}
	return unpackEmbedded(workerpy.Files, base, "worker-py-")
}

// supervisePythonWorker runs the Python worker until ctx ends, restarting
// it with backoff as the JS worker is (supervise).
func (p *project) supervisePythonWorker(ctx context.Context, url string, log *slog.Logger) {
	supervise(ctx, "Python worker", func() error { return p.runPythonWorker(ctx, url, log) }, log)
}

// runPythonWorker runs one Python worker process until it exits or ctx
// ends (then SIGTERM: it gives its runs back; killed after 20 s).
func (p *project) runPythonWorker(ctx context.Context, url string, log *slog.Logger) error {
	cmd := exec.Command(p.py.python, "-m", "weft_worker", "--config", p.config, "--url", url,
		"--worker-id", fmt.Sprintf("weft-dev-py-%d", os.Getpid()), "--graphs", strings.Join(p.py.graphs, ","))
	cmd.Dir = filepath.Dir(p.config)
	env := os.Environ()
	pythonPath := p.py.root
	if old := os.Getenv("PYTHONPATH"); old != "" {
		pythonPath += string(os.PathListSeparator) + old
	}
	env = append(env, "PYTHONPATH="+pythonPath, "PYTHONUNBUFFERED=1")
	env = append(env, p.pyEnv...) // checkpointer.serde (projectconfig.go)
	if p.apiKey != "" {
		env = append(env, "WEFT_API_KEY="+p.apiKey)
	}
	if p.pySocket != "" { // auth.path and/or store.index.embed in Python
		cmd.Args = append(cmd.Args, "--socket", p.pySocket)
	}
	if p.pyHTTP { // http.app in Python
		cmd.Args = append(cmd.Args, "--http-socket", p.httpSocket)
		env = append(env, "WEFT_APP_PASS="+p.appPass, "WEFT_APP_ROUTE_AUTH="+p.routeAuth)
	}
	cmd.Env = env
	return p.runProcess(ctx, cmd, "Python worker", log, "python", p.py.python, "config", p.config)
}

// embedFunction serves store.index.embed when it names a Python function
// or Embeddings object ("./embed.py:aembed_texts") or a JS one
// ("./embed.mjs:embed"): the worker of its language embeds on its socket
// (with auth.path when that is of the same language), and the store's
// embedder asks it there.
func (p *project) embedFunction(c *store.IndexConfig) error {
	if !cli.IsPythonGraph(c.Embed[:strings.LastIndex(c.Embed, ":")]) {
		if len(p.jsGraphs) == 0 {
			return fmt.Errorf("store.index.embed %s is JS: the JS worker serves it, and the project has no JS graph to start one for", c.Embed)
		}
		if p.jsSocket == "" {
			var err error
			if p.jsSocket, err = tempSocket("js"); err != nil {
				return err
			}
		}
		c.Embedder = store.NewSocketEmbedder(p.jsSocket, c.Dims)
		return nil
	}
	if p.py == nil {
		return fmt.Errorf("store.index.embed %s is Python: the Python worker serves it, and the project has no Python graph to start one for", c.Embed)
	}
	if p.pyAuth {
		p.pySocket = p.authSocket
	} else {
		var err error
		if p.pySocket, err = tempSocket("py"); err != nil {
			return err
		}
	}
	c.Embedder = store.NewSocketEmbedder(p.pySocket, c.Dims)
	return nil
}
