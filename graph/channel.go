package graph

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/weftdev/weft/internal/jsonv"
)

// State is a graph's channel values keyed by channel name. Values are
// JSON-compatible: nil, bool, float64 or json.Number, string, []any and
// map[string]any. Every function of this package treats a State it is given
// as immutable and returns new maps; nested values may be shared between an
// input and a result, so callers must not mutate them in place either.
type State = map[string]any

// Kind is how a channel combines an update with its current value (its
// reducer). The zero value is LastValue, LangGraph's behaviour for a state key
// without a reducer.
type Kind int

const (
	// LastValue replaces the current value with the update (any JSON value,
	// including null).
	LastValue Kind = iota
	// Append concatenates the update, which must be a list, to the current
	// list, like Python's operator.add on an Annotated[list, add] key. A
	// non-list update (null included) is an ErrInvalidUpdate error.
	Append
	// Messages merges LangChain messages by id with LangGraph's add_messages
	// semantics; see AddMessages.
	Messages
	// MergeObject shallow-merges the update, which must be an object, into the
	// current object: each update key replaces the current key, and a key whose
	// update value is null is deleted. A non-object update is an
	// ErrInvalidUpdate error.
	MergeObject
)

// String returns the kind's snake_case name ("last_value", "append",
// "messages", "merge_object").
func (k Kind) String() string {
	switch k {
	case LastValue:
		return "last_value"
	case Append:
		return "append"
	case Messages:
		return "messages"
	case MergeObject:
		return "merge_object"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Channel declares one state key.
type Channel struct {
	// Name is the state key.
	Name string
	// Kind is the reducer; the zero value is LastValue.
	Kind Kind
	// Default is what the channel reads as while unset: Values shows it, and
	// Apply reduces the first update of an Append, Messages or MergeObject
	// channel onto it (a nil Default reads as an empty list or object there).
	// It must fit the kind (a list for Append and Messages, an object for
	// MergeObject) and is deep-copied whenever it is handed out.
	Default any
	// Reduce, when set, is the channel's reducer in place of Kind's
	// (LangGraph's Annotated[T, reducer]): it gets the current value (a
	// copy of Default while the channel is unset) and one update, and
	// returns the new value; an error fails the update with
	// ErrInvalidUpdate. It must be deterministic, must not modify its
	// arguments and must return JSON-compatible values. Kind then only
	// describes the values (schemas; a Messages kind still streams its
	// messages), and several writes to the channel in one superstep are
	// reduced in order instead of conflicting.
	Reduce func(current, update any) (any, error)
	// Delta is set on the channels of a worker's graph that its runtime
	// keeps as a LangGraph DeltaChannel (only writes and periodic
	// snapshots stored): "delta:messages" for messagesDeltaReducer, which
	// state reads rebuild, "delta" for another reducer. Graphs written in
	// Go leave it empty.
	Delta string
}

// Reduces reports whether several writes to c in one superstep are
// reduced in order (every kind but LastValue, or a custom Reduce) rather
// than conflicting.
func (c Channel) Reduces() bool { return c.Kind != LastValue || c.Reduce != nil }

// checkDefault reports a Default that does not fit c.Kind.
func (c Channel) checkDefault() error {
	if c.Default == nil {
		return nil
	}
	switch c.Kind {
	case Append, Messages:
		if _, ok := asList(c.Default); !ok {
			return fmt.Errorf("channel %q: %s default must be a list, got %T", c.Name, c.Kind, c.Default)
		}
	case MergeObject:
		if _, ok := c.Default.(map[string]any); !ok {
			return fmt.Errorf("channel %q: %s default must be an object, got %T", c.Name, c.Kind, c.Default)
		}
	}
	return nil
}

// Channel returns the channel called name.
func (g *Graph) Channel(name string) (Channel, bool) {
	for _, c := range g.Channels {
		if c.Name == name {
			return c, true
		}
	}
	return Channel{}, false
}

// Apply returns the state that results from reducing update into values,
// key by key, each through its channel's Kind. Neither argument is modified;
// keys of values that update does not mention are carried over unchanged. Any
// update key that is not a channel makes the whole update fail with an
// ErrInvalidUpdate error naming the unknown keys and the graph's channels, and
// so does any reducer error (wrapped with the channel name); on error no
// partial result is returned.
//
// Apply reduces one update. LangGraph applies all writes of a superstep
// together and rejects two writes to a LastValue channel in the same step; an
// executor running nodes in parallel applies their updates one after the other
// and enforces that rule itself if it wants it.
func (g *Graph) Apply(values, update State) (State, error) {
	var unknown []string
	for k := range update {
		if _, ok := g.Channel(k); !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		names := make([]string, len(g.Channels))
		for i, c := range g.Channels {
			names[i] = c.Name
		}
		return nil, fmt.Errorf("%w: graph %q has no channel %s (channels: %s)",
			ErrInvalidUpdate, g.ID, quoteList(unknown), strings.Join(names, ", "))
	}
	out := make(State, len(values)+len(update))
	maps.Copy(out, values)
	keys := slices.Sorted(maps.Keys(update))
	for _, k := range keys {
		ch, _ := g.Channel(k)
		cur, set := values[k]
		v, err := ch.reduce(cur, set, update[k])
		if err != nil {
			return nil, fmt.Errorf("%w: channel %q: %w", ErrInvalidUpdate, k, err)
		}
		out[k] = v
	}
	return out, nil
}

// reduce combines the current value (set reports whether the channel has
// one) with an update according to c.Kind.
func (c Channel) reduce(cur any, set bool, upd any) (any, error) {
	if !set {
		cur = jsonv.Clone(c.Default)
	}
	if c.Reduce != nil {
		return c.Reduce(cur, upd)
	}
	switch c.Kind {
	case LastValue:
		return upd, nil
	case Append:
		add, ok := asList(upd)
		if !ok {
			return nil, fmt.Errorf("append update must be a list, got %s", jsonType(upd))
		}
		base, ok := asList(cur)
		if !ok && cur != nil {
			return nil, fmt.Errorf("current value is not a list but %s", jsonType(cur))
		}
		out := make([]any, 0, len(base)+len(add))
		return append(append(out, base...), add...), nil
	case Messages:
		return AddMessages(cur, upd)
	case MergeObject:
		add, ok := upd.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("merge update must be an object, got %s", jsonType(upd))
		}
		base, ok := cur.(map[string]any)
		if !ok && cur != nil {
			return nil, fmt.Errorf("current value is not an object but %s", jsonType(cur))
		}
		out := make(map[string]any, len(base)+len(add))
		maps.Copy(out, base)
		for k, v := range add {
			if v == nil {
				delete(out, k)
			} else {
				out[k] = v
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown channel kind %s", c.Kind)
}

// Values returns raw with every unset channel that has a Default filled in
// (a deep copy of the Default), which is what the API shows as a thread's
// "values" and what a node should be given. Keys of raw are kept as they are,
// including keys that are not channels (for example from rows written by
// another implementation); raw itself is not modified.
func (g *Graph) Values(raw State) State {
	out := make(State, len(raw)+len(g.Channels))
	maps.Copy(out, raw)
	for _, c := range g.Channels {
		if _, set := raw[c.Name]; !set && c.Default != nil {
			out[c.Name] = jsonv.Clone(c.Default)
		}
	}
	return out
}

// asList returns v as []any when it is a list: []any itself, or any other Go
// slice (e.g. []string from a careless node), converted element by element.
// []byte is not a list (encoding/json writes it as a string).
func asList(v any) ([]any, bool) {
	switch l := v.(type) {
	case nil:
		return nil, false
	case []any:
		return l, true
	case []byte:
		return nil, false
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice {
		return nil, false
	}
	out := make([]any, rv.Len())
	for i := range out {
		out[i] = rv.Index(i).Interface()
	}
	return out, true
}

// jsonType names v's JSON type for error messages.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	if _, ok := asList(v); ok {
		return "a list"
	}
	if isNumber(v) {
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// quoteList formats names as "a", "b".
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
