package dev

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/weftdev/weft/internal/cli"
	"github.com/weftdev/weft/internal/cli/dev/projectauth"
	"github.com/weftdev/weft/internal/cli/dev/projecthttp"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/internal/runs"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/store"
	workerjs "github.com/weftdev/weft/worker-js"
)

// Run is `weft dev --config langgraph.json [server flags]` (args are what
// follows "dev"; cli.Run calls it): a drop-in for `langgraphjs dev`. It
// serves the server (managed PostgreSQL or DATABASE_URL) without the demo
// graphs, with the store index of the config's store.index (OPENAI_* from
// the environment), and the project's graphs through the JS worker, run by the system's node (WEFT_NODE, else node on PATH)
// from scripts embedded in this binary and unpacked into the project's
// node_modules (so they load the project's own @langchain/langgraph, and
// tsx for TypeScript graphs). The worker reads the config's env; one that
// dies is restarted with backoff; SIGINT or SIGTERM stops the worker
// (its runs given back) and then the server.
func Run(args []string, getenv func(string) string, stderr io.Writer) int {
	configPath, rest, err := configFlag(args)
	if err != nil {
		fmt.Fprintf(stderr, "weft dev: %v\n%s\n", err, cli.Usage)
		return 2
	}
	var p *project
	edit := func(cfg *server.Config) error {
		cfg.NoBuiltinGraphs = true // the project's graphs may be named like the demos
		var err error
		if p, err = loadProject(configPath, getenv); err != nil {
			return err
		}
		p.out = stderr
		p.addSettings(cfg) // keys.go
		cfg.GraphDescriptions = p.graphDesc
		if cfg.ErrorBody == "" && p.py == nil {
			// Errors as LangGraph.js's server writes them, for JS projects.
			cfg.ErrorBody = "text"
		}
		if ap := projectauth.Path(p.raw); ap != "" {
			// auth.path: the worker of its language serves its handlers on a
			// socket of this process.
			var err error
			if p.authSocket, err = tempSocket("auth"); err != nil {
				return err
			}
			if cli.IsPythonGraph(cli.GraphPath(json.RawMessage(strconv.Quote(ap)))) {
				if p.py == nil {
					return fmt.Errorf("auth.path %s is Python: the Python worker serves it, and the project has no Python graph to start one for", ap)
				}
				p.pyAuth, p.pySocket = true, p.authSocket
			} else {
				p.jsSocket = p.authSocket
			}
			p.auth = projectauth.New(p.authSocket)
			cfg.Authenticate, cfg.Authorize = p.auth.Authenticate, p.auth.Authorize
		}
		if err := p.httpKnobs(cfg); err != nil { // httpconfig.go
			return err
		}
		if err := p.frontApp(cfg); err != nil {
			return err
		}
		if err := p.openAPIConfig(cfg); err != nil { // openapiconfig.go
			return err
		}
		if cfg.AuthOn() {
			// The worker this command runs authenticates with a key of its
			// own, valid for this server process only.
			b := make([]byte, 32)
			if _, err := rand.Read(b); err != nil {
				return err
			}
			p.apiKey = "weft_dev_" + hex.EncodeToString(b)
			cfg.WorkerKey = p.apiKey
		}
		if cfg.StoreIndex == nil { // WEFT_STORE_INDEX wins over the project's store.index
			if cfg.StoreIndex, err = store.IndexConfigFromLangGraphJSON(p.raw); err == nil && cfg.StoreIndex != nil {
				if cfg.StoreIndex.IsFunction() {
					err = p.embedFunction(cfg.StoreIndex) // python.go
				} else {
					err = cfg.StoreIndex.WithOpenAIEnv(getenv)
				}
			}
		}
		if err == nil {
			err = projectTTLs(p.raw, cfg) // ttl.go
		}
		if err == nil {
			err = p.projectConfig(cfg) // projectconfig.go: webhooks, auth.cache, checkpointer.serde
		}
		return err
	}
	return cli.Serve(nil, rest, getenv, stderr, edit, func(ctx context.Context, srv *server.Server, log *slog.Logger) func() {
		var done []chan struct{}
		start := func(supervise func(context.Context, string, *slog.Logger)) {
			d := make(chan struct{})
			done = append(done, d)
			go func() {
				defer close(d)
				supervise(ctx, srv.URL(), log)
			}()
		}
		if len(p.jsGraphs) > 0 {
			start(p.superviseWorker)
		}
		if p.py != nil {
			start(p.supervisePythonWorker) // python.go
		}
		return func() {
			for _, d := range done {
				<-d
			}
			if p.authSocket != "" {
				_ = os.RemoveAll(filepath.Dir(p.authSocket))
			}
			if p.pySocket != "" {
				_ = os.RemoveAll(filepath.Dir(p.pySocket))
			}
			if p.jsSocket != "" {
				_ = os.RemoveAll(filepath.Dir(p.jsSocket))
			}
			if p.httpSocket != "" {
				_ = os.RemoveAll(filepath.Dir(p.httpSocket))
			}
			if p.uiSocket != "" {
				_ = os.RemoveAll(filepath.Dir(p.uiSocket))
			}
		}
	})
}

