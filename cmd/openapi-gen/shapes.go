package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/weftdev/weft/internal/mcp"
	"github.com/weftdev/weft/internal/runs"
	"github.com/weftdev/weft/internal/store"
)

// jsonString is s as a JSON string.
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

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
const anyObject = `{"type":"object","additionalProperties":true}`

// checkpointID is a checkpoint id in a request: UUID-shaped (LangGraph's
// ids are v6 UUIDs; only the shape is checked, as state.checkID does), or
// empty for the latest.
const checkpointID = `"^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})?$"`

// cronSchedule is a schedule's form: five fields or an @descriptor (each
// field's values are checked by the server).
const cronSchedule = `{"pattern":"^\\s*(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|(\\S+\\s+){4}\\S+)\\s*$"}`

// workerID is a worker_id: 1 to 200 characters once trimmed of ASCII
// whitespace (workerapi.workerID).
const workerID = `"^[ \\t\\n\\v\\f\\r]*[^ \\t\\n\\v\\f\\r]([\\s\\S]{0,198}[^ \\t\\n\\v\\f\\r])?[ \\t\\n\\v\\f\\r]*$"`

// timezone is a cron's timezone: "" or the form of a tz database name.
const timezone = `{"pattern":"^([A-Za-z0-9_+\\-]+(/[A-Za-z0-9_+\\-]+)*)?$"}`

// rpcID is the id of a JSON-RPC request: a string or a number.
const rpcID = `{"oneOf":[{"type":"string"},{"type":"number"}]}`

// anyValue is any JSON value, null included.
const anyValue = `{}`

// anyNonNull is any JSON value but null.
const anyNonNull = `{"anyOf":[{"type":"string"},{"type":"number"},{"type":"boolean"},` + anyObject + `,{"type":"array","items":{}}]}`

// blobRow is a row of a worker's raw checkpoint read: strings (the base64
// blob null when there is none), n of them.
func blobRow(n int) string {
	return fmt.Sprintf(`{"type":"array","minItems":%d,"maxItems":%d,"items":{"type":"string","nullable":true}}`, n, n)
}

// ttl is a thread's ttl in a create or patch body: minutes (more than 0,
// at most 100 years: threads.maxTTLMinutes), or minutes with the strategy.
const ttl = `{"nullable":true,"oneOf":[{"type":"number","format":"double","minimum":0,"exclusiveMinimum":true,"maximum":52560000},
	{"type":"object","required":["ttl"],"properties":{"ttl":{"type":"number","format":"double","minimum":0,"exclusiveMinimum":true,"maximum":52560000},
		"strategy":{"type":"string","enum":["delete","keep_latest"],"default":"delete"}}}]}`

// checkpointRef is a checkpoint id as state.checkpointID reads it: a
// string, a checkpoint {checkpoint_id} or a config {configurable:
// {checkpoint_id}} (the JS SDK sends the last for history's before).
const checkpointRef = `{"nullable":true,"oneOf":[
	{"type":"string","pattern":` + checkpointID + `},
	{"type":"object","required":["checkpoint_id"],"properties":{"checkpoint_id":{"type":"string","pattern":` + checkpointID + `}}},
	{"type":"object","required":["configurable"],"properties":{"configurable":
		{"type":"object","properties":{"checkpoint_id":{"type":"string","pattern":` + checkpointID + `}}}}}]}`

// streamMode is a request's stream_mode (runs.StreamModeList): a mode or
// a list of modes.
func streamMode() string {
	mode := `{"$ref":"#/components/schemas/runs.StreamMode"}`
	return `{"anyOf":[` + mode + `,{"type":"array","items":` + mode + `}],"default":["values"]}`
}

// nodeList is interrupt_before / interrupt_after (runs.NodeList): "*" or
// node names.
const nodeList = `{"anyOf":[{"$ref":"#/components/schemas/runs.AllNodes"},{"type":"array","items":{"type":"string"}}]}`

