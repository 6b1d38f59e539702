package dev_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server/servertest"
)

// What weft dev read, and from where, is in the start log and in GET /info
// in the same words: the graphs served and the one that failed to load,
// the settings of the command line, the environment and langgraph.json
// (each key with what weft dev does with it), and a warning for each key
// LangGraph's servers do not know either.
func TestDevReportsSettingsAndGraphs(t *testing.T) {
	t.Parallel()
	config := testProject(t, "settings")
	dev := startDev(t, []string{"--config", config, "-workers", "0"}, "WEFT_LEASE=45s")
	do := caller(t, "http://"+dev.addr)
	waitGraph(t, do, "foo_bar")

	type setting struct{ Name, Value, Source, Use string }
	var info struct {
		Graphs []struct {
			GraphID string `json:"graph_id"`
			Source  string
		}
		GraphErrors []struct {
			GraphID string `json:"graph_id"`
			Error   string
		} `json:"graph_errors"`
		Settings []setting
		Warnings []string
	}
	for deadline := time.Now().Add(60 * time.Second); len(info.GraphErrors) == 0; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("GET /info never listed the broken graph")
		}
		res, b := do("GET", "/info", nil)
		if res.StatusCode != 200 {
			t.Fatalf("/info: %d %s", res.StatusCode, b)
		}
		if err := json.Unmarshal(b, &info); err != nil {
			t.Fatal(err)
		}
	}
	if len(info.Graphs) != 1 || info.Graphs[0].GraphID != "foo_bar" || info.Graphs[0].Source != "worker" {
		t.Fatalf("graphs served: %+v, want foo_bar from the worker", info.Graphs)
	}
	if info.GraphErrors[0].GraphID != "broken" || !strings.Contains(info.GraphErrors[0].Error, "missing") {
		t.Fatalf("graph errors: %+v", info.GraphErrors)
	}

	find := func(name string) setting {
		t.Helper()
		i := slices.IndexFunc(info.Settings, func(s setting) bool { return s.Name == name })
		if i < 0 {
			t.Fatalf("settings lack %s: %+v", name, info.Settings)
		}
		return info.Settings[i]
	}
	for name, want := range map[string]setting{
		"workers":                      {Value: "0", Source: "-workers"},
		"lease":                        {Value: "45s", Source: "WEFT_LEASE"},
		"max-attempts":                 {Value: "5", Source: "default"},
		"node_version":                 {Value: `"20"`, Source: config, Use: "image builds"},
		"dockerfile_lines":             {Value: `["RUN echo built"]`, Source: config, Use: "image builds"},
		"checkpointer.ttl.default_ttl": {Value: "60", Source: config, Use: "applied"},
		"$schema":                      {Value: `"https://langgra.ph/schema.json"`, Source: config, Use: "applied"},
		"env":                          {Value: `names: ["SETTINGS_PLAIN","SETTINGS_SECRET"]`, Source: config, Use: "applied"},
	} {
		want.Name = name
		if got := find(name); got != want {
			t.Errorf("setting %s: %+v, want %+v", name, got, want)
		}
	}
	if slices.ContainsFunc(info.Settings, func(s setting) bool { return s.Name == "checkpointer" || s.Name == "checkpointer.path" }) {
		t.Errorf("a section or a null key listed as a setting: %+v", info.Settings)
	}
	wantWarnings := []string{
		"langgraph.json: unknown key htp ignored: LangGraph's servers do not read it either (did you mean http?)",
		"langgraph.json: unknown key store.zz ignored: LangGraph's servers do not read it either",
	}
	if !slices.Equal(info.Warnings, wantWarnings) {
		t.Fatalf("warnings: %q, want %q", info.Warnings, wantWarnings)
	}

	// The start log, in the same words.
	logged := func(msg string, attrs map[string]any) bool {
		for _, l := range dev.logs.snapshot() {
			if l["msg"] != msg {
				continue
			}
			match := true
			for k, v := range attrs {
				match = match && l[k] == v
			}
			if match {
				return true
			}
		}
		return false
	}
	for _, c := range []struct {
		msg   string
		attrs map[string]any
	}{
		{"setting", map[string]any{"name": "workers", "value": "0", "source": "-workers"}},
		{"setting", map[string]any{"name": "lease", "value": "45s", "source": "WEFT_LEASE"}},
		{"setting", map[string]any{"name": "node_version", "source": config, "use": "image builds"}},
		{wantWarnings[0], nil},
		{"graph registered", map[string]any{"graph_id": "foo_bar", "source": "worker"}},
		{"graph failed to load", map[string]any{"graph_id": "broken"}},
	} {
		if !logged(c.msg, c.attrs) {
			t.Errorf("the start log lacks %q %v", c.msg, c.attrs)
		}
	}
	if logged("setting", map[string]any{"name": "max-attempts"}) {
		t.Error("a setting at its default was logged")
	}
	// A variable's value (a secret, often) is in neither.
	if res, b := do("GET", "/info", nil); res.StatusCode != 200 || strings.Contains(string(b), "s3cr3t") || strings.Contains(dev.logs.String(), "s3cr3t") {
		t.Error("langgraph.json's env values shown in /info or the log")
	}
}

// A key weft dev does not take (a custom checkpointer, a project's
// encryption or priority handlers, another TypeScript loader) stops it
// before anything starts, with every such key named and why.
func TestDevRefusesKeysItDoesNotTake(t *testing.T) {
	t.Parallel()
	bin := servertest.Binary(t)
	dir := t.TempDir()
	write := func(cfg string) string {
		path := filepath.Join(dir, "langgraph.json")
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, c := range []struct {
		config string
		want   []string
	}{
		{`{"graphs": {"a": "./a.py:g"}, "encryption": {"path": "./enc.py:encryption"}, "priority": {"path": "./p.py:priority"},
			"checkpointer": {"path": "./saver.py:saver"}}`,
			[]string{"encryption.path: Weft encrypts", "LANGGRAPH_AES_KEY", "priority.path: Weft's dispatch queue", "checkpointer.path: Weft is the checkpointer"}},
		{`{"graphs": {"a": "./a.ts:g"}, "node_loader": "ts-node"}`, []string{`node_loader "ts-node"`, "tsx"}},
	} {
		cmd := exec.Command(bin, "dev", "--config", write(c.config))
		cmd.Env = append(os.Environ(), "DATABASE_URL="+pgtest.DSN(t), "WEFT_ADDR="+servertest.FreeAddr(t))
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
			t.Fatalf("weft dev with %s: %v, want exit 2\n%s", c.config, err, out)
		}
		for _, w := range c.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("the refusal lacks %q:\n%s", w, out)
			}
		}
	}
}

// snapshot is a copy of the lines read so far.
func (l *logLines) snapshot() []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lines)
}
