package main

import (
	"fmt"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"
)

// nullableRequests declares the null a request body may hold where the
// server reads it as absence. encoding/json leaves a field that JSON null
// names at its zero value (nil for a pointer, map, slice or raw value),
// which the handlers read as the field left out (the official SDKs send
// null for what the caller left out). So, in the component schemas only
// request bodies use (a response's schema keeps saying what the server
// sends), every optional property admits null; a required one does not
// (null is its absence: a 422). A body itself is an object or nothing: a
// JSON null body is a 422 (httpx.DecodeJSON).
//
// It runs before normalize, which rewrites a nullable schema without a type
// (a $ref, a oneOf) into a oneOf with a null branch.
func nullableRequests(doc *openapi3.T) error {
	for _, nn := range nullRefused {
		s := doc.Components.Schemas[nn[0]]
		if s == nil || s.Value.Properties[nn[1]] == nil {
			return fmt.Errorf("null refused: no property %s.%s", nn[0], nn[1])
		}
	}
	inRequests, inResponses := usage(doc)
	for _, name := range sortedKeys(inRequests) {
		if inResponses[name] || slices.Contains(ownReaders, name) {
			continue
		}
		walkRef(doc.Components.Schemas[name].Value, func(s *openapi3.Schema) {
			required := map[string]bool{}
			for _, r := range s.Required {
				required[r] = true
			}
			for _, pname := range sortedKeys(s.Properties) {
				if !required[pname] && !slices.Contains(nullRefused, [2]string{name, pname}) {
					s.Properties[pname] = nullable(s.Properties[pname])
				}
			}
		})
	}
	return nil
}

// ownReaders are the request schemas read by a decoder of their own, for
// which null is no absence: JSON-RPC envelopes (mcp.checkEnvelope).
var ownReaders = []string{"mcp.Message"}

// nullRefused are the optional request properties whose null is a 422,
// not their absence: schema, property.
var nullRefused = [][2]string{
	// null is an id the client meant and did not have; read as absent it
	// would make an assistant at a new random id, once per retry.
	{"assistants.CreateRequest", "assistant_id"},
}

// nullable returns ref admitting null as well.
func nullable(ref *openapi3.SchemaRef) *openapi3.SchemaRef {
	switch {
	case ref == nil:
		return nil
	case ref.Ref != "":
		return openapi3.NewSchemaRef("", &openapi3.Schema{Nullable: true, AllOf: openapi3.SchemaRefs{ref}})
	case ref.Value == nil || ref.Value.IsEmpty():
		return ref // any value, null included
	}
	ref.Value.Nullable = true
	return ref
}

// usage tells which component schemas request bodies reach, and which
// responses reach.
func usage(doc *openapi3.T) (inRequests, inResponses map[string]bool) {
	inRequests, inResponses = map[string]bool{}, map[string]bool{}
	eachOperation(doc, func(_, _ string, op *openapi3.Operation) {
		if op.RequestBody != nil && op.RequestBody.Value != nil {
			for _, mt := range op.RequestBody.Value.Content {
				reach(doc, mt.Schema, inRequests)
			}
		}
		for _, resp := range op.Responses.Map() {
			if resp.Value != nil {
				for _, mt := range resp.Value.Content {
					reach(doc, mt.Schema, inResponses)
				}
			}
		}
	})
	return inRequests, inResponses
}
