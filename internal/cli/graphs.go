package cli

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
)

// jsExtensions are the graph files of the JS worker.
var jsExtensions = []string{".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".tsx", ".jsx"}

// GraphPath is the file or module part of a langgraph.json graph entry
// ("./agent.py:graph" or {"path": "./agent.py:graph"}).
func GraphPath(spec json.RawMessage) string {
	var path string
	if json.Unmarshal(spec, &path) != nil {
		var obj struct {
			Path string `json:"path"`
		}
		_ = json.Unmarshal(spec, &obj)
		path = obj.Path
	}
	if i := strings.LastIndex(path, ":"); i > 1 {
		path = path[:i]
	}
	return path
}

// IsPythonGraph says whether a graph's path names Python code, and so
// which worker serves it (weft dev) or which image carries it (weft
// dockerfile): a .py file, or a dotted module path (no directory, no JS
// extension), as the Python langgraph CLI reads "module:attr".
func IsPythonGraph(path string) bool {
	if strings.HasSuffix(path, ".py") {
		return true
	}
	return path != "" && !strings.ContainsAny(path, `/\`) && !strings.HasPrefix(path, ".") &&
		!slices.Contains(jsExtensions, filepath.Ext(path))
}
