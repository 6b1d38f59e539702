// LangChain's createAgent graphs (test/fixtures/agents) through the worker
// on a real Weft server, driven by the official SDK: what LangGraph.js's
// own server (@langchain/langgraph-api) does with them, the worker does
// too — it runs the compiled graph createAgent's wrapper holds, with the
// graph's own recursion limit, through streamEvents (so chat models
// stream), writes each checkpoint's metadata as that server's saver does,
// answers runs.wait at an interrupt with the interrupt alone, calls graph
// factories with (config, runtime), and writes stream events as that server
// does. The last tests need no server: what executeRun sends for a run
// streaming subgraphs, and the helpers behind the rest.

import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { Client } from "@langchain/langgraph-sdk";
import { StateGraph, Annotation, START, MemorySaver } from "@langchain/langgraph";
import { AIMessageChunk, HumanMessage } from "@langchain/core/messages";
import { WeftSaver, checkpointMetadata } from "../src/saver.mjs";
import { ToolMessage } from "@langchain/core/messages";
import { executeRun, serverJSON } from "../src/run.mjs";
import { resolveGraph, graphForRun, innerGraph } from "../src/load.mjs";
import { channelDefaults } from "../src/describe.mjs";
import { agent } from "./fixtures/agents/agents.mjs";
import { useWeft } from "./helpers.mjs";

const CONFIG = join(import.meta.dirname, "fixtures", "agents", "langgraph.json");
const weft = useWeft();
const client = () => new Client({ apiUrl: weft.url });
const human = (content) => ({ messages: [{ role: "user", content }] });

test("setup: a worker of the createAgent fixtures", async () => {
  await weft.startWorker(["--config", CONFIG]);
});

test("createAgent's wrapper: the worker serves the compiled graph it holds (its channels' defaults in the first checkpoint)", async () => {
  // The wrapper looks like a compiled graph itself (stream, getGraphAsync, builder) but has no channels.
  assert.equal(typeof agent.stream, "function");
  assert.equal(agent.channels, undefined);
  const g = await resolveGraph(agent, "react_js");
  assert.equal(g, agent.graph);
  assert.deepEqual(channelDefaults(g), { messages: [] });

  const c = client();
  const t = await c.threads.create();
  await c.runs.wait(t.thread_id, "react_js", { input: human("hi") });
  const history = await c.threads.getHistory(t.thread_id, { limit: 100 });
  const input = history.at(-1);
  assert.equal(input.metadata.step, -1);
  assert.deepEqual(input.values, { messages: [] }, "the input checkpoint shows messages' default, as LangGraph's getState does");
});

test("a run without a recursion limit runs with the graph's own (withConfig), else LangGraph's 25; a run's limit wins", async () => {
  const c = client();
  let t = await c.threads.create();
  const out = await c.runs.wait(t.thread_id, "long_js", { input: human("rounds 15") });
  assert.equal(out.messages.at(-1).content, "done after 15 rounds", JSON.stringify(out).slice(0, 300));

  t = await c.threads.create();
  await assert.rejects(c.runs.wait(t.thread_id, "react_js", { input: human("rounds 15") }), /Recursion limit of 25 /, "react_js binds no limit: LangGraph's 25");

  t = await c.threads.create();
  await assert.rejects(
    c.runs.wait(t.thread_id, "long_js", { input: human("rounds 15"), config: { recursion_limit: 5 } }),
    /Recursion limit of 5 /,
    "the run's own limit wins over the graph's",
  );
});

test("each checkpoint's metadata holds the run config's configurable keys and metadata (thread's and run's), as LangGraph.js's saver writes it", async () => {
  const c = client();
  const t = await c.threads.create({ metadata: { owner: "alice" } });
  await c.runs.wait(t.thread_id, "react_js", { input: human("rounds 2"), config: { configurable: { user_id: "u1" } }, metadata: { tag: "w1" } });
  const all = await c.threads.getHistory(t.thread_id, { limit: 100 });
  assert.ok(all.length >= 8, `${all.length} checkpoints`);
  for (const filter of [{ user_id: "u1" }, { owner: "alice" }, { tag: "w1" }, { run_attempt: 1 }]) {
    const found = await c.threads.getHistory(t.thread_id, { limit: 100, metadata: filter });
    assert.equal(found.length, all.length, `history filtered on ${JSON.stringify(filter)}`);
  }
  const md = all[0].metadata;
  assert.equal(md.user_id, "u1");
  assert.equal(md.graph_id, "react_js");
  assert.equal(md.thread_id, t.thread_id);
  assert.ok(!("checkpoint_ns" in md), "no checkpoint_ns at the root, as LangGraph.js's server writes none");
  assert.ok(!Object.keys(md).some((k) => k.startsWith("__")), Object.keys(md).join());
});

