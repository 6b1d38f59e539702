// LangGraph's delta channels (MessagesDeltaValue / DeltaChannel) through the
// JS worker: Weft's state, history, state-at-checkpoint and thread values
// rebuild the messages from the writes along the parent chain, compared
// field by field with LangGraph's own getState / getStateHistory through
// PostgresSaver on Weft's database; a fork; a thread past its snapshot
// interval; a delta channel whose reducer Weft does not know shows a marker,
// never []; the worker's getDeltaChannelHistory is one request.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { Client } from "@langchain/langgraph-sdk";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { loadConfig } from "../src/load.mjs";
import { WeftClient } from "../src/client.mjs";
import { WeftSaver } from "../src/saver.mjs";
import { useWeft, FIXTURES, get } from "./helpers.mjs";

const weft = useWeft();
const client = () => new Client({ apiUrl: weft.url });
const human = (content) => ({ messages: [{ role: "user", content }] });

const references = new Map();
const pools = [];
after(async () => {
  for (const p of pools) await p.end().catch(() => {});
});

/** LangGraph's own view of graph id's threads: PostgresSaver on Weft's database. */
async function langgraph(id) {
  if (!references.has(id)) {
    const { graphs } = await loadConfig(FIXTURES, { only: [id] });
    const pool = new pg.Pool({ ...weft.db, max: 2 });
    pool.on("error", () => {});
    pools.push(pool);
    const graph = graphs.get(id);
    // Schema "langgraph": the views presenting Weft's rows as LangGraph stores them
    // (long message lists are kept once per element in Weft's own tables).
    graph.checkpointer = new PostgresSaver(pool, undefined, { schema: "langgraph" });
    references.set(id, graph);
  }
  return references.get(id);
}

const msg = (m) =>
  typeof m.getType === "function"
    ? { id: m.id, type: m.getType(), content: m.content, tool_calls: m.tool_calls ?? [] }
    : { id: m.id, type: m.type, content: m.content, tool_calls: m.tool_calls ?? [] };

const isMarker = (v, ch) => v != null && typeof v === "object" && v.__weft_unresolved__ === "delta_channel" && v.channel === ch;

/** Weft's state w says what LangGraph's snapshot lg says (notes: the marker or the value, never []). */
function assertSameState(w, lg, what) {
  assert.equal(w.checkpoint.checkpoint_id, lg.config.configurable.checkpoint_id, `${what}: checkpoint id`);
  assert.equal(w.parent_checkpoint?.checkpoint_id ?? null, lg.parentConfig?.configurable?.checkpoint_id ?? null, `${what}: parent`);
  assert.deepEqual(w.next, [...lg.next], `${what}: next`);
  assert.equal(w.metadata.step, lg.metadata.step, `${what}: step`);
  assert.equal(w.metadata.source, lg.metadata.source, `${what}: source`);
  assert.deepEqual((w.values.messages ?? []).map(msg), (lg.values.messages ?? []).map(msg), `${what}: messages (step ${lg.metadata.step})`);
  if ("notes" in lg.values && lg.values.notes.length > 0) {
    const n = w.values.notes;
    assert.ok(isMarker(n, "notes") || JSON.stringify(n) === JSON.stringify(lg.values.notes), `${what}: notes ${JSON.stringify(n)} vs ${JSON.stringify(lg.values.notes)}`);
  }
}

/** Every read of Weft's against LangGraph's, for the whole thread. */
async function assertSameThread(id, threadId) {
  const graph = await langgraph(id);
  const c = client();
  const config = { configurable: { thread_id: threadId } };
  const latest = await graph.getState(config);
  assertSameState(await c.threads.getState(threadId), latest, "latest state");
  const thread = await c.threads.get(threadId);
  assert.deepEqual(thread.values.messages.map(msg), latest.values.messages.map(msg), "the thread's values");
  const mine = await c.threads.getHistory(threadId, { limit: 100 });
  const theirs = [];
  for await (const s of graph.getStateHistory(config)) theirs.push(s);
  assert.equal(mine.length, theirs.length, "history length");
  for (const [i, s] of mine.entries()) {
    assertSameState(s, theirs[i], `history[${i}]`);
    assertSameState(await c.threads.getState(threadId, s.checkpoint.checkpoint_id), theirs[i], `state at history[${i}]`);
  }
  // A short page (the chain read once per page, whatever the page).
  const page = await c.threads.getHistory(threadId, { limit: 2, before: { configurable: { checkpoint_id: mine[3].checkpoint.checkpoint_id } } });
  page.forEach((s, i) => assertSameState(s, theirs[4 + i], `page[${i}]`));
  return { mine, theirs };
}

