package main

import (
	"encoding/json"
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"
)

// A shape replaces the schema of one property of a component schema with
// one that swag cannot write: swag emits Swagger 2.0, which has no oneOf
// and no "any JSON value", so a field that takes several JSON types comes
// out as a plain object (and a generated client then cannot send a list or
// a string there). The property's description is kept.
type shape struct {
	schema, property string
	json             string // the OpenAPI 3.0 schema of the property
}

// anyObject is an object with any members.
const anyObject = `{"type":"object","additionalProperties":{}}`

// ttl is a thread's ttl in a create or patch body: minutes, or minutes
// with the strategy.
const ttl = `{"nullable":true,"oneOf":[{"type":"number","format":"double","minimum":0,"exclusiveMinimum":true},
	{"type":"object","required":["ttl"],"properties":{"ttl":{"type":"number","format":"double","minimum":0,"exclusiveMinimum":true},
		"strategy":{"type":"string","enum":["delete","keep_latest"],"default":"delete"}}}]}`

// shapes lists every property whose real shape is one of several JSON
// types. Each entry must still match a property of the generated document
// (reshape fails otherwise), so a renamed field cannot leave a stale entry.
var shapes = []shape{
	{"state.UpdateRequest", "values",
		`{"nullable":true,"oneOf":[` + anyObject + `,{"type":"array","items":` + anyObject + `}]}`},
	{"state.HistoryRequest", "before", `{"nullable":true,"oneOf":[
		{"type":"string"},
		{"type":"object","required":["checkpoint_id"],"properties":{"checkpoint_id":{"type":"string"}}},
		{"type":"object","required":["configurable"],"properties":{"configurable":
			{"type":"object","properties":{"checkpoint_id":{"type":"string"}}}}}]}`},
	{"runs.CreateRequest", "input", `{"nullable":true,"type":"object","additionalProperties":{}}`},
	{"crons.CreateRequest", "input", `{"nullable":true,"type":"object","additionalProperties":{}}`},
	{"crons.PatchRequest", "input", `{"nullable":true,"type":"object","additionalProperties":{}}`},
	{"crons.Payload", "input", `{"nullable":true,"type":"object","additionalProperties":{}}`},
	{"runs.Command", "resume", `{"nullable":true}`},
	{"runs.Command", "update", `{"nullable":true,"oneOf":[` + anyObject + `,
		{"type":"array","items":{"type":"array","minItems":2,"maxItems":2,"items":{}}}]}`},
	{"runs.Command", "goto", `{"nullable":true,"oneOf":[
		{"type":"string"},
		{"type":"object","required":["node"],"properties":{"node":{"type":"string"},"input":{}}},
		{"type":"array","items":{"oneOf":[{"type":"string"},
			{"type":"object","required":["node"],"properties":{"node":{"type":"string"},"input":{}}}]}}]}`},
	// A drawn graph's node data is the node's name (a string) or an object
	// describing it; an edge's data is its label or an object.
	{"assistants.DrawableNode", "data", `{"oneOf":[{"type":"string"},` + anyObject + `]}`},
	{"assistants.DrawableEdge", "data", `{"oneOf":[{"type":"string"},` + anyObject + `]}`},
	{"threads.CreateRequest", "ttl", ttl},
	{"threads.PatchRequest", "ttl", ttl},
	{"threads.Thread", "interrupts", `{"type":"object","additionalProperties":{"type":"array","items":{}}}`},
	{"threads.CreateRequest", "supersteps", `{"type":"array","items":{"type":"object","properties":{
		"updates":{"type":"array","items":{"type":"object","properties":{
			"values":{"nullable":true,"oneOf":[` + anyObject + `,{"type":"array","items":` + anyObject + `}]},
			"as_node":{"type":"string"}}}}}}}`},
}

// reshape applies shapes to doc, and drops the x-enum-varnames swag copies
// from Go constant names: they name the server's identifiers, and a client
// generator would build its own constant names from them.
func reshape(doc *openapi3.T) error {
	for _, ref := range doc.Components.Schemas {
		if ref.Value != nil {
			delete(ref.Value.Extensions, "x-enum-varnames")
		}
	}
	for _, s := range shapes {
		ref := doc.Components.Schemas[s.schema]
		if ref == nil || ref.Value == nil {
			return fmt.Errorf("shape %s.%s: no schema %s", s.schema, s.property, s.schema)
		}
		prop := ref.Value.Properties[s.property]
		if prop == nil || prop.Value == nil {
			return fmt.Errorf("shape %s.%s: no property %s", s.schema, s.property, s.property)
		}
		var v openapi3.Schema
		if err := json.Unmarshal([]byte(s.json), &v); err != nil {
			return fmt.Errorf("shape %s.%s: %w", s.schema, s.property, err)
		}
		v.Description = prop.Value.Description
		ref.Value.Properties[s.property] = openapi3.NewSchemaRef("", &v)
	}
	return nil
}
