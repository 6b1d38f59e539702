package dev_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server/servertest"
)

// A graph of langgraph.json given as {"path", "description"} has that
// description on its system assistant, Python and JS graphs alike, as on
// LangGraph's Python server: GET /assistants/search and /assistants/{id}
// answer it, its version 1 holds it, an assistant a user makes of the
// graph has none of its own. At the next start the system assistant takes
// the config's description again (changed, or gone), in place: its version
// stays.
func TestDevGraphDescriptions(t *testing.T) {
	t.Parallel()
	python := testPython(t)
	config := testProject(t, "described")
	dsn := pgtest.DSN(t)
	wantAll := func(want map[string]any) {
		t.Helper()
		dev := startDev(t, []string{"--config", config, "-workers", "0"}, "WEFT_PYTHON="+python, "DATABASE_URL="+dsn)
		srv := servertest.Client(t, "http://"+dev.addr, nil)
		// The system assistants as the config describes them, once every
		// graph is registered again (they exist from the last start).
		described := func(got []map[string]any) bool {
			if len(got) != len(want) {
				return false
			}
			for _, a := range got {
				if d, ok := want[a["graph_id"].(string)]; !ok || a["description"] != d || a["version"] != float64(1) {
					return false
				}
			}
			return true
		}
		var got []map[string]any
		for deadline := time.Now().Add(90 * time.Second); !described(got); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("system assistants %v; want descriptions %v, version 1", got, want)
			}
			got = nil
			if resp, err := srv.Try("POST", "/assistants/search", map[string]any{"metadata": map[string]any{"created_by": "system"}}); err == nil && resp.Status == 200 {
				resp.JSON(t, &got)
			}
		}
		for _, a := range got {
			g := a["graph_id"].(string)
			one := srv.Must(200, "GET", "/assistants/"+a["assistant_id"].(string), nil).Map(t)
			var versions []map[string]any
			srv.Must(200, "POST", "/assistants/"+a["assistant_id"].(string)+"/versions", map[string]any{}).JSON(t, &versions)
			if one["description"] != want[g] || len(versions) != 1 || versions[0]["description"] != want[g] {
				t.Errorf("%s: GET answers description %#v, versions %v; want %#v", g, one["description"], versions, want[g])
			}
		}
		if mine := srv.Must(200, "POST", "/assistants", map[string]any{"graph_id": "echo_py", "name": "mine"}).Map(t); mine["description"] != nil {
			t.Errorf("an assistant made of echo_py has description %#v; want none", mine["description"])
		}
		if err := dev.cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		select {
		case <-dev.done:
		case <-time.After(30 * time.Second):
			t.Fatal("weft dev did not stop on SIGINT")
		}
	}
	wantAll(map[string]any{"echo_js": "Echoes the text, in JavaScript.", "echo_py": "Echoes the text, in Python.",
		"plain_js": nil, "plain_py": nil})

	// The next start, on the same database, with the descriptions changed.
	var cfg map[string]map[string]any
	b, err := os.ReadFile(config)
	if err == nil {
		err = json.Unmarshal(b, &cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	cfg["graphs"]["echo_js"] = map[string]any{"path": "./echo.mjs:graph"}
	cfg["graphs"]["plain_py"] = map[string]any{"path": "./echo.py:graph", "description": "Now described."}
	if b, err = json.Marshal(cfg); err == nil {
		err = os.WriteFile(filepath.Clean(config), b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	wantAll(map[string]any{"echo_js": nil, "echo_py": "Echoes the text, in Python.", "plain_js": nil, "plain_py": "Now described."})
}
