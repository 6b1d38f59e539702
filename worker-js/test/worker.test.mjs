// The JS worker serving LangGraph.js graphs (test/fixtures) on a real Weft
// server, driven through the official SDK; LangGraph's own getState /
// getStateHistory (PostgresSaver on Weft's database) are the reference for
// what Weft shows.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { Client } from "@langchain/langgraph-sdk";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { loadConfig } from "../src/load.mjs";
import { WeftStore } from "../src/store.mjs";
import { WeftClient } from "../src/client.mjs";
import { useWeft, FIXTURES, get, post, sleep, until } from "./helpers.mjs";

const weft = useWeft();
let worker;
const client = () => new Client({ apiUrl: weft.url });

const human = (content) => ({ messages: [{ role: "user", content }] });

/** LangGraph's own view of a thread of graph id (default agent), through PostgresSaver on Weft's database. */
const references = new Map();
async function langgraph(id = "agent") {
  if (!references.has(id)) {
    const { graphs } = await loadConfig(FIXTURES, { only: [id] });
    const pool = new pg.Pool({ ...weft.db, max: 2 });
    pool.on("error", () => {}); // the server stops its PostgreSQL at the end
    const graph = graphs.get(id);
    // Schema "langgraph": the views presenting Weft's rows as LangGraph stores them
    // (long message lists are kept once per element in Weft's own tables).
    graph.checkpointer = new PostgresSaver(pool, undefined, { schema: "langgraph" });
    references.set(id, { graph, pool });
  }
  return references.get(id).graph;
}

const msg = (m) =>
  typeof m.getType === "function"
    ? { id: m.id, type: m.getType(), content: m.content, tool_calls: m.tool_calls ?? [] }
    : { id: m.id, type: m.type, content: m.content, tool_calls: m.tool_calls ?? [] };

/** Asserts that Weft's state (SDK) says what LangGraph's StateSnapshot says. */
function assertSameState(w, lg, what) {
  assert.equal(w.checkpoint.checkpoint_id, lg.config.configurable.checkpoint_id, `${what}: checkpoint id`);
  assert.equal(w.parent_checkpoint?.checkpoint_id ?? null, lg.parentConfig?.configurable?.checkpoint_id ?? null, `${what}: parent`);
  assert.deepEqual(w.next, [...lg.next], `${what}: next`);
  assert.equal(w.metadata.step, lg.metadata.step, `${what}: step`);
  assert.equal(w.metadata.source, lg.metadata.source, `${what}: source`);
  assert.deepEqual(
    w.tasks.map((t) => ({ id: t.id, name: t.name, interrupts: t.interrupts.map((i) => ({ id: i.id, value: i.value })) })),
    lg.tasks.map((t) => ({ id: t.id, name: t.name, interrupts: (t.interrupts ?? []).map((i) => ({ id: i.id, value: i.value })) })),
    `${what}: tasks`,
  );
  assert.deepEqual((w.values.messages ?? []).map(msg), (lg.values.messages ?? []).map(msg), `${what}: messages`);
}

async function assertSameThread(threadId) {
  const graph = await langgraph();
  const config = { configurable: { thread_id: threadId } };
  assertSameState(await client().threads.getState(threadId), await graph.getState(config), "latest state");
  const mine = await client().threads.getHistory(threadId, { limit: 100 });
  const theirs = [];
  for await (const s of graph.getStateHistory(config)) theirs.push(s);
  assert.equal(mine.length, theirs.length, "history length");
  mine.forEach((s, i) => assertSameState(s, theirs[i], `history[${i}]`));
}

test("setup: the worker registers its graphs", async () => {
  worker = await weft.startWorker(["--concurrency", "4"]);
  const logs = worker.logs().filter((l) => l.msg === "graph registered").map((l) => l.graph_id);
  assert.deepEqual(logs.sort(), ["agent", "delta_js", "delta_snap_js", "foo_bar_js", "memory_js", "nested_js", "slow_js"]);
});

