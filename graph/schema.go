package graph

import "github.com/weftdev/weft/internal/jsonv"

// Schemas are a graph's JSON Schemas (draft 2020-12 vocabulary), in the
// shape GET /assistants/{id}/schemas returns them.
type Schemas struct {
	// Input, Output and State describe the state object: one property per
	// channel, none required (a run's input and a node's update may carry
	// any subset of the channels).
	Input, Output, State map[string]any
	// Config describes config.configurable and Context a run's context:
	// the graph's ConfigSchema and ContextSchema, or objects without
	// properties when it declares none.
	Config, Context map[string]any
}

// messageSchema is one LangChain message as the API carries it: a type
// (or an OpenAI-style role), a content string or list of content blocks,
// and an id; other keys are allowed.
func messageSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"type":    map[string]any{"type": "string"},
			"role":    map[string]any{"type": "string"},
			"content": map[string]any{"anyOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "array"}}},
			"id":      map[string]any{"type": "string"},
			"name":    map[string]any{"type": "string"},
		},
	}
}

// channelSchema describes the values channel c holds: a list of messages
// for Messages, a list for Append, an object for MergeObject and any value
// for LastValue; a Default is given as "default".
func channelSchema(c Channel) map[string]any {
	var s map[string]any
	switch c.Kind {
	case Messages:
		s = map[string]any{"type": "array", "items": messageSchema()}
	case Append:
		s = map[string]any{"type": "array"}
	case MergeObject:
		s = map[string]any{"type": "object"}
	default:
		s = map[string]any{}
	}
	s["title"] = c.Name
	if c.Default != nil {
		s["default"] = jsonv.Clone(c.Default)
	}
	return s
}

// Schemas returns g's JSON Schemas, freshly allocated. Input, output and
// state are the same object schema (a built-in graph reads and returns its
// whole state), titled after the graph.
func (g *Graph) Schemas() Schemas {
	state := func(title string) map[string]any {
		props := make(map[string]any, len(g.Channels))
		for _, c := range g.Channels {
			props[c.Name] = channelSchema(c)
		}
		return map[string]any{"title": title, "type": "object", "properties": props}
	}
	declared := func(title string, schema map[string]any) map[string]any {
		if schema != nil {
			s, _ := jsonv.Clone(schema).(map[string]any)
			return s
		}
		return map[string]any{"title": title, "type": "object", "properties": map[string]any{}}
	}
	return Schemas{
		Input:   state(g.ID + "_input"),
		Output:  state(g.ID + "_output"),
		State:   state(g.ID + "_state"),
		Config:  declared(g.ID+"_config", g.ConfigSchema),
		Context: declared(g.ID+"_context", g.ContextSchema),
	}
}
