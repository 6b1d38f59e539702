// Crons (reference §11) through the official JS SDK's crons client, both
// lines: create (stateless) and createForThread, firings observed (each an
// ordinary run with metadata.cron_id; a stateless cron's new thread kept
// with onRunCompleted "keep", temporary with the default "delete"),
// update, delete, search (filters, sortBy / sortOrder, limit / offset,
// select, the pagination headers) and count, and 4xx errors. The 1.x line
// also sends timezone, endTime, streamMode… on create and update, and
// metadata filters on search and count; the 2.0.0 line does not (checked).
//
// Crons fire on minute ticks. So that a firing takes a second, not a
// minute, the server this file starts runs with the test-only
// WEFT_TEST_CRON_SPEED=60: its cron clock runs 60 times faster than real
// time (an every-minute cron fires every second). Against a server given
// with WEFT_URL, the firing tests run only when WEFT_TEST_CRON_SPEED is
// set (saying that server was started with it).

import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { useServer } from "./harness.mjs";
import { recordingClient, rejectsWith, rawRequest, assertDetail, threadGone } from "./helpers.mjs";
import { SDK_LINE } from "./sdk.mjs";

const FAST = !process.env.WEFT_URL || !!process.env.WEFT_TEST_CRON_SPEED;
// The harness starts the server in a before hook, with this process's environment.
process.env.WEFT_TEST_CRON_SPEED ??= "60";

// Every cron a test creates is deleted at the end (an every-minute cron
// fires every second here): a hook registered before useServer's, so it
// runs while the server is still up.
const created = new Set();
after(async () => {
  if (!server.url) return;
  for (const id of created) await raw("DELETE", `/runs/crons/${id}`);
});
const track = (cron) => (created.add(cron.cron_id), cron);

const server = useServer();
const sdk = () => recordingClient(server.url);
const raw = (method, path, body) => rawRequest(server.url, method, path, body);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const FOO_BAR_ID = "59bfe87c-f4fa-5cd5-8a97-4f116167b027"; // uuid5(NAMESPACE, "foo_bar")
const FOO_BAR_RESULT = { foo: "b", bar: ["a", "b"] };
const CRON_FIELDS = ["cron_id", "assistant_id", "thread_id", "on_run_completed", "end_time", "schedule", "timezone",
  "created_at", "updated_at", "user_id", "payload", "next_run_date", "metadata", "enabled"];
const firing = { skip: FAST ? false : "WEFT_URL without WEFT_TEST_CRON_SPEED: the server's crons fire once a minute" };


function assertCronShape(c) {
  for (const f of CRON_FIELDS) assert.ok(Object.hasOwn(c, f), `cron lacks ${f}: ${JSON.stringify(c)}`);
  assert.match(c.cron_id, UUID_RE);
  assert.match(c.assistant_id, UUID_RE);
  for (const f of ["created_at", "updated_at"]) assert.ok(!Number.isNaN(Date.parse(c[f])), `${f}: ${c[f]}`);
  assert.equal(typeof c.payload, "object");
  assert.equal(typeof c.metadata, "object");
  assert.equal(typeof c.enabled, "boolean");
  assert.equal(c.user_id, null);
}

/** The time the server schedules crons by (the "now" select field). */
async function serverNow() {
  const r = await raw("POST", "/runs/crons/search", { limit: 1, select: ["now"] });
  if (r.body.length) return Date.parse(r.body[0].now);
  return null;
}

/** next_run_date is a minute tick (seconds and below zero). */
async function assertNextTick(c) {
  const next = Date.parse(c.next_run_date);
  assert.ok(!Number.isNaN(next), `next_run_date ${c.next_run_date}`);
  assert.equal(next % 60_000, 0, `next_run_date ${c.next_run_date} is not on a minute`);
}