test("registered graphs have system assistants, schemas and a drawing", async () => {
  const c = client();
  const [a] = await c.assistants.search({ graphId: "agent" });
  assert.ok(a, "system assistant of agent");
  assert.equal(a.metadata.created_by, "system");
  const drawing = await c.assistants.getGraph(a.assistant_id);
  assert.deepEqual(drawing.nodes.map((n) => n.id).sort(), ["__end__", "__start__", "agent", "approve", "tools"]);
  assert.ok(drawing.edges.some((e) => e.source === "tools" && e.target === "agent"));
  const schemas = await c.assistants.getSchemas(a.assistant_id);
  assert.equal(schemas.graph_id, "agent");
  assert.ok("messages" in schemas.state_schema.properties);
  // A graph compiled into the server cannot be taken over by a worker.
  const res = await post(weft.url, "/dispatch/graphs", { graph_id: "foo_bar", drawable: { nodes: [], edges: [] } });
  assert.equal(res.status, 409);
  const bad = await post(weft.url, "/dispatch/graphs", { graph_id: "a b", drawable: { nodes: [], edges: [] } });
  assert.equal(bad.status, 422);
});

test("foo_bar_js runs/wait; unknown input keys and interrupt nodes are ignored, as LangGraph ignores them", async () => {
  const c = client();
  const t = await c.threads.create();
  assert.deepEqual(await c.runs.wait(t.thread_id, "foo_bar_js", { input: {} }), { foo: "b", bar: ["a", "b"] });
  // Stateless: a temporary thread.
  assert.deepEqual(await c.runs.wait(null, "foo_bar_js", { input: {} }), { foo: "b", bar: ["a", "b"] });
  // Every durability: sync (each put awaited), exit (only the last checkpoint).
  for (const durability of ["sync", "exit"]) {
    const t2 = await c.threads.create();
    assert.deepEqual(await c.runs.wait(t2.thread_id, "foo_bar_js", { input: {}, durability }), { foo: "b", bar: ["a", "b"] }, durability);
    const h = await c.threads.getHistory(t2.thread_id);
    assert.equal(h.length, durability === "exit" ? 1 : 4, `${durability}: ${h.length} checkpoints`);
    assert.deepEqual(h[0].values, { foo: "b", bar: ["a", "b"] });
  }
  const t3 = await c.threads.create();
  assert.deepEqual(await c.runs.wait(t3.thread_id, "foo_bar_js", { input: { foo: "x", nope: 1 }, interruptBefore: ["nope"] }), { foo: "b", bar: ["a", "b"] });
  await assert.rejects(c.runs.create(t.thread_id, "foo_bar_js", { input: "text" }), /422/);
});

test("a worker run's values and updates events that repeat its checkpoints and writes are stored as references; a replay sends what the run sent", async () => {
  // foo_bar_js's values are plain JSON, which the worker API keeps as JSON
  // text: a long foo is in the step-0 values event, its checkpoint and the
  // input's write.
  const c = client();
  const t = await c.threads.create();
  const foo = "x".repeat(3000);
  const live = [];
  for await (const ch of c.runs.stream(t.thread_id, "foo_bar_js", { input: { foo }, streamMode: ["values", "updates"], streamResumable: true })) {
    if (ch.event !== "metadata") live.push(ch);
  }
  assert.equal(live[0].event, "values");
  assert.equal(live[0].data.foo, foo);
  const db = new pg.Client(weft.db);
  await db.connect();
  const { rows } = await db.query(
    `SELECT event, ref IS NOT NULL AS ref FROM run_events WHERE thread_id = $1 AND event IN ('values', 'updates') AND length(data::text) + coalesce(length(ref::text), 0) > 0 ORDER BY seq`,
    [t.thread_id],
  );
  const { rows: big } = await db.query(`SELECT count(*)::int AS n FROM run_events WHERE thread_id = $1 AND length(data::text) > 2000`, [t.thread_id]);
  await db.end();
  assert.deepEqual(big, [{ n: 0 }], "no event stores the long foo again");
  assert.ok(rows.some((r) => r.event === "values" && r.ref), JSON.stringify(rows));
  const runId = (await c.runs.list(t.thread_id))[0].run_id;
  const replay = [];
  for await (const ch of c.runs.joinStream(t.thread_id, runId, { lastEventId: "-1", streamMode: ["values", "updates"] })) {
    if (ch.event !== "metadata") replay.push(ch);
  }
  assert.deepEqual(replay.map((e) => [e.event, e.data]), live.map((e) => [e.event, e.data]));
});

