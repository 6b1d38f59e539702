package cli

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/template"

	workerjs "github.com/weftdev/weft/worker-js"
	workerpy "github.com/weftdev/weft/worker-py"
)

const dockerfileUsage = `Usage:
  weft dockerfile [-c langgraph.json] [-o Dockerfile] [-worker python|js] [-base-image IMAGE]

Writes a Dockerfile building an image of the project's worker, as langgraph dockerfile does for
LangGraph's server: the project's graphs served by Weft's Python worker (on python:<python_version>)
or JS worker (on node:<node_version>), connecting to the server given at run time by WEFT_URL, with
WEFT_API_KEY (a key of the worker scope). Beside langgraph.json, in the build context, it also writes
.weft-build/ (install.sh, which the Dockerfile runs; the worker's sources; for Python the
requirements pip installs) and a .dockerignore. Build from the project's directory:
  docker build -t my-graphs .
A project with Python and JS graphs needs one image of each: -worker picks (default: the language of
all its graphs; for both, JS when langgraph.json sets node_version but not python_version, as
langgraph does, else Python).

Flags:`

// dockerfileMarker starts every file `weft dockerfile` writes: one that
// does not start with it is the user's, never overwritten.
const dockerfileMarker = "# Written by `weft dockerfile`"

// buildDir is the directory of the build context holding what the
// Dockerfile needs besides the project: not .weft, which is where weft dev
// keeps its PostgreSQL (-data-dir's default) and is left out of the
// context.
const buildDir = ".weft-build"

//go:embed dockerfile.tmpl
var dockerfileTemplate string

// workerInstallScript is .weft-build/install.sh: every install step of an
// image (see its header).
//
//go:embed worker-install.sh
var workerInstallScript []byte

var dockerfileTmpl = template.Must(template.New("Dockerfile").Parse(dockerfileTemplate))

// pythonWorkerRequirements are the Python worker's dependencies, as
// worker-py/pyproject.toml lists them (a test holds them equal): an image
// installs them with the project's in one pip resolution, so the project's
// pins win within these ranges.
var pythonWorkerRequirements = []string{
	"langgraph>=1.2,<2",
	"langgraph-checkpoint>=4.3,<5",
	"langchain-core>=1.8,<2",
	"langgraph-sdk>=0.4,<0.5",
	"httpx>=0.28,<1",
	"pydantic>=2.14,<3",
}

// Where the images put things.
const (
	imagePrefix   = "/opt/weft" // the Python worker's virtualenv (venv) and modules (worker-py)
	defaultPython = "3.11"      // langgraph's default python_version
	defaultNode   = "20"        // langgraph's default node_version
)

// dockerignore is the .dockerignore written beside the Dockerfile: what is
// installed in the image (virtualenvs, node_modules) or local state.
const dockerignore = dockerfileMarker + `: what the image build leaves out of the context (installed in the
# image, or local state such as weft dev's database under .weft).
.git
.weft
.venv
venv
node_modules
**/node_modules
**/.venv
**/__pycache__
**/*.pyc
`

