// Thread state API (time travel) through the official JS SDK
// (@langchain/langgraph-sdk): getState, updateState, getState at a
// checkpoint, getHistory (limit / before / metadata), patchState, copy,
// errors, and add_messages through updateState on the echo_chat graph.
// Threads are bound to Weft's built-in graphs by metadata.graph_id
// (client.threads.create({graphId})). Every test makes its own threads.

import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { SDK_LINE } from "./sdk.mjs"; // @langchain/langgraph-sdk 2.0.0 or newest 1.x, by WEFT_SDK
import { useServer } from "./harness.mjs";
import { recordingClient, rejectsWith } from "./helpers.mjs";

const server = useServer();
const sdk = () => recordingClient(server.url);

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const STATE_FIELDS = ["values", "next", "checkpoint", "metadata", "created_at", "parent_checkpoint", "tasks"];

function assertStateShape(s) {
  for (const f of STATE_FIELDS) assert.ok(Object.hasOwn(s, f), `state lacks field ${f}: ${JSON.stringify(s)}`);
  assert.ok(Array.isArray(s.next), `next is not an array: ${JSON.stringify(s.next)}`);
}

function assertCheckpointRef(ref, threadId) {
  assert.equal(typeof ref, "object");
  assert.equal(ref.thread_id, threadId);
  assert.equal(ref.checkpoint_ns, "");
  assert.match(ref.checkpoint_id, UUID_RE);
}

/** A foo_bar thread with n update_state checkpoints (bar: ["1"], ["2"], … appended); returns ids oldest first. */
async function fooBarThread(client, n) {
  const { thread_id } = await client.threads.create({ graphId: "foo_bar" });
  const ids = [];
  for (let i = 1; i <= n; i++) {
    const r = await client.threads.updateState(thread_id, {
      values: { foo: `v${i}`, bar: [String(i)] },
      asNode: i === 1 ? undefined : "node_a",
    });
    ids.push(r.checkpoint.checkpoint_id);
  }
  return { tid: thread_id, ids };
}

describe("getState", () => {
  test("a thread without checkpoints: checkpoint null, values {}", async () => {
    const { client } = sdk();
    const { thread_id } = await client.threads.create();
    const s = await client.threads.getState(thread_id);
    assertStateShape(s);
    assert.equal(s.checkpoint, null);
    assert.deepEqual(s.values, {});
    assert.deepEqual(s.next, []);
    assert.equal(s.metadata, null);
    assert.equal(s.created_at, null);
    assert.equal(s.parent_checkpoint, null);
    assert.deepEqual(s.tasks, []);
    assert.deepEqual(await client.threads.getHistory(thread_id), []);
  });

  test("a graph-bound thread without checkpoints reads the same", async () => {
    const { client } = sdk();
    const { thread_id } = await client.threads.create({ graphId: "foo_bar" });
    const s = await client.threads.getState(thread_id);
    assert.equal(s.checkpoint, null);
    assert.deepEqual(s.values, {});
    assert.deepEqual(s.next, []);
  });
});