test("a worker graph's state, history, state-at-checkpoint and thread values show channel defaults as LangGraph's own reads do", async () => {
  // foo_bar_js: bar is a list with a reducer and the default [] (foo has
  // none). Before node_a writes, LangGraph reads bar as []; so must Weft,
  // which has no definition of the graph (the worker registers the defaults).
  const c = client();
  const t = await c.threads.create();
  await c.runs.wait(t.thread_id, "foo_bar_js", { input: {} });
  const first = await c.threads.getHistory(t.thread_id, { limit: 100 });
  const start = first.find((s) => s.metadata.step === 0);
  // A fork from step 0 through update_state, and a run from the fork.
  await c.threads.updateState(t.thread_id, { values: { foo: "x" }, checkpointId: start.checkpoint.checkpoint_id, asNode: "node_a" });
  await c.runs.wait(t.thread_id, "foo_bar_js", { input: null });

  const graph = await langgraph("foo_bar_js");
  const config = { configurable: { thread_id: t.thread_id } };
  const theirs = [];
  for await (const s of graph.getStateHistory(config)) theirs.push(s);
  const mine = await c.threads.getHistory(t.thread_id, { limit: 100 });
  assert.equal(mine.length, theirs.length, "history length");
  assert.ok(theirs.some((s) => s.metadata.step === -1 && JSON.stringify(s.values) === '{"bar":[]}'), "LangGraph reads bar as [] at step -1");
  for (const [i, s] of mine.entries()) {
    const lg = theirs[i];
    assert.equal(s.checkpoint.checkpoint_id, lg.config.configurable.checkpoint_id, `history[${i}] id`);
    assert.deepEqual(s.values, lg.values, `history[${i}] values (step ${lg.metadata.step}, ${lg.metadata.source})`);
    assert.deepEqual(s.next, [...lg.next], `history[${i}] next`);
    const at = await c.threads.getState(t.thread_id, s.checkpoint.checkpoint_id);
    assert.deepEqual(at.values, lg.values, `state at history[${i}]`);
  }
  assert.deepEqual((await c.threads.getState(t.thread_id)).values, (await graph.getState(config)).values, "latest state");
  assert.deepEqual((await c.threads.get(t.thread_id)).values, (await graph.getState(config)).values, "the thread's values");
});

test("getStore() in a worker node reads and writes Weft's store (get, put, delete, search); WeftStore lists namespaces", async () => {
  const c = client();
  const t1 = await c.threads.create();
  const first = await c.runs.wait(t1.thread_id, "memory_js", { input: { user: "ada", fact: "likes tea" } });
  assert.equal(first.recalled, null, "nothing remembered yet");
  assert.deepEqual(first.found, ["memories/ada:fact:likes tea:true"]);
  // What the node stored is Weft's: the SDK reads it, and a run on another thread recalls it.
  const item = await c.store.getItem(["memories", "ada"], "fact");
  assert.deepEqual(item.value, { text: "likes tea" });
  assert.equal(await c.store.getItem(["memories", "ada"], "scratch"), null, "deleted by the node");
  await c.store.putItem(["memories", "bob"], "fact", { text: "likes coffee" });
  const t2 = await c.threads.create();
  const second = await c.runs.wait(t2.thread_id, "memory_js", { input: { user: "ada" } });
  assert.equal(second.recalled, "likes tea");
  // The rest of BaseStore on the same store, directly: ttl, index, listNamespaces.
  const store = new WeftStore(new WeftClient(weft.url));
  assert.deepEqual((await store.listNamespaces({ prefix: ["memories"] })).map((n) => n.join("/")).sort(), ["memories/ada", "memories/bob"]);
  await store.batch([{ namespace: ["memories", "eve"], key: "fact", value: { text: "short-lived" }, index: false, ttl: 5 }]);
  assert.deepEqual((await c.store.getItem(["memories", "eve"], "fact")).value, { text: "short-lived" });
  const db = new pg.Client(weft.db);
  await db.connect();
  const { rows } = await db.query(`SELECT expires_at > now() + interval '4 minutes' AS ttl FROM store_items WHERE namespace = '{memories,eve}' AND key = 'fact'`);
  await db.end();
  assert.deepEqual(rows, [{ ttl: true }], "the put's ttl (5 minutes) reached the store");
  assert.deepEqual((await store.search(["memories"], { filter: { text: "likes coffee" } })).map((i) => i.key), ["fact"]);
  store.client.close();
});

