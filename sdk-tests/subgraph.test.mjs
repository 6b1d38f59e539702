// Subgraph state as LangGraph shows it: a REAL @langchain/langgraph graph
// with a compiled subgraph node, run with the stock PostgresSaver on the Weft
// server's database (as in interop.test.mjs), stops at an interrupt() inside
// the subgraph; Weft's state reads are judged through the official SDK
// against the JS graph's own getState(config, {subgraphs: true}).
//
//   parent  START → plan → sub → finish → END      state {items: string[] (concat, default [])}
//   sub     START → step1 → ask → END               same state; ask = interrupt({question: "ok?"})
//
// The subgraph's checkpoints live in the namespace `sub:<task id>` of the
// parent's pending "sub" task. Weft (reference/agent-server-api.md §5.1):
//   * getState without subgraphs: task.checkpoint = {thread_id, checkpoint_ns:
//     "sub:<id>"} (the JS graph's task state config: no checkpoint id, so it
//     addresses the subgraph's newest checkpoint), task.state null;
//   * getState with subgraphs=true: task.state = the state of that newest
//     checkpoint (recursively), task.checkpoint null (as LangGraph.js's
//     server shows it);
//   * history: task.checkpoint as without subgraphs.
// The thread's graph_id is not registered in Weft, so Weft reads values
// heuristically (every non-internal channel) — here just `items`.
//
// The database is reached as the harness describes it (server.db); against
// an external server without WEFT_DATABASE_URL these tests skip.

import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { Annotation, StateGraph, START, END, Command, interrupt } from "@langchain/langgraph";
import { useServer } from "./harness.mjs";
import { databaseSession } from "./database.mjs";

const server = useServer();

const db = databaseSession(server);
let pool = null;
let saver = null;
let client = null;

/** Skips t when there is no database; otherwise makes pool / saver / client available. */
function noDb(t) {
  if (!db.ready(t)) return true;
  ({ pool, saver, client } = db);
  return false;
}

// ---------------------------------------------------------------- the graph