// dockerfileCmd is `weft dockerfile`.
func dockerfileCmd(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("weft dockerfile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, dockerfileUsage)
		fs.PrintDefaults()
	}
	var config, out string
	fs.StringVar(&config, "c", "langgraph.json", "the project's config")
	fs.StringVar(&config, "config", "langgraph.json", "the project's config (as -c)")
	fs.StringVar(&out, "o", "", "where to write the Dockerfile (default: Dockerfile beside the config)")
	worker := fs.String("worker", "", "python or js: the worker the image runs (default: see above)")
	base := fs.String("base-image", "", "the image to build on (default python:<python_version>-slim-bookworm or node:<node_version>-bookworm-slim)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "weft dockerfile: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	res, err := writeDockerfile(config, out, *worker, *base)
	if err != nil {
		fmt.Fprintln(stderr, "weft dockerfile:", err)
		return 1
	}
	fmt.Fprintf(stderr, "wrote %s (%s worker: %s), %s and %s/ in %s\n", res.dockerfile, res.worker,
		strings.Join(res.graphs, ", "), res.ignoreNote, buildDir, res.dir)
	fmt.Fprintf(stderr, "build: cd %s && docker build -f %s -t my-graphs .\n", res.dir, res.dockerfileRel)
	for _, n := range res.notes {
		fmt.Fprintln(stderr, "note:", n)
	}
	return 0
}

// dockerfileResult is what writeDockerfile wrote.
type dockerfileResult struct {
	dir, dockerfile, dockerfileRel string
	worker                         string   // "python" or "js"
	graphs                         []string // the graph ids the image serves
	ignoreNote                     string
	notes                          []string
}

// dockerProject is what a Dockerfile needs of langgraph.json.
type dockerProject struct {
	Graphs          map[string]json.RawMessage `json:"graphs"`
	Dependencies    []string                   `json:"dependencies"`
	PythonVersion   json.RawMessage            `json:"python_version"`
	NodeVersion     json.RawMessage            `json:"node_version"`
	DockerfileLines []string                   `json:"dockerfile_lines"`
	PipConfigFile   string                     `json:"pip_config_file"`
	ImageDistro     string                     `json:"image_distro"`
}

// dockerfileView fills dockerfile.tmpl.
type dockerfileView struct {
	Config, ConfigName, GraphList, DockerfilePath string
	Python                                        bool
	Base, Workdir, Prefix, InstallEnv, Entrypoint string
	DockerfileLines                               []string
}

// writeDockerfile writes the Dockerfile of the project at configPath (to
// out, default Dockerfile beside it), its .dockerignore and .weft-build/.
func writeDockerfile(configPath, out, worker, base string) (*dockerfileResult, error) {
	abs, err := filepath.Abs(configPath)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("read the project's config: %w (give it with -c path/to/langgraph.json)", err)
	}
	var p dockerProject
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", abs, err)
	}
	if len(p.Graphs) == 0 {
		return nil, fmt.Errorf("%s names no graphs", abs)
	}
	var settings map[string]json.RawMessage
	_ = json.Unmarshal(raw, &settings)
	dir := filepath.Dir(abs)
	res := &dockerfileResult{dir: dir}

	var py, js []string
	for id, spec := range p.Graphs {
		if IsPythonGraph(GraphPath(spec)) {
			py = append(py, id)
		} else {
			js = append(js, id)
		}
	}
	slices.Sort(py)
	slices.Sort(js)
	switch worker {
	case "":
		switch {
		case len(js) == 0:
			worker = "python"
		case len(py) == 0:
			worker = "js"
		case has(p.NodeVersion) && !has(p.PythonVersion):
			worker = "js"
		default:
			worker = "python"
		}
	case "py":
		worker = "python"
	case "node":
		worker = "js"
	case "python", "js":
	default:
		return nil, fmt.Errorf("-worker %q: python or js", worker)
	}
	python := worker == "python"
	res.worker, res.graphs = worker, py
	if !python {
		res.graphs = js
	}
	if len(res.graphs) == 0 {
		return nil, fmt.Errorf("-worker %s: %s has no %s graph", worker, filepath.Base(abs), map[bool]string{true: "Python", false: "JS"}[python])
	}
	if python && len(js) > 0 {
		res.notes = append(res.notes, fmt.Sprintf("the JS graphs (%s) need an image of the JS worker too: weft dockerfile -worker js -o Dockerfile.js", strings.Join(js, ", ")))
	}
	if !python && len(py) > 0 {
		res.notes = append(res.notes, fmt.Sprintf("the Python graphs (%s) need an image of the Python worker too: weft dockerfile -worker python -o Dockerfile.py", strings.Join(py, ", ")))
	}

	name := regexp.MustCompile(`[^A-Za-z0-9._-]`).ReplaceAllString(filepath.Base(dir), "_")
	if name == "" || strings.Trim(name, ".") == "" {
		name = "project"
	}
	configName := filepath.Base(abs)
	v := dockerfileView{
		Config: configName, ConfigName: configName, GraphList: strings.Join(res.graphs, ", "),
		Python: python, Workdir: "/deps/" + name, Prefix: imagePrefix, DockerfileLines: p.DockerfileLines,
	}
	for _, l := range p.DockerfileLines {
		if strings.ContainsAny(l, "\r\n") {
			return nil, fmt.Errorf("dockerfile_lines: %q holds a line break: give one instruction per string", l)
		}
	}
	var entry []string
	var requirements []byte
	if python {
		version, err := versionSetting(p.PythonVersion, defaultPython, `^3\.(1[1-9]|[2-9][0-9])$`, "python_version", `"3.11" or later ("3.12"): the Python worker needs 3.11`)
		if err != nil {
			return nil, err
		}
		v.Base = "python:" + version + "-slim-bookworm"
		switch p.ImageDistro {
		case "", "debian", "bookworm":
		default:
			res.notes = append(res.notes, fmt.Sprintf("image_distro %q: the image is built on Debian bookworm (python:%s-slim-bookworm); -base-image picks another", p.ImageDistro, version))
		}
		if p.PipConfigFile != "" {
			rel, err := insideProject(dir, p.PipConfigFile)
			if err != nil {
				return nil, fmt.Errorf("pip_config_file: %w", err)
			}
			v.InstallEnv = "PIP_CONFIG_FILE=" + v.Workdir + "/" + rel + " "
		}
		if requirements, err = pythonRequirements(dir, p.Dependencies); err != nil {
			return nil, err
		}
		entry = []string{imagePrefix + "/venv/bin/python", "-m", "weft_worker", "--config", v.Workdir + "/" + configName}
	} else {
		version, err := versionSetting(p.NodeVersion, defaultNode, `^([2-9][0-9]|[1-9][0-9]{2,})$`, "node_version", `a major version, 20 or later ("22"): the JS worker needs Node.js 20`)
		if err != nil {
			return nil, err
		}
		v.Base = "node:" + version + "-bookworm-slim"
		if _, err := os.Stat(filepath.Join(dir, "package.json")); err != nil {
			return nil, fmt.Errorf("%s has no package.json: the JS graphs' packages (@langchain/langgraph, …) are installed from it in the image", dir)
		}
		entry = []string{"node", v.Workdir + "/node_modules/.weft-worker/bin/weft-worker.mjs", "--config", v.Workdir + "/" + configName}
		if len(py) > 0 { // the Python graphs are the Python worker's
			entry = append(entry, "--graphs", strings.Join(js, ","))
		}
	}
	if base != "" {
		v.Base = base
	}
	b, _ := json.Marshal(entry)
	v.Entrypoint = string(b)
	res.notes = append(res.notes, unsupportedInImages(settings, python)...)

	if out == "" {
		out = filepath.Join(dir, "Dockerfile")
	}
	if res.dockerfile, err = filepath.Abs(out); err != nil {
		return nil, err
	}
	res.dockerfileRel = res.dockerfile
	if rel, err := filepath.Rel(dir, res.dockerfile); err == nil {
		res.dockerfileRel = rel
	}
	v.DockerfilePath = res.dockerfileRel
	var text bytes.Buffer
	if err := dockerfileTmpl.Execute(&text, v); err != nil {
		return nil, err
	}

	// Refuse before writing anything: a Dockerfile or .weft-build/ of the user's.
	if err := checkOurs(res.dockerfile); err != nil {
		return nil, err
	}
	bd := filepath.Join(dir, buildDir)
	if _, err := os.Stat(bd); err == nil {
		if _, err := os.Stat(filepath.Join(bd, "install.sh")); err != nil {
			return nil, fmt.Errorf("%s exists and was not written by weft dockerfile: move it away", bd)
		}
	}
	if err := writeBuildDir(bd, requirements); err != nil {
		return nil, err
	}
	if err := os.WriteFile(res.dockerfile, text.Bytes(), 0o644); err != nil {
		return nil, err
	}
	ignore := filepath.Join(dir, ".dockerignore")
	res.ignoreNote = ".dockerignore"
	if err := checkOurs(ignore); err != nil {
		res.ignoreNote = "not .dockerignore (the project's own)"
		res.notes = append(res.notes, "the project has a .dockerignore of its own: make sure it leaves out node_modules, .venv and .weft, and not .weft-build")
	} else if err := os.WriteFile(ignore, []byte(dockerignore), 0o644); err != nil {
		return nil, err
	}
	return res, nil
}