test("the messages mode sends messages/metadata, /partial and /complete as LangGraph's server does; events sends callback events", async () => {
  const c = client();
  let t = await c.threads.create();
  const chunks = [];
  for await (const ch of c.runs.stream(t.thread_id, "agent", { input: human("hi there"), streamMode: ["messages", "values"] })) chunks.push(ch);
  assert.deepEqual(new Set(chunks.map((ch) => ch.event)), new Set(["metadata", "messages/metadata", "messages/partial", "messages/complete", "values"]));
  assert.equal(chunks.at(-1).event, "messages/complete", "the last message completes after the last values");
  const partial = chunks.filter((ch) => ch.event === "messages/partial").map((ch) => ch.data[0]);
  assert.ok(partial.length > 5, "token by token");
  assert.equal(partial.at(-1).content, "echo: hi there", "a partial message is the message so far");
  const complete = chunks.filter((ch) => ch.event === "messages/complete").flatMap((ch) => ch.data);
  assert.deepEqual(complete.map((m) => m.content), ["hi there", "echo: hi there"], "each message completes once");
  assert.equal(complete[1].id, partial[0].id);

  t = await c.threads.create();
  const events = [];
  for await (const ch of c.runs.stream(t.thread_id, "agent", { input: human("hi there"), streamMode: "events" })) events.push(ch);
  assert.deepEqual(new Set(events.map((ch) => ch.event)), new Set(["metadata", "events"]));
  const kinds = new Set(events.filter((ch) => ch.event === "events").map((ch) => ch.data.event));
  for (const k of ["on_chain_start", "on_chain_end", "on_chat_model_start", "on_chat_model_stream", "on_chat_model_end"]) assert.ok(kinds.has(k), `${k} in ${[...kinds]}`);
});

test("messages-tuple streams the model's tokens; values and state follow", async () => {
  const c = client();
  const t = await c.threads.create();
  const chunks = [];
  for await (const ch of c.runs.stream(t.thread_id, "agent", { input: human("hi there"), streamMode: ["messages-tuple", "values"] })) {
    chunks.push(ch);
  }
  assert.equal(chunks[0].event, "metadata");
  const tokens = chunks.filter((ch) => ch.event === "messages");
  assert.ok(tokens.length > 5, `token by token: ${tokens.length} chunks`);
  for (const { data } of tokens) {
    const [m, meta] = data;
    assert.equal(m.type, "ai", "a chunk as LangGraph.js's server sends it (toDict)");
    assert.equal(meta.langgraph_node, "agent");
    assert.equal(meta.thread_id, t.thread_id);
    assert.equal(meta.graph_id, "agent");
    assert.equal(m.id, tokens[0].data[0].id, "chunks of one message share its id");
  }
  assert.equal(tokens.map(({ data }) => data[0].content).join(""), "echo: hi there");
  const values = chunks.filter((ch) => ch.event === "values");
  const last = values.at(-1).data.messages;
  assert.deepEqual(last.map((m) => [m.type, m.content]), [["human", "hi there"], ["ai", "echo: hi there"]]);
  assert.equal(last[1].id, tokens[0].data[0].id);
  const thread = await c.threads.get(t.thread_id);
  assert.equal(thread.status, "idle");
  assert.deepEqual(thread.values.messages.map((m) => m.content), ["hi there", "echo: hi there"]);
  await assertSameThread(t.thread_id);
});

test("interrupt() pauses the run; Command resume finishes it through the tool", async () => {
  const c = client();
  const t = await c.threads.create();
  const first = await c.runs.wait(t.thread_id, "agent", { input: human("weather in Paris") });
  assert.equal(first.__interrupt__[0].value.question, "run the tool?");
  assert.deepEqual(Object.keys(first), ["__interrupt__"], "the interrupt alone, as LangGraph.js's server answers");
  const paused = await c.threads.get(t.thread_id);
  assert.equal(paused.status, "interrupted");
  const st = await c.threads.getState(t.thread_id);
  assert.deepEqual(st.next, ["approve"]);
  assert.equal(st.tasks[0].interrupts[0].value.tool_calls[0].args.city, "Paris");
  await assertSameThread(t.thread_id);

  const updates = [];
  for await (const ch of c.runs.stream(t.thread_id, "agent", { command: { resume: "yes" }, streamMode: ["updates"] })) {
    if (ch.event === "updates") updates.push(Object.keys(ch.data)[0]);
  }
  assert.deepEqual(updates, ["approve", "tools", "agent"]);
  const done = await c.threads.getState(t.thread_id);
  assert.deepEqual(done.next, []);
  assert.deepEqual(done.values.messages.map((m) => m.type), ["human", "ai", "tool", "ai"]);
  assert.equal(done.values.messages.at(-1).content, "The weather: It is sunny in Paris");
  assert.equal((await c.threads.get(t.thread_id)).status, "idle");
  await assertSameThread(t.thread_id);
});