test("chat models stream in every run (as under LangGraph.js's server's streamEvents); tools' messages get their id from the messages reducer", async () => {
  const c = client();
  const t = await c.threads.create();
  const out = await c.runs.wait(t.thread_id, "react_js", { input: human("rounds 1") });
  const [, ai, tool, last] = out.messages;
  assert.equal(ai.content, "round 1", "the streamed answer, not the model's non-streaming one");
  assert.deepEqual(ai.response_metadata, { finish_reason: "stop", model_name: "scripted" }, "the last chunk's metadata");
  assert.match(ai.id, /^run-/);
  assert.deepEqual(ai.tool_calls.map((tc) => tc.id), ["call_step_0"]);
  assert.equal(tool.type, "tool");
  assert.doesNotMatch(tool.id, /^run-/, "no messages stream handler named the tool's message");
  assert.equal(last.content, "done after 1 rounds");
  // The streamed message (an AIMessageChunk) reads as LangGraph.js's server shows it, and goes back as it came.
  const st = await c.threads.getState(t.thread_id);
  const streamed = st.values.messages[1];
  assert.equal(streamed.type, "ai");
  assert.ok(!("usage_metadata" in streamed), JSON.stringify(streamed));
  await c.threads.updateState(t.thread_id, { values: { messages: [{ ...streamed, content: "modified" }] } });
  assert.equal((await c.threads.getState(t.thread_id)).values.messages[1].content, "modified");
});

test("messages-tuple chunks are messages as LangGraph.js's server sends them (type ai, no envelope)", async () => {
  const c = client();
  const t = await c.threads.create();
  const tokens = [];
  for await (const ch of c.runs.stream(t.thread_id, "react_js", { input: human("say something nice"), streamMode: "messages-tuple" })) {
    if (ch.event === "messages") tokens.push(ch.data);
  }
  assert.ok(tokens.length > 2, `${tokens.length} chunks`);
  for (const [m, meta] of tokens) {
    assert.equal(m.type, "ai", JSON.stringify(m));
    assert.ok(!("lc" in m) && !("lc_kwargs" in m), JSON.stringify(m));
    assert.equal(meta.langgraph_node, "model_request");
  }
  assert.equal(tokens.map(([m]) => m.content).join(""), "ok: say something nice");
});

test("runs.wait that stops at an interrupt answers the interrupt alone; the resume finishes the run", async () => {
  const c = client();
  const t = await c.threads.create();
  const first = await c.runs.wait(t.thread_id, "react_js", { input: human("book paris") });
  assert.deepEqual(Object.keys(first), ["__interrupt__"], JSON.stringify(first).slice(0, 300));
  assert.equal(first.__interrupt__[0].value.actionRequests[0].name, "book_flight");
  const done = await c.runs.wait(t.thread_id, "react_js", { command: { resume: { decisions: [{ type: "approve" }] } } });
  assert.equal(done.messages.at(-1).content, "Booked: flight to paris confirmed");
});

test("update_state's checkpoint metadata names the graph, as LangGraph.js's server's update does", async () => {
  const c = client();
  const t = await c.threads.create();
  await c.runs.wait(t.thread_id, "react_js", { input: human("hi") });
  await c.threads.updateState(t.thread_id, { values: { messages: [{ role: "user", content: "edited", id: "m-edit" }] } });
  const [head] = await c.threads.getHistory(t.thread_id, { limit: 1 });
  assert.equal(head.metadata.source, "update");
  assert.equal(head.metadata.graph_id, "react_js");
});

