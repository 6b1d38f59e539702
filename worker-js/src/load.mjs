// Loading the graphs of a langgraph.json.

import { readFileSync, existsSync } from "node:fs";
import { dirname, resolve, extname } from "node:path";
import { pathToFileURL } from "node:url";
import { GRAPH_SOURCE } from "./describe.mjs";

const TS_EXTENSIONS = new Set([".ts", ".mts", ".cts", ".tsx"]);

/** Parses a .env file: KEY=value lines, # comments, optional quotes. */
export function parseDotenv(text) {
  const out = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)?\s*$/.exec(line);
    if (!m) continue;
    let v = (m[2] ?? "").trim();
    if ((v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'"))) v = v.slice(1, -1);
    else v = v.replace(/\s+#.*$/, "");
    out[m[1]] = v;
  }
  return out;
}

/** Applies langgraph.json's env (a .env path or an object); set variables win. */
function applyEnv(env, dir) {
  let vars = {};
  if (typeof env === "string") {
    const file = resolve(dir, env);
    if (existsSync(file)) vars = parseDotenv(readFileSync(file, "utf8"));
  } else if (env && typeof env === "object") {
    vars = env;
  }
  for (const [k, v] of Object.entries(vars)) if (process.env[k] === undefined) process.env[k] = String(v);
}

let tsRegistered = null;

/**
 * Imports a graph module. TypeScript goes through tsx's loader, registered
 * once for the whole process (as LangGraph's server does), so graph
 * modules share their packages' instances with the worker: LangGraph's
 * zod schema registry the worker reads schemas from is the one the
 * graph's withLangGraph() wrote to.
 */
async function importFile(file) {
  const url = pathToFileURL(file).href;
  if (!TS_EXTENSIONS.has(extname(file))) return import(url);
  tsRegistered ??= import("tsx/esm/api").then(({ register }) => register());
  await tsRegistered;
  try {
    return await import(url);
  } catch (err) {
    // A .ts file of a package without "type": "module" is CommonJS to
    // Node: its ESM imports of the graph's packages form a require(esm)
    // cycle under the process-wide loader. tsx's scoped import loads it
    // (the module then has its own instances of the packages).
    if (err?.code !== "ERR_REQUIRE_CYCLE_MODULE") throw err;
    const { tsImport } = await import("tsx/esm/api");
    return tsImport(url, import.meta.url);
  }
}

function isCompiled(g) {
  return g && typeof g === "object" && typeof g.stream === "function" && typeof g.getGraphAsync === "function";
}

/** Marks a compiled graph made by a graph factory: the factory itself. */
export const FACTORY = Symbol.for("weft.graph_factory");

/**
 * A graph export: a compiled graph, a builder (compiled here) or a factory
 * (a function returning either, sync or async). A factory is called here
 * for the graph's registration (drawing, schemas) as LangGraph's server
 * calls it to read an assistant's graph: (an empty config,
 * {accessContext: "assistants.read", executionRuntime: null}); the
 * compiled graph keeps it under FACTORY, and each run calls it again
 * (graphForRun), as LangGraph's server does.
 */
export async function resolveGraph(value, id) {
  let g = await value;
  let factory = null;
  if (typeof g === "function" && !isCompiled(g)) {
    factory = g;
    g = await compiled(await g({ configurable: {} }, { accessContext: "assistants.read", executionRuntime: null }), id);
    g[FACTORY] = factory;
    return g;
  }
  return compiled(g, id);
}

/**
 * The compiled graph inside a wrapper that holds one under .graph, as
 * LangChain's createAgent's ReactAgent does (it looks like a compiled graph
 * itself: stream, getGraphAsync, builder): LangGraph's server runs the
 * inner graph whenever there is one (a compiled graph with a builder), so
 * its channels, output channels and bound config (withConfig) are the
 * graph's, not the wrapper's, and the wrapper's own stream (which writes
 * its middleware's state before the graph starts) is never called.
 */
export function innerGraph(g) {
  const inner = g && typeof g === "object" ? g.graph : undefined;
  if (inner != null && typeof inner === "object" && inner.builder != null && typeof inner.builder === "object") return inner;
  return g;
}

async function compiled(g, id) {
  if (g && !isCompiled(g) && typeof g.compile === "function") g = g.compile();
  g = innerGraph(g);
  if (!isCompiled(g)) throw new Error(`graph ${id}: the export is not a LangGraph.js graph (compiled graph, StateGraph or a function returning one)`);
  return g;
}

/**
 * The graph a run executes: graph itself, or for a factory's graph a fresh
 * one from the factory called as LangGraph's server calls it: with the
 * run's config ({configurable, ...}) and the server runtime
 * {accessContext, executionRuntime} — accessContext "threads.create_run"
 * (with executionRuntime {context}: the run's context) for a run,
 * "threads.update" (executionRuntime null) for a state update —, given
 * the same checkpointer and store.
 */
export async function graphForRun(graph, config, id, { accessContext = "threads.create_run", context } = {}) {
  const factory = graph?.[FACTORY];
  if (!factory) return graph;
  const runtime = accessContext === "threads.create_run" ? { accessContext, executionRuntime: { context } } : { accessContext, executionRuntime: null };
  const g = await compiled(await factory({ ...config, configurable: { ...(config?.configurable ?? {}) } }, runtime), id);
  g.checkpointer = graph.checkpointer;
  g.store = graph.store;
  return g;
}

/**
 * Loads a langgraph.json: applies its env, imports every graph module
 * ("./path.ts:export"; TypeScript through tsx) and returns
 * {config, dir, graphs: Map<graph id, compiled graph>, failures}.
 * A graph whose module fails to import (or whose export is not a graph)
 * is left out and listed in failures ([{graph_id, error}]), so the others
 * are served; onFailure, when given, is told of each at once.
 * only, when given, limits the graphs loaded.
 */
export async function loadConfig(configPath, { only, onFailure } = {}) {
  const file = resolve(configPath);
  const dir = dirname(file);
  const config = JSON.parse(readFileSync(file, "utf8"));
  applyEnv(config.env, dir);
  const graphs = new Map();
  const failures = [];
  for (const [id, spec] of Object.entries(config.graphs ?? {})) {
    if (only && !only.includes(id)) continue;
    try {
      const ref = typeof spec === "string" ? spec : spec?.path;
      if (typeof ref !== "string") throw new Error(`graph ${id}: expected "./path.ts:export", got ${JSON.stringify(spec)}`);
      const cut = ref.lastIndexOf(":");
      const [path, name] = cut > 1 ? [ref.slice(0, cut), ref.slice(cut + 1)] : [ref, "default"];
      const mod = await importFile(resolve(dir, path));
      if (!(name in mod)) throw new Error(`graph ${id}: ${path} has no export ${name}`);
      const g = await resolveGraph(mod[name], id);
      g[GRAPH_SOURCE] = { file: resolve(dir, path), exportName: name }; // the schemas read from its types
      graphs.set(id, g);
    } catch (err) {
      const failure = { graph_id: id, error: String(err?.stack ?? err?.message ?? err) };
      failures.push(failure);
      onFailure?.(failure);
    }
  }
  if (graphs.size === 0 && failures.length === 0) throw new Error(`${configPath}: no graphs to serve`);
  return { config, dir, graphs, failures };
}
