package weft

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/postgres/pgtest"
)

func TestMain(m *testing.M) {
	if os.Getenv("WEFT_TEST_WORKER") != "" {
		// A worker process of TestWorkerKill9.
		r := graph.NewRegistry()
		if err := r.Register(killGraph()); err != nil {
			panic(err)
		}
		WorkerMain(r)
	}
	os.Exit(pgtest.Main(m))
}

// An embedded server serves the program's graphs over the HTTP API: a
// system assistant per graph, runs executed by the in-process workers.
func TestStartServesGraphs(t *testing.T) {
	r := graph.NewRegistry()
	err := r.Register(&graph.Graph{
		ID:       "shout",
		Channels: []graph.Channel{{Name: "text"}},
		Nodes: []graph.Node{{Name: "up", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
			s, _ := in.Values["text"].(string)
			return graph.State{"text": strings.ToUpper(s) + "!"}, nil
		}}},
		Edges: []graph.Edge{{From: graph.START, To: "up"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Start(t.Context(), r, Options{Addr: "127.0.0.1:0", DatabaseURL: pgtest.DSN(t), Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := srv.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	body, _ := json.Marshal(map[string]any{"assistant_id": "shout", "input": map[string]any{"text": "hi"}})
	resp, err := http.Post(srv.URL()+"/runs/wait", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, %v", resp.StatusCode, err)
	}
	if out["text"] != "HI!" {
		t.Fatalf("result = %v", out)
	}
	// Only the program's graphs are served.
	resp2, err := http.Post(srv.URL()+"/assistants/search", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	var list []map[string]any
	if err := json.NewDecoder(resp2.Body).Decode(&list); err != nil || len(list) != 1 || list[0]["graph_id"] != "shout" {
		t.Fatalf("assistants = %v (%v)", list, err)
	}
}

func TestStartRejectsBadOptions(t *testing.T) {
	if _, err := Start(t.Context(), nil, Options{Workers: -1}); err == nil {
		t.Fatal("negative workers accepted")
	}
}

func TestRunFlags(t *testing.T) {
	var stderr bytes.Buffer
	if code := run(nil, []string{"-help"}, func(string) string { return "" }, io.Discard, &stderr); code != 0 {
		t.Errorf("-help: exit %d", code)
	}
	if !strings.Contains(stderr.String(), "WEFT_ADDR") {
		t.Errorf("-help output lacks the environment variables: %s", stderr.String())
	}
	stderr.Reset()
	if code := run(nil, []string{"-workers", "x"}, func(string) string { return "" }, io.Discard, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), "workers") {
		t.Errorf("bad flag: exit %d, %s", code, stderr.String())
	}
}

// A command the binary does not know, or a positional argument no command
// takes, is an error with the usage (exit 2) before anything starts: flag
// parsing stops at the first non-flag, so "weft foo -workers 0" would
// otherwise ignore everything after foo. Every case here would start a
// server or open a database if it got past its arguments: the database
// they are given is a closed port, so such a regression fails at once
// (exit 1) instead of starting a managed cluster.
func TestRunRefusesUnknownCommandsAndStrayArguments(t *testing.T) {
	env := map[string]string{"DATABASE_URL": "postgres://weft@127.0.0.1:1/none?connect_timeout=2", "WEFT_ADDR": "127.0.0.1:0"}
	getenv := func(k string) string { return env[k] }
	for _, c := range []struct {
		args   []string
		graphs bool   // an embedding program's Main (no dev command)
		why    string // the error must say this
		usage  string // and the usage printed must name this
	}{
		{args: []string{"foo", "--workers", "0"}, why: `unknown command "foo"`, usage: "weft keys create|list|revoke"},
		{args: []string{"foo"}, why: `unknown command "foo"`, usage: "weft keys create|list|revoke"},
		{args: []string{"dev", "--config", "langgraph.json"}, graphs: true, why: `unknown command "dev"`, usage: "weft keys create|list|revoke"},
		{args: []string{"serve", "extra"}, why: `unexpected argument "extra"`, usage: "-workers"},
		{args: []string{"serve", "-workers", "0", "extra"}, why: `unexpected argument "extra"`, usage: "-workers"},
		{args: []string{"-workers", "0", "extra"}, why: `unexpected argument "extra"`, usage: "-workers"},
		{args: []string{"serve", "extra", "-workers", "0"}, why: `unexpected argument "extra"`, usage: "-workers"},
		{args: []string{"dev", "--config", "langgraph.json", "extra"}, why: `unexpected argument "extra"`, usage: "-workers"},
		{args: []string{"dev", "extra", "--config", "langgraph.json"}, why: `unexpected argument "extra"`, usage: "-workers"},
		{args: []string{"reencrypt", "extra"}, why: `unexpected argument "extra"`, usage: "-workers"},
		{args: []string{"keys", "list", "extra"}, why: `unexpected argument "extra"`, usage: "weft keys revoke ID"},
		{args: []string{"keys", "create", "--tenant", "a", "extra"}, why: `unexpected argument "extra"`, usage: "weft keys revoke ID"},
		{args: []string{"keys", "foo"}, why: `unknown command "foo"`, usage: "weft keys revoke ID"},
	} {
		var graphs *graph.Registry
		if c.graphs {
			graphs = graph.NewRegistry()
		}
		var stdout, stderr bytes.Buffer
		code := run(graphs, c.args, getenv, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), c.why) || !strings.Contains(stderr.String(), c.usage) || stdout.Len() != 0 {
			t.Errorf("weft %q: exit %d, stdout %q, stderr %q; want exit 2, %s, a usage naming %q", c.args, code, stdout.String(), stderr.String(), c.why, c.usage)
		}
	}
}
