package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/server"
)

// Usage names the commands; the flags follow it (-help).
const Usage = `Usage:
  weft [serve] [flags]                 serve the API (the default command)
  weft dev --config langgraph.json [flags]
                                       serve a LangGraph.js project: the server, no demo graphs,
                                       and the project's graphs through the JS worker (needs node)
  weft keys create|list|revoke [flags] manage API keys (WEFT_AUTH=keys); weft keys -help
  weft migrate [flags]                 apply the database migrations to DATABASE_URL and exit (run once
                                       per release; then serve with WEFT_MIGRATE=false)
  weft dockerfile [-c langgraph.json] [-o Dockerfile]
                                       write a Dockerfile of the project's worker image (Python or JS),
                                       with .weft-build/ beside it; weft dockerfile -help
  weft health [-url URL]               GET /ok of the server at WEFT_ADDR: exit 0 when it answers 200
                                       (a container's health check; the image has no curl)
  weft reencrypt [flags]               rewrite every encrypted value under LANGGRAPH_AES_KEY (after a
                                       rotation: old keys in WEFT_AES_OLD_KEYS), seal plaintext rows,
                                       print counts per table; safe to repeat or interrupt

Flags (every command; each has an environment variable, see -help):`

// DevFunc is the `weft dev` command (dev.Run): its arguments after "dev",
// the environment, where it logs; it returns the exit code.
type DevFunc func(args []string, getenv func(string) string, stderr io.Writer) int

// Main runs the command of the process's arguments with its environment
// and exits with the command's code. It does not return.
func Main(graphs *graph.Registry, dev DevFunc) {
	os.Exit(Run(graphs, dev, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// Run is Main without the exit: the command (serve, the default; keys;
// migrate; reencrypt; dev when dev is not nil), then its flags. graphs are the graphs
// serve serves (nil: the built-in example graphs); dev is the weft binary's
// `weft dev` (nil for a program serving its own graphs: dev serves a
// project's graphs instead, and answers "unknown command").
func Run(graphs *graph.Registry, dev DevFunc, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch {
	case cmd == "serve":
		return Serve(graphs, args, getenv, stderr, nil, nil)
	case cmd == "dev" && dev != nil && graphs == nil:
		return dev(args, getenv, stderr)
	case cmd == "keys":
		return keys(args, server.AliasedEnv(getenv), stdout, stderr) // DATABASE_URI as DATABASE_URL
	case cmd == "reencrypt":
		return reencryptCmd(args, getenv, stderr)
	case cmd == "dockerfile":
		return dockerfileCmd(args, stderr)
	case cmd == "health":
		return healthCmd(args, getenv, stdout, stderr)
	case cmd == "migrate":
		return migrateCmd(args, getenv, stderr)
	}
	fmt.Fprintf(stderr, "weft: unknown command %q\n%s\n", cmd, Usage)
	_, _ = server.ParseConfig([]string{"-help"}, getenv, stderr) // prints the flags
	return 2
}
