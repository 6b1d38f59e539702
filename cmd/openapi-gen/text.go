package main

import "github.com/getkin/kin-openapi/openapi3"

// textBodies declares every text/plain success body as a string. Swagger
// 2.0 (swag) has one schema per response, so an operation that answers
// JSON or text by a parameter (GET /metrics: the Prometheus text, or with
// format=json a metrics.Snapshot) comes out with the JSON schema under
// both media types.
func textBodies(doc *openapi3.T) {
	eachOperation(doc, func(_, _ string, op *openapi3.Operation) {
		for code, resp := range op.Responses.Map() {
			if resp.Value == nil || code[0] != '2' {
				continue
			}
			if mt := resp.Value.Content.Get("text/plain"); mt != nil && mt.Schema != nil && mt.Schema.Ref != "" {
				mt.Schema = openapi3.NewSchemaRef("", openapi3.NewStringSchema())
			}
		}
	})
}
