// What a worker tells Weft about a graph when it registers it: its drawing
// and JSON Schemas (what /assistants/{id}/graph, /schemas and /subgraphs
// answer).

import {
  getConfigTypeSchema,
  getInputTypeSchema,
  getOutputTypeSchema,
  getStateTypeSchema,
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

/** The JSON Schemas of a compiled graph (null where it has none). */
export function graphSchemas(graph, id) {
  const state = safe(() => getStateTypeSchema(graph)) ?? channelSchema(graph, id);
  return {
    input_schema: safe(() => getInputTypeSchema(graph)) ?? state,
    output_schema: safe(() => getOutputTypeSchema(graph)) ?? state,
    state_schema: state,
    config_schema: safe(() => getConfigTypeSchema(graph)),
    context_schema: null,
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
