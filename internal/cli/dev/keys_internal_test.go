package dev

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// officialKeys lists every key of the official Python CLI's Config (the
// installed langgraph-cli's TypedDicts, walked through their unions), as
// dotted paths: a key a new langgraph-cli adds fails
// TestProjectKeysCoverOfficialSchema until projectKeys says what weft dev
// does with it.
const officialKeys = `
import typing
from langgraph_cli import schemas

def typed_dict(t):
    return isinstance(t, type) and hasattr(t, "__total__") and hasattr(t, "__annotations__")

def walk(td, prefix):
    for name, t in typing.get_type_hints(td).items():
        print(prefix + name)
        todo = [t]
        while todo:
            x = todo.pop()
            if typed_dict(x):
                walk(x, prefix + name + ".")
            else:
                todo.extend(typing.get_args(x))

walk(schemas.Config, "")
`

// jsOnlyKeys are the keys of LangGraph.js's CLI config the Python CLI
// does not have (@langchain/langgraph-cli's config schema).
var jsOnlyKeys = []string{"docker_compose_file", "node_loader", "ui_config", "ui_config.shared"}

func TestProjectKeysCoverOfficialSchema(t *testing.T) {
	python := os.Getenv("WEFT_TEST_PYTHON")
	if python == "" {
		python = "../../../sdk-tests/py/.venv/bin/python"
	}
	out, err := exec.Command(python, "-c", officialKeys).CombinedOutput()
	if err != nil {
		t.Fatalf("list langgraph-cli's config keys with %s (set WEFT_TEST_PYTHON, or make sdk-tests/py/.venv/.installed): %v\n%s", python, err, out)
	}
	official := append(strings.Fields(string(out)), jsOnlyKeys...)
	if len(official) < 80 {
		t.Fatalf("only %d official keys listed: %s", len(official), out)
	}
	for _, k := range official {
		if projectKeyOf(k) == nil {
			t.Errorf("langgraph.json key %s of LangGraph's servers: projectKeys does not say what weft dev does with it", k)
		}
	}
	for _, k := range projectKeys {
		if k.use == keyRefused && k.note == "" {
			t.Errorf("%s is refused without a reason", k.path)
		}
	}
}

// docs/workers.md has a row for every key, saying what weft dev does in
// the words of projectKeys.
func TestProjectKeysDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "workers.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range projectKeys {
		row := "| `" + k.path + "` | " + string(k.use) + " | " + k.note + " |\n"
		if !strings.Contains(string(b), row) {
			t.Errorf("docs/workers.md has no row %q", row)
		}
	}
}

func TestCheckKeys(t *testing.T) {
	set, warnings, err := checkKeys([]byte(`{
		"graphs": {"agent": {"path": "./a.py:g", "whatever": 1}},
		"http": {"cors": {"allow_origins": ["https://a.example"], "max_agee": 5}, "mount_prefix": null},
		"env": {"ANY_NAME": "x"},
		"webhooks": {"headers": {"X-Anything": "y"}},
		"pythn_version": "3.11",
		"zzz": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, s := range set {
		paths = append(paths, s.key.path)
	}
	// Sections are walked (their keys are the settings); free keys (graph
	// ids, variables, headers) are not; a null is a key not given.
	if want := []string{"env", "graphs", "http.cors.allow_origins", "webhooks.headers"}; !slices.Equal(paths, want) {
		t.Errorf("settings %q, want %q", paths, want)
	}
	want := []string{
		"langgraph.json: unknown key http.cors.max_agee ignored: LangGraph's servers do not read it either (did you mean http.cors.max_age?)",
		"langgraph.json: unknown key pythn_version ignored: LangGraph's servers do not read it either (did you mean python_version?)",
		"langgraph.json: unknown key zzz ignored: LangGraph's servers do not read it either",
	}
	if !slices.Equal(warnings, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warnings, "\n"), strings.Join(want, "\n"))
	}

	// A refused key, even inside a section; a refused section given as a
	// bare value too.
	for _, c := range []struct{ config, want string }{
		{`{"encryption": {"path": "./e.py:enc"}}`, "encryption.path: " + noEncryption},
		{`{"priority": "./p.py:prio"}`, "priority: " + noPriority},
		{`{"checkpointer": {"ttl": {"strategy": "delete"}, "path": "./s.py:saver"}}`, "checkpointer.path: Weft is the checkpointer"},
	} {
		if _, _, err := checkKeys([]byte(c.config)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a refusal with %q", c.config, err, c.want)
		}
	}
}