test("a graph factory is called with (config, runtime) as LangGraph.js's server calls it", async () => {
  const c = client();
  const out = await c.runs.wait(null, "react_factory_js", { input: human("hi") });
  assert.equal(out.messages.at(-1).content, "made for threads.create_run");

  const seen = [];
  const factory = (config, runtime) => {
    seen.push([config.configurable, runtime]);
    return agent;
  };
  const g = await resolveGraph(factory, "f");
  assert.equal(g, agent.graph, "a factory's createAgent wrapper is unwrapped too");
  await graphForRun(g, { configurable: { a: 1 } }, "f", { context: { user: "x" } });
  await graphForRun(g, { configurable: { a: 2 } }, "f", { accessContext: "threads.update" });
  assert.deepEqual(seen, [
    [{}, { accessContext: "assistants.read", executionRuntime: null }],
    [{ a: 1 }, { accessContext: "threads.create_run", executionRuntime: { context: { user: "x" } } }],
    [{ a: 2 }, { accessContext: "threads.update", executionRuntime: null }],
  ]);
});

/** Runs graph with executeRun against a recording stand-in for Weft's worker API: the events it commits. */
async function recordRun(graph, kwargs) {
  const events = [];
  const client = {
    async request(method, path, body, opts) {
      const b = JSON.parse(opts?.rawBody ?? JSON.stringify(body ?? null));
      for (const e of b?.events ?? []) events.push(e);
      return {};
    },
    async post() {
      return [];
    },
  };
  graph.checkpointer = new WeftSaver(client);
  const claimed = {
    dispatch: { dispatch_id: randomUUID(), graph_id: "g", attempt: 1 },
    run: { run_id: randomUUID(), thread_id: randomUUID(), assistant_id: randomUUID(), kwargs, metadata: {} },
    claim_token: randomUUID(),
    thread_empty: true,
  };
  const res = await executeRun({ claimed, graph, saver: graph.checkpointer, client, log: () => {}, heartbeatMs: 60_000 });
  assert.deepEqual(res, { outcome: "ended", status: "success" });
  return events;
}

test("a run streaming subgraphs records LangGraph's checkpoint envelopes, which Weft streams as checkpoints events (unless it asked for the checkpoints mode)", async () => {
  const State = Annotation.Root({ n: Annotation({ reducer: (a, b) => a + b, default: () => 0 }) });
  const sub = new StateGraph(State).addNode("inc", () => ({ n: 1 })).addEdge(START, "inc").compile();
  const graph = new StateGraph(State).addNode("sub", sub).addEdge(START, "sub").compile();
  const events = await recordRun(graph, { input: {}, stream_mode: ["values"], subgraphs: true });
  const names = events.map((e) => e.event.split("|")[0]);
  const envelopes = events.filter((e) => e.event.startsWith("checkpoint_envelope"));
  assert.ok(envelopes.length >= 2, names.join());
  for (const e of envelopes) {
    assert.deepEqual(Object.keys(e.data).filter((k) => k !== "parent_id").sort(), ["id", "source", "step"], JSON.stringify(e.data));
    assert.equal(names[events.indexOf(e) + 1], "values", "each one goes before its values");
  }
  assert.ok(envelopes.some((e) => e.event.includes("|sub:")), "a subgraph's too, under its namespace");

  const withMode = await recordRun(sub, { input: {}, stream_mode: ["values", "checkpoints"], subgraphs: true });
  assert.ok(!withMode.some((x) => x.event.startsWith("checkpoint_envelope")), "no envelope when the checkpoints mode was asked for");
  const tuples = await recordRun(graph, { input: {}, stream_mode: ["messages-tuple"], subgraphs: true });
  assert.ok(!tuples.some((x) => x.event.startsWith("checkpoint_envelope")), "no envelope without the values mode");
  for (const e of withMode.filter((x) => x.event === "checkpoints")) assert.deepEqual(Object.keys(e.data).sort(), ["metadata", "next", "values"]);
});

