package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// normalize rewrites what swag and the Swagger 2.0 → OpenAPI 3.0
// conversion write in forms that OpenAPI 3.0.3 does not mean, or that the
// client generators read otherwise than the server answers
// (openapi-python-client, openapi-typescript, oapi-codegen):
//
//   - An object schema without properties (a map[string]any, or a
//     json.RawMessage declared swaggertype:"object") is a free-form object:
//     additionalProperties: true (a bare `type: object` is read by
//     openapi-typescript as an object with no members, Record<string,
//     never>). additionalProperties: {} (swag's map[string]any) becomes
//     true as well: the same in JSON Schema, but a validator reading OpenAPI
//     3.0 strictly (kin-openapi) refuses the null members {} does not
//     declare nullable.
//   - A nullable enum lists null among its values: OpenAPI 3.0.3 reads an
//     enum without null as refusing null even when nullable (a generated
//     client then refuses the null the server sends).
//   - nullable takes effect only beside a type. A nullable allOf of one
//     $ref (swag's nullable struct pointer) or a nullable oneOf / anyOf
//     becomes a oneOf / anyOf with a null branch; nullable on a schema
//     without type or subschemas (any JSON value, which admits null
//     anyway) is dropped.
func normalize(doc *openapi3.T) {
	walkSchemas(doc, func(s *openapi3.Schema) {
		if ap := s.AdditionalProperties.Schema; ap != nil && ap.Ref == "" && ap.Value != nil && ap.Value.IsEmpty() {
			s.AdditionalProperties = openapi3.AdditionalProperties{Has: &yes}
		}
		if s.Type.Is("object") && len(s.Properties) == 0 && s.AdditionalProperties.Has == nil &&
			s.AdditionalProperties.Schema == nil && !isNull(s) {
			s.AdditionalProperties = openapi3.AdditionalProperties{Has: &yes}
		}
		if s.Nullable && len(s.Enum) > 0 && !slices.Contains(s.Enum, nil) {
			s.Enum = append(s.Enum, nil)
		}
		if !s.Nullable || (s.Type != nil && !s.Type.IsEmpty()) {
			return
		}
		s.Nullable = false
		switch {
		case len(s.AllOf) == 1 && len(s.OneOf) == 0 && len(s.AnyOf) == 0:
			s.OneOf = openapi3.SchemaRefs{s.AllOf[0], nullBranch()}
			s.AllOf = nil
		case len(s.OneOf) > 0:
			s.OneOf = append(s.OneOf, nullBranch())
		case len(s.AnyOf) > 0:
			s.AnyOf = append(s.AnyOf, nullBranch())
		}
	})
}

var yes = true

// nullBranch is the OpenAPI 3.0 schema of null alone (the form of the
// 3.0.3 clarification of nullable: a type, nullable, and an enum of null).
func nullBranch() *openapi3.SchemaRef {
	return openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{"object"}, Nullable: true, Enum: []any{nil}})
}

// isNull tells whether s is a nullBranch.
func isNull(s *openapi3.Schema) bool {
	return s.Nullable && len(s.Enum) == 1 && s.Enum[0] == nil
}

// walkSchemas calls fn once on every schema written in doc (component
// schemas and the schemas inline in parameters, request bodies and
// responses, at any depth), never through a $ref.
func walkSchemas(doc *openapi3.T, fn func(*openapi3.Schema)) {
	seen := map[*openapi3.Schema]bool{}
	var walk func(*openapi3.SchemaRef)
	walk = func(ref *openapi3.SchemaRef) {
		if ref == nil || ref.Ref != "" || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		fn(s)
		for _, list := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf, s.AllOf} {
			for _, r := range list {
				walk(r)
			}
		}
		walk(s.Not)
		walk(s.Items)
		walk(s.AdditionalProperties.Schema)
		for _, name := range sortedKeys(s.Properties) {
			walk(s.Properties[name])
		}
	}
	for _, name := range sortedKeys(doc.Components.Schemas) {
		walk(doc.Components.Schemas[name])
	}
	eachOperation(doc, func(_, _ string, op *openapi3.Operation) {
		for _, p := range op.Parameters {
			if p.Value != nil {
				walk(p.Value.Schema)
			}
		}
		if op.RequestBody != nil && op.RequestBody.Value != nil {
			for _, mt := range op.RequestBody.Value.Content {
				walk(mt.Schema)
			}
		}
		for _, resp := range op.Responses.Map() {
			if resp.Value != nil {
				for _, mt := range resp.Value.Content {
					walk(mt.Schema)
				}
			}
		}
	})
}

