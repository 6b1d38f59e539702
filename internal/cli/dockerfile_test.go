package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/cli"
)

// project writes a project's files (path → content) into a temporary
// directory and returns it.
func project(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "my proj")
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// dockerfile runs `weft dockerfile` with args, on dir/langgraph.json
// unless args give -c.
func dockerfile(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	if !slices.Contains(args, "-c") {
		args = append([]string{"-c", filepath.Join(dir, "langgraph.json")}, args...)
	}
	var stdout, stderr bytes.Buffer
	code := cli.Run(nil, nil, append([]string{"dockerfile"}, args...), func(string) string { return "" }, &stdout, &stderr)
	return code, stdout.String() + stderr.String()
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func config(graphs map[string]string, extra map[string]any) string {
	c := map[string]any{"graphs": graphs}
	for k, v := range extra {
		c[k] = v
	}
	b, _ := json.Marshal(c)
	return string(b)
}

// lines are the non-comment lines of a requirements file.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// weft dockerfile writes a Python project's Dockerfile, the requirements
// of its dependencies (as langgraph.json lists them) and the Python
// worker's, the install script and the worker's sources; the JS one's;
// what it refuses, and what it will not overwrite.
func TestDockerfile(t *testing.T) {
	t.Parallel()

	t.Run("python", func(t *testing.T) {
		dir := project(t, map[string]string{
			"langgraph.json": config(map[string]string{"agent": "./src/agent.py:graph", "other": "my_pkg.graphs:other"},
				map[string]any{"dependencies": []string{".", "./pkg", "./libs/reqs", "./libs/plain", "langchain-openai==0.3.1"},
					"python_version": "3.12", "dockerfile_lines": []string{"RUN echo hi"}}),
			"src/agent.py":               "graph = None\n",
			"pkg/pyproject.toml":         "[project]\nname = 'pkg'\n",
			"libs/reqs/requirements.txt": "requests==2.32.3\n",
			"libs/plain/mod.py":          "",
		})
		code, out := dockerfile(t, dir)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, out)
		}
		df := read(t, filepath.Join(dir, "Dockerfile"))
		for _, want := range []string{
			"FROM python:3.12-slim-bookworm\n\nRUN echo hi\n",
			"COPY . /deps/my_proj\nWORKDIR /deps/my_proj\n",
			"RUN sh .weft-build/install.sh python --prefix /opt/weft --config langgraph.json\n",
			"USER 65532:65532\n",
			"ENV WEFT_URL=http://weft:8123\n",
			`ENTRYPOINT ["/opt/weft/venv/bin/python","-m","weft_worker","--config","/deps/my_proj/langgraph.json"]`,
		} {
			if !strings.Contains(df, want) {
				t.Errorf("Dockerfile lacks %q:\n%s", want, df)
			}
		}
		if !strings.HasPrefix(df, "# Written by `weft dockerfile`") {
			t.Errorf("Dockerfile does not start with the marker:\n%s", df)
		}
		reqs := lines(read(t, filepath.Join(dir, ".weft-build", "requirements.txt")))
		project := []string{"./pkg", "-r ../libs/reqs/requirements.txt", "langchain-openai==0.3.1"}
		if !slices.Equal(reqs[:len(project)], project) {
			t.Errorf("requirements %q, want the project's first: %q", reqs, project)
		}
		if !slices.Equal(reqs[len(project):], workerDependencies(t)) {
			t.Errorf("requirements %q: the worker's should be worker-py/pyproject.toml's %q", reqs[len(project):], workerDependencies(t))
		}
		for _, f := range []string{".weft-build/install.sh", ".weft-build/worker-py/weft_worker/__main__.py",
			".weft-build/worker-js/bin/weft-worker.mjs", ".weft-build/worker-js/src/worker.mjs", ".dockerignore"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("missing %s: %v", f, err)
			}
		}
		if fi, err := os.Stat(filepath.Join(dir, ".weft-build", "install.sh")); err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("install.sh not executable: %v", err)
		}
		// Again: the same files, and what an older run left in the worker's directory is gone.
		stale := filepath.Join(dir, ".weft-build", "worker-py", "weft_worker", "gone.py")
		if err := os.WriteFile(stale, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if code, out := dockerfile(t, dir); code != 0 {
			t.Fatalf("second run: exit %d: %s", code, out)
		}
		if _, err := os.Stat(stale); err == nil {
			t.Error("a stale worker file survived the second run")
		}
		if read(t, filepath.Join(dir, "Dockerfile")) != df {
			t.Error("a second run wrote another Dockerfile")
		}
	})

	t.Run("a real package at the root", func(t *testing.T) {
		dir := project(t, map[string]string{
			"langgraph.json": config(map[string]string{"agent": "./agent.py:graph"}, map[string]any{"dependencies": []string{"."}}),
			"agent.py":       "",
			"pyproject.toml": "[project]\nname = 'x'\n",
		})
		if code, out := dockerfile(t, dir); code != 0 {
			t.Fatalf("exit %d: %s", code, out)
		}
		if reqs := lines(read(t, filepath.Join(dir, ".weft-build", "requirements.txt"))); reqs[0] != "." {
			t.Errorf("requirements %q: want the project itself (.) first", reqs)
		}
	})

	t.Run("js", func(t *testing.T) {
		dir := project(t, map[string]string{
			"langgraph.json": config(map[string]string{"agent": "./agent.ts:graph", "py": "./py.py:graph"},
				map[string]any{"node_version": "22", "auth": map[string]any{"path": "./auth.ts:auth"}}),
			"package.json":  "{}",
			".dockerignore": "secrets/\n",
		})
		code, out := dockerfile(t, dir, "-o", filepath.Join(dir, "Dockerfile.js"))
		if code != 0 {
			t.Fatalf("exit %d: %s", code, out)
		}
		df := read(t, filepath.Join(dir, "Dockerfile.js"))
		for _, want := range []string{
			"FROM node:22-bookworm-slim\n",
			"RUN sh .weft-build/install.sh js --config langgraph.json\n",
			`ENTRYPOINT ["node","/deps/my_proj/node_modules/.weft-worker/bin/weft-worker.mjs","--config","/deps/my_proj/langgraph.json","--graphs","agent"]`,
		} {
			if !strings.Contains(df, want) {
				t.Errorf("Dockerfile.js lacks %q:\n%s", want, df)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, ".weft-build", "requirements.txt")); err == nil {
			t.Error("a JS image got a requirements.txt")
		}
		// Notes: the Python graph's image, auth.path not in images, the project's own .dockerignore kept.
		for _, want := range []string{"-worker python", "auth.path", ".dockerignore of its own"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if read(t, filepath.Join(dir, ".dockerignore")) != "secrets/\n" {
			t.Error("the project's .dockerignore was overwritten")
		}
		// node_version and no python_version: JS by default, as langgraph picks.
		if code, out := dockerfile(t, dir, "-o", filepath.Join(dir, "Dockerfile.default")); code != 0 || !strings.Contains(read(t, filepath.Join(dir, "Dockerfile.default")), "FROM node:22") {
			t.Errorf("default worker of a mixed project with node_version: exit %d %s", code, out)
		}
	})

	t.Run("refused", func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			files map[string]string
			args  []string
			want  string
		}{
			{"no graphs", map[string]string{"langgraph.json": `{"graphs": {}}`}, nil, "names no graphs"},
			{"no config", map[string]string{"other.json": "{}"}, nil, "read the project's config"},
			{"outside the project", map[string]string{"langgraph.json": config(map[string]string{"a": "./a.py:g"}, map[string]any{"dependencies": []string{"../shared"}})}, nil, "outside the project's directory"},
			{"not a directory", map[string]string{"langgraph.json": config(map[string]string{"a": "./a.py:g"}, map[string]any{"dependencies": []string{"./a.py"}}), "a.py": ""}, nil, "not a directory"},
			{"old python", map[string]string{"langgraph.json": config(map[string]string{"a": "./a.py:g"}, map[string]any{"python_version": "3.10"})}, nil, "python_version"},
			{"old node", map[string]string{"langgraph.json": config(map[string]string{"a": "./a.mjs:g"}, map[string]any{"node_version": "18"}), "package.json": "{}"}, nil, "node_version"},
			{"no package.json", map[string]string{"langgraph.json": config(map[string]string{"a": "./a.mjs:g"}, nil)}, nil, "no package.json"},
			{"no graph of the worker", map[string]string{"langgraph.json": config(map[string]string{"a": "./a.py:g"}, nil)}, []string{"-worker", "js"}, "has no JS graph"},
			{"a Dockerfile of the user's", map[string]string{"langgraph.json": config(map[string]string{"a": "./a.py:g"}, nil), "Dockerfile": "FROM scratch\n"}, nil, "not written by weft dockerfile"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				dir := project(t, tc.files)
				code, out := dockerfile(t, dir, tc.args...)
				if code == 0 || !strings.Contains(out, tc.want) {
					t.Fatalf("exit %d, want a failure saying %q:\n%s", code, tc.want, out)
				}
				if _, err := os.Stat(filepath.Join(dir, ".weft-build")); err == nil {
					t.Error("a refused run wrote .weft-build")
				}
			})
		}
	})
}

