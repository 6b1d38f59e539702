package main

import (
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"
)

// openPaths are served without credentials even when auth is on.
var openPaths = []string{"/ok", "/livez", "/docs"}

// secure states the API's authentication, which Swagger 2.0 (swag) cannot:
// an API key in x-api-key (what the LangGraph SDKs' apiKey sends) or an
// HTTP bearer token (an API key or, with WEFT_AUTH=jwt, a JWT), required on
// every operation but the health probes. A server without auth (the
// default, loopback only) ignores both.
func secure(doc *openapi3.T) error {
	if doc.Components.SecuritySchemes == nil {
		doc.Components.SecuritySchemes = openapi3.SecuritySchemes{}
	}
	if doc.Components.SecuritySchemes["ApiKeyAuth"] == nil {
		return fmt.Errorf("security: no ApiKeyAuth scheme (the @securityDefinitions of httpapi/router.go)")
	}
	doc.Components.SecuritySchemes["BearerAuth"] = &openapi3.SecuritySchemeRef{Value: &openapi3.SecurityScheme{
		Type: "http", Scheme: "bearer",
		Description: "Authorization: Bearer <API key or JWT> (WEFT_AUTH=keys or jwt)",
	}}
	doc.Security = openapi3.SecurityRequirements{{"ApiKeyAuth": []string{}}, {"BearerAuth": []string{}}}
	for _, p := range openPaths {
		item := doc.Paths.Find(p)
		if item == nil {
			return fmt.Errorf("security: no path %s", p)
		}
		for _, op := range item.Operations() {
			op.Security = &openapi3.SecurityRequirements{}
		}
	}
	return nil
}