test("a run from an older checkpoint forks the thread", async () => {
  const c = client();
  const t = await c.threads.create();
  await c.runs.wait(t.thread_id, "agent", { input: human("one") });
  await c.runs.wait(t.thread_id, "agent", { input: human("two") });
  const history = await c.threads.getHistory(t.thread_id, { limit: 100 });
  const afterOne = history.find((s) => s.metadata.step === 1); // after the first answer
  assert.deepEqual(afterOne.values.messages.map((m) => m.content), ["one", "echo: one"]);
  const forked = await c.runs.wait(t.thread_id, "agent", { input: human("three"), checkpointId: afterOne.checkpoint.checkpoint_id });
  assert.deepEqual(forked.messages.map((m) => m.content), ["one", "echo: one", "three", "echo: three"]);
  const latest = await c.threads.getState(t.thread_id);
  assert.deepEqual(latest.values.messages.map((m) => m.content), ["one", "echo: one", "three", "echo: three"]);
  const again = await c.threads.getHistory(t.thread_id, { limit: 100 });
  const firstOfFork = again.find((s) => s.metadata.source === "input" && s.parent_checkpoint?.checkpoint_id === afterOne.checkpoint.checkpoint_id);
  assert.ok(firstOfFork, "the fork's first checkpoint has the older checkpoint as parent");
  // The old branch is intact.
  const old = await c.threads.getState(t.thread_id, history[0].checkpoint.checkpoint_id);
  assert.deepEqual(old.values.messages.map((m) => m.content), ["one", "echo: one", "two", "echo: two"]);
  await assertSameThread(t.thread_id);
});

test("update_state on a worker graph runs LangGraph's own updateState (reducers, as_node's edges, forks)", async () => {
  const c = client();
  const t = await c.threads.create();
  await c.runs.wait(t.thread_id, "agent", { input: human("hi") });
  const before = await c.threads.getState(t.thread_id);
  const humanId = before.values.messages[0].id;
  // add_messages replaces by id and appends the rest; as_node "agent" routes
  // through agent's conditional edge (no tool calls: nothing next).
  const res = await c.threads.updateState(t.thread_id, {
    values: { messages: [{ id: humanId, type: "human", content: "edited" }, { type: "ai", content: "added" }] },
    asNode: "agent",
  });
  assert.ok(res.checkpoint.checkpoint_id);
  const after = await c.threads.getState(t.thread_id);
  assert.equal(after.checkpoint.checkpoint_id, res.checkpoint.checkpoint_id);
  assert.equal(after.metadata.source, "update");
  assert.deepEqual(after.values.messages.map((m) => m.content), ["edited", "echo: hi", "added"]);
  assert.deepEqual(after.next, []);
  assert.equal((await c.threads.get(t.thread_id)).values.messages.length, 3, "the thread's projection follows");
  // An update with tool calls as agent schedules approve, like a run would.
  await c.threads.updateState(t.thread_id, {
    values: { messages: [{ type: "ai", content: "", tool_calls: [{ id: "call_x", name: "get_weather", args: { city: "Oslo" } }] }] },
    asNode: "agent",
  });
  assert.deepEqual((await c.threads.getState(t.thread_id)).next, ["approve"]);
  // From an older checkpoint: a fork.
  const fork = await c.threads.updateState(t.thread_id, { values: { messages: [{ type: "human", content: "again" }] }, checkpointId: before.checkpoint.checkpoint_id, asNode: "agent" });
  const forked = await c.threads.getState(t.thread_id, fork.checkpoint.checkpoint_id);
  assert.equal(forked.parent_checkpoint.checkpoint_id, before.checkpoint.checkpoint_id);
  assert.deepEqual(forked.values.messages.map((m) => m.content), ["hi", "echo: hi", "again"]);
  await assertSameThread(t.thread_id);
  // LangGraph refuses an unknown node: a 400 with its message.
  await assert.rejects(c.threads.updateState(t.thread_id, { values: {}, asNode: "nope" }), /400/);
  // The runs that carried the updates are gone; the thread's runs are its own.
  assert.equal((await c.runs.list(t.thread_id)).length, 1);
  // The fork is the latest checkpoint: nothing next there.
  assert.equal((await c.threads.get(t.thread_id)).status, "idle");
});

