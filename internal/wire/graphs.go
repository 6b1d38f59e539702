package wire

import (
	"github.com/google/uuid"
)

// GraphRegistration is the body of POST /dispatch/graphs: one graph a
// worker serves, described the way the assistant routes answer for it.
type GraphRegistration struct {
	// GraphID is the graph's id (the key of langgraph.json's "graphs").
	GraphID string `json:"graph_id" validate:"required" example:"agent"`
	// WorkerID names the registering worker (for the log).
	WorkerID string `json:"worker_id" example:"js-worker-1"`
	// Drawable is the graph drawn without subgraphs: {nodes: [{id, type,
	// data?}], edges: [{source, target, conditional?}]}, as LangGraph's
	// drawable graph serialises; its node ids (other than __start__ and
	// __end__) are the graph's nodes.
	Drawable map[string]any `json:"drawable" validate:"required" swaggertype:"object"`
	// XrayDrawables are the drawings with subgraphs expanded, element i to
	// depth i + 1 (empty without subgraphs).
	XrayDrawables []any `json:"xray_drawables" swaggertype:"array,object"`
	// Subgraphs maps subgraph namespaces to their schemas.
	Subgraphs     map[string]SubgraphSchemas `json:"subgraphs"`
	InputSchema   any                        `json:"input_schema" swaggertype:"object"`
	OutputSchema  any                        `json:"output_schema" swaggertype:"object"`
	StateSchema   any                        `json:"state_schema" swaggertype:"object"`
	ConfigSchema  any                        `json:"config_schema" swaggertype:"object"`
	ContextSchema any                        `json:"context_schema" swaggertype:"object"`
	// ChannelDefaults are what state channels read as while unset, as the
	// graph's runtime defines them (LangGraph.js: a fresh channel's value,
	// e.g. [] for a list with a reducer and a default); only channels that
	// have one. State reads of the graph show them, as LangGraph's do.
	ChannelDefaults map[string]any `json:"channel_defaults" swaggertype:"object"`
	// ChannelKinds marks the state channels the graph's runtime keeps as
	// LangGraph delta channels (DeltaChannel, MessagesDeltaValue: only
	// writes and periodic snapshots stored): "delta:messages" when the
	// reducer is messagesDeltaReducer (state reads rebuild it from the
	// writes along the parent chain), "delta" for any other reducer (reads
	// show a {"__weft_unresolved__": "delta_channel"} marker for it). Absent
	// or {}: none.
	ChannelKinds map[string]string `json:"channel_kinds,omitempty"`
	// Config and Context are what the graph's system assistant starts
	// with when it is created here (LangGraph's server takes them from
	// LANGGRAPH_CONFIG); an existing system assistant keeps its own.
	Config  map[string]any `json:"config,omitempty" swaggertype:"object"`
	Context map[string]any `json:"context,omitempty" swaggertype:"object"`
	// Language is the graph's runtime: "python" for Python LangGraph
	// (weft_worker), whose task ids Weft then derives Python's way
	// (xxh3-128); "js" for LangGraph.js (weft-worker); absent or "" for a
	// Go worker's. State reads of its threads are shaped as the official
	// server of its language answers them (Weft's own superset for "").
	Language string `json:"language,omitempty" enums:"js,python" example:"python"`
}

// GraphRegistered is the answer to a graph registration.
type GraphRegistered struct {
	GraphID string `json:"graph_id" validate:"required"`
	// AssistantID is the graph's system assistant (created when missing).
	AssistantID uuid.UUID `json:"assistant_id" validate:"required"`
	// Nodes are the graph's node names, as run creation checks them
	// (interrupt_before, interrupt_after, command.goto).
	Nodes []string `json:"nodes" validate:"required"`
}

// GraphLoadError is the body of POST /dispatch/graphs/errors: a graph of
// the worker's config it could not load.
type GraphLoadError struct {
	GraphID  string `json:"graph_id" validate:"required" example:"agent"`
	WorkerID string `json:"worker_id" example:"js-worker-1"`
	// Error says why: the import's exception, or what the export is
	// instead of a graph (at most MaxGraphErrorBytes are kept).
	Error string `json:"error" validate:"required" example:"Error: Cannot find module 'openai'"`
}

// UpdateStateKey is the run metadata key that carries an update_state for
// a worker: a run of the thread's graph whose metadata holds {values,
// as_node, checkpoint_id, checkpoint_ns} (or {supersteps}) under this key
// is no run of the graph but an update for the worker to apply with its
// runtime's updateState, answered by ending the run with
// {"__update_state__": <checkpoint config>} or {"__update_error__":
// {error, message}} (package workerapi's update.go).
const UpdateStateKey = "__weft_update_state__"
