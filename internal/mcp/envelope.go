package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
)

// A Method is a JSON-RPC method the endpoint takes from a client: a request
// (with an id; answered 200 with its result or a JSON-RPC error) or a
// notification (without an id; answered 202), its params an object,
// required or not. Methods lists them: the MCP SDK's server methods, which
// it refuses others than (400 "unsupported"); api/openapi.yaml states the
// same list (cmd/openapi-gen reads it).
type Method struct {
	Name           string
	Notification   bool
	ParamsRequired bool
}

// Methods are the methods POST /mcp takes, in the SDK's terms
// (serverMethodInfos of github.com/modelcontextprotocol/go-sdk/mcp; a test
// holds the two equal). Those Weft does not serve (prompts, resources,
// completion, logging) answer as the SDK does: an empty list, a JSON-RPC
// error.
var Methods = []Method{
	{Name: "completion/complete", ParamsRequired: true},
	{Name: "initialize", ParamsRequired: true},
	{Name: "logging/setLevel", ParamsRequired: true},
	{Name: "ping"},
	{Name: "prompts/get", ParamsRequired: true},
	{Name: "prompts/list"},
	{Name: "resources/list"},
	{Name: "resources/read", ParamsRequired: true},
	{Name: "resources/subscribe", ParamsRequired: true},
	{Name: "resources/templates/list"},
	{Name: "resources/unsubscribe", ParamsRequired: true},
	{Name: "server/discover"},
	{Name: "subscriptions/listen", ParamsRequired: true},
	{Name: "tools/call", ParamsRequired: true},
	{Name: "tools/list"},
	{Name: "notifications/cancelled", Notification: true},
	{Name: "notifications/initialized", Notification: true},
	{Name: "notifications/progress", Notification: true, ParamsRequired: true},
	{Name: "notifications/roots/list_changed", Notification: true},
}

// MaxID bounds a numeric JSON-RPC id (2^53-1: the integers a JSON number
// holds exactly, in every client's language).
const MaxID = 1<<53 - 1

// checkEnvelope checks the JSON-RPC 2.0 envelope of one message, before
// the SDK reads it, so that POST /mcp takes exactly what api/openapi.yaml
// says (the SDK is laxer: it truncates a fractional id, accepts params of
// any JSON type in a notification, and a response without result or error).
// A message is an object with "jsonrpc": "2.0" and either
//
//   - a method of Methods: with an id (a string, or an integer within
//     ±MaxID) for a request, without for a notification; params an object
//     (or null or left out when not required); or
//   - no method: a response to a request of the server, with an id and
//     exactly one of result (any value) or error ({code, message[, data]}).
//
// The error says what is wrong (a 400).
func checkEnvelope(body []byte) error {
	var m map[string]json.RawMessage
	if d := bytes.TrimSpace(body); len(d) == 0 || d[0] != '{' || json.Unmarshal(d, &m) != nil {
		return fmt.Errorf("the body must be one JSON-RPC 2.0 message, a JSON object (batches are not taken)")
	}
	var version string
	if json.Unmarshal(m["jsonrpc"], &version) != nil || version != "2.0" {
		return fmt.Errorf(`"jsonrpc" must be "2.0"`)
	}
	rawID, hasID := m["id"]
	if hasID {
		if err := checkID(rawID); err != nil {
			return err
		}
	}
	rawMethod, hasMethod := m["method"]
	if !hasMethod {
		_, hasResult := m["result"]
		rawErr, hasErr := m["error"]
		switch {
		case !hasID:
			return fmt.Errorf(`a message needs a "method" (a request or notification) or an "id" (a response)`)
		case hasResult == hasErr:
			return fmt.Errorf(`a response needs exactly one of "result" and "error"`)
		case hasErr:
			var e struct {
				Code    *json.Number `json:"code"`
				Message *string      `json:"message"`
			}
			if json.Unmarshal(rawErr, &e) != nil || e.Code == nil || e.Message == nil || strings.ContainsAny(e.Code.String(), ".eE") {
				return fmt.Errorf(`a response's "error" must be an object with an integer "code" and a string "message"`)
			}
		}
		return nil
	}
	var name string
	if json.Unmarshal(rawMethod, &name) != nil {
		return fmt.Errorf(`"method" must be a string`)
	}
	i := slices.IndexFunc(Methods, func(x Method) bool { return x.Name == name })
	if i < 0 {
		return fmt.Errorf("method %q is not one this endpoint takes", name)
	}
	method := Methods[i]
	for _, k := range []string{"result", "error"} {
		if _, ok := m[k]; ok {
			return fmt.Errorf("a request or notification has no %q", k)
		}
	}
	switch {
	case method.Notification && hasID:
		return fmt.Errorf("%q is a notification: it has no id", name)
	case !method.Notification && !hasID:
		return fmt.Errorf("%q is a request: it needs an id", name)
	}
	params, hasParams := m["params"]
	params = bytes.TrimSpace(params)
	switch {
	case hasParams && len(params) > 0 && params[0] == '{':
	case method.ParamsRequired:
		return fmt.Errorf("%q needs params, an object", name)
	case hasParams && string(params) != "null":
		return fmt.Errorf(`"params" must be an object`)
	}
	return nil
}

// checkID checks a JSON-RPC id: a string, or an integer within ±MaxID.
func checkID(raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return nil
		}
	}
	var n float64
	if json.Unmarshal(raw, &n) == nil && !bytes.ContainsAny(raw, ".eE") && math.Abs(n) <= MaxID {
		return nil
	}
	return fmt.Errorf(`"id" must be a string or an integer (at most %d in absolute value)`, int64(MaxID))
}