// configFlag takes -config / --config (default langgraph.json) out of args.
func configFlag(args []string) (string, []string, error) {
	path := "langgraph.json"
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "config" {
			rest = append(rest, a)
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				return "", nil, errors.New("--config needs a path (langgraph.json)")
			}
			i++
			value = args[i]
		}
		path = value
	}
	return path, rest, nil
}

// project is a LangGraph.js project: its langgraph.json and where its
// packages are installed.
type project struct {
	config      string // absolute path of langgraph.json
	nodeModules string // the node_modules that holds @langchain/langgraph
	node        string // the node executable
	worker      string // the unpacked worker's bin/weft-worker.mjs
	out         io.Writer
	raw         []byte              // langgraph.json
	apiKey      string              // the worker's key when the server authenticates ("" none)
	jsGraphs    []string            // the graph ids the JS worker serves
	graphDesc   map[string]string   // graphs.<id>.description by graph id (their system assistants')
	py          *pyProject          // the Python graphs' worker (python.go), nil without any
	authSocket  string              // where the worker serves auth.path ("" none)
	pyAuth      bool                // auth.path is Python: the Python worker serves it on authSocket
	pySocket    string              // where the Python worker serves store.index.embed ("" none; python.go)
	jsSocket    string              // where the JS worker serves auth.path and/or store.index.embed ("" none)
	httpSocket  string              // where a worker serves http.app (and ui, but for a Python http.app) ("" none)
	uiSocket    string              // where the JS worker serves ui beside a Python http.app ("" none)
	pyHTTP      bool                // http.app is Python: the Python worker serves it on httpSocket
	appPass     string              // the pass with which the http.app passes requests on to the API
	auth        *projectauth.Client // auth.path's handlers (nil: none)
	routeAuth   string              // http.enable_custom_route_auth: "server" (auth.path), "anonymous" (none), "" off
	pyEnv       []string            // more environment of the Python worker (checkpointer.serde: projectconfig.go)
	settings    []projectSetting    // the keys langgraph.json sets (keys.go)
	warnings    []string            // its unknown keys (keys.go)
}

// tsExtensions are the graph files the worker loads through tsx.
var tsExtensions = []string{".ts", ".mts", ".cts", ".tsx"}