describe("updateState", () => {
  test("response carries checkpoint and configurable (the SDK's type); getState shows the update", async () => {
    const { client } = sdk();
    const { thread_id: tid } = await client.threads.create({ graphId: "foo_bar" });
    const r = await client.threads.updateState(tid, { values: { foo: "x", bar: ["1"] } });
    assertCheckpointRef(r.checkpoint, tid);
    assertCheckpointRef(r.configurable, tid);
    assert.equal(r.configurable.checkpoint_id, r.checkpoint.checkpoint_id);
    assert.equal(r.checkpoint_id, r.checkpoint.checkpoint_id);

    const s = await client.threads.getState(tid);
    assertStateShape(s);
    assert.deepEqual(s.checkpoint.checkpoint_id, r.checkpoint.checkpoint_id);
    assert.deepEqual(s.values, { foo: "x", bar: ["1"] });
    // Attributed to START on an empty thread: node_a is next.
    assert.deepEqual(s.next, ["node_a"]);
    assert.deepEqual(s.tasks.map((t) => t.name), ["node_a"]);
    assert.equal(s.metadata.source, "update");
    assert.equal(s.metadata.step, 0);
    assert.equal(s.parent_checkpoint, null);
    assert.ok(!Number.isNaN(Date.parse(s.created_at)));

    // The thread's projection follows.
    const t = await client.threads.get(tid);
    assert.deepEqual(t.values, { foo: "x", bar: ["1"] });
  });

  test("reducers apply (bar appends, foo replaces); asNode routes next; parent chain", async () => {
    const { client } = sdk();
    const { tid, ids } = await fooBarThread(client, 2);
    const s = await client.threads.getState(tid);
    assert.deepEqual(s.values, { foo: "v2", bar: ["1", "2"] });
    assert.deepEqual(s.next, ["node_b"]);
    assert.equal(s.parent_checkpoint.checkpoint_id, ids[0]);
    assert.equal(s.metadata.step, 1);

    // as node_b: node_b's trigger is consumed and END follows — nothing next.
    await client.threads.updateState(tid, { values: { foo: "end" }, asNode: "node_b" });
    const done = await client.threads.getState(tid);
    assert.deepEqual(done.values, { foo: "end", bar: ["1", "2"] });
    assert.deepEqual(done.next, []);
  });

  test("values as a list of updates are applied in order", async () => {
    const { client } = sdk();
    const { thread_id: tid } = await client.threads.create({ graphId: "foo_bar" });
    await client.threads.updateState(tid, { values: [{ foo: "p", bar: ["1"] }, { foo: "q", bar: ["2"] }] });
    const s = await client.threads.getState(tid);
    assert.deepEqual(s.values, { foo: "q", bar: ["1", "2"] });
  });

  test("checkpointId forks from an older checkpoint; the old branch is untouched", async () => {
    const { client } = sdk();
    const { tid, ids } = await fooBarThread(client, 2);
    const r = await client.threads.updateState(tid, { values: { foo: "fork", bar: ["f"] }, checkpointId: ids[0], asNode: "node_a" });
    const s = await client.threads.getState(tid);
    assert.equal(s.checkpoint.checkpoint_id, r.checkpoint.checkpoint_id);
    assert.deepEqual(s.values, { foo: "fork", bar: ["1", "f"] });
    assert.deepEqual(s.next, ["node_b"]);
    assert.equal(s.parent_checkpoint.checkpoint_id, ids[0]);
    const old = await client.threads.getState(tid, ids[1]);
    assert.deepEqual(old.values, { foo: "v2", bar: ["1", "2"] });
  });

  test("checkpoint (a Checkpoint object) selects the base too", async () => {
    const { client } = sdk();
    const { tid, ids } = await fooBarThread(client, 2);
    await client.threads.updateState(tid, {
      values: { bar: ["c"] },
      checkpoint: { checkpoint_id: ids[0], checkpoint_ns: "" },
      asNode: "node_a",
    });
    const s = await client.threads.getState(tid);
    assert.deepEqual(s.values, { foo: "v1", bar: ["1", "c"] });
    assert.equal(s.parent_checkpoint.checkpoint_id, ids[0]);
  });
});

