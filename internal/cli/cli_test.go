package cli_test

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/cli"
	"github.com/weftdev/weft/internal/cli/dev"
	"github.com/weftdev/weft/internal/postgres/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func TestRunFlags(t *testing.T) {
	var stderr bytes.Buffer
	if code := cli.Run(nil, dev.Run, []string{"-help"}, func(string) string { return "" }, io.Discard, &stderr); code != 0 {
		t.Errorf("-help: exit %d", code)
	}
	if !strings.Contains(stderr.String(), "WEFT_ADDR") {
		t.Errorf("-help output lacks the environment variables: %s", stderr.String())
	}
	stderr.Reset()
	if code := cli.Run(nil, dev.Run, []string{"-workers", "x"}, func(string) string { return "" }, io.Discard, &stderr); code != 2 ||
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
		// The weft binary's command line (cmd/server), or weft.Main's.
		var graphs *graph.Registry
		devCmd := cli.DevFunc(dev.Run)
		if c.graphs {
			graphs, devCmd = graph.NewRegistry(), nil
		}
		var stdout, stderr bytes.Buffer
		code := cli.Run(graphs, devCmd, c.args, getenv, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), c.why) || !strings.Contains(stderr.String(), c.usage) || stdout.Len() != 0 {
			t.Errorf("weft %q: exit %d, stdout %q, stderr %q; want exit 2, %s, a usage naming %q", c.args, code, stdout.String(), stderr.String(), c.why, c.usage)
		}
	}
}