test("cancel reaches the worker through its heartbeat or commit and stops the graph at the next step", async () => {
  const c = client();
  const t = await c.threads.create();
  const run = await c.runs.create(t.thread_id, "slow_js", { input: { ms: 600 } });
  await until(async () => (await c.threads.getState(t.thread_id)).values.steps?.length >= 1, 20_000, "first step");
  await c.runs.cancel(t.thread_id, run.run_id, true, "interrupt");
  const got = await c.runs.get(t.thread_id, run.run_id);
  assert.equal(got.status, "interrupted");
  await sleep(1500);
  const st = await c.threads.getState(t.thread_id);
  assert.ok(st.values.steps.length < 3, `stopped early: ${st.values.steps}`);
  assert.equal(st.values.steps.length, (await c.threads.getState(t.thread_id)).values.steps.length);
  // rollback deletes the run and its checkpoints.
  const t2 = await c.threads.create();
  const r2 = await c.runs.create(t2.thread_id, "slow_js", { input: { ms: 600 } });
  await until(async () => (await c.threads.getState(t2.thread_id)).values.steps?.length >= 1, 20_000, "first step");
  await c.runs.cancel(t2.thread_id, r2.run_id, true, "rollback");
  await until(async () => (await get(weft.url, `/threads/${t2.thread_id}/runs/${r2.run_id}`)).status === 404, 10_000, "run deleted");
  assert.deepEqual((await c.threads.getHistory(t2.thread_id)).length, 0);
});

test("the interrupt strategy reaches the worker at once: the busy run stops inside its running node, not after it", async () => {
  // slow_js: steps one, two, three of 1 s each (the node's signal aborts
  // it). r2 with multitask_strategy interrupt, issued while r1's "two" runs:
  // LangGraph's server and Weft's in-process runs stop r1 there, so its
  // "two" never lands. Heartbeats come every 10 s: only the cancellation
  // watch can be that fast.
  const c = client();
  const t = await c.threads.create();
  const r1 = await c.runs.create(t.thread_id, "slow_js", { input: { ms: 1000 } });
  await until(async () => (await c.threads.getState(t.thread_id)).values.steps?.length >= 1, 20_000, "r1's first step");
  await sleep(50);
  const r2 = await c.runs.create(t.thread_id, "slow_js", { input: { ms: 1000 }, multitaskStrategy: "interrupt" });
  await c.runs.join(t.thread_id, r2.run_id);
  assert.equal((await c.runs.get(t.thread_id, r1.run_id)).status, "interrupted");
  assert.equal((await c.runs.get(t.thread_id, r2.run_id)).status, "success");
  assert.deepEqual((await c.threads.getState(t.thread_id)).values.steps, ["one", "one", "two", "three"]);
});

test("a run LangGraph fails (recursion limit) ends as error with its message", async () => {
  const c = client();
  const t2 = await c.threads.create();
  const out = [];
  for await (const ch of c.runs.stream(t2.thread_id, "slow_js", { input: { ms: 1 }, config: { recursion_limit: 2 } })) out.push(ch);
  const err = out.find((ch) => ch.event === "error");
  assert.ok(err, `an error event: ${JSON.stringify(out.map((o) => o.event))}`);
  assert.match(err.data.message, /[Rr]ecursion/);
  const [run] = await c.runs.list(t2.thread_id);
  assert.equal(run.status, "error");
  assert.equal((await c.threads.get(t2.thread_id)).status, "error");
});