describe("getState at a checkpoint", () => {
  test("by id (GET /state/{id}) and by Checkpoint object (POST /state/checkpoint)", async () => {
    const { client, requests } = sdk();
    const { tid, ids } = await fooBarThread(client, 3);
    requests.length = 0;
    const byId = await client.threads.getState(tid, ids[0]);
    assert.equal(requests.at(-1).method, "GET");
    assert.match(requests.at(-1).url, new RegExp(`/threads/${tid}/state/${ids[0]}`));
    assertStateShape(byId);
    assert.equal(byId.checkpoint.checkpoint_id, ids[0]);
    assert.deepEqual(byId.values, { foo: "v1", bar: ["1"] });
    assert.deepEqual(byId.next, ["node_a"]);

    const byObj = await client.threads.getState(tid, { checkpoint_id: ids[1], checkpoint_ns: "" });
    assert.equal(requests.at(-1).method, "POST");
    assert.match(requests.at(-1).url, new RegExp(`/threads/${tid}/state/checkpoint$`));
    assert.equal(byObj.checkpoint.checkpoint_id, ids[1]);
    assert.deepEqual(byObj.values, { foo: "v2", bar: ["1", "2"] });
    assert.equal(byObj.parent_checkpoint.checkpoint_id, ids[0]);
  });

  test("an unknown checkpoint id → 404", async () => {
    const { client } = sdk();
    const { tid } = await fooBarThread(client, 1);
    await rejectsWith(client.threads.getState(tid, "1f1e0000-0000-6000-8000-000000000000"), 404);
  });
});

describe("getHistory", () => {
  test("newest first; limit; before as the SDK sends it (a config object)", async () => {
    const { client, requests } = sdk();
    const { tid, ids } = await fooBarThread(client, 4);
    const newestFirst = [...ids].reverse();

    const all = await client.threads.getHistory(tid);
    assert.deepEqual(all.map((s) => s.checkpoint.checkpoint_id), newestFirst);
    all.forEach(assertStateShape);
    assert.deepEqual(all.map((s) => s.metadata.step), [3, 2, 1, 0]);
    for (let i = 0; i < all.length - 1; i++) {
      assert.equal(all[i].parent_checkpoint.checkpoint_id, all[i + 1].checkpoint.checkpoint_id);
    }
    assert.deepEqual(all[0].values, { foo: "v4", bar: ["1", "2", "3", "4"] });
    assert.deepEqual(all[3].values, { foo: "v1", bar: ["1"] });

    const page1 = await client.threads.getHistory(tid, { limit: 2 });
    assert.deepEqual(page1.map((s) => s.checkpoint.checkpoint_id), newestFirst.slice(0, 2));

    const before = { configurable: { checkpoint_id: page1.at(-1).checkpoint.checkpoint_id } };
    requests.length = 0;
    const page2 = await client.threads.getHistory(tid, { limit: 2, before });
    assert.deepEqual(requests.at(-1).body.before, before, "the SDK sends before as given");
    assert.deepEqual(page2.map((s) => s.checkpoint.checkpoint_id), newestFirst.slice(2, 4));

    const page3 = await client.threads.getHistory(tid, { limit: 2, before: { configurable: { checkpoint_id: ids[0] } } });
    assert.deepEqual(page3, []);
  });

  test("metadata filter (containment) and checkpoint namespace", async () => {
    const { client } = sdk();
    const { tid, ids } = await fooBarThread(client, 3);
    const updates = await client.threads.getHistory(tid, { metadata: { source: "update" } });
    assert.equal(updates.length, 3);
    const step1 = await client.threads.getHistory(tid, { metadata: { source: "update", step: 1 } });
    assert.deepEqual(step1.map((s) => s.checkpoint.checkpoint_id), [ids[1]]);
    assert.deepEqual(await client.threads.getHistory(tid, { metadata: { source: "loop" } }), []);
    const root = await client.threads.getHistory(tid, { checkpoint: { checkpoint_ns: "" } });
    assert.equal(root.length, 3);
    assert.deepEqual(await client.threads.getHistory(tid, { checkpoint: { checkpoint_ns: "sub:" + randomUUID() } }), []);
  });
});

