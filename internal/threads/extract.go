package threads

import (
	"bytes"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/weftdev/weft/internal/apperr"
)

// Extract is the extract option of POST /threads/search: alias → path,
// each matching thread answered with the value at each path under
// "extracted" (null where the path leads nowhere), as LangGraph's server
// answers it.
//
// A path starts with a column that holds JSON (values, metadata, config,
// interrupts) and goes on with .key and [index] steps (a negative index
// counts from the end): values.messages[-1].content. A step that names no
// key of an object, an index outside a list, a step into a scalar, or a
// key starting with "_" leads nowhere.

// maxExtract is how many aliases an extract may have.
const maxExtract = 10

// extractable are the columns a path may start with.
var extractable = []string{"config", "interrupts", "metadata", "values"}

// extractAlias is the syntax of an alias: an identifier.
var extractAlias = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// checkExtract refuses an extract LangGraph's server refuses (a 422): more
// than maxExtract aliases, an alias that is no identifier or is the name of
// a thread field, a path that is empty or starts elsewhere than an
// extractable column.
func checkExtract(ex map[string]string) error {
	if len(ex) > maxExtract {
		return apperr.Errorf(apperr.Invalid, "Invalid extract: at most %d paths, got %d", maxExtract, len(ex))
	}
	for _, alias := range slices.Sorted(maps.Keys(ex)) {
		path := ex[alias]
		switch {
		case slices.Contains(selectable, alias):
			return apperr.Errorf(apperr.Invalid, "Invalid extract key %q: it is the name of a thread field", alias)
		case !extractAlias.MatchString(alias):
			return apperr.Errorf(apperr.Invalid, "Invalid extract key %q: must be an identifier (letters, digits, underscores; not starting with a digit)", alias)
		case path == "":
			return apperr.Errorf(apperr.Invalid, "Invalid extract path for %q: must be a non-empty string", alias)
		}
		root, _, _ := strings.Cut(path, ".")
		root, _, _ = strings.Cut(root, "[")
		if !slices.Contains(extractable, root) {
			return apperr.Errorf(apperr.Invalid, "Invalid extract path %q: must start with one of %s", path, strings.Join(extractable, ", "))
		}
	}
	return nil
}

// extract is the value at each path of ex in t (nil where none).
func (t *Thread) extract(ex map[string]string) (map[string]any, error) {
	columns := map[string]json.RawMessage{"values": t.Values, "metadata": t.Metadata, "config": t.Config, "interrupts": t.Interrupts}
	decoded := map[string]any{}
	out := make(map[string]any, len(ex))
	for alias, path := range ex {
		steps := splitPath(path)
		root := steps[0]
		v, ok := decoded[root]
		if !ok {
			if raw := columns[root]; len(raw) > 0 {
				d := json.NewDecoder(bytes.NewReader(raw))
				d.UseNumber() // numbers as stored
				if err := d.Decode(&v); err != nil {
					return nil, err
				}
			}
			decoded[root] = v
		}
		out[alias] = walk(v, steps[1:])
	}
	return out, nil
}

// splitPath splits a path at every "." and "[": values.messages[-1].id →
// values, messages, -1], id.
func splitPath(path string) []string {
	return strings.FieldsFunc(path, func(r rune) bool { return r == '.' || r == '[' }) // FieldsFunc drops empty steps
}

// walk follows steps from v; nil when they lead nowhere.
func walk(v any, steps []string) any {
	for _, s := range steps {
		if v == nil || strings.HasPrefix(s, "_") {
			return nil
		}
		if idx, isIndex := strings.CutSuffix(s, "]"); isIndex {
			list, ok := v.([]any)
			i, err := strconv.Atoi(idx)
			if !ok || err != nil {
				return nil
			}
			if i < 0 {
				i += len(list)
			}
			if i < 0 || i >= len(list) {
				return nil
			}
			v = list[i]
			continue
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = obj[s]
	}
	return v
}
