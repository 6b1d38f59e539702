// Runs API through the official JS SDK (@langchain/langgraph-sdk, both
// lines): runs.wait / create / join / get / list (newest first, limit /
// offset, status, select) / delete / cancel (wait or not, interrupt or
// rollback, running or queued, unknown) on threads, stateless wait / create /
// createBatch (and its errors), human-in-the-loop (interrupt, then Command
// resume), multitask strategies (reject, enqueue), failed runs (how the SDK
// surfaces {"__error__": …}), and the system assistants runs name by graph
// id; on the 1.x line also runs.create's onCompletion and runs.cancelMany, on
// the 2.0.0 line that it has neither. Streaming (runs.stream, joinStream) is
// in stream.test.mjs. Every test makes its own threads.

import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { createHash, randomUUID } from "node:crypto";
import { SDK_LINE } from "./sdk.mjs"; // @langchain/langgraph-sdk 2.0.0 or newest 1.x, by WEFT_SDK
import { useServer } from "./harness.mjs";
import { recordingClient, rejectsWith, newTaggedThread, waitForStatus, threadGone } from "./helpers.mjs";

const server = useServer();
const sdk = () => recordingClient(server.url);
const newThread = (client) => newTaggedThread(client, "runs");

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RUN_FIELDS = ["run_id", "thread_id", "assistant_id", "created_at", "updated_at", "status", "metadata", "multitask_strategy"];
const FOO_BAR_RESULT = { foo: "b", bar: ["a", "b"] };

/** uuid5(namespace, name) (RFC 4122 §4.3). */
function uuid5(namespace, name) {
  const ns = Buffer.from(namespace.replace(/-/g, ""), "hex");
  const h = createHash("sha1").update(ns).update(Buffer.from(name, "utf8")).digest().subarray(0, 16);
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.toString("hex");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}
/** The id of a graph's system assistant, as the Agent Server mints it. */
const systemAssistantId = (graphId) => uuid5("6ba7b821-9dad-11d1-80b4-00c04fd430c8", graphId);

function assertRunShape(run) {
  for (const f of RUN_FIELDS) assert.ok(Object.hasOwn(run, f), `run lacks field ${f}: ${JSON.stringify(run)}`);
  assert.match(run.run_id, UUID_RE);
  assert.match(run.thread_id, UUID_RE);
  assert.match(run.assistant_id, UUID_RE);
  for (const f of ["created_at", "updated_at"]) assert.ok(!Number.isNaN(Date.parse(run[f])), `${f} is not a timestamp: ${run[f]}`);
  assert.ok(["pending", "running", "success", "error", "timeout", "interrupted"].includes(run.status), `status ${run.status}`);
  assert.equal(typeof run.metadata, "object");
  assert.notEqual(run.metadata, null);
}


describe("system assistants", () => {
  test("assistants.get by graph id and by uuid5 id; search({graphId}); unknown id → 404", async () => {
    const { client, requests } = sdk();
    assert.equal(systemAssistantId("foo_bar"), "59bfe87c-f4fa-5cd5-8a97-4f116167b027");

    const a = await client.assistants.get("foo_bar");
    assert.match(requests.at(-1).url, /\/assistants\/foo_bar$/);
    assert.equal(a.assistant_id, systemAssistantId("foo_bar"));
    assert.equal(a.graph_id, "foo_bar");
    assert.equal(a.name, "foo_bar");
    assert.equal(a.metadata.created_by, "system");
    assert.equal(typeof a.config, "object");
    assert.equal(a.version, 1);
    for (const f of ["created_at", "updated_at"]) assert.ok(!Number.isNaN(Date.parse(a[f])), `${f}: ${a[f]}`);

    assert.deepEqual(await client.assistants.get(a.assistant_id), a);

    const hitl = await client.assistants.search({ graphId: "hitl" });
    assert.deepEqual(requests.at(-1).body.graph_id, "hitl");
    assert.equal(hitl.length, 1, JSON.stringify(hitl));
    assert.equal(hitl[0].assistant_id, systemAssistantId("hitl"));
    assert.equal(hitl[0].graph_id, "hitl");
    assert.equal(hitl[0].metadata.created_by, "system");

    const all = await client.assistants.search({ limit: 100 });
    for (const g of ["foo_bar", "echo_chat", "hitl", "slow"]) {
      const found = all.find((x) => x.graph_id === g);
      assert.ok(found, `no system assistant for ${g} in ${JSON.stringify(all.map((x) => x.graph_id))}`);
      assert.equal(found.assistant_id, systemAssistantId(g));
    }

    await rejectsWith(client.assistants.get("00000000-0000-0000-0000-000000000001"), 404);
  });
});

