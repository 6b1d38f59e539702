// Package api embeds Weft's OpenAPI 3 document (openapi.yaml), generated
// from the swag annotations on the handlers by `make openapi`.
package api

import _ "embed"

// OpenAPI is the OpenAPI 3 document, YAML.
//
//go:embed openapi.yaml
var OpenAPI []byte