test("stream_subgraphs: subgraph events come under mode|namespace; /subgraphs answers", async () => {
  const c = client();
  const t = await c.threads.create();
  const names = [];
  for await (const ch of c.runs.stream(t.thread_id, "nested_js", { input: {}, streamMode: ["updates", "values"], streamSubgraphs: true })) names.push(ch.event);
  assert.ok(names.some((n) => /^updates\|inner:[0-9a-f-]+$/.test(n)), names.join(","));
  assert.ok(names.includes("updates") && names.includes("values"), names.join(","));
  const plain = [];
  for await (const ch of c.runs.stream(t.thread_id, "nested_js", { input: {}, streamMode: ["updates"] })) plain.push(ch.event);
  assert.ok(!plain.some((n) => n.includes("|")), `no subgraph events unless asked: ${plain}`);
  assert.equal((await c.threads.getState(t.thread_id)).values.log.at(-1), "outer_b");
  const [a] = await c.assistants.search({ graphId: "nested_js" });
  const subs = await c.assistants.getSubgraphs(a.assistant_id);
  assert.deepEqual(Object.keys(subs), ["inner"]);
});

test("debug and updates modes pass through; join replays the log", async () => {
  const c = client();
  const t = await c.threads.create();
  const run = await c.runs.create(t.thread_id, "foo_bar_js", { input: {}, streamMode: ["updates", "debug", "values"], streamResumable: true });
  const events = [];
  for await (const ch of c.runs.joinStream(t.thread_id, run.run_id, { lastEventId: "-1", streamMode: ["updates", "debug", "values"] })) events.push(ch.event);
  assert.ok(events.includes("debug"), events.join(","));
  assert.deepEqual(events.filter((e) => e === "updates").length, 2);
});

test("a long thread's values projection reads as its state; a list, of plain values or of messages, is stored by reference to its checkpoint blob", async () => {
  const c = client();
  const db = new pg.Client(weft.db);
  await db.connect();
  const refsOf = async (id) => (await db.query(`SELECT values_refs FROM threads WHERE thread_id = $1`, [id])).rows[0].values_refs;
  const latest = async (id, channel) => (await db.query(`SELECT checkpoint->'channel_versions'->>$2 AS v FROM checkpoints
    WHERE thread_id = $1 AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1`, [id, channel])).rows[0].v;
  try {
    // agent: the messages pass 1 KB (LangChain envelopes in the blobs, which
    // the projection's SQL renders as the API shows them).
    const chat = await c.threads.create();
    for (let i = 0; i < 4; i++) await c.runs.wait(chat.thread_id, "agent", { input: human(`turn ${i} ${"words ".repeat(40)}`) });
    const thread = await c.threads.get(chat.thread_id);
    assert.equal(thread.values.messages.length, 8);
    assert.deepEqual(thread.values, (await c.threads.getState(chat.thread_id)).values, "the chat's projection");
    await assertSameThread(chat.thread_id);
    assert.deepEqual(await refsOf(chat.thread_id), { messages: await latest(chat.thread_id, "messages") }, "the messages by reference");
    // foo_bar_js: bar, a list of plain strings past 1 KB, through
    // update_state (a worker's run) and then a run that appends to it.
    const t = await c.threads.create();
    await c.runs.wait(t.thread_id, "foo_bar_js", { input: {} });
    await c.threads.updateState(t.thread_id, { values: { bar: Array.from({ length: 30 }, (_, i) => `${i} ${"x".repeat(40)}`) }, asNode: "node_b" });
    assert.deepEqual((await c.threads.get(t.thread_id)).values, (await c.threads.getState(t.thread_id)).values, "after update_state");
    assert.ok((await refsOf(t.thread_id))?.bar, "update_state's projection references bar");
    await c.runs.wait(t.thread_id, "foo_bar_js", { input: {} });
    const values = (await c.threads.get(t.thread_id)).values;
    assert.equal(values.bar.length, 34);
    assert.deepEqual(values, (await c.threads.getState(t.thread_id)).values, "after the run");
    assert.deepEqual(values, (await (await langgraph("foo_bar_js")).getState({ configurable: { thread_id: t.thread_id } })).values, "LangGraph's own read");
    assert.deepEqual(await refsOf(t.thread_id), { bar: await latest(t.thread_id, "bar") }, "the run's end references the latest bar");
  } finally {
    await db.end();
  }
});

