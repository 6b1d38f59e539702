// Package workerpy embeds the Python worker (worker-py/weft_worker) in the
// weft binary, so `weft dev` serves a LangGraph (Python) project with
// nothing but the binary and the project's own Python environment.
package workerpy

import "embed"

// Files are the weft_worker package's modules (weft_worker/*.py; listed by
// pattern so that __init__.py and __main__.py are included).
//
//go:embed weft_worker/*.py
var Files embed.FS
