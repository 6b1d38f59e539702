package dev

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/cli"
)

func TestIsPythonGraph(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]bool{
		"./agent.py":       true,
		"src/agent.py":     true,
		"my_pkg.agent":     true,
		"agent":            true,
		"./src/agent.ts":   false,
		"./src/agent.mjs":  false,
		"agent.js":         false,
		"src/agent":        false,
		"./graphs/factory": false,
		"":                 false,
	} {
		if got := cli.IsPythonGraph(path); got != want {
			t.Errorf("IsPythonGraph(%q) = %v, want %v", path, got, want)
		}
	}
	js, py := splitGraphs(map[string]json.RawMessage{
		"a": json.RawMessage(`"./agent.py:graph"`),
		"b": json.RawMessage(`{"path": "pkg.mod:make"}`),
		"c": json.RawMessage(`"./src/agent.ts:graph"`),
	})
	if !slices.Equal(py, []string{"a", "b"}) || len(js) != 1 || js["c"] != "./src/agent.ts" {
		t.Fatalf("splitGraphs: js %v, py %v", js, py)
	}
}

func TestFindPython(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	touch := func(p string) string {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if got, _ := findPython(dir, env(map[string]string{"WEFT_PYTHON": "/x/python"})); got != "/x/python" {
		t.Errorf("WEFT_PYTHON: got %q", got)
	}
	venv := filepath.Join(dir, "venv")
	py := touch(filepath.Join(venv, "bin", "python"))
	if got, _ := findPython(dir, env(map[string]string{"VIRTUAL_ENV": venv})); got != py {
		t.Errorf("VIRTUAL_ENV: got %q, want %q", got, py)
	}
	project := filepath.Join(dir, "project")
	touch(filepath.Join(project, "uv.lock"))
	if _, err := findPython(filepath.Join(project, "sub"), env(nil)); err == nil || !strings.Contains(err.Error(), "uv sync") {
		t.Errorf("uv project without .venv: err %v, want one saying uv sync", err)
	}
	dotVenv := touch(filepath.Join(project, ".venv", "bin", "python"))
	if got, _ := findPython(filepath.Join(project, "sub"), env(nil)); got != dotVenv {
		t.Errorf(".venv: got %q, want %q", got, dotVenv)
	}
}

// A Python without langgraph: weft dev says exactly what to run.
func TestLoadPythonProjectWithoutLangGraph(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fake := filepath.Join(dir, "python")
	script := "#!/bin/sh\necho 'Traceback (most recent call last):' >&2\necho \"ModuleNotFoundError: No module named 'langgraph'\" >&2\nexit 1\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "langgraph.json")
	_, err := loadPythonProject(cfg, []string{"agent"}, func(k string) string {
		if k == "WEFT_PYTHON" {
			return fake
		}
		return ""
	})
	if err == nil || !strings.Contains(err.Error(), fake+" -m pip install langgraph") {
		t.Fatalf("err = %v, want the pip command", err)
	}
}

func TestUnpackPyWorker(t *testing.T) {
	t.Parallel()
	cache := t.TempDir()
	getenv := func(k string) string {
		if k == "WEFT_CACHE_DIR" {
			return cache
		}
		return ""
	}
	dir, err := unpackPyWorker(getenv)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"__init__.py", "__main__.py", "saver.py", "worker.py"} {
		if !fileExists(filepath.Join(dir, "weft_worker", f)) {
			t.Errorf("%s missing from %s", f, dir)
		}
	}
	again, err := unpackPyWorker(getenv)
	if err != nil || again != dir {
		t.Fatalf("second unpack: %q, %v; want %q", again, err, dir)
	}
}