describe("getHistory of runs: paging with before, checkpoint namespace, a forked branch", () => {
  test("pages of 2 with before = the last id of the previous page walk the whole history once, newest first", async () => {
    const { client, requests } = sdk();
    const { thread_id: tid } = await client.threads.create();
    await client.runs.wait(tid, "foo_bar", { input: { foo: "" } });
    await client.runs.wait(tid, "foo_bar", { input: { foo: "x" } });
    const all = await client.threads.getHistory(tid, { limit: 100 });
    assert.equal(all.length, 8, "two runs of foo_bar: input + 3 loop checkpoints each");
    assert.deepEqual(all.map((s) => s.metadata.source), ["loop", "loop", "loop", "input", "loop", "loop", "loop", "input"]);
    assert.deepEqual(all.map((s) => s.metadata.step), [6, 5, 4, 3, 2, 1, 0, -1], "steps go on across runs");

    const walked = [];
    let before;
    for (let i = 0; i < 10; i++) {
      const page = await client.threads.getHistory(tid, { limit: 2, before, checkpoint: { checkpoint_ns: "" } });
      assert.equal(requests.at(-1).body.limit, 2);
      if (page.length === 0) break;
      assert.ok(page.length <= 2);
      walked.push(...page);
      before = { configurable: { checkpoint_id: page.at(-1).checkpoint.checkpoint_id } };
    }
    assert.deepEqual(walked.map((s) => s.checkpoint.checkpoint_id), all.map((s) => s.checkpoint.checkpoint_id));
    assert.deepEqual(walked, all);

    // before + metadata filter: the input checkpoints older than the second run's.
    const inputs = await client.threads.getHistory(tid, { metadata: { source: "input" }, before: { configurable: { checkpoint_id: all[3].checkpoint.checkpoint_id } } });
    assert.deepEqual(inputs.map((s) => s.checkpoint.checkpoint_id), [all[7].checkpoint.checkpoint_id]);
  });

  test("a run from an older checkpoint forks; history lists both branches newest first; before on the fork point lists its ancestors", async () => {
    const { client } = sdk();
    const { thread_id: tid } = await client.threads.create();
    await client.runs.wait(tid, "foo_bar", { input: { foo: "" } });
    const first = await client.threads.getHistory(tid);
    const forkPoint = first[1]; // after node_a
    const res = await client.runs.wait(tid, "foo_bar", { input: null, checkpointId: forkPoint.checkpoint.checkpoint_id });
    assert.deepEqual(res, { foo: "b", bar: ["a", "b"] });
    const all = await client.threads.getHistory(tid, { limit: 100 });
    const children = all.filter((s) => s.parent_checkpoint?.checkpoint_id === forkPoint.checkpoint.checkpoint_id);
    assert.equal(children.length, 2, JSON.stringify(all.map((s) => [s.checkpoint.checkpoint_id, s.parent_checkpoint?.checkpoint_id])));
    const older = await client.threads.getHistory(tid, { before: { configurable: { checkpoint_id: forkPoint.checkpoint.checkpoint_id } } });
    assert.deepEqual(older.map((s) => s.checkpoint.checkpoint_id), first.slice(2).map((s) => s.checkpoint.checkpoint_id));
  });
});

describe("patchState", () => {
  test("merges metadata into the latest checkpoint; filterable in history", async () => {
    const { client } = sdk();
    const { tid, ids } = await fooBarThread(client, 2);
    const tag = randomUUID();
    await client.threads.patchState(tid, { tag, extra: { n: 1 } });
    const s = await client.threads.getState(tid);
    assert.equal(s.checkpoint.checkpoint_id, ids[1], "patching metadata writes no checkpoint");
    assert.equal(s.metadata.tag, tag);
    assert.deepEqual(s.metadata.extra, { n: 1 });
    assert.equal(s.metadata.source, "update", "existing keys are kept");
    assert.deepEqual(s.values, { foo: "v2", bar: ["1", "2"] });

    const tagged = await client.threads.getHistory(tid, { metadata: { tag } });
    assert.deepEqual(tagged.map((x) => x.checkpoint.checkpoint_id), [ids[1]]);

    // The config form (the SDK reads thread_id from configurable).
    await client.threads.patchState({ configurable: { thread_id: tid } }, { tag2: "y" });
    const s2 = await client.threads.getState(tid);
    assert.equal(s2.metadata.tag, tag);
    assert.equal(s2.metadata.tag2, "y");
  });
});