test("MessagesDeltaValue: state, history, state-at-checkpoint and thread values show the messages as LangGraph reads them; a fork", async () => {
  await weft.startWorker();
  const c = client();
  const t = await c.threads.create();
  for (const text of ["hi", "there", "forget", "more"]) await c.runs.wait(t.thread_id, "delta_js", { input: human(text) });
  const state = await c.threads.getState(t.thread_id);
  // "forget" removed the first message.
  assert.deepEqual(state.values.messages.map((m) => m.content), ["echo: hi", "there", "echo: there", "forget", "echo: forget", "more", "echo: more"]);
  const { raw } = { raw: await get(weft.url, `/threads/${t.thread_id}/state`) };
  assert.equal(raw.status, 200);
  const { mine } = await assertSameThread("delta_js", t.thread_id);
  // No snapshot blob at all under 100 updates: the writes carry everything.
  const db = new pg.Client(weft.db);
  await db.connect();
  const { rows } = await db.query(`SELECT count(*)::int AS n FROM checkpoint_blobs WHERE thread_id = $1 AND channel = 'messages' AND type <> 'empty'`, [t.thread_id]);
  await db.end();
  assert.equal(rows[0].n, 0, "no messages blob: every read replays the writes");

  // Fork: a run from the checkpoint after the second turn.
  const second = mine.find((s) => s.metadata.step === 4 && s.metadata.source === "loop");
  assert.ok(second, "the second turn's last checkpoint");
  await c.runs.wait(t.thread_id, "delta_js", { input: human("branch"), checkpointId: second.checkpoint.checkpoint_id });
  const forked = await c.threads.getState(t.thread_id);
  assert.deepEqual(forked.values.messages.map((m) => m.content), ["hi", "echo: hi", "there", "echo: there", "branch", "echo: branch"]);
  await assertSameThread("delta_js", t.thread_id);
});

test("past the snapshot interval (a snapshot every 3 updates), with RemoveMessage and REMOVE_ALL; a reducer Weft does not know is marked, never []", async () => {
  const c = client();
  const t = await c.threads.create();
  for (const text of ["a", "b", "forget", "c", "reset", "d", "e"]) await c.runs.wait(t.thread_id, "delta_snap_js", { input: human(text) });
  const db = new pg.Client(weft.db);
  await db.connect();
  const { rows } = await db.query(`SELECT count(*)::int AS n FROM checkpoint_blobs WHERE thread_id = $1 AND channel = 'messages' AND type <> 'empty'`, [t.thread_id]);
  await db.end();
  assert.ok(rows[0].n >= 2, `snapshots were written (${rows[0].n})`);
  const state = await c.threads.getState(t.thread_id);
  assert.deepEqual(state.values.messages.map((m) => m.content), ["echo: reset", "d", "echo: d", "e", "echo: e"]);
  const { mine, theirs } = await assertSameThread("delta_snap_js", t.thread_id);
  // notes: the snapshot's value where one is stored, the marker elsewhere.
  assert.ok(mine.some((s) => isMarker(s.values.notes, "notes")), "the marker shows");
  assert.ok(isMarker(state.values.notes, "notes") || state.values.notes.length === 7);
  assert.ok(theirs[0].values.notes.length === 7);
});

test("the worker's getDeltaChannelHistory is one request, and answers what LangGraph's own walk answers", async () => {
  const c = client();
  const t = await c.threads.create();
  for (const text of ["one", "two", "three", "four"]) await c.runs.wait(t.thread_id, "delta_snap_js", { input: human(text) });
  const api = new WeftClient(weft.url);
  const paths = [];
  const post = api.post.bind(api);
  api.post = (path, body) => {
    paths.push(path);
    return post(path, body);
  };
  const saver = new WeftSaver(api);
  const graph = await langgraph("delta_snap_js");
  const history = [];
  for await (const s of graph.getStateHistory({ configurable: { thread_id: t.thread_id } })) history.push(s);
  const plain = (h) => ({
    seed: h.seed === undefined ? undefined : JSON.parse(JSON.stringify(h.seed)),
    writes: h.writes.map(([tid, ch, v]) => [tid, ch, JSON.parse(JSON.stringify(v))]),
  });
  for (const s of history) {
    const config = s.config;
    paths.length = 0;
    const mine = await saver.getDeltaChannelHistory({ config, channels: ["messages", "notes"] });
    assert.deepEqual(paths, ["/dispatch/checkpoints/delta-history"], "one request");
    const theirs = await graph.checkpointer.getDeltaChannelHistory({ config, channels: ["messages", "notes"] });
    for (const ch of ["messages", "notes"]) {
      assert.deepEqual(plain(mine[ch]), plain(theirs[ch]), `${ch} at step ${s.metadata.step}`);
    }
  }
  api.close?.();
});
