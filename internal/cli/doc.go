// Package cli is the weft binary's command line: the commands, their flags
// and the usage they print. cmd/server is Main(nil, dev.Run) (package
// internal/cli/dev is `weft dev`); weft.Main, a program serving its own
// graphs, is Main(graphs, nil): the same commands but dev.
//
// The commands:
//
//   - serve (the default): the server until SIGINT or SIGTERM, configured
//     by the flags and environment variables of server.ParseConfig (-help
//     lists them); Serve, which weft dev builds on.
//   - dev: a LangGraph project's graphs served through the JS and Python
//     workers (internal/cli/dev); only the weft binary has it.
//   - keys create|list|revoke: API key management straight on the
//     database (keys.go).
//   - dockerfile: the Dockerfile of a LangGraph project's worker image and
//     its build context's .weft-build/ (install.sh, the workers' sources),
//     as langgraph dockerfile writes LangGraph's (dockerfile.go,
//     dockerfile.tmpl, worker-install.sh).
//   - health: GET /ok of the server at WEFT_ADDR, exit 0 on 200 (health.go):
//     a container's health check where the image has no curl (compose).
//   - reencrypt: every encrypted value rewritten under the current key
//     (reencrypt.go; the work itself is internal/reencrypt's).
//   - migrate: the database migrations applied to DATABASE_URL, then exit
//     (migrate.go): a deployment's once-per-release step (the Helm chart's
//     hook Job) before servers start with WEFT_MIGRATE=false.
//
// Every command returns its exit code rather than exiting: 0, 2 on a bad
// flag or argument (with the usage), 1 when it fails.
package cli
