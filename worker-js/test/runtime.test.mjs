// What LangGraph's server gives graph modules, given by the worker too:
// the SDK logger at import, a module that fails to import kept apart,
// graph factories called per run with the run's config, and the default
// assistants' config and context from LANGGRAPH_CONFIG.

import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { sdkLogger, LOG_LEVELS } from "../src/runtime.mjs";
import { assistantDefaults } from "../src/worker.mjs";
import { useWeft } from "./helpers.mjs";

const CONFIG = join(import.meta.dirname, "fixtures", "runtime", "langgraph.json");
const weft = useWeft();
let worker;
const client = () => new Client({ apiUrl: weft.url });

test("setup: a worker of the runtime fixtures starts though one of its modules fails", async () => {
  worker = await weft.startWorker(["--config", CONFIG]);
});

test("sdkLogger has the SDK Logger's levels and returns itself", () => {
  const got = [];
  const logger = sdkLogger((level, msg, attrs) => got.push({ level, msg, attrs }));
  for (const level of LOG_LEVELS) assert.equal(logger[level](`m ${level}`, { k: 1 }), logger);
  logger.info({ message: "object form", extra: true });
  assert.equal(got.length, LOG_LEVELS.length + 1);
  assert.deepEqual(got[1], { level: "warn", msg: "m warn", attrs: { k: 1 } });
  assert.deepEqual(got.at(-1), { level: "info", msg: "object form", attrs: { extra: true } });
});

test("assistantDefaults reads LANGGRAPH_CONFIG as LangGraph's server does", () => {
  assert.deepEqual(assistantDefaults('{"a": {"configurable": {"x": 1}, "context": {"m": "y"}}, "b": {"tags": ["t"]}}'), {
    a: { config: { configurable: { x: 1 } }, context: { m: "y" } },
    b: { config: { tags: ["t"] } },
  });
  assert.deepEqual(assistantDefaults(""), {});
  assert.deepEqual(assistantDefaults("not json"), {});
});

test("a module that calls getLogger() at import is served, and its node's log lines reach the worker's log", async () => {
  const out = await client().runs.wait(null, "logger_js", { input: {} });
  assert.deepEqual(out, { said: "logged" });
  const line = worker.logs().find((l) => l.msg === "hello from a node");
  assert.ok(line, "the node's log line");
  assert.equal(line.level, "warn");
  assert.equal(line.random, 123);
  assert.equal(line.langgraph_node, "speak");
});

test("a module that throws at import is reported and the other graphs are served", async () => {
  const failed = worker.logs().find((l) => l.msg === "graph failed to load; serving the others");
  assert.ok(failed, "the failure is logged");
  assert.equal(failed.graph_id, "broken_js");
  assert.match(failed.error, /broken on purpose/);
  const graphs = (await client().assistants.search({ metadata: { created_by: "system" }, limit: 100 })).map((a) => a.graph_id).filter((g) => g.endsWith("_js")).sort();
  assert.deepEqual(graphs, ["context_js", "factory_js", "logger_js", "zod_registry_js"]);
  // /info names the graph and why (the first line; the log has the stack).
  const info = await (await fetch(`${weft.url}/info`)).json();
  const reported = info.graph_errors?.find((e) => e.graph_id === "broken_js");
  assert.ok(reported, `/info lists broken_js: ${JSON.stringify(info)}`);
  assert.equal(reported.error, "Error: broken on purpose");
  assert.ok(!info.graph_errors.some((e) => e.graph_id === "logger_js"), "a graph that loaded is not listed");
});

test("a graph factory is called per run with the run's config", async () => {
  const c = client();
  const nodes = async (assistant, config) => {
    const chunks = [];
    for await (const ch of c.runs.stream(null, assistant, { input: { messages: ["in"] }, config, streamMode: ["updates"] })) chunks.push(ch);
    return chunks.filter((ch) => ch.event === "updates").flatMap((ch) => Object.keys(ch.data));
  };
  // The default assistant has the configurable LANGGRAPH_CONFIG gives it.
  assert.deepEqual(await nodes("factory_js"), ["from_env"]);
  assert.deepEqual(await nodes("factory_js", { configurable: { nodeName: "runtime" } }), ["runtime"]);
  const a = await c.assistants.create({ graphId: "factory_js", config: { configurable: { nodeName: "assistant" } } });
  assert.deepEqual(await nodes(a.assistant_id), ["assistant"]);
});

test("the default assistant's context comes from LANGGRAPH_CONFIG; a run's own wins", async () => {
  const c = client();
  const [system] = await c.assistants.search({ graphId: "context_js", metadata: { created_by: "system" } });
  assert.deepEqual(system.context, { model: "env_model" });
  assert.deepEqual(await c.runs.wait(null, "context_js", { input: {} }), { model: "env_model" });
  assert.deepEqual(await c.runs.wait(null, "context_js", { input: {}, context: { model: "mine" } }), { model: "mine" });
});

test("debug checkpoint events carry checkpoint / parent_checkpoint as the thread's history shows them", async () => {
  const c = client();
  const thread = await c.threads.create();
  const seen = [];
  for await (const ch of c.runs.stream(thread.thread_id, "context_js", { input: {}, streamMode: "debug" })) {
    if (ch.event === "debug" && ch.data.type === "checkpoint") seen.push(ch.data.payload);
  }
  assert.ok(seen.length >= 2, "checkpoint events");
  for (const p of seen) assert.equal(p.parentConfig, undefined, "no LangGraph.js parentConfig");
  const history = (await c.threads.getHistory(thread.thread_id, { limit: seen.length })).reverse();
  assert.deepEqual(
    seen.map((p) => ({ step: p.metadata?.step, checkpoint: p.checkpoint, parent_checkpoint: p.parent_checkpoint })),
    history.map((h) => ({ step: h.metadata?.step, checkpoint: h.checkpoint, parent_checkpoint: h.parent_checkpoint })),
  );
});

test("update_state on a factory graph's thread makes the graph from the config of the thread's assistant", async () => {
  const c = client();
  const a = await c.assistants.create({ graphId: "factory_js", config: { configurable: { nodeName: "assistant" } } });
  const thread = await c.threads.create({ graphId: "factory_js" });
  await c.runs.wait(thread.thread_id, a.assistant_id, { input: { messages: ["input"] } });
  await c.threads.updateState(thread.thread_id, { values: { messages: "update" }, asNode: "assistant" });
  const state = await c.threads.getState(thread.thread_id);
  assert.deepEqual(state.values.messages, ["input", "assistant", "update"]);
});

test("a TypeScript zod graph's schemas carry withLangGraph's jsonSchemaExtra (the graph shares LangGraph's registry with the worker)", async () => {
  const schemas = await client().assistants.getSchemas("zod_registry_js");
  assert.equal(schemas.state_schema.properties.messages.langgraph_type, "messages");
  assert.ok(schemas.state_schema.properties.count);
  assert.deepEqual(await client().runs.wait(null, "zod_registry_js", { input: { count: 1 } }), { messages: ["m2"], count: 2 });
});