describe("runs on a thread", () => {
  test("wait → values; thread idle and bound to the graph; list, get, join, delete", async () => {
    const { client, requests } = sdk();
    const tid = await newThread(client);
    const created = [];
    const res = await client.runs.wait(tid, "foo_bar", { input: { foo: "" }, onRunCreated: (m) => created.push(m) });
    assert.deepEqual(res, FOO_BAR_RESULT);
    assert.equal(requests.at(-1).method, "POST");
    assert.match(requests.at(-1).url, new RegExp(`/threads/${tid}/runs/wait$`));
    assert.equal(requests.at(-1).body.assistant_id, "foo_bar");

    // onRunCreated comes from the Content-Location header of the wait response.
    assert.equal(created.length, 1);
    assert.equal(created[0].thread_id, tid);
    assert.match(created[0].run_id, UUID_RE);
    const rid = created[0].run_id;

    const t = await client.threads.get(tid);
    assert.equal(t.status, "idle");
    assert.equal(t.metadata.graph_id, "foo_bar");
    assert.deepEqual(t.values, FOO_BAR_RESULT);

    const list = await client.runs.list(tid);
    assert.equal(list.length, 1);
    assertRunShape(list[0]);
    assert.equal(list[0].run_id, rid);
    assert.equal(list[0].thread_id, tid);
    assert.equal(list[0].status, "success");
    assert.equal(list[0].assistant_id, systemAssistantId("foo_bar"));
    assert.deepEqual((await client.runs.list(tid, { status: "success" })).map((r) => r.run_id), [rid]);
    assert.deepEqual(await client.runs.list(tid, { status: "error" }), []);

    const got = await client.runs.get(tid, rid);
    assertRunShape(got);
    assert.equal(got.run_id, rid);
    assert.equal(got.status, "success");
    assert.ok(Date.parse(got.updated_at) >= Date.parse(got.created_at));

    // join on a finished run answers at once with the same result.
    assert.deepEqual(await client.runs.join(tid, rid), FOO_BAR_RESULT);

    // A second run continues from the thread's state.
    assert.deepEqual(await client.runs.wait(tid, "foo_bar", { input: { foo: "x" } }), { foo: "b", bar: ["a", "b", "a", "b"] });
    assert.equal((await client.runs.list(tid)).length, 2);

    assert.equal(await client.runs.delete(tid, rid), undefined);
    await rejectsWith(client.runs.get(tid, rid), 404);
    assert.equal((await client.runs.list(tid)).length, 1);
    // Its checkpoints stay.
    assert.deepEqual((await client.threads.get(tid)).values, { foo: "b", bar: ["a", "b", "a", "b"] });
  });

  test("create → a pending/running Run (system assistant uuid), onRunCreated; join waits for the result", async () => {
    const { client, requests } = sdk();
    const tid = await newThread(client);
    const created = [];
    const tag = randomUUID();
    const run = await client.runs.create(tid, "foo_bar", {
      input: { foo: "" },
      metadata: { tag },
      onRunCreated: (m) => created.push(m),
    });
    assert.match(requests.at(-1).url, new RegExp(`/threads/${tid}/runs$`));
    assertRunShape(run);
    assert.ok(["pending", "running"].includes(run.status), `fresh run has status ${run.status}`);
    assert.equal(run.thread_id, tid);
    assert.equal(run.assistant_id, (await client.assistants.get("foo_bar")).assistant_id);
    assert.equal(run.assistant_id, systemAssistantId("foo_bar"));
    assert.equal(run.metadata.tag, tag);
    assert.equal(run.multitask_strategy, "enqueue", "the default strategy");
    assert.deepEqual(created, [{ run_id: run.run_id, thread_id: tid }]);

    assert.deepEqual(await client.runs.join(tid, run.run_id), FOO_BAR_RESULT);
    const done = await client.runs.get(tid, run.run_id);
    assert.equal(done.status, "success");
    assert.equal(done.metadata.tag, tag);
    assert.equal((await client.threads.get(tid)).status, "idle");
  });

  test("unknown thread / run / assistant → 404; a bad input → 422", async () => {
    const { client } = sdk();
    const tid = await newThread(client);
    await rejectsWith(client.runs.create(randomUUID(), "foo_bar", { input: { foo: "" } }), 404);
    await rejectsWith(client.runs.wait(randomUUID(), "foo_bar", { input: { foo: "" } }), 404);
    await rejectsWith(client.runs.get(tid, randomUUID()), 404);
    await rejectsWith(client.runs.join(tid, randomUUID()), 404);
    await rejectsWith(client.runs.create(tid, "00000000-0000-0000-0000-000000000001", { input: {} }), 404);
    await rejectsWith(client.runs.create(tid, "no_such_graph", { input: {} }), 422);
    await rejectsWith(client.runs.create(tid, "foo_bar", { input: { bar: "not a list" } }), 422);
    assert.deepEqual(await client.runs.list(tid), []);
    assert.equal((await client.threads.get(tid)).status, "idle");
  });
});

