// Package workerjs embeds the JS worker (package.json, bin/ and src/ of
// worker-js) in the weft binary, so `weft dev` runs a LangGraph.js project
// with nothing but the binary, node and the project's own node_modules.
package workerjs

import "embed"

// Files are worker-js's package.json, bin/weft-worker.mjs and src/*.mjs.
//
//go:embed package.json bin src
var Files embed.FS