const ItemsState = Annotation.Root({
  items: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

/** The parent graph with its subgraph node "sub", compiled with checkpointer. */
function subgraphGraph(checkpointer) {
  const sub = new StateGraph(ItemsState)
    .addNode("step1", () => ({ items: ["s1"] }))
    .addNode("ask", () => {
      const answer = interrupt({ question: "ok?" });
      return { items: [`ask:${answer}`] };
    })
    .addEdge(START, "step1")
    .addEdge("step1", "ask")
    .addEdge("ask", END)
    .compile();
  return new StateGraph(ItemsState)
    .addNode("plan", () => ({ items: ["plan"] }))
    .addNode("sub", sub)
    .addNode("finish", () => ({ items: ["finish"] }))
    .addEdge(START, "plan")
    .addEdge("plan", "sub")
    .addEdge("sub", "finish")
    .addEdge("finish", END)
    .compile({ checkpointer });
}

// ------------------------------------------------------------------ helpers

/** A JSON round-trip: class instances become plain data. */
const plain = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

/** The JSON of v, for assertion messages. */
const j = (v) => JSON.stringify(v);

/** An Interrupt as {value, id} only (Weft may add legacy fields; LangGraph JS has these two). */
const valueAndId = (i) => ({ value: plain(i.value), id: i.id });

// ------------------------------------------------------------------- tests

describe("a JS graph interrupted inside a subgraph, served by Weft", () => {
  let tid;
  let graph;
  let config;
  let js; // the JS graph's getState(config, {subgraphs: true})
  let jsFlat; // ... and without subgraphs
  let subNs; // "sub:<task id>"

  test("JS graph with a subgraph runs with PostgresSaver on an SDK thread and stops at the interrupt", async (t) => {
    if (noDb(t)) return;
    const thread = await client.threads.create({
      graphId: "js_subgraph",
      metadata: { weft_test: `subgraph-${randomUUID()}` },
    });
    tid = thread.thread_id;
    assert.equal(thread.metadata.graph_id, "js_subgraph");
    config = { configurable: { thread_id: tid } };
    graph = subgraphGraph(saver);
    const out = await graph.invoke({ items: [] }, config);
    // Stopped inside the subgraph: only the parent's plan has written.
    assert.deepEqual(plain(out.items), ["plan"]);

    js = await graph.getState(config, { subgraphs: true });
    jsFlat = await graph.getState(config);
    assert.deepEqual(js.next, ["sub"]);
    assert.equal(js.tasks.length, 1);
    assert.equal(js.tasks[0].name, "sub");
    subNs = `sub:${js.tasks[0].id}`;
    const nested = js.tasks[0].state;
    assert.ok(nested?.values, `JS nested state: ${j(nested)}`);
    assert.equal(nested.config.configurable.checkpoint_ns, subNs);
    assert.deepEqual(plain(nested.values), { items: ["plan", "s1"] });
    assert.deepEqual(nested.next, ["ask"]);
    assert.deepEqual(plain(nested.tasks[0].interrupts.map((i) => i.value)), [{ question: "ok?" }]);
    // Without subgraphs LangGraph gives the task only a config pointing at the ns.
    assert.equal(jsFlat.tasks[0].state?.configurable?.checkpoint_ns, subNs);

    // The subgraph's checkpoints really are in that namespace of Weft's database.
    const { rows } = await pool.query(
      `SELECT checkpoint_id FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 ORDER BY checkpoint_id DESC`,
      [tid, subNs],
    );
    assert.ok(rows.length > 0, `no checkpoints in ns ${subNs}`);
    assert.equal(rows[0].checkpoint_id, nested.config.configurable.checkpoint_id);
  });

  test("getState (no subgraphs): next [sub], task id = LangGraph's, task.checkpoint = the subgraph's newest checkpoint", async (t) => {
    if (noDb(t)) return;
    const st = await client.threads.getState(tid);
    assert.deepEqual(st.values, plain(js.values));
    assert.deepEqual(st.next, js.next);
    assert.equal(st.checkpoint.checkpoint_id, js.config.configurable.checkpoint_id);
    assert.equal(st.tasks.length, 1, `tasks: ${j(st.tasks)}`);
    const task = st.tasks[0];
    assert.equal(task.name, "sub");
    assert.equal(task.id, js.tasks[0].id);
    assert.ok(task.checkpoint, `tasks[0].checkpoint is ${j(task.checkpoint)}; task: ${j(task)}`);
    assert.equal(task.checkpoint.checkpoint_ns, subNs, `tasks[0].checkpoint: ${j(task.checkpoint)}`);
    assert.equal(task.checkpoint.thread_id, tid);
    assert.deepEqual(task.checkpoint, { thread_id: tid, checkpoint_ns: subNs });
    // Read at that checkpoint: the subgraph's newest state.
    const at = await client.threads.getState(tid, task.checkpoint);
    assert.equal(at.checkpoint.checkpoint_id, js.tasks[0].state.config.configurable.checkpoint_id);
    assert.equal(task.state ?? null, null, `tasks[0].state without subgraphs: ${j(task.state)}`);
    // The interrupt raised inside the subgraph is also recorded on the
    // parent's "sub" task (a JS-written __interrupt__ write: a JSON list).
    assert.deepEqual(
      task.interrupts.map(valueAndId),
      js.tasks[0].interrupts.map(valueAndId),
      `tasks[0].interrupts: ${j(task.interrupts)}`,
    );
  });

  test("getState with subgraphs=true: task.state = the subgraph's ThreadState as the JS graph shows it", async (t) => {
    if (noDb(t)) return;
    const st = await client.threads.getState(tid, undefined, { subgraphs: true });
    assert.deepEqual(st.next, js.next);
    assert.equal(st.tasks.length, 1, `tasks: ${j(st.tasks)}`);
    const task = st.tasks[0];
    assert.equal(task.name, "sub");
    assert.equal(task.id, js.tasks[0].id);
    assert.equal(task.checkpoint, null, `tasks[0].checkpoint: ${j(task.checkpoint)}`);

    const want = js.tasks[0].state;
    const got = task.state;
    assert.ok(got && typeof got === "object", `tasks[0].state is ${j(got)}; task: ${j(task)}`);
    assert.deepEqual(got.values, plain(want.values), `nested values`);
    assert.deepEqual(got.next, want.next, `nested next`);
    assert.equal(got.checkpoint?.checkpoint_ns, subNs, `nested checkpoint: ${j(got.checkpoint)}`);
    assert.equal(got.checkpoint?.checkpoint_id, want.config.configurable.checkpoint_id, "nested checkpoint id");
    assert.equal(
      got.parent_checkpoint?.checkpoint_id ?? null,
      want.parentConfig?.configurable?.checkpoint_id ?? null,
      "nested parent checkpoint id",
    );
    assert.equal(got.metadata?.step, want.metadata?.step, "nested metadata.step");
    assert.deepEqual(got.tasks.map((x) => x.name), want.tasks.map((x) => x.name), "nested task names");
    assert.deepEqual(got.tasks.map((x) => x.id), want.tasks.map((x) => x.id), "nested task ids");

    // The interrupt as LangGraph shows it: on the nested "ask" task, and
    // (LangGraph also records it on the parent's "sub" task) on the parent task.
    assert.deepEqual(
      got.tasks[0].interrupts.map(valueAndId),
      want.tasks[0].interrupts.map(valueAndId),
      `nested tasks[0].interrupts: ${j(got.tasks[0].interrupts)}`,
    );
    assert.deepEqual(got.tasks[0].interrupts.map((i) => i.value), [{ question: "ok?" }]);
    assert.deepEqual(
      task.interrupts.map(valueAndId),
      js.tasks[0].interrupts.map(valueAndId),
      `parent tasks[0].interrupts: ${j(task.interrupts)}`,
    );
    // The thread-level interrupts (a Python-server field the JS graph has no
    // counterpart for) carry the same interrupt when present.
    if (Array.isArray(st.interrupts) && st.interrupts.length > 0) {
      assert.ok(
        st.interrupts.some((i) => j(i.value) === j({ question: "ok?" })),
        `state.interrupts: ${j(st.interrupts)}`,
      );
    }
  });

  test("getState at the checkpoint (GET /state/{id} and POST /state/checkpoint) with subgraphs=true", async (t) => {
    if (noDb(t)) return;
    const cid = js.config.configurable.checkpoint_id;
    const want = js.tasks[0].state;
    for (const [how, at] of [
      ["GET /state/{checkpoint_id}", cid],
      ["POST /state/checkpoint", { checkpoint_id: cid, checkpoint_ns: "" }],
    ]) {
      const flat = await client.threads.getState(tid, at);
      assert.equal(flat.tasks[0]?.checkpoint?.checkpoint_ns, subNs, `${how}: tasks: ${j(flat.tasks)}`);
      const st = await client.threads.getState(tid, at, { subgraphs: true });
      assert.equal(st.checkpoint.checkpoint_id, cid, how);
      const got = st.tasks[0]?.state;
      assert.ok(got && typeof got === "object", `${how}: tasks[0].state is ${j(got)}`);
      assert.deepEqual(got.values, plain(want.values), `${how}: nested values`);
      assert.deepEqual(got.next, want.next, `${how}: nested next`);
    }
  });

  test("getHistory: the newest state's task.checkpoint is in the subgraph ns", async (t) => {
    if (noDb(t)) return;
    const h = await client.threads.getHistory(tid, { limit: 100 });
    assert.ok(h.length > 0);
    assert.equal(h[0].checkpoint.checkpoint_id, js.config.configurable.checkpoint_id);
    assert.deepEqual(h[0].next, ["sub"]);
    assert.equal(h[0].tasks[0]?.id, js.tasks[0].id);
    assert.equal(h[0].tasks[0]?.checkpoint?.checkpoint_ns, subNs, `history[0].tasks: ${j(h[0].tasks)}`);
    assert.deepEqual(h[0].tasks[0].checkpoint, { thread_id: tid, checkpoint_ns: subNs });
    // Root namespace only: no subgraph checkpoints in the root history.
    for (const s of h) assert.equal(s.checkpoint.checkpoint_ns, "");
    // Older states' tasks (plan, __start__) are no subgraphs.
    for (const s of h.slice(1)) {
      for (const x of s.tasks) assert.equal(x.checkpoint ?? null, null, `${x.name}: ${j(x.checkpoint)}`);
    }
  });

  test("resumed by the JS graph (Command resume): Weft shows the final state, next [], tasks []", async (t) => {
    if (noDb(t)) return;
    const out = await graph.invoke(new Command({ resume: "yes" }), config);
    assert.ok(plain(out.items).includes("ask:yes"), `final items: ${j(out.items)}`);
    assert.equal(plain(out.items).at(-1), "finish");
    const st = await client.threads.getState(tid);
    assert.deepEqual(st.values.items, plain(out.items));
    assert.deepEqual(st.next, []);
    assert.deepEqual(st.tasks, []);
    const sg = await client.threads.getState(tid, undefined, { subgraphs: true });
    assert.deepEqual(sg.values.items, plain(out.items));
    assert.deepEqual(sg.tasks, []);
  });
});
