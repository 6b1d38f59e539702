//go:build tools

// The partition suite builds Toxiproxy's server from this module
// (go build github.com/Shopify/toxiproxy/v2/cmd/server): importing its
// package here keeps its dependencies in go.mod and go.sum.
package deploy

import _ "github.com/Shopify/toxiproxy/v2"
