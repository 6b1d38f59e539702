// Package weft runs a whole Weft server (the LangGraph Agent Server API on
// PostgreSQL) inside a Go program, serving the graphs the program defines
// with package graph, or serves those graphs as a worker of a Weft server
// running elsewhere. It is the public embedding API; the weft binary's
// command line (serve, dev, keys, reencrypt) is internal/cli, and
// cmd/server is its main.
//
// The server, two entry points (weft.go):
//
//   - Main(graphs) is a complete main function: it reads the same flags
//     and environment variables as the weft binary (WEFT_ADDR,
//     DATABASE_URL, WEFT_DATA_DIR, WEFT_WORKERS, ...; see -help), serves
//     until SIGINT or SIGTERM, drains and exits.
//   - Start(ctx, graphs, Options) starts a server and returns it, for
//     programs and tests that manage its lifetime themselves.
//
// A worker, two entry points (worker.go):
//
//   - WorkerMain(graphs) is a complete main function: the server at
//     WEFT_URL, until SIGINT or SIGTERM.
//   - RunWorker(ctx, url, graphs, WorkerOptions) serves until ctx ends.
//
// Authentication and authorization hooks for the embedded server are in
// auth.go (Options.Authenticate, Options.Authorize).
//
// Without a database URL the server runs a managed local PostgreSQL in its
// data directory (./.weft by default), as the weft binary does; the
// PostgreSQL binaries (initdb, postgres) must then be on PATH or in the
// usual install locations.
package weft