// has tells whether a setting is given (not absent, not null).
func has(v json.RawMessage) bool { return len(v) > 0 && string(v) != "null" }

// versionSetting reads python_version or node_version (a string, or a
// number as some configs write 20), def when absent, checked against pattern.
func versionSetting(v json.RawMessage, def, pattern, key, want string) (string, error) {
	if !has(v) {
		return def, nil
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		var n json.Number
		if json.Unmarshal(v, &n) != nil {
			return "", fmt.Errorf("%s %s: want %s", key, v, want)
		}
		s = n.String()
	}
	if !regexp.MustCompile(pattern).MatchString(s) {
		return "", fmt.Errorf("%s %q: want %s", key, s, want)
	}
	return s, nil
}

// insideProject is path (relative to the project's directory dir) as a
// slash path inside it, or an error when it leaves the build context.
func insideProject(dir, path string) (string, error) {
	if filepath.IsAbs(path) {
		return "", fmt.Errorf("%s: give a path relative to the project's directory (the image's build context)", path)
	}
	rel, err := filepath.Rel(dir, filepath.Join(dir, path))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is outside the project's directory, the image's build context: move it inside", path)
	}
	return filepath.ToSlash(rel), nil
}

// pythonRequirements is .weft-build/requirements.txt: langgraph.json's
// dependencies as pip reads them from the project's directory (PyPI
// requirements as given; a local directory with pyproject.toml or setup.py
// as a package; another local directory's requirements.txt, whose modules
// the worker puts on the import path), then the Python worker's.
func pythonRequirements(dir string, deps []string) ([]byte, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: what .weft-build/install.sh installs, in one pip resolution.\n", dockerfileMarker)
	b.WriteString("# Paths of packages are relative to the project's directory (pip's working directory), -r ones to this file.\n")
	b.WriteString("# The project's dependencies (langgraph.json):\n")
	for _, d := range deps {
		if strings.ContainsAny(d, "\r\n") {
			return nil, fmt.Errorf("dependencies: %q holds a line break", d)
		}
		if !strings.HasPrefix(d, ".") && !strings.HasPrefix(d, "/") {
			b.WriteString(d + "\n")
			continue
		}
		rel, err := insideProject(dir, d)
		if err != nil {
			return nil, fmt.Errorf("dependencies: %w", err)
		}
		local := filepath.Join(dir, filepath.FromSlash(rel))
		if fi, err := os.Stat(local); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("dependencies: %s is not a directory of the project", d)
		}
		switch {
		case fileExists(filepath.Join(local, "pyproject.toml")) || fileExists(filepath.Join(local, "setup.py")):
			if rel == "." {
				b.WriteString(".\n")
			} else {
				b.WriteString("./" + rel + "\n")
			}
		case fileExists(filepath.Join(local, "requirements.txt")):
			b.WriteString("-r " + filepath.ToSlash(filepath.Join("..", rel, "requirements.txt")) + "\n")
		default:
			fmt.Fprintf(&b, "# %s: modules only, put on the import path by the worker\n", d)
		}
	}
	b.WriteString("# Weft's Python worker (worker-py/pyproject.toml):\n")
	for _, r := range pythonWorkerRequirements {
		b.WriteString(r + "\n")
	}
	return []byte(b.String()), nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// checkOurs refuses a file that exists and was not written by weft