describe("copy", () => {
  test("copies the whole history to a new thread; the copy evolves on its own", async () => {
    const { client } = sdk();
    const { tid } = await fooBarThread(client, 3);
    const orig = await client.threads.getHistory(tid);
    const copy = await client.threads.copy(tid);
    assert.match(copy.thread_id, UUID_RE);
    assert.notEqual(copy.thread_id, tid);
    assert.equal(copy.metadata.graph_id, "foo_bar");
    assert.deepEqual(copy.values, orig[0].values);

    const hist = await client.threads.getHistory(copy.thread_id);
    assert.equal(hist.length, orig.length);
    for (let i = 0; i < hist.length; i++) {
      assert.deepEqual(hist[i].values, orig[i].values);
      assert.deepEqual(hist[i].next, orig[i].next);
      assert.equal(hist[i].checkpoint.thread_id, copy.thread_id);
      assert.equal(hist[i].checkpoint.checkpoint_id, orig[i].checkpoint.checkpoint_id);
    }

    await client.threads.updateState(copy.thread_id, { values: { foo: "copy", bar: ["c"] }, asNode: "node_a" });
    assert.deepEqual((await client.threads.getState(copy.thread_id)).values, { foo: "copy", bar: ["1", "2", "3", "c"] });
    assert.deepEqual((await client.threads.getState(tid)).values, orig[0].values);
    assert.equal((await client.threads.getHistory(tid)).length, orig.length);
  });
});

describe("errors", () => {
  test("updateState on a thread without a graph → 400", async () => {
    const { client } = sdk();
    const { thread_id } = await client.threads.create();
    await rejectsWith(client.threads.updateState(thread_id, { values: { foo: "x" } }), 400);
  });

  test("updateState with an unknown asNode → 400", async () => {
    const { client } = sdk();
    const { thread_id } = await client.threads.create({ graphId: "foo_bar" });
    await rejectsWith(client.threads.updateState(thread_id, { values: { foo: "x" }, asNode: "no_such_node" }), 400);
  });

  test("unknown thread → 404 for getState, getState at a checkpoint, updateState, getHistory, patchState; 409 for copy", async () => {
    const { client } = sdk();
    const id = randomUUID();
    await rejectsWith(client.threads.getState(id), 404);
    await rejectsWith(client.threads.getState(id, { checkpoint_id: "1f1e0000-0000-6000-8000-000000000000" }), 404);
    await rejectsWith(client.threads.updateState(id, { values: { foo: "x" } }), 404);
    await rejectsWith(client.threads.getHistory(id), 404);
    await rejectsWith(client.threads.patchState(id, { a: 1 }), 404);
    await rejectsWith(client.threads.copy(id), 409); // as both official servers answer
  });
});

describe("echo_chat: add_messages through updateState", () => {
  test("messages get ids; role dicts become typed messages; the same id replaces", async () => {
    const { client } = sdk();
    const { thread_id: tid } = await client.threads.create({ graphId: "echo_chat" });
    await client.threads.updateState(tid, { values: { messages: [{ role: "user", content: "hi" }] } });
    let s = await client.threads.getState(tid);
    assert.deepEqual(s.next, ["echo"]);
    assert.equal(s.values.messages.length, 1);
    const [m1] = s.values.messages;
    assert.equal(m1.type, "human");
    assert.equal(m1.content, "hi");
    assert.equal(typeof m1.id, "string");
    assert.ok(m1.id.length > 0, "add_messages gives a message without id a fresh id");

    // A message with a new id appends (as the echo node).
    await client.threads.updateState(tid, { values: { messages: [{ type: "ai", content: "echo: hi", id: "ai-1" }] }, asNode: "echo" });
    s = await client.threads.getState(tid);
    assert.deepEqual(s.values.messages.map((m) => [m.type, m.content, m.id]), [
      ["human", "hi", m1.id],
      ["ai", "echo: hi", "ai-1"],
    ]);
    assert.deepEqual(s.next, []);

    // The same id replaces in place.
    await client.threads.updateState(tid, { values: { messages: [{ type: "human", content: "hello", id: m1.id }] } });
    s = await client.threads.getState(tid);
    assert.deepEqual(s.values.messages.map((m) => [m.type, m.content, m.id]), [
      ["human", "hello", m1.id],
      ["ai", "echo: hi", "ai-1"],
    ]);

    // Two messages without ids get two different ids.
    await client.threads.updateState(tid, { values: { messages: [{ type: "human", content: "a" }, { type: "human", content: "b" }] } });
    s = await client.threads.getState(tid);
    assert.equal(s.values.messages.length, 4);
    const ids = s.values.messages.map((m) => m.id);
    assert.equal(new Set(ids).size, 4, `ids not unique: ${ids}`);

    // History keeps every version.
    const h = await client.threads.getHistory(tid);
    assert.deepEqual(h.map((x) => x.values.messages.length), [4, 2, 2, 1]);
    assert.equal(h[2].values.messages[0].content, "hi");
  });
});