// workerDependencies are worker-py/pyproject.toml's dependencies.
func workerDependencies(t *testing.T) []string {
	t.Helper()
	toml := read(t, filepath.Join("..", "..", "worker-py", "pyproject.toml"))
	start := strings.Index(toml, "\ndependencies = [")
	if start < 0 {
		t.Fatal("worker-py/pyproject.toml has no dependencies")
	}
	block := toml[start : start+strings.Index(toml[start:], "\n]")]
	var deps []string
	for _, m := range regexp.MustCompile(`(?m)^\s*"([^"]+)"`).FindAllStringSubmatch(block, -1) {
		deps = append(deps, m[1])
	}
	return deps
}

// The install script is POSIX sh.
func TestWorkerInstallScript(t *testing.T) {
	t.Parallel()
	dir := project(t, map[string]string{"langgraph.json": config(map[string]string{"a": "./a.py:g"}, nil)})
	if code, out := dockerfile(t, dir); code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	script := filepath.Join(dir, ".weft-build", "install.sh")
	if out, err := exec.Command("sh", "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("sh -n install.sh: %v\n%s", err, out)
	}
	cmd := exec.Command("sh", script, "cobol")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "usage:") {
		t.Fatalf("install.sh cobol: %v, want the usage\n%s", err, out)
	}
}