// eachOperation calls fn on every operation of doc, in path and method
// order.
func eachOperation(doc *openapi3.T, fn func(path, method string, op *openapi3.Operation)) {
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		ops := item.Operations()
		methods := make([]string, 0, len(ops))
		for m := range ops {
			methods = append(methods, m)
		}
		sort.Strings(methods)
		for _, m := range methods {
			fn(path, m, ops[m])
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// requestDefaults moves the default of every property of a component
// schema that only request bodies use into its description. A client
// generator reads a default there as a value the field always has:
// openapi-typescript makes the property required (a caller must write
// offset: 0 to search threads), openapi-python-client sends it. The server
// applies the same defaults to an absent field; query parameters keep
// theirs (both generators leave a parameter with a default optional).
func requestDefaults(doc *openapi3.T) {
	inRequests, inResponses := usage(doc)
	for _, name := range sortedKeys(inRequests) {
		if inResponses[name] {
			continue
		}
		walkRef(doc.Components.Schemas[name].Value, func(s *openapi3.Schema) {
			for _, pname := range sortedKeys(s.Properties) {
				p := s.Properties[pname]
				if p.Ref != "" || p.Value == nil || p.Value.Default == nil {
					continue
				}
				def := fmt.Sprint(p.Value.Default)
				if p.Value.Type.Is("string") {
					def = fmt.Sprintf("%q", def)
				}
				note := "Default: " + def + "."
				if !strings.Contains(p.Value.Description, note) {
					p.Value.Description = strings.TrimSpace(p.Value.Description + "\n\n" + note)
				}
				p.Value.Default = nil
			}
		})
	}
}

// walkRef calls fn on s and the schemas written inline in it.
func walkRef(s *openapi3.Schema, fn func(*openapi3.Schema)) {
	fn(s)
	for _, list := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf, s.AllOf} {
		for _, r := range list {
			if r.Ref == "" && r.Value != nil {
				walkRef(r.Value, fn)
			}
		}
	}
	for _, r := range []*openapi3.SchemaRef{s.Items, s.AdditionalProperties.Schema} {
		if r != nil && r.Ref == "" && r.Value != nil {
			walkRef(r.Value, fn)
		}
	}
	for _, name := range sortedKeys(s.Properties) {
		if r := s.Properties[name]; r.Ref == "" && r.Value != nil {
			walkRef(r.Value, fn)
		}
	}
}

// reach adds to names every component schema ref leads to.
func reach(doc *openapi3.T, ref *openapi3.SchemaRef, names map[string]bool) {
	if ref == nil {
		return
	}
	if ref.Ref != "" {
		name := strings.TrimPrefix(ref.Ref, "#/components/schemas/")
		if names[name] {
			return
		}
		names[name] = true
		if c := doc.Components.Schemas[name]; c != nil {
			reach(doc, openapi3.NewSchemaRef("", c.Value), names)
		}
		return
	}
	s := ref.Value
	if s == nil {
		return
	}
	for _, list := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf, s.AllOf} {
		for _, r := range list {
			reach(doc, r, names)
		}
	}
	reach(doc, s.Not, names)
	reach(doc, s.Items, names)
	reach(doc, s.AdditionalProperties.Schema, names)
	for _, r := range s.Properties {
		reach(doc, r, names)
	}
}