describe("ThreadState shape", () => {
  test("tasks is [] (not null) when nothing is next", async () => {
    const { client } = sdk();
    const { thread_id: tid } = await client.threads.create({ graphId: "foo_bar" });
    await client.threads.updateState(tid, { values: { foo: "x" }, asNode: "node_b" });
    const s = await client.threads.getState(tid);
    assert.deepEqual(s.next, []);
    assert.deepEqual(s.tasks, [], `GET /threads/${tid}/state returned "tasks": ${JSON.stringify(s.tasks)}`);
    const [h] = await client.threads.getHistory(tid, { limit: 1 });
    assert.deepEqual(h.tasks, [], `POST /threads/${tid}/history returned "tasks": ${JSON.stringify(h.tasks)}`);
  });
});

// `select` on getState / getHistory exists only in the 1.x SDK line (2.0.0 =
// the 1.6.3 feature set). Checked here: the requests are accepted and the
// selected key comes back right; dropping the unselected fields is optional.
if (SDK_LINE === "2") {
  test("SDK 2.0.0 line: select on getState / getHistory is not sent; the whole state comes back", async () => {
    const { client, requests } = sdk();
    const { tid } = await fooBarThread(client, 1);
    const s = await client.threads.getState(tid, undefined, { select: ["values.foo"] });
    assert.equal(new URL(requests.at(-1).url).searchParams.get("select"), null);
    assertStateShape(s);
    const h = await client.threads.getHistory(tid, { limit: 1, select: ["values.foo"] });
    assert.equal(requests.at(-1).body.select, undefined);
    assert.deepEqual(h[0].values, { foo: "v1", bar: ["1"] });
  });
}

if (SDK_LINE === "1") describe("SDK 1.x-only select on state reads", () => {
  test("getState / getState at a checkpoint / getHistory with select", async () => {
    const { client, requests } = sdk();
    const { tid, ids } = await fooBarThread(client, 3);
    const select = ["values.foo"];

    requests.length = 0;
    const latest = await client.threads.getState(tid, undefined, { select });
    assert.equal(new URL(requests.at(-1).url).searchParams.get("select"), "values.foo");
    assert.equal(latest.values.foo, "v3");

    const byId = await client.threads.getState(tid, ids[0], { select });
    assert.equal(new URL(requests.at(-1).url).searchParams.get("select"), "values.foo");
    assert.equal(byId.values.foo, "v1");

    const byObj = await client.threads.getState(tid, { checkpoint_id: ids[1], checkpoint_ns: "" }, { select });
    assert.deepEqual(requests.at(-1).body.select, select);
    assert.equal(byObj.values.foo, "v2");

    const h = await client.threads.getHistory(tid, { limit: 2, select });
    assert.deepEqual(requests.at(-1).body.select, select);
    assert.deepEqual(h.map((s) => s.values.foo), ["v3", "v2"]);
  });
});