test("debug checkpoint events leave out what is undefined (the first checkpoint's parent_config, a pending task's result), as LangGraph.js's server sends them", async () => {
  const State = Annotation.Root({ n: Annotation({ reducer: (a, b) => a + b, default: () => 0 }) });
  const graph = new StateGraph(State).addNode("inc", () => ({ n: 1 })).addEdge(START, "inc").compile();
  const events = await recordRun(graph, { input: {}, stream_mode: ["debug"] });
  const cps = events.filter((e) => e.event === "debug" && e.data.type === "checkpoint").map((e) => e.data.payload);
  assert.ok(cps.length >= 2);
  assert.ok(!("parent_config" in cps[0]), JSON.stringify(cps[0]));
  assert.equal(cps[0].parent_checkpoint, null);
  assert.ok(cps[1].parent_config, "a later checkpoint's parent_config is there");
  for (const t of cps.flatMap((p) => p.tasks)) for (const v of Object.values(t)) assert.notDeepEqual(v, { lc: 2, type: "undefined" }, JSON.stringify(t));
});

test("serverJSON writes a value as LangGraph.js's server writes an event's data; checkpointMetadata as its saver writes metadata", async () => {
  const chunk = new AIMessageChunk({ content: "hi", id: "m1" });
  const out = JSON.parse(serverJSON([chunk, { a: undefined, b: 1 }]));
  assert.equal(out[0].type, "ai");
  assert.equal(out[0].content, "hi");
  assert.equal(out[0].id, "m1");
  assert.ok(!("lc" in out[0]));
  assert.deepEqual(out[1], { b: 1 });
  assert.equal(JSON.parse(serverJSON({ m: new HumanMessage("x") })).m.type, "human");
  assert.equal(serverJSON(undefined), "null");

  const md = checkpointMetadata(
    { configurable: { user_id: "u1", thread_id: "t", run_id: "r", checkpoint_ns: "", checkpoint_id: "c", __pregel_x: 1, gone: undefined }, metadata: { owner: "alice", user_id: "meta" } },
    { source: "loop", step: 1, parents: {} },
  );
  assert.deepEqual(md, { user_id: "meta", owner: "alice", source: "loop", step: 1, parents: {} });
});

test("a message is stored as LangGraph.js's server shows it: without its undefined fields, a chunk with its type; it reads back the same", async () => {
  const saver = new WeftSaver({});
  const chunk = new AIMessageChunk({ content: "a", id: "x" }).concat(new AIMessageChunk({ content: "b", response_metadata: { finish_reason: "stop" } }));
  const value = { messages: [chunk, new ToolMessage({ content: "r", tool_call_id: "t1" }), new HumanMessage({ content: "h", id: "h1" })], unset: undefined };
  const text = await saver.dumpJSON(value);
  const stored = JSON.parse(text);
  assert.ok(!("usage_metadata" in stored.messages[0].kwargs), text);
  assert.equal(stored.messages[0].kwargs.type, "ai", "the chunk's type, as toDict() gives it");
  assert.ok(!("artifact" in stored.messages[1].kwargs), text);
  assert.ok(!("type" in stored.messages[1].kwargs) && !("type" in stored.messages[2].kwargs), "a message class's own type needs no field");
  assert.deepEqual(stored.unset, { lc: 2, type: "undefined" }, "a value that is undefined itself stays LangGraph's envelope");
  const back = await saver.serde.loadsTyped("json", text);
  assert.equal(back.messages[0].constructor.name, "AIMessageChunk");
  assert.equal(back.messages[0].getType(), "ai");
  assert.equal(back.messages[0].content, "ab");
  assert.equal(back.messages[0].usage_metadata, undefined);
  assert.equal(back.messages[0].concat(new AIMessageChunk({ content: "c" })).content, "abc");
  assert.equal(back.messages[1].tool_call_id, "t1");
  assert.ok("unset" in back && back.unset === undefined);
  assert.equal(chunk.usage_metadata, undefined, "the graph's own message is left as it was");
  assert.ok(!("type" in chunk.lc_kwargs));
});

test("innerGraph unwraps only a wrapper holding a compiled graph", () => {
  const g = new StateGraph(Annotation.Root({ x: Annotation() })).addNode("a", () => ({})).addEdge(START, "a").compile({ checkpointer: new MemorySaver() });
  assert.equal(innerGraph(g), g);
  assert.equal(innerGraph({ graph: g }), g);
  assert.deepEqual(innerGraph({ graph: {} }), { graph: {} });
});
