// Interoperability with LangGraph's own Postgres checkpointer: the REAL
// @langchain/langgraph + @langchain/langgraph-checkpoint-postgres
// (PostgresSaver) pointed at the Weft server's database, judged through the
// official SDK on the HTTP side.
//
//   (a) PostgresSaver.setup() finds Weft's schema complete and changes nothing.
//   (b) A thread a JS graph ran with PostgresSaver is served by Weft exactly
//       as the JS graph itself reads it (state, history, ids, parents), and
//       Weft can fork it (update_state on an older checkpoint) without the
//       stock JS saver's blob-version collision (ROWS.md §3).
//   (c) Checkpoints Weft writes read back through PostgresSaver.getTuple /
//       list and the JS graph's getState with the same values and ids.
//
// The database is reached as the harness describes it (server.db); against
// an external server without WEFT_DATABASE_URL these tests skip.

import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { Annotation, StateGraph, START, END } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { createHash } from "node:crypto";
import { useServer } from "./harness.mjs";
import { databaseSession } from "./database.mjs";

const server = useServer();

const CHECKPOINT_TABLES = ["checkpoint_migrations", "checkpoints", "checkpoint_blobs", "checkpoint_writes"];

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

/** The docs' foo_bar graph: foo last value, bar concat (default []), START→node_a→node_b→END. */
const FooBarState = Annotation.Root({
  foo: Annotation(),
  bar: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

function fooBarGraph(checkpointer) {
  return new StateGraph(FooBarState)
    .addNode("node_a", () => ({ foo: "a", bar: ["a"] }))
    .addNode("node_b", () => ({ foo: "b", bar: ["b"] }))
    .addEdge(START, "node_a")
    .addEdge("node_a", "node_b")
    .addEdge("node_b", END)
    .compile({ checkpointer });
}

/**
 * PostgresSaver minting string versions the way Weft (and the Python saver)
 * does: "{counter:032d}.0.{16 random digits}". The stock saver's
 * getNextVersion throws "Please override this method to use string
 * versions." as soon as the newest version of a checkpoint is a string,
 * which every checkpoint Weft writes has, so the stock saver cannot continue
 * a thread Weft has written to. The counter is read from either format (the
 * JS saver's JSON numbers or Weft's strings).
 */
class StringVersionSaver extends PostgresSaver {
  getNextVersion(current) {
    let n = 0;
    if (typeof current === "number") n = current;
    else if (typeof current === "string") n = Number.parseInt(current, 10) || 0;
    const suffix = String(Math.floor(Math.random() * 1e16)).padStart(16, "0");
    return `${String(n + 1).padStart(32, "0")}.0.${suffix}`;
  }
}

// ------------------------------------------------------------------ helpers

/** RFC 4122 UUIDv5 (SHA-1) of name in namespace (a UUID string). */
function uuid5(name, namespace) {
  const ns = Buffer.from(namespace.replace(/-/g, ""), "hex");
  const h = createHash("sha1").update(ns).update(name, "utf8").digest().subarray(0, 16);
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.toString("hex");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/**
 * The id LangGraph JS gives the pull task of `node` (triggered by `trigger`)
 * that runs from the root checkpoint `checkpointId` whose metadata step is
 * `step` (pregel/algo.js _prepareSingleTask): uuid5 of
 * JSON.stringify([ns, String(step + 1), node, "__pregel_pull", [trigger]]) in
 * the checkpoint id's namespace, ns being the node name at the root. The
 * rows of checkpoint_writes carry it as task_id.
 */
const jsPullTaskId = (checkpointId, step, node, trigger) =>
  uuid5(JSON.stringify([node, String(step + 1), node, "__pregel_pull", [trigger]]), checkpointId);

const cfgOf = (threadId, checkpointId) => ({
  configurable: { thread_id: threadId, checkpoint_ns: "", ...(checkpointId ? { checkpoint_id: checkpointId } : {}) },
});

/** Every StateSnapshot of the JS graph's own history, newest first. */
async function jsHistory(graph, threadId) {
  const out = [];
  for await (const s of graph.getStateHistory({ configurable: { thread_id: threadId } })) out.push(s);
  return out;
}

/** Every CheckpointTuple PostgresSaver lists for the thread (root ns), newest first. */
async function saverList(threadId) {
  const out = [];
  for await (const t of saver.list({ configurable: { thread_id: threadId, checkpoint_ns: "" } })) out.push(t);
  return out;
}

/** Only the state channels (drops trigger channels like branch:to:x, __start__). */
function stateChannels(channelValues, keys) {
  const out = {};
  for (const k of keys) if (Object.hasOwn(channelValues, k)) out[k] = channelValues[k];
  return out;
}

/** A JSON round-trip: class instances (LangChain messages, Dates) become plain data. */
const plain = (v) => JSON.parse(JSON.stringify(v));

async function schemaSnapshot(db) {
  const q = async (sql) => (await db.query(sql, [CHECKPOINT_TABLES])).rows;
  return {
    tables: await q(`SELECT table_schema, table_name, table_type FROM information_schema.tables
                      WHERE table_schema NOT IN ('pg_catalog', 'information_schema')
                        AND (table_name = ANY($1) OR table_name LIKE 'checkpoint%')
                      ORDER BY 1, 2`),
    schemas: await q(`SELECT nspname FROM pg_namespace WHERE nspname <> ALL($1) ORDER BY 1`),
    columns: await q(`SELECT table_name, ordinal_position, column_name, data_type, udt_name, is_nullable,
                             column_default, character_maximum_length, collation_name
                        FROM information_schema.columns
                       WHERE table_schema = 'public' AND table_name = ANY($1)
                       ORDER BY table_name, ordinal_position`),
    indexes: await q(`SELECT tablename, indexname, indexdef FROM pg_indexes
                       WHERE schemaname = 'public' AND tablename = ANY($1)
                       ORDER BY tablename, indexname`),
    constraints: await q(`SELECT c.relname, k.conname, k.contype, pg_get_constraintdef(k.oid) AS def
                            FROM pg_constraint k
                            JOIN pg_class c ON c.oid = k.conrelid
                            JOIN pg_namespace n ON n.oid = c.relnamespace
                           WHERE n.nspname = 'public' AND c.relname = ANY($1)
                           ORDER BY c.relname, k.conname`),
    triggers: await q(`SELECT event_object_table, trigger_name FROM information_schema.triggers
                        WHERE event_object_schema = 'public' AND event_object_table = ANY($1)
                        ORDER BY 1, 2`),
    migrations: (await db.query(`SELECT v FROM checkpoint_migrations ORDER BY v`)).rows.map((r) => r.v),
  };
}

// ------------------------------------------------------------------- tests

describe("(a) PostgresSaver.setup() on a Weft database", () => {
  test("changes nothing: schema and checkpoint_migrations identical, migrations 0..9", async (t) => {
    if (noDb(t)) return;
    const beforeSnap = await schemaSnapshot(pool);
    assert.deepEqual(beforeSnap.migrations, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.equal(beforeSnap.columns.length > 0, true, "no checkpoint tables found in schema public");
    assert.deepEqual(
      [...new Set(beforeSnap.columns.map((c) => c.table_name))].sort(),
      [...CHECKPOINT_TABLES].sort(),
    );

    await saver.setup();
    // A second saver instance (isSetup false again) must find nothing to do either.
    await new PostgresSaver(pool).setup();

    const afterSnap = await schemaSnapshot(pool);
    assert.deepEqual(afterSnap, beforeSnap);
  });
});

describe("(b)+(c) a JS PostgresSaver thread served by Weft, forked by Weft, read back by the JS saver", () => {
  let tid;
  let graph;
  let js; // the JS graph's own history, newest first
  let forkId;

  test("JS graph runs with PostgresSaver on a thread created through the SDK", async (t) => {
    if (noDb(t)) return;
    const thread = await client.threads.create({ graphId: "foo_bar" });
    tid = thread.thread_id;
    assert.equal(thread.metadata.graph_id, "foo_bar");
    graph = fooBarGraph(saver);
    const out = await graph.invoke({ foo: "" }, { configurable: { thread_id: tid } });
    assert.deepEqual(out, { foo: "b", bar: ["a", "b"] });
    js = await jsHistory(graph, tid);
    assert.equal(js.length, 4);
  });

  test("Weft getState = the JS run's final state", async (t) => {
    if (noDb(t)) return;
    const st = await client.threads.getState(tid);
    assert.deepEqual(st.values, { foo: "b", bar: ["a", "b"] });
    assert.deepEqual(st.next, []);
    assert.equal(st.checkpoint.checkpoint_id, js[0].config.configurable.checkpoint_id);
    assert.equal(st.parent_checkpoint?.checkpoint_id, js[0].parentConfig?.configurable?.checkpoint_id);
    assert.deepEqual(st.values, plain(js[0].values));
  });

  test("Weft getHistory = the JS graph's getStateHistory (ids, parents, next, values, metadata)", async (t) => {
    if (noDb(t)) return;
    const h = await client.threads.getHistory(tid, { limit: 100 });
    assert.equal(h.length, 4);
    assert.deepEqual(h.map((s) => s.next), [[], ["node_b"], ["node_a"], ["__start__"]]);
    for (let i = 0; i < 4; i++) {
      const w = h[i];
      const j = js[i];
      const at = `history[${i}]`;
      assert.equal(w.checkpoint.checkpoint_id, j.config.configurable.checkpoint_id, `${at} checkpoint id`);
      assert.equal(w.checkpoint.thread_id, tid, `${at} checkpoint.thread_id`);
      assert.equal(w.checkpoint.checkpoint_ns, "", `${at} checkpoint.checkpoint_ns`);
      assert.equal(
        w.parent_checkpoint?.checkpoint_id ?? null,
        j.parentConfig?.configurable?.checkpoint_id ?? null,
        `${at} parent checkpoint id`,
      );
      assert.deepEqual(w.next, j.next, `${at} next`);
      assert.deepEqual(w.values, plain(j.values), `${at} values (Weft vs JS graph)`);
      assert.equal(w.metadata.source, j.metadata.source, `${at} metadata.source`);
      assert.equal(w.metadata.step, j.metadata.step, `${at} metadata.step`);
      assert.deepEqual(w.tasks.map((t) => t.name), j.tasks.map((t) => t.name), `${at} task names`);
      assert.deepEqual(w.tasks.map((t) => t.path), j.tasks.map((t) => t.path), `${at} task paths`);
      // The task's result (the writes it made, read from checkpoint_writes), state keys only.
      assert.deepEqual(
        w.tasks.map((t) => stateChannels(t.result ?? {}, ["foo", "bar"])),
        j.tasks.map((t) => plain(t.result ?? {})),
        `${at} task results`,
      );
    }
    // The chain links each state to the next older one.
    for (let i = 0; i < 3; i++) assert.equal(h[i].parent_checkpoint.checkpoint_id, h[i + 1].checkpoint.checkpoint_id);
    assert.equal(h[3].parent_checkpoint, null);
  });

  test("Weft forks at the step-1 checkpoint (as node_a) without touching the original branch", async (t) => {
    if (noDb(t)) return;
    const step1 = js.find((s) => s.metadata.step === 1);
    const step2 = js.find((s) => s.metadata.step === 2);
    assert.deepEqual(step1.next, ["node_b"]);
    const res = await client.threads.updateState(tid, {
      values: { foo: "fork", bar: ["f"] },
      asNode: "node_a",
      checkpointId: step1.config.configurable.checkpoint_id,
    });
    forkId = res.configurable.checkpoint_id;
    assert.equal(res.checkpoint.checkpoint_id, forkId);
    assert.equal(res.configurable.thread_id, tid);

    const st = await client.threads.getState(tid);
    assert.equal(st.checkpoint.checkpoint_id, forkId, "the fork is the thread's latest checkpoint");
    assert.deepEqual(st.values, { foo: "fork", bar: ["a", "f"] });
    assert.deepEqual(st.next, ["node_b"]);
    assert.equal(st.parent_checkpoint.checkpoint_id, step1.config.configurable.checkpoint_id);
    assert.equal(st.metadata.source, "update");
    assert.equal(st.metadata.step, 2);

    const orig = await client.threads.getState(tid, step2.config.configurable.checkpoint_id);
    assert.deepEqual(orig.values, { foo: "b", bar: ["a", "b"] });
    assert.deepEqual(orig.next, []);
  });

  test("PostgresSaver.getTuple / list read Weft's fork with Weft's values and order", async (t) => {
    if (noDb(t)) return;
    const tup = await saver.getTuple(cfgOf(tid, forkId));
    assert.ok(tup, "PostgresSaver.getTuple found no checkpoint Weft wrote");
    assert.equal(tup.config.configurable.checkpoint_id, forkId);
    assert.equal(tup.parentConfig.configurable.checkpoint_id, js.find((s) => s.metadata.step === 1).config.configurable.checkpoint_id);
    assert.deepEqual(stateChannels(tup.checkpoint.channel_values, ["foo", "bar"]), { foo: "fork", bar: ["a", "f"] });
    assert.equal(tup.metadata.source, "update");

    const latest = await saver.getTuple(cfgOf(tid));
    assert.equal(latest.config.configurable.checkpoint_id, forkId, "saver's latest = Weft's fork");

    const listed = await saverList(tid);
    const h = await client.threads.getHistory(tid, { limit: 100 });
    assert.deepEqual(
      listed.map((t) => t.config.configurable.checkpoint_id),
      h.map((s) => s.checkpoint.checkpoint_id),
    );
    for (let i = 0; i < h.length; i++) {
      // The saver's raw channel_values lack bar before any node wrote it;
      // Weft (like the JS graph's getState) shows the reducer's default [].
      assert.deepEqual(
        { bar: [], ...stateChannels(listed[i].checkpoint.channel_values, ["foo", "bar"]) },
        h[i].values,
        `list[${i}] values`,
      );
    }
  });

  test("the JS graph's getState reads Weft's fork: same values, next [node_b]", async (t) => {
    if (noDb(t)) return;
    const snap = await graph.getState({ configurable: { thread_id: tid } });
    assert.equal(snap.config.configurable.checkpoint_id, forkId);
    assert.deepEqual(plain(snap.values), { foo: "fork", bar: ["a", "f"] });
    assert.deepEqual(snap.next, ["node_b"]);
  });

  test("the stock PostgresSaver resumes Weft's fork of its thread: bar [a, f, b], read back by Weft", async (t) => {
    if (noDb(t)) return;
    // The thread is in the JS saver's integer version scheme, and Weft's fork
    // stays in it (with versions above every version of the thread, so it
    // reuses none of the other branch's), so the unmodified saver continues it.
    const out = await fooBarGraph(saver).invoke(null, cfgOf(tid, forkId));
    assert.deepEqual(out, { foo: "b", bar: ["a", "f", "b"] });
    const st = await client.threads.getState(tid);
    assert.notEqual(st.checkpoint.checkpoint_id, forkId);
    assert.equal(st.parent_checkpoint.checkpoint_id, forkId);
    assert.equal(st.metadata.source, "loop");
    assert.deepEqual(st.values, { foo: "b", bar: ["a", "f", "b"] });
    assert.deepEqual(st.next, []);
    // The original branch is still intact.
    const orig = await client.threads.getState(tid, js.find((s) => s.metadata.step === 2).config.configurable.checkpoint_id);
    assert.deepEqual(orig.values, { foo: "b", bar: ["a", "b"] });
  });
});

describe("(c) threads built only through Weft's update_state, read by PostgresSaver", () => {
  test("foo_bar: getTuple / list / JS graph getState match Weft", async (t) => {
    if (noDb(t)) return;
    const { thread_id: tid } = await client.threads.create({ graphId: "foo_bar" });
    await client.threads.updateState(tid, { values: { foo: "x", bar: ["1"] } }); // as START → next node_a
    await client.threads.updateState(tid, { values: { foo: "y", bar: ["2"] }, asNode: "node_a" }); // next node_b
    const h = await client.threads.getHistory(tid, { limit: 100 });
    assert.equal(h.length, 2);
    assert.deepEqual(h[0].values, { foo: "y", bar: ["1", "2"] });
    assert.deepEqual(h[0].next, ["node_b"]);
    assert.deepEqual(h[1].values, { foo: "x", bar: ["1"] });
    assert.deepEqual(h[1].next, ["node_a"]);

    for (const s of h) {
      const tup = await saver.getTuple(cfgOf(tid, s.checkpoint.checkpoint_id));
      assert.ok(tup, `getTuple(${s.checkpoint.checkpoint_id}) found nothing`);
      assert.deepEqual(stateChannels(tup.checkpoint.channel_values, ["foo", "bar"]), s.values);
      assert.equal(tup.parentConfig?.configurable?.checkpoint_id ?? null, s.parent_checkpoint?.checkpoint_id ?? null);
    }
    const listed = await saverList(tid);
    assert.deepEqual(listed.map((t) => t.config.configurable.checkpoint_id), h.map((s) => s.checkpoint.checkpoint_id));

    // A thread only Weft wrote: every version is a Weft string version.
    const snap = await fooBarGraph(saver).getState({ configurable: { thread_id: tid } });
    assert.deepEqual(plain(snap.values), h[0].values);
    assert.deepEqual(snap.next, ["node_b"]);

    // ... so a string-version saver can run the rest of it.
    const out = await fooBarGraph(new StringVersionSaver(pool)).invoke(null, { configurable: { thread_id: tid } });
    assert.deepEqual(out, { foo: "b", bar: ["1", "2", "b"] });
    const st = await client.threads.getState(tid);
    assert.deepEqual(st.values, { foo: "b", bar: ["1", "2", "b"] });
    assert.deepEqual(st.next, []);
  });

  test("echo_chat: messages (plain dicts with ids) read back equal", async (t) => {
    if (noDb(t)) return;
    const { thread_id: tid } = await client.threads.create({ graphId: "echo_chat" });
    await client.threads.updateState(tid, { values: { messages: [{ type: "human", content: "hi" }] } });
    await client.threads.updateState(tid, {
      values: { messages: [{ type: "ai", content: "hello", id: "ai-1" }] },
      asNode: "echo",
    });
    const h = await client.threads.getHistory(tid, { limit: 100 });
    assert.equal(h.length, 2);
    const msgs = h[0].values.messages;
    assert.equal(msgs.length, 2);
    assert.equal(msgs[0].type, "human");
    assert.equal(msgs[0].content, "hi");
    assert.equal(typeof msgs[0].id, "string");
    assert.ok(msgs[0].id.length > 0);
    assert.equal(msgs[1].id, "ai-1");

    for (const s of h) {
      const tup = await saver.getTuple(cfgOf(tid, s.checkpoint.checkpoint_id));
      assert.ok(tup, `getTuple(${s.checkpoint.checkpoint_id}) found nothing`);
      assert.deepEqual(plain(tup.checkpoint.channel_values.messages), s.values.messages);
    }
    const listed = await saverList(tid);
    assert.deepEqual(listed.map((t) => t.config.configurable.checkpoint_id), h.map((s) => s.checkpoint.checkpoint_id));
  });
});

describe("tasks as LangGraph shows them", () => {
  /** A JS PostgresSaver run of foo_bar on a fresh SDK thread; returns { tid, js } (JS history, newest first). */
  async function jsThread() {
    const { thread_id: tid } = await client.threads.create({ graphId: "foo_bar" });
    const g = fooBarGraph(saver);
    await g.invoke({ foo: "" }, { configurable: { thread_id: tid } });
    return { tid, js: await jsHistory(g, tid) };
  }

  test("ThreadState.tasks is [] (not null) for a checkpoint with nothing next", async (t) => {
    if (noDb(t)) return;
    const { tid } = await jsThread();
    const st = await client.threads.getState(tid);
    assert.deepEqual(st.next, []);
    assert.deepEqual(st.tasks, [], `GET /threads/${tid}/state: "tasks": ${JSON.stringify(st.tasks)}`);
  });

  test("task ids are LangGraph's (= the JS graph's ids = checkpoint_writes.task_id)", async (t) => {
    if (noDb(t)) return;
    const { tid, js } = await jsThread();
    const h = await client.threads.getHistory(tid, { limit: 100 });
    const { rows } = await pool.query(
      `SELECT DISTINCT checkpoint_id, task_id FROM checkpoint_writes WHERE thread_id = $1 AND checkpoint_ns = ''`,
      [tid],
    );
    for (let i = 0; i < js.length; i++) {
      for (let k = 0; k < js[i].tasks.length; k++) {
        const jt = js[i].tasks[k];
        const cid = js[i].config.configurable.checkpoint_id;
        const trigger = jt.name === "__start__" ? "__start__" : `branch:to:${jt.name}`;
        // Sanity: the formula reproduces the JS graph's id and the stored rows.
        assert.equal(jsPullTaskId(cid, js[i].metadata.step, jt.name, trigger), jt.id);
        assert.ok(rows.some((r) => r.checkpoint_id === cid && r.task_id === jt.id));
        assert.equal(
          h[i].tasks[k].id,
          jt.id,
          `history[${i}] (step ${js[i].metadata.step}) task ${jt.name}: Weft id ${h[i].tasks[k].id}, LangGraph JS id ${jt.id}`,
        );
      }
    }
  });

  test("task.result holds only the node's state writes (no branch:to:* trigger channels)", async (t) => {
    if (noDb(t)) return;
    const { tid, js } = await jsThread();
    const h = await client.threads.getHistory(tid, { limit: 100 });
    for (let i = 0; i < js.length; i++) {
      assert.deepEqual(
        h[i].tasks.map((x) => x.result ?? null),
        js[i].tasks.map((x) => plain(x.result ?? null)),
        `history[${i}] (step ${js[i].metadata.step}) task results`,
      );
    }
  });
});