// loadProject checks the project before anything starts and unpacks the
// worker into its node_modules; every problem is one message saying what
// to do.
func loadProject(configPath string, getenv func(string) string) (*project, error) {
	abs, err := filepath.Abs(configPath)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("read the project's config: %w (give it with --config path/to/langgraph.json)", err)
	}
	var cfg struct {
		Graphs map[string]json.RawMessage `json:"graphs"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", abs, err)
	}
	if len(cfg.Graphs) == 0 {
		return nil, fmt.Errorf("%s names no graphs", abs)
	}
	p := &project{config: abs, raw: raw}
	if err := p.checkKeys(); err != nil { // keys.go: before anything else, a refused key
		return nil, err
	}
	if p.graphDesc, err = graphDescriptions(cfg.Graphs); err != nil {
		return nil, fmt.Errorf("%s: %w", abs, err)
	}
	jsGraphs, pyGraphs := splitGraphs(cfg.Graphs)
	if len(pyGraphs) > 0 {
		if p.py, err = loadPythonProject(abs, pyGraphs, getenv); err != nil {
			return nil, err
		}
	}
	for id := range jsGraphs {
		p.jsGraphs = append(p.jsGraphs, id)
	}
	slices.Sort(p.jsGraphs)
	if len(jsGraphs) == 0 {
		return p, nil
	}
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		nm := filepath.Join(dir, "node_modules")
		if _, err := os.Stat(filepath.Join(nm, "@langchain", "langgraph")); err == nil {
			p.nodeModules = nm
			break
		}
		if filepath.Dir(dir) == dir {
			return nil, fmt.Errorf("no node_modules with @langchain/langgraph above %s: install the project's packages (npm install) first", filepath.Dir(abs))
		}
	}
	for id, path := range jsGraphs {
		if slices.Contains(tsExtensions, filepath.Ext(path)) {
			if _, err := os.Stat(filepath.Join(p.nodeModules, "tsx")); err != nil {
				return nil, fmt.Errorf("graph %s is TypeScript (%s): the worker loads it with tsx, which %s lacks: npm install --save-dev tsx", id, path, p.nodeModules)
			}
		}
	}
	if p.node = getenv("WEFT_NODE"); p.node == "" {
		if p.node, err = exec.LookPath("node"); err != nil {
			return nil, errors.New("node is not on PATH (install Node.js 20 or later, or set WEFT_NODE to its path)")
		}
	}
	if p.worker, err = unpackWorker(p.nodeModules); err != nil {
		return nil, fmt.Errorf("unpack the JS worker into %s: %w", p.nodeModules, err)
	}
	return p, nil
}

// graphDescriptions are the descriptions a config gives its graphs
// ({"path": "./agent.py:graph", "description": "…"}), by graph id: what
// LangGraph's server gives each graph's system assistant. A graph named by
// its path alone, or with a null description, has none.
func graphDescriptions(graphs map[string]json.RawMessage) (map[string]string, error) {
	out := map[string]string{}
	for id, spec := range graphs {
		var obj struct {
			Description json.RawMessage `json:"description"`
		}
		if json.Unmarshal(spec, &obj) != nil || obj.Description == nil || string(obj.Description) == "null" {
			continue
		}
		var d string
		if err := json.Unmarshal(obj.Description, &d); err != nil {
			return nil, fmt.Errorf("graph %s: description must be a string, not %s", id, obj.Description)
		}
		out[id] = d
	}
	return out, nil
}

// unpackWorker writes the embedded worker into nodeModules/.weft-worker-<hash>
// and returns its bin/weft-worker.mjs. Inside the project's node_modules,
// its imports resolve to the project's packages.
func unpackWorker(nodeModules string) (string, error) {
	dir, err := unpackEmbedded(workerjs.Files, nodeModules, ".weft-worker-")
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "bin", "weft-worker.mjs"), nil
}

// unpackEmbedded writes the files of fsys into parent/<prefix><hash of
// them> once per version (a directory that exists is complete: it is
// written under a temporary name and renamed into place, and a concurrent
// weft dev that renamed first wins) and returns that directory.
func unpackEmbedded(fsys fs.FS, parent, prefix string) (string, error) {
	h := sha256.New()
	var files []string
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		files = append(files, path)
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", err
	}
	dir := filepath.Join(parent, prefix+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(parent, prefix+"tmp-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	for _, f := range files {
		b, _ := fs.ReadFile(fsys, f)
		out := filepath.Join(tmp, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(out, b, 0o644); err != nil {
			return "", err
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(dir); statErr == nil {
			return dir, nil // another weft dev unpacked it meanwhile
		}
		return "", err
	}
	return dir, nil
}

// superviseWorker runs the JS worker until ctx ends (supervise).
func (p *project) superviseWorker(ctx context.Context, url string, log *slog.Logger) {
	supervise(ctx, "JS worker", func() error { return p.runWorker(ctx, url, log) }, log)
}

// supervise calls run until ctx ends, again with backoff (0.5 s doubling to
// 30 s, reset after a minute of running) each time it returns.
func supervise(ctx context.Context, name string, run func() error, log *slog.Logger) {
	backoff := 500 * time.Millisecond
	for ctx.Err() == nil {
		began := time.Now()
		err := run()
		if ctx.Err() != nil {
			return
		}
		if time.Since(began) > time.Minute {
			backoff = 500 * time.Millisecond
		}
		log.Warn(name+" exited; restarting", "error", err, "in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 30*time.Second)
	}
}

// runProcess starts a worker's cmd (its output among the server's, in a
// process group of its own: a terminal's Ctrl-C reaches it through this
// process, after the server stopped claiming on its behalf) and waits for
// it to exit, or for ctx to end: then SIGTERM (a worker gives its runs
// back) and, after 20 s, SIGKILL.
func (p *project) runProcess(ctx context.Context, cmd *exec.Cmd, name string, log *slog.Logger, attrs ...any) error {
	cmd.Stdout, cmd.Stderr = p.out, p.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	// The worker stops by itself (as on SIGTERM) once this process is gone,
	// even when it was killed with no chance to stop the worker.
	cmd.Env = append(cmd.Env, "WEFT_PARENT_PID="+strconv.Itoa(os.Getpid()))
	if err := cmd.Start(); err != nil {
		return err
	}
	log.Info(name+" started", append([]any{"pid", cmd.Process.Pid}, attrs...)...)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		return err
	case <-ctx.Done():
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		log.Info(name+" stopped", "pid", cmd.Process.Pid)
		return err
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		return <-exited
	}
}

// runWorker runs one worker process until it exits or ctx ends.
func (p *project) runWorker(ctx context.Context, url string, log *slog.Logger) error {
	cmd := exec.Command(p.node, p.worker, "--config", p.config, "--url", url,
		"--worker-id", fmt.Sprintf("weft-dev-%d", os.Getpid()))
	if p.py != nil { // the Python graphs are the Python worker's
		cmd.Args = append(cmd.Args, "--graphs", strings.Join(p.jsGraphs, ","))
	}
	if p.jsSocket != "" { // auth.path and/or store.index.embed in JS
		cmd.Args = append(cmd.Args, "--auth-socket", p.jsSocket)
	}
	cmd.Env = os.Environ()
	switch {
	case p.httpSocket != "" && !p.pyHTTP: // http.app and/or ui
		cmd.Args = append(cmd.Args, "--http-socket", p.httpSocket)
		cmd.Env = append(cmd.Env, "WEFT_APP_PASS="+p.appPass, "WEFT_APP_ROUTE_AUTH="+p.routeAuth)
	case p.uiSocket != "": // ui beside a Python http.app
		cmd.Args = append(cmd.Args, "--http-socket", p.uiSocket)
		cmd.Env = append(cmd.Env, "WEFT_APP_PASS="+p.appPass)
	}
	cmd.Dir = filepath.Dir(p.config)
	if p.apiKey != "" {
		cmd.Env = append(cmd.Env, "WEFT_API_KEY="+p.apiKey)
	}
	return p.runProcess(ctx, cmd, "JS worker", log, "config", p.config)
}

// tempSocket is the path of a unix socket named name.sock in a new
// temporary directory weft-name-*: a worker serves something there for
// this process.
func tempSocket(name string) (string, error) {
	dir, err := os.MkdirTemp("", "weft-"+name+"-")
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, name+".sock"), nil
}

// frontApp puts the project's http.app and ui (langgraph.json) in front of
// the API (internal/cli/dev/projecthttp): the JS worker serves a JS http.app and
// the ui on a socket of this process; a Python http.app, the Python worker,
// with the ui on a socket of the JS worker. With
// http.enable_custom_route_auth and an auth.path, the app's routes are
// authenticated by auth.path's authenticate handler before they run.
func (p *project) frontApp(cfg *server.Config) error {
	var c struct {
		HTTP struct {
			App                   string `json:"app"`
			EnableCustomRouteAuth bool   `json:"enable_custom_route_auth"`
			// configurable_headers: which request headers join a run's configurable.
			ConfigurableHeaders *runs.HeaderPolicy `json:"configurable_headers"`
		} `json:"http"`
		UI map[string]string `json:"ui"`
	}
	if err := json.Unmarshal(p.raw, &c); err != nil {
		return fmt.Errorf("%s: %w", p.config, err)
	}
	if cfg.Disabled[httpapi.GroupUI] {
		c.UI = nil // http.disable_ui: no ui components
	}
	if h := c.HTTP.ConfigurableHeaders; h != nil {
		if err := h.Check(); err != nil {
			return fmt.Errorf("http.%w", err)
		}
		cfg.ConfigurableHeaders = *h
	}
	if c.HTTP.App == "" && len(c.UI) == 0 {
		return nil
	}
	p.pyHTTP = c.HTTP.App != "" && cli.IsPythonGraph(cli.GraphPath(json.RawMessage(strconv.Quote(c.HTTP.App))))
	switch {
	case p.pyHTTP && p.py == nil:
		return fmt.Errorf("http.app %s is Python: the Python worker serves it, and the project has no Python graph to start one for", c.HTTP.App)
	case p.pyHTTP && len(c.UI) > 0 && len(p.jsGraphs) == 0:
		return errors.New("ui is bundled and served by the JS worker, and the project has no JS graph to start one for")
	case !p.pyHTTP && len(p.jsGraphs) == 0:
		return errors.New("a JS http.app and ui are served by the JS worker, and the project has no JS graph to start one for")
	}
	var err error
	if p.httpSocket, err = tempSocket("http"); err != nil {
		return err
	}
	if p.pyHTTP && len(c.UI) > 0 {
		if p.uiSocket, err = tempSocket("ui"); err != nil {
			return err
		}
	}
	fc := projecthttp.Config{Socket: p.httpSocket, UISocket: p.uiSocket, App: c.HTTP.App != "", UIGraphs: slices.Sorted(maps.Keys(c.UI))}
	if p.auth != nil {
		// As LangGraph's servers: a ui component (POST /ui/{graph}) is
		// authenticated with auth.path's authenticate handler, and the
		// app's routes with http.enable_custom_route_auth.
		fc.Authenticate = func(r *http.Request) (any, error) { return p.auth.Identify(r) }
		fc.AuthError = httpapi.AuthErrorWriter(slog.Default(), cfg.ErrorBody == "text")
	}
	if c.HTTP.App != "" && c.HTTP.EnableCustomRouteAuth {
		// Without an auth.path nobody is refused (a Python route sees an
		// unauthenticated user).
		p.routeAuth = "anonymous"
		if p.auth != nil {
			p.routeAuth = "server"
		}
	}
	front, err := projecthttp.New(fc, slog.Default())
	if err != nil {
		return err
	}
	p.appPass = front.Pass()
	cfg.Front = front.Wrap
	return nil
}
