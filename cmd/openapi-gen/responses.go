package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// errorBody is the component schema of every error response.
const errorBody = "#/components/schemas/httpx.ErrorBody"

// jsonErrors declares every error response (an httpx.ErrorBody) as
// application/json alone. Swagger 2.0 (swag) has one produces list per
// operation, so the error responses of a stream (text/event-stream), of
// /openapi.yaml or of /metrics come out in the success's media type; the
// server writes every error as JSON (httpx.WriteJSON) before a stream
// starts.
func jsonErrors(doc *openapi3.T) {
	eachOperation(doc, func(_, _ string, op *openapi3.Operation) {
		for _, resp := range op.Responses.Map() {
			if resp.Value == nil {
				continue
			}
			var schema *openapi3.SchemaRef
			for _, mt := range resp.Value.Content {
				if mt.Schema != nil && mt.Schema.Ref == errorBody {
					schema = mt.Schema
					break
				}
			}
			if schema != nil {
				resp.Value.Content = openapi3.NewContentWithJSONSchemaRef(schema)
			}
		}
	})
}

// authErrors declares the 401 and 403 the middleware answers before any
// handler (internal/httpapi/auth.go, security.go), both {"detail"}: with
// auth on, a request to an operation that needs a credential (all but
// openPaths) without a valid one is a 401, one whose credential lacks the
// route's scope (or that the authorize hook denies) a 403; and on every
// operation, a request on a loopback address whose Host is not a loopback
// name (DNS rebinding protection) is a 403.
func authErrors(doc *openapi3.T) error {
	open := map[string]bool{}
	for _, p := range openPaths {
		open[p] = true
	}
	errSchema := doc.Components.Schemas["httpx.ErrorBody"]
	if errSchema == nil {
		return fmt.Errorf("responses: no schema httpx.ErrorBody")
	}
	body := openapi3.NewSchemaRef(errorBody, errSchema.Value)
	var err error
	eachOperation(doc, func(path, method string, op *openapi3.Operation) {
		secured := !open[path]
		if secured && op.Security != nil && len(*op.Security) == 0 {
			err = fmt.Errorf("responses: %s %s needs no credential but is not in openPaths", method, path)
			return
		}
		forbidden := "The request's Host is not a loopback name on a loopback address (DNS rebinding protection)"
		if secured {
			forbidden = "The credential lacks the scope the route needs or the authorize hook denies the request (auth on); or the request's Host is not a loopback name on a loopback address"
			addError(op, body, 401, "A credential is missing or invalid (auth on)")
		}
		addError(op, body, 403, forbidden)
	})
	return err
}

// addError declares an error response of op unless it has one for code.
func addError(op *openapi3.Operation, body *openapi3.SchemaRef, code int, desc string) {
	if op.Responses.Status(code) != nil {
		return
	}
	op.Responses.Set(fmt.Sprint(code), &openapi3.ResponseRef{Value: &openapi3.Response{Description: &desc,
		Content: openapi3.NewContentWithJSONSchemaRef(body)}})
}

// A text/event-stream body of the API is, as OpenAPI 3.0 reads the schema
// of a media type, the whole body: text (client generators hand it over as
// a string). x-itemSchema, OpenAPI 3.2's itemSchema under a 3.0 extension
// name (the tests hand it to Schemathesis as itemSchema), gives each event
// as an event-stream reader sees it: sseEvent, its event name, its data
// (the JSON text of the event's payload) and its id (the seq to resume
// after with Last-Event-ID).
const sseEvent = `{"type":"object","required":["event","data"],
	"properties":{"event":{"type":"string","example":"values"},"data":{"type":"string"},"id":{"type":"string"},"retry":{"type":"integer"}}}`

// sseEvents declares every text/event-stream success body as text, and
// its events as sseEvent (x-itemSchema).
func sseEvents(doc *openapi3.T) error {
	var event openapi3.Schema
	if err := json.Unmarshal([]byte(sseEvent), &event); err != nil {
		return err
	}
	eachOperation(doc, func(_, _ string, op *openapi3.Operation) {
		for code, resp := range op.Responses.Map() {
			if resp.Value == nil || code[0] != '2' {
				continue
			}
			if mt := resp.Value.Content.Get("text/event-stream"); mt != nil && mt.Schema != nil {
				text := openapi3.NewStringSchema()
				if mt.Schema.Value != nil {
					text.Description = mt.Schema.Value.Description
				}
				if mt.Schema.Ref != "" {
					// The events' data (POST /mcp's "message" events: a JSON-RPC answer).
					text.Description = strings.TrimSpace(text.Description + " Each event's data is a " +
						strings.TrimPrefix(mt.Schema.Ref, "#/components/schemas/") + " (JSON).")
				}
				mt.Schema = openapi3.NewSchemaRef("", text)
				if mt.Extensions == nil {
					mt.Extensions = map[string]any{}
				}
				mt.Extensions["x-itemSchema"] = event
			}
		}
	})
	return nil
}