test("a worker run's input is stored by reference to its input checkpoint's __start__ blob; every read shows it as sent", async () => {
  const c = client();
  const db = new pg.Client(weft.db);
  await db.connect();
  const row = async (runId) => (await db.query(`SELECT kwargs, (SELECT checkpoint->'channel_versions'->>'__start__' FROM checkpoints
    WHERE thread_id = r.thread_id::text AND checkpoint_ns = '' AND metadata->>'source' = 'input' AND metadata->>'run_id' = r.run_id::text) AS start
    FROM runs r WHERE run_id = $1`, [runId])).rows[0];
  const raw = async (path) => (await fetch(weft.url + path)).text();
  try {
    const t = await c.threads.create();
    const foo = `é 😀 \u2028 <b> & "q" ${"x".repeat(200)}`;
    assert.deepEqual(await c.runs.wait(t.thread_id, "foo_bar_js", { input: { foo } }), { foo: "b", bar: ["a", "b"] });
    const [run] = await c.runs.list(t.thread_id);
    const { kwargs, start } = await row(run.run_id);
    assert.equal(kwargs.input, undefined, "the row holds no input");
    assert.equal(kwargs.input_ref, start, "it references the __start__ blob of the run's input checkpoint");
    assert.deepEqual(run.kwargs.input, { foo });
    assert.deepEqual((await c.runs.get(t.thread_id, run.run_id)).kwargs.input, { foo });
    // A number JavaScript reads differently (1.0 is 1, as __start__ then
    // stores it) leaves the input whole: it reads as sent.
    const res = await fetch(`${weft.url}/threads/${t.thread_id}/runs/wait`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"assistant_id": "foo_bar_js", "input": {"foo": [1.0, 1e3, "${"y".repeat(200)}"]}}`,
    });
    assert.equal(res.status, 200, await res.text());
    const [second] = await c.runs.list(t.thread_id);
    assert.equal((await row(second.run_id)).kwargs.input_ref, undefined, "1.0 read back as 1: stored whole");
    assert.ok((await raw(`/threads/${t.thread_id}/runs/${second.run_id}`)).includes(`"input":{"foo":[1.0,1000,"yyy`), "the input reads as sent");
  } finally {
    await db.end();
  }
});

after(async () => {
  await Promise.all([...references.values()].map((r) => r.pool.end()));
});

test("threads.create with supersteps on a worker graph: a worker applies them with LangGraph's bulkUpdateState; its refusal undoes the creation", async () => {
  const c = client();
  const t = await c.threads.create();
  const stream = [];
  for await (const ch of c.runs.stream(t.thread_id, "foo_bar_js", { input: { foo: "x" }, streamMode: ["updates"] })) stream.push(ch);
  const history = await c.threads.getHistory(t.thread_id);
  const clone = await c.threads.create({
    graphId: "foo_bar_js",
    supersteps: [
      { updates: [{ asNode: "__input__", values: history.at(-2).values }] },
      { updates: [{ asNode: "__start__", values: history.at(-2).values }] },
      ...stream.filter((ch) => ch.event === "updates").map(({ data }) => ({ updates: Object.entries(data).map(([asNode, values]) => ({ asNode, values })) })),
    ],
  });
  const copied = await c.threads.getHistory(clone.thread_id);
  // One checkpoint per superstep, each on the one before: the history reads as the original's.
  assert.deepEqual(copied.map(({ next }) => next), history.map(({ next }) => next));
  assert.deepEqual(copied.map(({ values }) => values), history.map(({ values }) => values), "each superstep builds on the one before");
  const before = (await c.threads.search({ limit: 1000 })).length;
  await assert.rejects(c.threads.create({ graphId: "foo_bar_js", supersteps: [{ updates: [{ asNode: "nope", values: {} }] }] }), /400/);
  assert.equal((await c.threads.search({ limit: 1000 })).length, before, "the refused creation left no thread");
});

test("the tools mode streams LangGraph's tool lifecycle (on_tool_start / on_tool_end) of a worker graph", async () => {
  const c = client();
  const t = await c.threads.create();
  await c.runs.wait(t.thread_id, "agent", { input: human("weather in Rome") });
  const tools = [];
  for await (const ch of c.runs.stream(t.thread_id, "agent", { command: { resume: "yes" }, streamMode: ["tools"] })) {
    if (ch.event === "tools") tools.push(ch.data);
  }
  assert.deepEqual(tools.map((d) => [d.event, d.name, d.toolCallId]), [
    ["on_tool_start", "get_weather", "call_weather"],
    ["on_tool_end", "get_weather", "call_weather"],
  ]);
});