/** Polls fn until it returns a truthy value (within ms). */
async function until(what, fn, ms = 15_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** A fresh foo_bar assistant: crons made with it are this test's alone (a shared server has others). */
async function ownAssistant(client) {
  return (await client.assistants.create({ graphId: "foo_bar", metadata: { suite: "crons", tag: randomUUID() } })).assistant_id;
}

describe("create / createForThread", () => {
  test("create(assistant, payload): a stateless Cron (POST /runs/crons), payload and defaults", async () => {
    const { client, requests } = sdk();
    const c = track(await client.crons.create("foo_bar", {
      schedule: "*/5 * * * *", input: { foo: "" }, metadata: { owner: "sdk" }, config: { tags: ["t"] },
      onRunCompleted: "keep", multitaskStrategy: "enqueue", enabled: true,
    }));
    const req = requests.at(-1);
    assert.equal(req.method, "POST");
    assert.match(req.url, /\/runs\/crons$/);
    assert.deepEqual(
      { schedule: req.body.schedule, assistant_id: req.body.assistant_id, on_run_completed: req.body.on_run_completed },
      { schedule: "*/5 * * * *", assistant_id: "foo_bar", on_run_completed: "keep" },
    );
    assertCronShape(c);
    assert.equal(c.assistant_id, FOO_BAR_ID, "a graph name resolves to its system assistant");
    assert.equal(c.thread_id, null);
    assert.equal(c.on_run_completed, "keep");
    assert.equal(c.schedule, "*/5 * * * *");
    assert.equal(c.timezone, "UTC");
    assert.equal(c.end_time, null);
    assert.equal(c.enabled, true);
    assert.deepEqual(c.metadata, { owner: "sdk" });
    assert.equal(c.payload.assistant_id, FOO_BAR_ID);
    assert.deepEqual(c.payload.input, { foo: "" });
    assert.deepEqual(c.payload.config, { tags: ["t"] });
    await assertNextTick(c);
    assert.equal(new Date(c.next_run_date).getUTCMinutes() % 5, 0);
    // The default on_run_completed is delete.
    const d = track(await client.crons.create("foo_bar", { schedule: "0 0 * * *" }));
    assert.equal(d.on_run_completed, "delete");
  });

  test("createForThread: a Cron on the thread (POST /threads/{id}/runs/crons), disabled, strategy", async () => {
    const { client, requests } = sdk();
    const { thread_id } = await client.threads.create();
    const c = track(await client.crons.createForThread(thread_id, "foo_bar", {
      schedule: "0 9 * * 1-5", input: { foo: "" }, multitaskStrategy: "reject", enabled: false,
    }));
    assert.match(requests.at(-1).url, new RegExp(`/threads/${thread_id}/runs/crons$`));
    assert.equal(requests.at(-1).body.multitask_strategy, "reject");
    assertCronShape(c);
    assert.equal(c.thread_id, thread_id);
    assert.equal(c.on_run_completed, null, "on_run_completed is for stateless crons");
    assert.equal(c.enabled, false);
    assert.equal(c.payload.multitask_strategy, "reject");
    await assertNextTick(c);
  });

  test("errors: invalid schedule 422, unknown assistant 404 / 422, missing thread 404, bad ids 422", async () => {
    const { client } = sdk();
    await rejectsWith(client.crons.create("foo_bar", { schedule: "every minute" }), 422);
    await rejectsWith(client.crons.create("foo_bar", { schedule: "* * * * * *" }), 422);
    await rejectsWith(client.crons.create("foo_bar", { schedule: "0 0 30 2 *" }), 422);
    await rejectsWith(client.crons.create("foo_bar", {}), 422);
    await rejectsWith(client.crons.create(randomUUID(), { schedule: "* * * * *" }), 404);
    await rejectsWith(client.crons.create("no_such_graph", { schedule: "* * * * *" }), 422);
    await rejectsWith(client.crons.create("foo_bar", { schedule: "* * * * *", input: { bar: "not a list" } }), 422);
    await rejectsWith(client.crons.createForThread(randomUUID(), "foo_bar", { schedule: "* * * * *" }), 404);
    await rejectsWith(client.crons.createForThread("nope", "foo_bar", { schedule: "* * * * *" }), 422);
    await rejectsWith(client.crons.update("nope", { enabled: false }), 422);
    await rejectsWith(client.crons.update(randomUUID(), { enabled: false }), 404);
    // The timezone is a 1.x option; the wire is the same for both.
    assertDetail(await raw("POST", "/runs/crons", { assistant_id: "foo_bar", schedule: "* * * * *", timezone: "Mars/Base" }), 422);
    assertDetail(await raw("POST", "/runs/crons", { assistant_id: "foo_bar", schedule: "* * * * *", end_time: "soon" }), 422);
  });

  test("GET /info says crons: true", async () => {
    const r = await raw("GET", "/info");
    assert.equal(r.body.flags.crons, true);
  });
});

describe("firing", () => {
  test("a cron on a thread fires: an ordinary run with metadata.cron_id, joined to its result; delete stops it", firing, async () => {
    const { client } = sdk();
    const { thread_id } = await client.threads.create();
    const c = track(await client.crons.createForThread(thread_id, "foo_bar", {
      schedule: "* * * * *", input: { foo: "" }, metadata: { owner: "sdk" },
    }));
    const run = await until("a run of the cron", async () =>
      (await client.runs.list(thread_id)).find((r) => r.metadata?.cron_id === c.cron_id));
    assert.equal(run.metadata.owner, "sdk");
    assert.equal(run.assistant_id, FOO_BAR_ID);
    assert.deepEqual(await client.runs.join(thread_id, run.run_id), FOO_BAR_RESULT);
    assert.deepEqual((await client.threads.getState(thread_id)).values, FOO_BAR_RESULT);
    // Every tick is another run on the same thread, until the cron is deleted.
    await until("a second run", async () => (await client.runs.list(thread_id)).length >= 2);
    assert.equal(await client.crons.delete(c.cron_id), undefined);
    created.delete(c.cron_id);
    const n = (await client.runs.list(thread_id, { limit: 100 })).length;
    await sleep(2_500); // two more ticks' worth
    assert.equal((await client.runs.list(thread_id, { limit: 100 })).length, n, "a deleted cron fired");
  });

  test("a stateless cron: each run on a new thread, found by metadata cron_id; keep keeps it, delete makes it temporary", firing, async () => {
    const { client } = sdk();
    const keep = track(await client.crons.create("foo_bar", { schedule: "* * * * *", input: { foo: "" }, onRunCompleted: "keep" }));
    const threads = await until("two threads of the cron", async () => {
      const found = await client.threads.search({ metadata: { cron_id: keep.cron_id } });
      return found.length >= 2 && found;
    });
    assert.notEqual(threads[0].thread_id, threads[1].thread_id);
    for (const t of threads.slice(0, 2)) {
      const [run] = await client.runs.list(t.thread_id);
      assert.equal(run.metadata.cron_id, keep.cron_id);
      assert.deepEqual(await client.runs.join(t.thread_id, run.run_id), FOO_BAR_RESULT);
      assert.deepEqual((await client.threads.get(t.thread_id)).values, FOO_BAR_RESULT, "kept after the run");
    }

    const del = track(await client.crons.create("foo_bar", { schedule: "* * * * *", input: { foo: "" } }));
    const [t] = await until("a thread of the delete cron", async () => {
      const found = await client.threads.search({ metadata: { cron_id: del.cron_id } });
      return found.length >= 1 && found;
    });
    const [run] = await client.runs.list(t.thread_id);
    assert.equal(run.kwargs.temporary, true, "on_run_completed delete: a temporary run");
    // Its result delivered, a temporary run's thread is deleted (unread, the reaper deletes it a minute later).
    assert.deepEqual(await client.runs.join(t.thread_id, run.run_id), FOO_BAR_RESULT);
    await threadGone(client, t.thread_id);
  });

  test("update enabled: false stops the firing; enabled: true resumes from the next tick", firing, async () => {
    const { client } = sdk();
    const { thread_id } = await client.threads.create();
    const c = track(await client.crons.createForThread(thread_id, "foo_bar", { schedule: "* * * * *", input: { foo: "" } }));
    await until("a run", async () => (await client.runs.list(thread_id)).length >= 1);
    const off = await client.crons.update(c.cron_id, { enabled: false });
    assert.equal(off.enabled, false);
    const n = (await client.runs.list(thread_id, { limit: 100 })).length;
    await sleep(2_500);
    assert.equal((await client.runs.list(thread_id, { limit: 100 })).length, n, "a disabled cron fired");
    const on = await client.crons.update(c.cron_id, { enabled: true });
    assert.equal(on.enabled, true);
    assert.ok(Date.parse(on.next_run_date) > (await serverNow()) - 60_000);
    await until("a run after enabling", async () => (await client.runs.list(thread_id, { limit: 100 })).length > n);
  });
});

describe("update / delete", () => {
  test("update: schedule, metadata merged, input replaced, onRunCompleted, endTime", async () => {
    const { client, requests } = sdk();
    const c = track(await client.crons.create("foo_bar", { schedule: "0 0 * * *", input: { foo: "" }, metadata: { a: 1, b: 1 } }));
    const u = await client.crons.update(c.cron_id, {
      schedule: "30 6 * * *", metadata: { b: 2 }, input: { foo: "x" }, onRunCompleted: "keep",
      endTime: "2999-01-01T00:00:00Z",
    });
    const req = requests.at(-1);
    assert.equal(req.method, "PATCH");
    assert.match(req.url, new RegExp(`/runs/crons/${c.cron_id}$`));
    assert.deepEqual(req.body, { schedule: "30 6 * * *", metadata: { b: 2 }, input: { foo: "x" }, on_run_completed: "keep",
      end_time: "2999-01-01T00:00:00Z" });
    assertCronShape(u);
    assert.equal(u.schedule, "30 6 * * *");
    assert.deepEqual(u.metadata, { a: 1, b: 2 });
    assert.deepEqual(u.payload.input, { foo: "x" });
    assert.equal(u.on_run_completed, "keep");
    assert.equal(Date.parse(u.end_time), Date.parse("2999-01-01T00:00:00Z"));
    const next = new Date(u.next_run_date);
    assert.deepEqual([next.getUTCHours(), next.getUTCMinutes(), next.getUTCSeconds()], [6, 30, 0]);
    assert.ok(Date.parse(u.updated_at) >= Date.parse(c.updated_at));
    await rejectsWith(client.crons.update(c.cron_id, { schedule: "nope" }), 422);
    assert.equal((await raw("GET", `/runs/crons/${c.cron_id}`)).body.schedule, "30 6 * * *", "a refused update changed the cron");
  });

  test("delete: 204 → undefined; the cron is gone (404), a second delete is a 404", async () => {
    const { client, requests } = sdk();
    const c = await client.crons.create("foo_bar", { schedule: "0 0 * * *" });
    assert.equal(await client.crons.delete(c.cron_id), undefined);
    assert.equal(requests.at(-1).method, "DELETE");
    assert.match(requests.at(-1).url, new RegExp(`/runs/crons/${c.cron_id}$`));
    assertDetail(await raw("GET", `/runs/crons/${c.cron_id}`), 404);
    await rejectsWith(client.crons.delete(c.cron_id), 404);
  });
});

describe("search / count", () => {
  test("filters, sortBy / sortOrder, limit / offset, select, pagination headers; count", async () => {
    const { client, requests } = sdk();
    const aid = await ownAssistant(client);
    const { thread_id } = await client.threads.create();
    const daily = track(await client.crons.create(aid, { schedule: "0 0 * * *" }));
    await sleep(5);
    const onThread = track(await client.crons.createForThread(thread_id, aid, { schedule: "30 * * * *", enabled: false }));
    await sleep(5);
    const often = track(await client.crons.create(aid, { schedule: "*/5 * * * *" }));
    const ids = (list) => list.map((c) => c.cron_id);

    const all = await client.crons.search({ assistantId: aid });
    assert.deepEqual(requests.at(-1).body, { assistant_id: aid, limit: 10, offset: 0 });
    assert.deepEqual(ids(all), ids([often, onThread, daily]), "default: newest first");
    all.forEach(assertCronShape);
    assert.deepEqual(ids(await client.crons.search({ assistantId: aid, sortBy: "created_at", sortOrder: "asc" })),
      ids([daily, onThread, often]));
    const byNext = await client.crons.search({ assistantId: aid, sortBy: "next_run_date", sortOrder: "asc" });
    assert.deepEqual(ids(byNext).sort(), ids(all).sort());
    for (let i = 1; i < byNext.length; i++) assert.ok(Date.parse(byNext[i - 1].next_run_date) <= Date.parse(byNext[i].next_run_date));
    const byNextDesc = await client.crons.search({ assistantId: aid, sortBy: "next_run_date", sortOrder: "desc" });
    for (let i = 1; i < byNextDesc.length; i++) assert.ok(Date.parse(byNextDesc[i - 1].next_run_date) >= Date.parse(byNextDesc[i].next_run_date));
    assert.deepEqual(ids(await client.crons.search({ assistantId: aid, sortBy: "cron_id", sortOrder: "desc" })),
      ids([often, onThread, daily]), "cron ids are time-ordered");
    assert.deepEqual(ids(await client.crons.search({ threadId: thread_id })), [onThread.cron_id]);
    assert.deepEqual(ids(await client.crons.search({ assistantId: aid, enabled: false })), [onThread.cron_id]);
    assert.deepEqual(ids(await client.crons.search({ assistantId: aid, enabled: true })), ids([often, daily]));

    const page1 = await client.crons.search({ assistantId: aid, limit: 2, offset: 0, sortBy: "created_at", sortOrder: "asc" });
    const page2 = await client.crons.search({ assistantId: aid, limit: 2, offset: 2, sortBy: "created_at", sortOrder: "asc" });
    assert.deepEqual([...ids(page1), ...ids(page2)], ids([daily, onThread, often]));
    const r = await raw("POST", "/runs/crons/search", { assistant_id: aid, limit: 2 });
    assert.equal(r.headers.get("x-pagination-next"), "2");
    assert.equal(r.headers.get("x-pagination-total"), "3");
    const last = await raw("POST", "/runs/crons/search", { assistant_id: aid, limit: 2, offset: 2 });
    assert.equal(last.headers.get("x-pagination-next"), null);
    assert.equal(last.headers.get("x-pagination-total"), "3");

    const sel = await client.crons.search({ assistantId: aid, select: ["cron_id", "schedule"], sortBy: "created_at", sortOrder: "asc" });
    assert.deepEqual(sel, [daily, onThread, often].map((c) => ({ cron_id: c.cron_id, schedule: c.schedule })));
    await rejectsWith(client.crons.search({ sortBy: "schedule" }), 422);
    await rejectsWith(client.crons.search({ select: ["nope"] }), 422);

    assert.equal(await client.crons.count({ assistantId: aid }), 3);
    assert.deepEqual(requests.at(-1).body, { assistant_id: aid });
    assert.equal(await client.crons.count({ threadId: thread_id }), 1);
    assert.equal(await client.crons.count({ assistantId: randomUUID() }), 0);
  });
});

if (SDK_LINE === "1") describe("SDK 1.x-only options", () => {
  test("create / update send timezone, endTime, streamMode…; endTime null clears; search / count by metadata", async () => {
    const { client, requests } = sdk();
    const tag = randomUUID();
    const c = track(await client.crons.create("foo_bar", {
      schedule: "0 9 * * *", timezone: "America/New_York", endTime: "2999-01-01T00:00:00Z",
      streamMode: ["values", "updates"], streamResumable: true, durability: "exit", metadata: { tag },
    }));
    const body = requests.at(-1).body;
    assert.equal(body.timezone, "America/New_York");
    assert.equal(body.end_time, "2999-01-01T00:00:00Z");
    assert.equal(c.timezone, "America/New_York");
    assert.equal(Date.parse(c.end_time), Date.parse("2999-01-01T00:00:00Z"));
    assert.deepEqual(c.payload.stream_mode, ["values", "updates"]);
    assert.equal(c.payload.stream_resumable, true);
    assert.equal(c.payload.durability, "exit");
    // 09:00 in New York is 13:00 or 14:00 UTC.
    assert.ok([13, 14].includes(new Date(c.next_run_date).getUTCHours()), c.next_run_date);

    const u = await client.crons.update(c.cron_id, { timezone: "Asia/Tokyo", endTime: null, streamMode: "values" });
    assert.deepEqual(requests.at(-1).body, { timezone: "Asia/Tokyo", end_time: null, stream_mode: "values" });
    assert.equal(u.timezone, "Asia/Tokyo");
    assert.equal(u.end_time, null, "endTime: null clears it");
    assert.deepEqual(u.payload.stream_mode, ["values"]);
    assert.equal(new Date(u.next_run_date).getUTCHours(), 0, "09:00 in Tokyo is 00:00 UTC");
    await rejectsWith(client.crons.update(c.cron_id, { timezone: "Nowhere/Town" }), 422);

    const found = await client.crons.search({ metadata: { tag } });
    assert.deepEqual(requests.at(-1).body.metadata, { tag });
    assert.deepEqual(found.map((x) => x.cron_id), [c.cron_id]);
    assert.equal(await client.crons.count({ metadata: { tag } }), 1);
  });
});

if (SDK_LINE === "2") test("SDK 2.0.0 line: create and update send no timezone / endTime on create, search no metadata", async () => {
  const { client, requests } = sdk();
  const c = track(await client.crons.create("foo_bar", { schedule: "0 9 * * *", timezone: "Asia/Tokyo", endTime: "2999-01-01T00:00:00Z" }));
  assert.equal(requests.at(-1).body.timezone, undefined);
  assert.equal(requests.at(-1).body.end_time, undefined);
  assert.equal(c.timezone, "UTC");
  assert.equal(c.end_time, null);
  // update sends end_time on this line too
  const u = await client.crons.update(c.cron_id, { endTime: "2999-01-01T00:00:00Z", timezone: "Asia/Tokyo" });
  assert.deepEqual(requests.at(-1).body, { end_time: "2999-01-01T00:00:00Z" });
  assert.equal(u.timezone, "UTC");
  await client.crons.search({ metadata: { x: 1 } });
  assert.equal(requests.at(-1).body.metadata, undefined);
});
