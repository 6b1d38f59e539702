package auth

import (
	"encoding/json"
	"maps"
	"reflect"
)

// Contains tells whether the JSON object doc contains filters in the sense
// of PostgreSQL's jsonb @> operator: every key of filters is in doc with a
// containing value (objects recursively, arrays element by element in any
// order, scalars by equality). It is what Filters mean for one row.
func Contains(doc, filters map[string]any) bool {
	if len(filters) == 0 {
		return true
	}
	return contains(normalize(doc), normalize(filters))
}

func contains(a, b any) bool {
	switch bv := b.(type) {
	case map[string]any:
		av, ok := a.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range bv {
			x, ok := av[k]
			if !ok || !contains(x, v) {
				return false
			}
		}
		return true
	case []any:
		av, ok := a.([]any)
		if !ok {
			return false
		}
		for _, v := range bv {
			found := false
			for _, x := range av {
				if contains(x, v) {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(a, b)
	}
}

// normalize turns v into what encoding/json decodes (maps, slices,
// float64, string, bool, nil), so values built in Go compare equal to
// values read from the database.
func normalize[T any](v T) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// MergeFilters is the one metadata containment equivalent to requiring
// both a (a search's own metadata filter) and b (an authorize decision's
// filters): objects merge key by key, arrays concatenate. ok is false when
// no document can contain both (a key with two different scalar values):
// the search then matches nothing.
func MergeFilters(a, b map[string]any) (merged map[string]any, ok bool) {
	if len(b) == 0 {
		return a, true
	}
	if len(a) == 0 {
		return b, true
	}
	m, ok := merge(normalize(a), normalize(b))
	if !ok {
		return nil, false
	}
	out, _ := m.(map[string]any)
	return out, true
}

func merge(a, b any) (any, bool) {
	switch bv := b.(type) {
	case map[string]any:
		av, ok := a.(map[string]any)
		if !ok {
			return nil, false
		}
		out := maps.Clone(av)
		for k, v := range bv {
			x, ok := out[k]
			if !ok {
				out[k] = v
				continue
			}
			if out[k], ok = merge(x, v); !ok {
				return nil, false
			}
		}
		return out, true
	case []any:
		av, ok := a.([]any)
		if !ok {
			return nil, false
		}
		return append(append([]any{}, av...), bv...), true
	default:
		return a, reflect.DeepEqual(a, b)
	}
}

// Stamp returns metadata with filters written over it (deep for objects):
// the metadata of a thread created under an authorize decision, which
// therefore matches the decision's filters.
func Stamp(metadata, filters map[string]any) map[string]any {
	if len(filters) == 0 {
		return metadata
	}
	out, _ := stamp(normalize(metadata), normalize(filters)).(map[string]any)
	return out
}

func stamp(a, b any) any {
	bv, ok := b.(map[string]any)
	if !ok {
		return b
	}
	av, ok := a.(map[string]any)
	if !ok {
		av = map[string]any{}
	}
	out := maps.Clone(av)
	for k, v := range bv {
		out[k] = stamp(out[k], v)
	}
	return out
}
