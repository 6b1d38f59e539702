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
import { dirname } from "node:path";

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

/** The runtime schemas {state, input, output, config} of a graph (StateSchema or zod), or null. */
function runtimeSchemas(graph) {
  return stateSchemaSchemas(graph) ?? zodSchemas(graph);
}

/**
 * The JSON Schemas of a compiled graph (null where it has none): its
 * runtime (StateSchema, zod) schemas, else fromTypes (the schemas read
 * from its TypeScript types), else one property per state channel.
 */
export function graphSchemas(graph, id, fromTypes = null) {
  const found = runtimeSchemas(graph) ?? fromTypes ?? {};
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

/** A subgraph's entry of GET /assistants/{id}/subgraphs, in LangGraph.js's shape. */
function subgraphEntry(sub, ns, fromTypes) {
  const s = graphSchemas(sub, ns, fromTypes);
  return { state: s.state_schema, input: s.input_schema, output: s.output_schema, config: s.config_schema };
}

/** Where a graph was loaded from ({file, exportName}), set by loadConfig. */
export const GRAPH_SOURCE = Symbol.for("weft.graph_source");

let typescriptMissingLogged = false;

/**
 * The schemas read from the TypeScript types of the graphs (and their
 * subgraphs) that have no runtime schema, with one TypeScript program for
 * all of them: Map<graph id, {schemas, subgraphs}>. Empty when none needs
 * it or `typescript` is not installed in the project (then one log line).
 * load, for tests, stands for the loader of the `typescript` module.
 */
export async function typeSchemas(graphs, log = () => {}, { load } = {}) {
  const targets = [];
  for (const [id, g] of graphs) {
    const src = g?.[GRAPH_SOURCE];
    if (!src || !/\.[cm]?tsx?$/.test(src.file)) continue;
    let subsNeed = false;
    try {
      for await (const [, sub] of g.getSubgraphsAsync(undefined, true)) if (!runtimeSchemas(sub)) subsNeed = true;
    } catch {}
    if (runtimeSchemas(g) && !subsNeed) continue;
    targets.push({ id, ...src });
  }
  if (!targets.length) return new Map();
  const { extractSchemas, loadTypescript } = await import("./schema-ts.mjs");
  const dir = dirname(targets[0].file);
  const ts = await (load ?? loadTypescript)(dir);
  if (!ts) {
    if (!typescriptMissingLogged) {
      typescriptMissingLogged = true;
      log("warn", "schemas of graphs typed with TypeScript types (Annotation, interfaces) are null: install `typescript` in the project (npm install -D typescript) to have them", { graphs: targets.map((t) => t.id) });
    }
    return new Map();
  }
  const started = Date.now();
  let out = new Map();
  try {
    out = extractSchemas(ts, targets, dir);
  } catch (err) {
    log("warn", "reading the graphs' TypeScript types failed; their schemas are null", { error: String(err?.message ?? err) });
  }
  log("info", "graph schemas read from TypeScript types", { graphs: targets.map((t) => t.id), ms: Date.now() - started });
  return out;
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

/**
 * The registration body of POST /dispatch/graphs for graph id; fromTypes
 * is typeSchemas' entry for it ({schemas, subgraphs}), if any.
 */
export async function describeGraph(id, graph, fromTypes = null) {
  const drawable = (await graph.getGraphAsync()).toJSON();
  const xray = [];
  try {
    const x = (await graph.getGraphAsync({ xray: true })).toJSON();
    if (JSON.stringify(x) !== JSON.stringify(drawable)) xray.push(x);
  } catch {}
  const subgraphs = {};
  try {
    for await (const [ns, sub] of graph.getSubgraphsAsync(undefined, true)) {
      // LangGraph's server falls back to the root graph's schemas for a subgraph it has no types of
      subgraphs[ns] = subgraphEntry(sub, ns, fromTypes?.subgraphs?.[ns] ?? fromTypes?.schemas ?? null);
    }
  } catch {}
  return { graph_id: id, drawable, xray_drawables: xray, subgraphs, ...graphSchemas(graph, id, fromTypes?.schemas ?? null), channel_defaults: channelDefaults(graph), channel_kinds: channelKinds(graph),
    // LangGraph.js's rules: its task ids, and reads shaped as its server answers them.
    language: "js" };
}