// shapes lists every property whose real shape is one of several JSON
// types. Each entry must still match a property of the generated document
// (reshape fails otherwise), so a renamed field cannot leave a stale entry.
var shapes = []shape{
	{"state.UpdateRequest", "values",
		`{"nullable":true,"oneOf":[` + anyObject + `,{"type":"array","items":` + anyObject + `}]}`},
	{"state.HistoryRequest", "before", checkpointRef},
	{"runs.CreateRequest", "stream_mode", streamMode()},
	{"runs.CreateRequest", "interrupt_before", nodeList},
	{"runs.CreateRequest", "interrupt_after", nodeList},
	{"crons.CreateRequest", "interrupt_before", nodeList},
	{"crons.CreateRequest", "interrupt_after", nodeList},
	{"crons.PatchRequest", "interrupt_before", nodeList},
	{"crons.PatchRequest", "interrupt_after", nodeList},
	{"crons.CreateRequest", "stream_mode", streamMode()},
	{"crons.PatchRequest", "stream_mode", streamMode()},
	{"state.UpdateRequest", "checkpoint_id", checkpointRef},
	{"state.PatchStateRequest", "checkpoint_id", checkpointRef},
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
	// A store put's index: false (not indexed), null (the server's index
	// fields) or field paths (at most store.MaxIndexPaths, each of
	// store.IndexPathPattern's form).
	{"store.PutRequest", "index", `{"nullable":true,"oneOf":[{"type":"boolean","enum":[false]},
		{"type":"array","maxItems":` + strconv.Itoa(store.MaxIndexPaths) + `,"items":{"type":"string","pattern":` +
		jsonString(store.IndexPathPattern) + `}}]}`},
	// Values of any JSON type: a list channel's element, a channel write,
	// a run's result (a functional graph returns any value), an event's
	// data, a protocol command's result.
	{"state.MessageRecord", "message", anyValue},
	{"inspect.WriteInfo", "value", anyValue},
	{"wire.End", "result", anyValue},
	{"wire.AckRequest", "result", anyValue},
	{"wire.Event", "data", anyValue},
	{"stream.ProtocolResponse", "result", anyValue},
	// A summary is any JSON value but null.
	{"state.SummaryRequest", "summary", anyNonNull},
	{"state.SummaryRecord", "summary", anyNonNull},
	// A worker's raw checkpoint reads: [channel, type, base64 blob] and
	// [task_id, channel, type, base64 blob] rows, a seed [type, blob].
	{"wire.RawTuple", "channel_values", `{"type":"array","items":` + blobRow(3) + `}`},
	{"wire.RawTuple", "pending_writes", `{"type":"array","items":` + blobRow(4) + `}`},
	{"wire.RawDeltaHistory", "seed", blobRow(2)},
	{"wire.RawDeltaHistory", "writes", `{"type":"array","items":` + blobRow(4) + `}`},
	// A registered graph's drawing: nodes with a string id, and edges.
	{"wire.GraphRegistration", "drawable", `{"type":"object","required":["nodes","edges"],"additionalProperties":{},
		"properties":{"nodes":{"type":"array","items":{"type":"object","required":["id"],"additionalProperties":{},
			"properties":{"id":{"type":"string","minLength":1}}}},"edges":{"type":"array","items":` + anyObject + `}}}`},
	// JSON-RPC ids: a string or a number; null in an answer to a message
	// whose id could not be read.
	{"mcp.Message", "id", rpcID},
	{"mcp.Response", "id", `{"nullable":true,"oneOf":[{"type":"string"},{"type":"number"}]}`},
	{"a2a.Request", "id", rpcID},
	{"a2a.Response", "id", `{"nullable":true,"oneOf":[{"type":"string"},{"type":"number"}]}`},
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

// A constraint adds to the schema of one property of a component schema
// what swag's struct tags cannot say: an exclusive bound, a pattern, a
// bound on array items beside their length. Its JSON is merged into the
// property's schema (objects key by key, anything else replaced).
type constraint struct {
	schema, property string
	json             string
}

// nsLabel is a namespace label of the store: non-empty, without ".".
const nsLabel = `{"minLength":1,"pattern":"^[^.]+$"}`

// constraints lists every bound the server enforces that the struct tags
// cannot declare. Like shapes, each entry must match a property.
var constraints = []constraint{
	// Store ttl: minutes, more than 0, at most 100 years (store.MaxTTLMinutes).
	{"store.PutRequest", "ttl", `{"minimum":0,"exclusiveMinimum":true,"maximum":52560000}`},
	{"store.PutRequest", "namespace", `{"items":` + nsLabel + `}`},
	{"store.DeleteRequest", "namespace", `{"items":` + nsLabel + `}`},
	{"store.SearchRequest", "namespace_prefix", `{"items":` + nsLabel + `}`},
	{"store.NamespacesRequest", "prefix", `{"items":` + nsLabel + `}`},
	{"store.NamespacesRequest", "suffix", `{"items":` + nsLabel + `}`},
	// Names the server trims before it checks them: blank is refused.
	{"assistants.CreateRequest", "graph_id", `{"pattern":"\\S"}`},
	{"assistants.PatchRequest", "graph_id", `{"pattern":"\\S"}`},
	{"crons.CreateRequest", "schedule", cronSchedule},
	{"crons.PatchRequest", "schedule", cronSchedule},
	{"runs.CreateRequest", "checkpoint_id", `{"pattern":` + checkpointID + `}`},
	{"runs.CreateRequest", "checkpoint", `{"properties":{"checkpoint_id":{"pattern":` + checkpointID + `}}}`},
	{"state.CheckpointInput", "checkpoint_id", `{"pattern":` + checkpointID + `}`},
	// A worker's free text is trimmed of ASCII whitespace (workerapi.blank)
	// alone, which these patterns name character by character: \s and \S
	// differ between regex dialects. The worker_id pattern holds its length
	// as well (1 to 200 characters once trimmed): Schemathesis rewrites a
	// pattern beside minLength / maxLength into one that no longer says the
	// same.
	{"wire.ClaimRequest", "worker_id", `{"pattern":` + workerID + `}`},
	{"wire.CancellationsRequest", "worker_id", `{"pattern":` + workerID + `}`},
	{"wire.GraphLoadError", "error", `{"pattern":"[^ \\t\\n\\v\\f\\r]"}`},
	// A zone name of the tz database: "" (UTC), or names such as
	// "Europe/Paris", "Etc/GMT+5", "EST5EDT" (which of them the database
	// holds is checked by the server).
	{"crons.CreateRequest", "timezone", timezone},
	{"crons.PatchRequest", "timezone", timezone},
	// A protocol stream's channels (stream.protocolChannels, or custom:<name>).
	{"stream.ProtocolStreamRequest", "channels",
		`{"items":{"pattern":"^(values|updates|messages|tools|lifecycle|input|tasks|custom|checkpoints|custom:.+)$"}}`},
	// A thread search's extract (threads.checkExtract): at most 10 paths,
	// each into a JSON column (the aliases' syntax needs propertyNames,
	// which OpenAPI 3.0 lacks: the description states it).
	{"threads.SearchRequest", "extract",
		`{"maxProperties":10,"additionalProperties":{"type":"string","pattern":"^(values|metadata|config|interrupts)([.\\[]|$)"}}`},
	// A worker's graph id (workerapi.graphIDPattern).
	{"wire.GraphRegistration", "graph_id", `{"pattern":"^[A-Za-z0-9][A-Za-z0-9_.:\\-]{0,127}$"}`},
	{"wire.GraphLoadError", "graph_id", `{"pattern":"^[A-Za-z0-9][A-Za-z0-9_.:\\-]{0,127}$"}`},
}

// nullableResponses are the success responses that may be JSON null, which
// swag cannot declare: method, path, status.
var nullableResponses = [][3]string{
	// A missing or expired item is 200 null (the SDKs read null as absent).
	{"GET", "/store/items", "200"},
}

// nullResponses makes nullableResponses' schemas admit null.
func nullResponses(doc *openapi3.T) error {
	for _, nr := range nullableResponses {
		item := doc.Paths.Find(nr[1])
		if item == nil || item.GetOperation(nr[0]) == nil {
			return fmt.Errorf("nullable response: no operation %s %s", nr[0], nr[1])
		}
		resp := item.GetOperation(nr[0]).Responses.Value(nr[2])
		if resp == nil || resp.Value == nil || resp.Value.Content.Get("application/json") == nil {
			return fmt.Errorf("nullable response: %s %s has no JSON %s", nr[0], nr[1], nr[2])
		}
		mt := resp.Value.Content.Get("application/json")
		mt.Schema = openapi3.NewSchemaRef("", &openapi3.Schema{Nullable: true, AllOf: openapi3.SchemaRefs{mt.Schema}})
	}
	return nil
}

// addedSchemas are component schemas that only the shapes refer to.
var addedSchemas = map[string]string{
	"runs.AllNodes":   `{"type":"string","enum":["*"],"description":"Every node."}`,
	"runs.StreamMode": `{"type":"string","enum":` + mustJSON(runs.StreamModes) + `,"description":"A stream mode."}`,
	// One component for the params of every form of mcp.Message: inline,
	// openapi-python-client (0.29) makes a model of it per form and refuses
	// the forms as duplicates.
	"mcp.Params": `{"type":"object","additionalProperties":true,"description":"A JSON-RPC message's params: an object, as its method defines it."}`,
}

// schemaShapes replace whole component schemas (their description is
// kept): bodies of one of several forms.
var schemaShapes = []constraint{
	{"mcp.Message", "", mcpMessage()},
	// POST /runs/cancel: thread_id with (non-empty) run_ids, or status;
	// not both, not neither (a body matching both forms is refused).
	{"runs.CancelManyRequest", "", `{"oneOf":[
		{"type":"object","title":"RunsCancelByIds","required":["thread_id","run_ids"],"properties":{
			"thread_id":{"type":"string","format":"uuid"},
			"run_ids":{"type":"array","minItems":1,"items":{"type":"string","format":"uuid"}}}},
		{"type":"object","title":"RunsCancelByStatus","required":["status"],"properties":{
			"status":{"type":"string","enum":["pending","running","all"]}}}]}`},
}

// uuidPattern is a UUID in its 36-character form.
const uuidPattern = `"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"`

// lastEventID is a Last-Event-ID a run's stream reads (stream.parseLastEventID):
// an event id it sent, -1 for "from the first event", or the "<ms>-<n>"
// form of LangGraph's Python server.
const lastEventID = `{"pattern":"^(-1|[0-9]{1,18}|[0-9]{1,18}-[0-9]{1,18})$"}`

// paramConstraints are merged into the schema of a parameter
// (constraint.schema "METHOD /path", constraint.property the parameter's
// name, a query parameter's, or "path:name" / "header:Name"): what swag's
// @Param cannot say.
var paramConstraints = []constraint{
	{"GET /threads/{thread_id}/history", "before", `{"pattern":` + checkpointID + `}`},
	{"GET /threads/{thread_id}/messages", "checkpoint_id", `{"pattern":` + checkpointID + `}`},
	{"GET /threads/{thread_id}/state/{checkpoint_id}", "path:checkpoint_id", `{"pattern":` + uuidPattern + `}`},
	{"GET /inspect/threads/storage", "thread_id", `{"minItems":1,"maxItems":100,"items":{"format":"uuid"}}`},
	{"GET /assistants/{assistant_id}/graph", "xray", `{"pattern":"^(true|false|True|False|[1-9][0-9]{0,8})$"}`},
	{"GET /threads/{thread_id}/runs/{run_id}/stream", "last_event_id", lastEventID},
	{"GET /threads/{thread_id}/runs/{run_id}/stream", "header:Last-Event-ID", lastEventID},
	{"GET /runs/{run_id}/stream", "last_event_id", lastEventID},
	{"GET /runs/{run_id}/stream", "header:Last-Event-ID", lastEventID},
	// The card's assistant is named (blank is refused).
	{"GET /.well-known/agent-card.json", "assistant_id", `{"pattern":"\\S"}`},
}

// bodyConstraints are merged into the request body schema of an operation
// ("METHOD /path"), given as constraint.schema.
var bodyConstraints = []constraint{
	{"POST /runs/batch", "", `{"minItems":1,"maxItems":100}`},
}

// inBandBodies are the operations that take any JSON body: what is not the
// request they are for is answered in their protocol (A2A: HTTP 200 with a
// JSON-RPC error, -32700 / -32600, as A2A's SDKs answer), so their body's
// schema admits any value beside the documented one.
var inBandBodies = []string{"POST /a2a/{assistant_id}"}

// constrain applies constraints, schemaShapes, paramConstraints,
// bodyConstraints and inBandBodies to doc.
func constrain(doc *openapi3.T) error {
	for _, c := range constraints {
		ref := doc.Components.Schemas[c.schema]
		if ref == nil || ref.Value == nil {
			return fmt.Errorf("constraint %s.%s: no schema %s", c.schema, c.property, c.schema)
		}
		prop := ref.Value.Properties[c.property]
		if prop == nil || prop.Value == nil || prop.Ref != "" {
			return fmt.Errorf("constraint %s.%s: no inline property %s", c.schema, c.property, c.property)
		}
		v, err := mergeSchema(prop.Value, c.json)
		if err != nil {
			return fmt.Errorf("constraint %s.%s: %w", c.schema, c.property, err)
		}
		ref.Value.Properties[c.property] = openapi3.NewSchemaRef("", v)
	}
	for name, js := range addedSchemas {
		if doc.Components.Schemas[name] != nil {
			return fmt.Errorf("added schema %s: exists", name)
		}
		var v openapi3.Schema
		if err := json.Unmarshal([]byte(js), &v); err != nil {
			return fmt.Errorf("added schema %s: %w", name, err)
		}
		doc.Components.Schemas[name] = openapi3.NewSchemaRef("", &v)
	}
	for _, c := range schemaShapes {
		ref := doc.Components.Schemas[c.schema]
		if ref == nil || ref.Value == nil {
			return fmt.Errorf("shape %s: no schema", c.schema)
		}
		var v openapi3.Schema
		if err := json.Unmarshal([]byte(c.json), &v); err != nil {
			return fmt.Errorf("shape %s: %w", c.schema, err)
		}
		v.Description = ref.Value.Description
		*ref.Value = v
	}
	for _, c := range paramConstraints {
		method, path, _ := strings.Cut(c.schema, " ")
		item := doc.Paths.Find(path)
		if item == nil || item.GetOperation(method) == nil {
			return fmt.Errorf("constraint %s: no operation", c.schema)
		}
		in, name, found := strings.Cut(c.property, ":")
		if !found {
			in, name = "query", c.property
		}
		p := item.GetOperation(method).Parameters.GetByInAndName(in, name)
		if p == nil || p.Schema == nil || p.Schema.Value == nil {
			return fmt.Errorf("constraint %s: no %s parameter %s", c.schema, in, name)
		}
		v, err := mergeSchema(p.Schema.Value, c.json)
		if err != nil {
			return fmt.Errorf("constraint %s %s: %w", c.schema, c.property, err)
		}
		p.Schema = openapi3.NewSchemaRef("", v)
	}
	for _, c := range bodyConstraints {
		method, path, _ := strings.Cut(c.schema, " ")
		item := doc.Paths.Find(path)
		if item == nil || item.GetOperation(method) == nil || item.GetOperation(method).RequestBody == nil {
			return fmt.Errorf("constraint %s: no request body", c.schema)
		}
		mt := item.GetOperation(method).RequestBody.Value.Content.Get("application/json")
		if mt == nil || mt.Schema == nil || mt.Schema.Ref != "" || mt.Schema.Value == nil {
			return fmt.Errorf("constraint %s: no inline JSON body schema", c.schema)
		}
		v, err := mergeSchema(mt.Schema.Value, c.json)
		if err != nil {
			return fmt.Errorf("constraint %s: %w", c.schema, err)
		}
		mt.Schema = openapi3.NewSchemaRef("", v)
	}
	for _, op := range inBandBodies {
		method, path, _ := strings.Cut(op, " ")
		item := doc.Paths.Find(path)
		if item == nil || item.GetOperation(method) == nil || item.GetOperation(method).RequestBody == nil {
			return fmt.Errorf("in-band body %s: no request body", op)
		}
		mt := item.GetOperation(method).RequestBody.Value.Content.Get("application/json")
		if mt == nil || mt.Schema == nil || mt.Schema.Ref == "" {
			return fmt.Errorf("in-band body %s: no JSON body of a component schema", op)
		}
		mt.Schema = openapi3.NewSchemaRef("", &openapi3.Schema{AnyOf: openapi3.SchemaRefs{mt.Schema, openapi3.NewSchemaRef("", &openapi3.Schema{})},
			Description: "A JSON-RPC 2.0 request (" + strings.TrimPrefix(mt.Schema.Ref, "#/components/schemas/") +
				"); any other JSON is answered with a JSON-RPC error (HTTP 200)."})
	}
	return nil
}

// mergeSchema returns s with the JSON schema add merged into it.
func mergeSchema(s *openapi3.Schema, add string) (*openapi3.Schema, error) {
	cur, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var base, extra map[string]any
	if err := json.Unmarshal(cur, &base); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(add), &extra); err != nil {
		return nil, err
	}
	merged, err := json.Marshal(merge(base, extra))
	if err != nil {
		return nil, err
	}
	var v openapi3.Schema
	if err := json.Unmarshal(merged, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// merge merges add into base: objects key by key, anything else replaced.
func merge(base, add map[string]any) map[string]any {
	for k, v := range add {
		if sub, ok := v.(map[string]any); ok {
			if cur, ok := base[k].(map[string]any); ok {
				base[k] = merge(cur, sub)
				continue
			}
		}
		base[k] = v
	}
	return base
}

// mcpMessage is the schema of a message POST /mcp takes (mcp.checkEnvelope):
// a request or a notification of one of mcp.Methods (params required or
// not), or a response to a request of the server.
func mcpMessage() string {
	id := fmt.Sprintf(`{"oneOf":[{"type":"string"},{"type":"integer","minimum":%d,"maximum":%d}]}`, -mcp.MaxID, mcp.MaxID)
	jsonrpc := `{"type":"string","enum":["2.0"]}`
	form := func(title string, notification, params bool) string {
		required := `"jsonrpc","method"`
		if !notification {
			required += `,"id"`
		}
		if params {
			required += `,"params"`
		}
		not := `{"anyOf":[{"required":["result"]},{"required":["error"]}]}`
		if notification {
			not = `{"anyOf":[{"required":["id"]},{"required":["result"]},{"required":["error"]}]}`
		}
		var enum []string
		for _, m := range mcp.Methods {
			if m.Notification == notification && m.ParamsRequired == params {
				enum = append(enum, jsonString(m.Name))
			}
		}
		paramsSchema := `{"$ref":"#/components/schemas/mcp.Params"}`
		if !params {
			paramsSchema = `{"nullable":true,"allOf":[` + paramsSchema + `]}` // normalize: a oneOf with null
		}
		return `{"type":"object","title":"` + title + `","required":[` + required + `],"not":` + not + `,"properties":{` +
			`"jsonrpc":` + jsonrpc + `,` + map[bool]string{false: `"id":` + id + `,`, true: ""}[notification] +
			`"method":{"type":"string","enum":[` + strings.Join(enum, ",") + `]},"params":` + paramsSchema + `}}`
	}
	response := `{"type":"object","title":"McpResponse","required":["jsonrpc","id"],"not":{"required":["method"]},` +
		`"oneOf":[{"required":["result"]},{"required":["error"]}],"properties":{"jsonrpc":` + jsonrpc + `,"id":` + id + `,` +
		`"result":{},"error":{"type":"object","required":["code","message"],"properties":{` +
		`"code":{"type":"integer"},"message":{"type":"string"},"data":{}}}}}`
	return `{"anyOf":[` + strings.Join([]string{
		form("McpRequest", false, false), form("McpRequestWithParams", false, true),
		form("McpNotification", true, false), form("McpNotificationWithParams", true, true), response}, ",") + `]}`
}