describe("stateless runs", () => {
  test("wait(null, …) → values; its temporary thread is gone afterwards", async () => {
    const { client, requests } = sdk();
    const created = [];
    const res = await client.runs.wait(null, "foo_bar", { input: { foo: "" }, onRunCreated: (m) => created.push(m) });
    assert.deepEqual(res, FOO_BAR_RESULT);
    assert.match(requests.at(-1).url, /\/runs\/wait$/);
    assert.doesNotMatch(requests.at(-1).url, /\/threads\//);
    assert.equal(created.length, 1);
    assert.match(created[0].run_id, UUID_RE);
    assert.match(created[0].thread_id, UUID_RE);
    await threadGone(client, created[0].thread_id);
  });

  test("create(null, …) → a Run on a temporary thread; join returns the values", async () => {
    const { client } = sdk();
    const created = [];
    const run = await client.runs.create(null, "foo_bar", { input: { foo: "" }, onRunCreated: (m) => created.push(m) });
    assertRunShape(run);
    assert.equal(run.assistant_id, systemAssistantId("foo_bar"));
    // Content-Location of a stateless create is /runs/{run_id}: no thread id.
    assert.deepEqual(created, [{ run_id: run.run_id, thread_id: undefined }]);
    assert.deepEqual(await client.runs.join(run.thread_id, run.run_id), FOO_BAR_RESULT);
    // Delivering the result of a temporary run deletes its thread.
    await threadGone(client, run.thread_id);
  });

  test("createBatch: several stateless runs at once, each joinable", async () => {
    const { client, requests } = sdk();
    const runs = await client.runs.createBatch([
      { assistantId: "foo_bar", input: { foo: "" } },
      { assistantId: "echo_chat", input: { messages: [{ role: "user", content: "hi" }] } },
    ]);
    assert.match(requests.at(-1).url, /\/runs\/batch$/);
    assert.deepEqual(requests.at(-1).body.map((b) => b.assistant_id), ["foo_bar", "echo_chat"]);
    assert.equal(runs.length, 2);
    runs.forEach(assertRunShape);
    assert.deepEqual(runs.map((r) => r.assistant_id), [systemAssistantId("foo_bar"), systemAssistantId("echo_chat")]);
    assert.notEqual(runs[0].thread_id, runs[1].thread_id);
    assert.deepEqual(await client.runs.join(runs[0].thread_id, runs[0].run_id), FOO_BAR_RESULT);
    const chat = await client.runs.join(runs[1].thread_id, runs[1].run_id);
    assert.deepEqual(chat.messages.map((m) => [m.type, m.content]), [["human", "hi"], ["ai", "echo: hi"]]);
  });
});

describe("human in the loop (hitl)", () => {
  test("interrupt → __interrupt__, thread interrupted, state next/tasks; Command resume finishes", async () => {
    const { client, requests } = sdk();
    const tid = await newThread(client);
    const res = await client.runs.wait(tid, "hitl", { input: { input: "x" } });
    assert.deepEqual(Object.keys(res).sort(), ["__interrupt__", "input"].sort(), JSON.stringify(res));
    assert.equal(res.input, "x");
    assert.equal(res.__interrupt__.length, 1, JSON.stringify(res));
    const [intr] = res.__interrupt__;
    assert.deepEqual(intr.value, { question: "approve?", input: "x" });
    assert.equal(typeof intr.id, "string");

    const t = await client.threads.get(tid);
    assert.equal(t.status, "interrupted");
    assert.equal(t.metadata.graph_id, "hitl");
    assert.equal(Object.keys(t.interrupts).length, 1, JSON.stringify(t.interrupts));
    assert.deepEqual(Object.values(t.interrupts)[0].map((i) => i.value), [{ question: "approve?", input: "x" }]);

    const s = await client.threads.getState(tid);
    assert.deepEqual(s.next, ["ask"]);
    assert.equal(s.tasks.length, 1);
    assert.equal(s.tasks[0].name, "ask");
    assert.equal(s.tasks[0].interrupts.length, 1);
    assert.deepEqual(s.tasks[0].interrupts[0].value, { question: "approve?", input: "x" });
    assert.equal(s.tasks[0].interrupts[0].id, intr.id);

    // An interrupted run ends with status success.
    const [first] = await client.runs.list(tid);
    assert.equal(first.status, "success");

    const resumed = await client.runs.wait(tid, "hitl", { command: { resume: "ok" } });
    assert.deepEqual(requests.at(-1).body.command, { resume: "ok" });
    assert.deepEqual(resumed, { input: "x", answer: "ok", result: "x:ok" });
    const after = await client.threads.get(tid);
    assert.equal(after.status, "idle");
    assert.deepEqual(after.interrupts, {});
    assert.deepEqual((await client.threads.getState(tid)).next, []);
    assert.equal((await client.runs.list(tid)).length, 2);
  });
});

/** Input for the slow graph: each of its two nodes sleeps ms and logs tag. */
const slow = (tag, ms) => ({ input: { tag, ms } });

/** Polls an async condition every 20 ms (at most ms). */
async function waitUntil(cond, ms = 5_000) {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    assert.ok(Date.now() < deadline, "condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits until the thread's state log is `log` (a node of the slow graph has finished). */
const waitUntilLog = (client, tid, log) =>
  waitUntil(async () => JSON.stringify((await client.threads.getState(tid)).values?.log) === JSON.stringify(log));

describe("multitask strategies", () => {
  test("reject while a run is in flight → HTTP 409; nothing is created", async () => {
    const { client } = sdk();
    const tid = await newThread(client);
    const first = await client.runs.create(tid, "slow", slow("1", 300));
    const err = await rejectsWith(client.runs.create(tid, "slow", { ...slow("2", 0), multitaskStrategy: "reject" }), 409);
    assert.match(JSON.parse(err.text).detail, /already running/);
    // runs.wait with reject is refused the same way.
    await rejectsWith(client.runs.wait(tid, "slow", { ...slow("3", 0), multitaskStrategy: "reject" }), 409);
    assert.deepEqual((await client.runs.list(tid)).map((r) => r.run_id), [first.run_id]);
    assert.deepEqual(await client.runs.join(tid, first.run_id), { ms: 300, tag: "1", log: ["first:1", "second:1"] });
    // Once the thread is idle, reject runs.
    const again = await client.runs.wait(tid, "slow", { ...slow("4", 0), multitaskStrategy: "reject" });
    assert.deepEqual(again.log, ["first:1", "second:1", "first:4", "second:4"]);
  });

  test("enqueue runs after the run in flight, in order", async () => {
    const { client } = sdk();
    const tid = await newThread(client);
    const first = await client.runs.create(tid, "slow", slow("1", 150));
    const second = await client.runs.create(tid, "slow", { ...slow("2", 0), multitaskStrategy: "enqueue" });
    assert.equal(second.multitask_strategy, "enqueue");
    assert.equal(second.status, "pending");
    const res = await client.runs.join(tid, second.run_id);
    assert.deepEqual(res.log, ["first:1", "second:1", "first:2", "second:2"]);
    assert.equal((await client.runs.get(tid, first.run_id)).status, "success");
    assert.equal((await client.runs.get(tid, second.run_id)).status, "success");
    const firstRun = await client.runs.get(tid, first.run_id);
    assert.ok(Date.parse(firstRun.updated_at) <= Date.parse((await client.runs.get(tid, second.run_id)).updated_at));
  });
});

describe("cancel", () => {
  test("cancel(…, wait=true) stops a running run at once: status interrupted, the values so far", async () => {
    const { client, requests } = sdk();
    const tid = await newThread(client);
    const run = await client.runs.create(tid, "slow", slow("c", 5000));
    await waitForStatus(client, tid, run.run_id, "running");
    const t0 = Date.now();
    const res = await client.runs.cancel(tid, run.run_id, true);
    const took = Date.now() - t0;
    assert.ok(took < 3000, `cancel took ${took} ms: the sleeping node was not interrupted`);
    assert.equal(new URL(requests.at(-1).url).searchParams.get("wait"), "1");
    assert.equal(new URL(requests.at(-1).url).searchParams.get("action"), "interrupt");
    assert.deepEqual(res, { ms: 5000, tag: "c", log: [] });
    assert.equal((await client.runs.get(tid, run.run_id)).status, "interrupted");
    assert.equal((await client.threads.get(tid)).status, "interrupted");
    // Cancelling a finished run changes nothing (202, no body).
    assert.equal(await client.runs.cancel(tid, run.run_id), undefined);
    assert.equal((await client.runs.get(tid, run.run_id)).status, "interrupted");
  });

  test("cancel without wait (202) on a queued run; action rollback deletes the run", async () => {
    const { client } = sdk();
    const tid = await newThread(client);
    const first = await client.runs.create(tid, "slow", slow("1", 5000));
    const queued = await client.runs.create(tid, "slow", slow("q", 0));
    assert.equal(await client.runs.cancel(tid, queued.run_id), undefined);
    await waitForStatus(client, tid, queued.run_id, "interrupted");

    await waitForStatus(client, tid, first.run_id, "running");
    assert.equal(await client.runs.cancel(tid, first.run_id, true, "rollback"), undefined, "204: rolled back");
    await rejectsWith(client.runs.get(tid, first.run_id), 404);
    assert.deepEqual(await client.threads.getHistory(tid), []);
    assert.equal((await client.threads.get(tid)).status, "idle");
  });
});

describe("runs.list", () => {
  test("newest first; limit / offset pages; status filter; unknown thread → 404; bad status / limit → 422", async () => {
    const { client, requests } = sdk();
    const tid = await newThread(client);
    const made = [];
    for (let i = 0; i < 3; i++) {
      const created = [];
      await client.runs.wait(tid, "foo_bar", { input: { foo: String(i) }, onRunCreated: (m) => created.push(m.run_id) });
      made.push(created[0]);
    }
    await client.runs.wait(tid, "slow", { input: { ms: "bad" }, raiseError: false });
    const [failed] = await client.runs.list(tid, { limit: 1 });
    assert.equal(failed.status, "error");
    const newestFirst = [failed.run_id, ...[...made].reverse()];

    assert.deepEqual((await client.runs.list(tid)).map((r) => r.run_id), newestFirst);
    const q = new URL(requests.at(-1).url).searchParams;
    assert.equal(q.get("limit"), "10");
    assert.equal(q.get("offset"), "0");
    const pages = [];
    for (let offset = 0; offset < 5; offset += 2) pages.push((await client.runs.list(tid, { limit: 2, offset })).map((r) => r.run_id));
    assert.deepEqual(pages, [newestFirst.slice(0, 2), newestFirst.slice(2, 4), []]);
    assert.deepEqual((await client.runs.list(tid, { status: "success" })).map((r) => r.run_id), [...made].reverse());
    assert.deepEqual((await client.runs.list(tid, { status: "success", limit: 1, offset: 1 })).map((r) => r.run_id), [made[1]]);
    assert.deepEqual((await client.runs.list(tid, { status: "error" })).map((r) => r.run_id), [failed.run_id]);
    assert.deepEqual(await client.runs.list(tid, { status: "pending" }), []);
    assert.deepEqual(await client.runs.list(tid, { status: "interrupted" }), []);

    await rejectsWith(client.runs.list(randomUUID()), 404);
    await rejectsWith(client.runs.list(tid, { status: "bogus" }), 422);
    await rejectsWith(client.runs.list(tid, { limit: 0 }), 422);
  });

  test("select projects the run fields (GET …/runs?select=…); an unknown field → 422", async () => {
    const { client, requests } = sdk();
    const tid = await newThread(client);
    await client.runs.wait(tid, "foo_bar", { input: { foo: "" } });
    const runs = await client.runs.list(tid, { select: ["run_id", "status"] });
    // 2.0.0 sends one JSON array, 1.x repeated keys: the server takes both.
    const sent = new URL(requests.at(-1).url).searchParams.getAll("select");
    assert.ok(
      JSON.stringify(sent) === JSON.stringify(['["run_id","status"]']) || JSON.stringify(sent) === JSON.stringify(["run_id", "status"]),
      `select sent as ${JSON.stringify(sent)}`,
    );
    assert.equal(runs.length, 1);
    assert.deepEqual(Object.keys(runs[0]).sort(), ["run_id", "status"], `GET /threads/${tid}/runs?select=["run_id","status"] returned ${JSON.stringify(runs[0])}`);
    assert.equal(runs[0].status, "success");
    await rejectsWith(client.runs.list(tid, { select: ["no_such_field"] }), 422);
  });
});

describe("cancel and delete, every variant", () => {
  test("cancel(…, wait=false) on a running run → 202; it ends interrupted with the steps done so far", async () => {
    const { client, requests } = sdk();
    const tid = await newThread(client);
    const run = await client.runs.create(tid, "slow", slow("w", 300));
    // Let node first finish, then cancel during node second.
    await waitUntilLog(client, tid, ["first:w"]);
    assert.equal(await client.runs.cancel(tid, run.run_id, false), undefined);
    assert.equal(new URL(requests.at(-1).url).searchParams.get("wait"), "0");
    await waitForStatus(client, tid, run.run_id, "interrupted", 3_000);
    assert.deepEqual((await client.threads.get(tid)).values.log, ["first:w"]);
    assert.deepEqual(await client.runs.join(tid, run.run_id), { ms: 300, tag: "w", log: ["first:w"] });
  });

  test("cancel(…, wait=true) of a queued run: it never runs; the run before it is unaffected", async () => {
    const { client } = sdk();
    const tid = await newThread(client);
    const first = await client.runs.create(tid, "slow", slow("1", 200));
    const queued = await client.runs.create(tid, "slow", slow("q", 0));
    await client.runs.cancel(tid, queued.run_id, true);
    assert.equal((await client.runs.get(tid, queued.run_id)).status, "interrupted");
    assert.deepEqual((await client.runs.join(tid, first.run_id)).log, ["first:1", "second:1"]);
    assert.equal((await client.runs.get(tid, queued.run_id)).status, "interrupted");
    assert.deepEqual((await client.threads.get(tid)).values.log, ["first:1", "second:1"]);
  });

  test("cancel(…, wait=false, \"rollback\") of a queued run deletes it", async () => {
    const { client } = sdk();
    const tid = await newThread(client);
    const first = await client.runs.create(tid, "slow", slow("1", 200));
    const queued = await client.runs.create(tid, "slow", slow("q", 0));
    assert.equal(await client.runs.cancel(tid, queued.run_id, false, "rollback"), undefined);
    await waitUntil(async () => (await client.runs.list(tid)).length === 1);
    await rejectsWith(client.runs.get(tid, queued.run_id), 404);
    assert.deepEqual((await client.runs.join(tid, first.run_id)).log, ["first:1", "second:1"]);
  });

  test("cancel of an unknown run or thread → 404; delete of a running run → 409, then allowed once it ended; unknown → 404", async () => {
    const { client } = sdk();
    const tid = await newThread(client);
    await rejectsWith(client.runs.cancel(tid, randomUUID()), 404);
    await rejectsWith(client.runs.cancel(randomUUID(), randomUUID()), 404);
    const run = await client.runs.create(tid, "slow", slow("d", 3000));
    await waitForStatus(client, tid, run.run_id, "running");
    await rejectsWith(client.runs.delete(tid, run.run_id), 409);
    await client.runs.cancel(tid, run.run_id, true);
    assert.equal(await client.runs.delete(tid, run.run_id), undefined);
    await rejectsWith(client.runs.get(tid, run.run_id), 404);
    await rejectsWith(client.runs.delete(tid, run.run_id), 404);
    await rejectsWith(client.runs.delete(randomUUID(), randomUUID()), 404);
  });
});

describe("createBatch errors", () => {
  test("one bad entry → 422 naming it; an empty batch → 422", async () => {
    const { client } = sdk();
    const err = await rejectsWith(client.runs.createBatch([
      { assistantId: "foo_bar", input: { foo: "" } },
      { assistantId: "no_such_graph", input: {} },
    ]), 422);
    assert.match(JSON.parse(err.text).detail, /no_such_graph/);
    await rejectsWith(client.runs.createBatch([]), 422);
  });

  test("metadata and stream options per entry are kept on each run", async () => {
    const { client } = sdk();
    const tags = [randomUUID(), randomUUID(), randomUUID()];
    const runs = await client.runs.createBatch(tags.map((tag, i) => ({ assistantId: "slow", input: { ms: 0, tag: String(i) }, metadata: { tag } })));
    assert.deepEqual(runs.map((r) => r.metadata.tag), tags);
    const results = await Promise.all(runs.map((r) => client.runs.join(r.thread_id, r.run_id)));
    assert.deepEqual(results.map((r) => r.log), [["first:0", "second:0"], ["first:1", "second:1"], ["first:2", "second:2"]]);
  });
});

describe("a failed run", () => {
  test("wait throws Error(`<error>: <message>`) from {__error__}; raiseError:false returns it; thread and run error", async () => {
    const { client } = sdk();
    const tid = await newThread(client);
    let err;
    try {
      await client.runs.wait(tid, "slow", { input: { ms: "x" } });
    } catch (e) {
      err = e;
    }
    assert.ok(err, "runs.wait resolved for a failed run");
    // The SDK's own check on the 200 body, not an HTTPError.
    assert.equal(err.constructor, Error);
    assert.equal(err.status, undefined);
    assert.match(err.message, /^NodeError: .*ms must be a number/);

    const t = await client.threads.get(tid);
    assert.equal(t.status, "error");
    const [run] = await client.runs.list(tid);
    assert.equal(run.status, "error");

    const res = await client.runs.wait(tid, "slow", { input: { ms: "x" }, raiseError: false });
    assert.deepEqual(Object.keys(res), ["__error__"]);
    assert.equal(res.__error__.error, "NodeError");
    assert.match(res.__error__.message, /ms must be a number/);
    assert.equal(`${res.__error__.error}: ${res.__error__.message}`, err.message);

    // join has no such check: it returns the {__error__} document.
    const joined = await client.runs.join(tid, run.run_id);
    assert.deepEqual(joined, res);

    // A good run on the errored thread brings it back to idle.
    assert.deepEqual((await client.runs.wait(tid, "slow", slow("ok", 0))).log, ["first:ok", "second:ok"]);
    assert.equal((await client.threads.get(tid)).status, "idle");
  });
});

// Only the 1.x line sends on_completion from runs.create and has
// runs.cancelMany (2.0.0 = the 1.6.3 feature set).
if (SDK_LINE === "2") {
  test("SDK 2.0.0 line: no runs.cancelMany; runs.create drops onCompletion (the temporary thread is deleted)", async () => {
    const { client, requests } = sdk();
    assert.equal(client.runs.cancelMany, undefined);
    const run = await client.runs.create(null, "foo_bar", { input: { foo: "" }, onCompletion: "keep" });
    assert.equal(requests.at(-1).body.on_completion, undefined);
    assert.deepEqual(await client.runs.join(run.thread_id, run.run_id), FOO_BAR_RESULT);
    await threadGone(client, run.thread_id);
  });
}

if (SDK_LINE === "1") describe("SDK 1.x-only: create onCompletion, cancelMany", () => {
  test("create(null, {onCompletion: keep}) keeps the thread", async () => {
    const { client, requests } = sdk();
    const run = await client.runs.create(null, "foo_bar", { input: { foo: "" }, onCompletion: "keep" });
    assert.equal(requests.at(-1).body.on_completion, "keep");
    assert.deepEqual(await client.runs.join(run.thread_id, run.run_id), FOO_BAR_RESULT);
    const t = await client.threads.get(run.thread_id);
    assert.deepEqual(t.values, FOO_BAR_RESULT);
    assert.equal(t.status, "idle");
  });

  test("cancelMany({threadId, runIds}) interrupts a running and a queued run; none left → 404", async () => {
    const { client, requests } = sdk();
    const tid = await newThread(client);
    const a = await client.runs.create(tid, "slow", slow("a", 5000));
    const b = await client.runs.create(tid, "slow", slow("b", 0));
    await waitForStatus(client, tid, a.run_id, "running");
    assert.equal(await client.runs.cancelMany({ threadId: tid, runIds: [a.run_id, b.run_id] }), undefined);
    assert.deepEqual(requests.at(-1).body, { thread_id: tid, run_ids: [a.run_id, b.run_id] });
    await waitForStatus(client, tid, a.run_id, "interrupted", 3000);
    await waitForStatus(client, tid, b.run_id, "interrupted", 3000);
    await rejectsWith(client.runs.cancelMany({ threadId: tid, runIds: [a.run_id] }), 404);
  });
});
