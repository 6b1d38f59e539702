// What a worker tells Weft about a graph when it registers it: its drawing
// and JSON Schemas (what /assistants/{id}/graph, /schemas and /subgraphs
// answer).

import {
  getConfigTypeSchema,
  getInputTypeSchema,
  getOutputTypeSchema,
  getStateTypeSchema,
  getUpdateTypeSchema,
} from "@langchain/langgraph/zod/schema";

/** A schema from the graph's channels, for states without a zod/StateSchema definition. */
function channelSchema(graph, title) {
  const channels = graph.builder?.channels ?? graph.channels ?? {};
  const properties = {};
  for (const name of Object.keys(channels)) {
    if (name.startsWith("__") || name.includes(":")) continue;
    properties[name] = {};
  }
  return { title, type: "object", properties };
}

function safe(fn) {
  try {
    return fn() ?? null;
  } catch {
    return null;
  }
}

/** LangGraph's marker of an input definition that is the state's, every key optional. */
const PARTIAL_STATE = Symbol.for("langgraph.state.partial");

/** A LangGraph StateSchema (it renders its own JSON Schemas, jsonSchemaExtra included). */
function isStateSchema(v) {
  return v != null && typeof v === "object" && typeof v.getJsonSchema === "function" && typeof v.getInputJsonSchema === "function";
}

/**
 * The schemas of a graph whose state, input or output is a StateSchema,
 * as the StateSchema renders them; null when none is.
 */
function stateSchemaSchemas(graph) {
  const b = graph.builder;
  if (!b) return null;
  const [state, input, output] = [b._schemaRuntimeDefinition, b._inputRuntimeDefinition, b._outputRuntimeDefinition];
  if (!isStateSchema(state) && !isStateSchema(input) && !isStateSchema(output)) return null;
  const s = isStateSchema(state) ? safe(() => state.getJsonSchema()) : null;
  let i = null;
  if (isStateSchema(input)) i = safe(() => input.getInputJsonSchema());
  else if (input === PARTIAL_STATE && isStateSchema(state)) i = safe(() => state.getInputJsonSchema());
  const o = isStateSchema(output) ? safe(() => output.getJsonSchema()) : null;
  if (!s && !i && !o) return null;
  return { state: s, input: i, output: o, config: null };
}

/**
 * The schemas of a zod-defined graph through LangGraph's zod registry
 * (withLangGraph's jsonSchemaExtra, e.g. langgraph_type, included): the
 * state as its update type, every key optional, as LangGraph's server
 * reports it; null when the graph has none.
 */
function zodSchemas(graph) {
  const out = {
    state: safe(() => getUpdateTypeSchema(graph)) ?? safe(() => getStateTypeSchema(graph)),
    input: safe(() => getInputTypeSchema(graph)),
    output: safe(() => getOutputTypeSchema(graph)),
    config: safe(() => getConfigTypeSchema(graph)),
  };
  return Object.values(out).some((v) => v != null) ? out : null;
}

/** The JSON Schemas of a compiled graph (null where it has none). */
export function graphSchemas(graph, id) {
  const found = stateSchemaSchemas(graph) ?? zodSchemas(graph) ?? {};
  const state = found.state ?? channelSchema(graph, id);
  const config = found.config ?? null;
  return {
    input_schema: found.input ?? state,
    output_schema: found.output ?? state,
    state_schema: state,
    config_schema: config,
    // LangGraph.js does not tell a context schema from a config schema:
    // LangGraph's server reports the one as both.
    context_schema: config,
  };
}

/**
 * What each state channel reads as while unset, as LangGraph.js defines it:
 * the value of a fresh channel (a reducer's default, e.g. [] for a list);
 * channels that start empty are left out. Weft shows these in state reads
 * of the graph, as getState and getStateHistory do.
 */
export function channelDefaults(graph) {
  const out = {};
  for (const [name, channel] of Object.entries(graph.channels ?? {})) {
    if (name.startsWith("__") || name.includes(":")) continue;
    let value;
    try {
      value = channel.fromCheckpoint(undefined).get();
    } catch {
      continue; // empty until written (EmptyChannelError)
    }
    if (value === undefined) continue;
    try {
      out[name] = JSON.parse(JSON.stringify(value));
    } catch {
      // not JSON: the state read shows the channel as absent
    }
  }
  return out;
}

/** Marks LangGraph's messagesDeltaReducer (MessagesDeltaValue's reducer). */
const MESSAGES_DELTA_REDUCER = Symbol.for("langgraph.messages_delta_reducer");

/**
 * The state channels LangGraph.js keeps as a DeltaChannel (only writes and
 * periodic snapshots stored): "delta:messages" for messagesDeltaReducer,
 * which Weft's state reads rebuild from the writes, "delta" for any other
 * reducer, which they mark as unresolved rather than show empty.
 */
export function channelKinds(graph) {
  const out = {};
  for (const [name, channel] of Object.entries(graph.channels ?? {})) {
    if (channel?.lc_graph_name !== "DeltaChannel") continue;
    out[name] = channel.reducer?.[MESSAGES_DELTA_REDUCER] === true ? "delta:messages" : "delta";
  }
  return out;
}

/** The registration body of POST /dispatch/graphs for graph id. */
export async function describeGraph(id, graph) {
  const drawable = (await graph.getGraphAsync()).toJSON();
  const xray = [];
  try {
    const x = (await graph.getGraphAsync({ xray: true })).toJSON();
    if (JSON.stringify(x) !== JSON.stringify(drawable)) xray.push(x);
  } catch {}
  const subgraphs = {};
  try {
    for await (const [ns, sub] of graph.getSubgraphsAsync(undefined, true)) subgraphs[ns] = graphSchemas(sub, ns);
  } catch {}
  return { graph_id: id, drawable, xray_drawables: xray, subgraphs, ...graphSchemas(graph, id), channel_defaults: channelDefaults(graph), channel_kinds: channelKinds(graph) };
}
