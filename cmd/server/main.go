// Command server runs Weft: `make run` (which builds bin/weft and execs it)
// listens on 127.0.0.1:8123 with a managed local PostgreSQL under ./.weft, or
// on the database named by DATABASE_URL. SIGINT / SIGTERM drain in-flight
// requests, stop the managed PostgreSQL and exit 0. The process exits 1 when
// it cannot start (e.g. another server holds the data directory) or when it
// stops on its own (e.g. the managed PostgreSQL could not be restarted).
// Flags and environment variables: see -help.
//
// Run the binary itself rather than `go run`: SIGTERM sent to `go run`
// kills only the go command, leaving the server and its PostgreSQL running
// (a later start adopts and stops them, but until then they hold the data
// directory).
//
// The commands (serve, dev, keys, migrate, reencrypt) are package internal/cli's,
// weft dev internal/cli/dev's.
package main

import (
	"github.com/weftdev/weft/internal/cli"
	"github.com/weftdev/weft/internal/cli/dev"
)

// main is the command line with the built-in example graphs and weft dev:
// a program serving its own graphs is weft.Main(graphs), the same command
// line without dev (see package weft).
func main() { cli.Main(nil, dev.Run) }