// dockerfile.
func checkOurs(path string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(b, []byte(dockerfileMarker)) {
		return fmt.Errorf("%s exists and was not written by weft dockerfile: move it away, or write elsewhere with -o", path)
	}
	return nil
}

// writeBuildDir writes .weft-build: install.sh, requirements.txt (Python;
// nil leaves none) and both workers' sources, replacing older ones.
func writeBuildDir(bd string, requirements []byte) error {
	for _, d := range []string{"worker-py", "worker-js"} {
		if err := os.RemoveAll(filepath.Join(bd, d)); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(bd, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(bd, "install.sh"), workerInstallScript, 0o755); err != nil {
		return err
	}
	if requirements != nil {
		if err := os.WriteFile(filepath.Join(bd, "requirements.txt"), requirements, 0o644); err != nil {
			return err
		}
	}
	if err := copyFS(workerpy.Files, filepath.Join(bd, "worker-py")); err != nil {
		return err
	}
	return copyFS(workerjs.Files, filepath.Join(bd, "worker-js"))
}

// copyFS writes the files of fsys under dir.
func copyFS(fsys fs.FS, dir string) error {
	return fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		out := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(path, "bin/") {
			mode = 0o755
		}
		return os.WriteFile(out, b, mode)
	})
}

// unsupportedInImages are notes on the keys of langgraph.json a worker
// image does not carry: what weft dev's workers serve the server over
// local sockets, and LangGraph's build settings that mean nothing here.
func unsupportedInImages(settings map[string]json.RawMessage, python bool) []string {
	var notes []string
	sub := func(section, key string) bool {
		var m map[string]json.RawMessage
		return json.Unmarshal(settings[section], &m) == nil && has(m[key])
	}
	var local []string
	if sub("auth", "path") {
		local = append(local, "auth.path")
	}
	if sub("http", "app") {
		local = append(local, "http.app")
	}
	if has(settings["ui"]) {
		local = append(local, "ui")
	}
	var store struct {
		Index struct {
			Embed string `json:"embed"`
		} `json:"index"`
	}
	if json.Unmarshal(settings["store"], &store) == nil && strings.Contains(store.Index.Embed, ":") && !strings.HasPrefix(store.Index.Embed, "openai:") {
		local = append(local, "store.index.embed")
	}
	if python && sub("checkpointer", "serde") {
		local = append(local, "checkpointer.serde")
	}
	if len(local) > 0 {
		notes = append(notes, "not in the image, which serves the graphs only: "+strings.Join(local, ", ")+
			" (weft dev's workers serve them to the server beside them)")
	}
	var ignored []string
	for _, k := range []string{"api_version", "base_image", "pip_installer", "source", "_INTERNAL_docker_tag", "keep_pkg_tools", "docker_compose_file"} {
		if has(settings[k]) {
			ignored = append(ignored, k)
		}
	}
	if len(ignored) > 0 {
		notes = append(notes, strings.Join(ignored, ", ")+": settings of LangGraph's server images, not read (pip installs the "+
			"dependencies; -base-image picks the image to build on)")
	}
	return notes
}
