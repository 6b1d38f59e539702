// Run streaming through the official JS SDK (@langchain/langgraph-sdk, both
// lines): runs.stream on a thread and stateless (POST …/runs/stream), the
// chunks it yields per stream mode (values, updates, messages-tuple → event
// "messages"), interrupts and errors in-band, onRunCreated from
// Content-Location, runs.joinStream (GET …/runs/{run_id}/stream) with
// Last-Event-ID replay of a finished run and live on a running one, and
// on_disconnect / cancel_on_disconnect; every stream mode (checkpoints,
// tasks and debug checked against the thread's history; custom, events and
// tools accepted, emitted by no built-in graph) and joinStream's streamMode
// filter; and the thread-level stream (threads.joinStream, GET
// /threads/{id}/stream: live events of every run, Last-Event-ID replay).
//
// Both lines yield {id, event, data} chunks — `id` is the SSE id, which Weft
// sets to the event's sequence number in the run's log — and both yield an
// in-band `error` event as a chunk (neither throws). The 1.x line, when a
// stream ends without an error event, GETs the run (its `isRunActive` check)
// and reconnects if it is still pending/running; the last test checks it
// never has to (the run's end and its "end" event commit together).

import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { useServer } from "./harness.mjs";
import { recordingClient, newTaggedThread, waitForStatus, collect, streamRequests } from "./helpers.mjs";

const server = useServer();
const sdk = () => recordingClient(server.url);
const newThread = (client) => newTaggedThread(client, "stream");

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const FOO_BAR_RESULT = { foo: "b", bar: ["a", "b"] };
/** The values + updates stream of foo_bar from an empty thread. */
const FOO_BAR_EVENTS = [
  ["values", { foo: "", bar: [] }],
  ["updates", { node_a: { foo: "a", bar: ["a"] } }],
  ["values", { foo: "a", bar: ["a"] }],
  ["updates", { node_b: { foo: "b", bar: ["b"] } }],
  ["values", FOO_BAR_RESULT],
];


/** Every chunk is {id, event, data}; returns [[event, data], …] without the metadata chunk, after checking it. */
function body(chunks, runId) {
  for (const c of chunks) {
    assert.deepEqual(Object.keys(c).sort(), ["data", "event", "id"], `chunk shape: ${JSON.stringify(c)}`);
  }
  assert.ok(chunks.length > 0, "empty stream");
  assert.equal(chunks[0].event, "metadata", `first chunk: ${JSON.stringify(chunks[0])}`);
  assert.deepEqual(Object.keys(chunks[0].data).sort(), ["attempt", "run_id"]);
  assert.match(chunks[0].data.run_id, UUID_RE);
  if (runId) assert.equal(chunks[0].data.run_id, runId);
  assert.equal(chunks[0].data.attempt, 1);
  assert.equal(chunks.filter((c) => c.event === "metadata").length, 1, "one metadata chunk");
  return chunks.slice(1).map((c) => [c.event, c.data]);
}

/** The chunks' ids as numbers; asserts they are non-negative integers, strictly increasing. */
function ids(chunks) {
  const n = chunks.map((c) => {
    assert.match(String(c.id), /^(0|[1-9][0-9]*)$/, `event id of ${JSON.stringify(c)}`);
    return Number(c.id);
  });
  for (let i = 1; i < n.length; i++) assert.ok(n[i] > n[i - 1], `ids not increasing: ${n}`);
  return n;
}

/** Requests made to a stream endpoint (POST …/runs/stream or GET …/stream). */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls cond every 20 ms until true (at most ms). */
async function waitUntil(cond, ms = 5_000) {
  const deadline = Date.now() + ms;
  while (!cond()) {
    assert.ok(Date.now() < deadline, "condition not met in time");
    await sleep(20);
  }
}


/** Awaits an SDK stream that must fail with HTTP `status` before yielding anything. */
async function streamRejects(gen, status) {
  let err;
  const got = [];
  try {
    for await (const c of gen) got.push(c);
  } catch (e) {
    err = e;
  }
  assert.ok(err, `expected HTTP ${status}, but the stream yielded ${JSON.stringify(got)}`);
  assert.deepEqual(got, []);
  assert.equal(err.constructor.name, "HTTPError", `expected the SDK's HTTPError, got ${err}`);
  assert.equal(err.status, status, err.message);
  assert.equal(typeof JSON.parse(err.text).detail, "string");
  return err;
}

describe("runs.stream on a thread", () => {
  test("streamMode [values, updates]: metadata, values, updates(node_a), values, updates(node_b), values; ids 0…5", async () => {
    const { client, requests } = sdk();
    const tid = await newThread(client);
    const created = [];
    const chunks = await collect(
      client.runs.stream(tid, "foo_bar", { input: { foo: "" }, streamMode: ["values", "updates"], onRunCreated: (m) => created.push(m) }),
    );
    const req = streamRequests(requests);
    assert.equal(req[0].method, "POST");
    assert.match(req[0].url, new RegExp(`/threads/${tid}/runs/stream$`));
    assert.deepEqual(req[0].body.stream_mode, ["values", "updates"]);
    assert.equal(req[0].body.assistant_id, "foo_bar");

    // onRunCreated comes from the stream response's Content-Location.
    assert.equal(created.length, 1);
    assert.deepEqual(created[0], { run_id: chunks[0].data.run_id, thread_id: tid });

    assert.deepEqual(body(chunks, created[0].run_id), FOO_BAR_EVENTS);
    assert.deepEqual(ids(chunks), [0, 1, 2, 3, 4, 5]);

    // The stream closes when the run has ended.
    const run = await client.runs.get(tid, created[0].run_id);
    assert.equal(run.status, "success");
    assert.equal((await client.threads.get(tid)).status, "idle");
    assert.deepEqual((await client.threads.get(tid)).values, FOO_BAR_RESULT);
  });

  test("default streamMode is values only", async () => {
    const { client, requests } = sdk();
    const tid = await newThread(client);
    const chunks = await collect(client.runs.stream(tid, "foo_bar", { input: { foo: "" } }));
    assert.equal(streamRequests(requests)[0].body.stream_mode, undefined, "the SDK sends no stream_mode");
    assert.deepEqual(body(chunks), FOO_BAR_EVENTS.filter(([e]) => e === "values"));
    // Ids number the events this stream sends, from 0 (metadata), as
    // LangGraph's servers do, although the run's log also holds its updates.
    assert.deepEqual(ids(chunks), [0, 1, 2, 3]);
    // A join of the finished run from -1 sends the same ids; one from id 1 the rest.
    const runId = chunks[0].data.run_id;
    assert.deepEqual(await collect(client.runs.joinStream(tid, runId, { lastEventId: "-1" })), chunks);
    assert.deepEqual(await collect(client.runs.joinStream(tid, runId, { lastEventId: "1" })), chunks.slice(2));

    // A second run on the same thread streams from the thread's state.
    const again = await collect(client.runs.stream(tid, "foo_bar", { input: { foo: "x" }, streamMode: "values" }));
    assert.deepEqual(body(again).at(-1), ["values", { foo: "b", bar: ["a", "b", "a", "b"] }]);
    assert.notEqual(again[0].data.run_id, chunks[0].data.run_id);
  });

  test("echo_chat with messages-tuple: \"messages\" chunks [AIMessageChunk, metadata] that add up to \"echo: hi\"", async () => {
    const { client, requests } = sdk();
    const tid = await newThread(client);
    const chunks = await collect(
      client.runs.stream(tid, "echo_chat", { input: { messages: [{ role: "user", content: "hi" }] }, streamMode: "messages-tuple" }),
    );
    assert.equal(streamRequests(requests)[0].body.stream_mode, "messages-tuple");
    const runId = chunks[0].data.run_id;
    const events = body(chunks, runId);
    ids(chunks);
    assert.ok(events.length >= 1, "no messages chunk");
    assert.deepEqual([...new Set(events.map(([e]) => e))], ["messages"], `only "messages" events: ${JSON.stringify(events)}`);
    for (const [, data] of events) {
      assert.ok(Array.isArray(data) && data.length === 2, `a [message, metadata] tuple: ${JSON.stringify(data)}`);
      const [msg, meta] = data;
      assert.equal(msg.type, "AIMessageChunk");
      assert.equal(typeof msg.content, "string");
      assert.equal(typeof msg.id, "string");
      assert.equal(msg.id, events[0][1][0].id, "chunks of one message share its id");
      assert.equal(meta.langgraph_node, "echo");
      assert.equal(meta.thread_id, tid);
      assert.equal(meta.run_id, runId);
      assert.equal(meta.graph_id, "echo_chat");
      assert.equal(typeof meta.langgraph_step, "number");
    }
    assert.equal(events.map(([, [m]]) => m.content).join(""), "echo: hi");

    // The streamed message is the one in the thread's state.
    const { values } = await client.threads.get(tid);
    assert.deepEqual(values.messages.map((m) => [m.type, m.content]), [["human", "hi"], ["ai", "echo: hi"]]);
    assert.equal(values.messages[1].id, events[0][1][0].id);
  });

  test("hitl: the interrupt arrives as values with __interrupt__ (and as updates when asked); resume by streaming a Command", async () => {
    const { client } = sdk();
    const tid = await newThread(client);
    const chunks = await collect(client.runs.stream(tid, "hitl", { input: { input: "x" } }));
    const events = body(chunks);
    ids(chunks);
    assert.ok(events.every(([e]) => e === "values"), JSON.stringify(events));
    assert.equal(events.filter(([, d]) => "__interrupt__" in d).length, 1, `the interrupt is sent once: ${JSON.stringify(events)}`);
    const [, last] = events.at(-1);
    assert.equal(last.input, "x");
    assert.equal(last.__interrupt__.length, 1, JSON.stringify(last));
    const [intr] = last.__interrupt__;
    assert.deepEqual(intr.value, { question: "approve?", input: "x" });
    assert.equal(typeof intr.id, "string");
    assert.equal((await client.threads.get(tid)).status, "interrupted");

    // Resuming streams the rest.
    const resumed = body(await collect(client.runs.stream(tid, "hitl", { command: { resume: "ok" }, streamMode: "values" })));
    assert.deepEqual(resumed.at(-1), ["values", { input: "x", answer: "ok", result: "x:ok" }]);
    assert.ok(resumed.every(([, d]) => !("__interrupt__" in d)), JSON.stringify(resumed));
    assert.equal((await client.threads.get(tid)).status, "idle");

    // With updates the interrupt is an updates chunk {__interrupt__: […]}.
    const t2 = await newThread(client);
    const upd = body(await collect(client.runs.stream(t2, "hitl", { input: { input: "y" }, streamMode: ["updates"] })));
    assert.ok(upd.every(([e]) => e === "updates"), JSON.stringify(upd));
    const [, lastUpd] = upd.at(-1);
    assert.deepEqual(Object.keys(lastUpd), ["__interrupt__"]);
    assert.deepEqual(lastUpd.__interrupt__.map((i) => i.value), [{ question: "approve?", input: "y" }]);
  });

  test("a failed run: an \"error\" chunk {error, message} ends the stream (yielded, not thrown, on both lines); run and thread error", async () => {
    const { client, requests } = sdk();
    const tid = await newThread(client);
    // Neither SDK line throws on an in-band error event: it is yielded like any other.
    const chunks = await collect(client.runs.stream(tid, "slow", { input: { ms: "x" }, streamMode: ["values"] }));
    const runId = chunks[0].data.run_id;
    const events = body(chunks, runId);
    ids(chunks);
    assert.deepEqual(events.slice(0, -1), [["values", { ms: "x", log: [] }]]);
    const [name, err] = events.at(-1);
    assert.equal(name, "error");
    assert.deepEqual(Object.keys(err).sort(), ["error", "message"]);
    assert.equal(err.error, "NodeError");
    assert.match(err.message, /ms must be a number/);
    assert.equal(streamRequests(requests).length, 1, "no reconnect after an error");

    assert.equal((await client.runs.get(tid, runId)).status, "error");
    assert.equal((await client.threads.get(tid)).status, "error");
    // The run's wait/join result says the same.
    assert.deepEqual(await client.runs.join(tid, runId), { __error__: err });
  });

  test("HTTP errors come before the stream: unknown thread → 404, unknown graph / bad input → 422, reject while busy → 409", async () => {
    const { client } = sdk();
    const tid = await newThread(client);
    await streamRejects(client.runs.stream(randomUUID(), "foo_bar", { input: { foo: "" } }), 404);
    await streamRejects(client.runs.stream(tid, "no_such_graph", { input: {} }), 422);
    await streamRejects(client.runs.stream(tid, "foo_bar", { input: { bar: "not a list" } }), 422);
    const busy = await client.runs.create(tid, "slow", { input: { ms: 5000 } });
    await streamRejects(client.runs.stream(tid, "slow", { input: { ms: 0 }, multitaskStrategy: "reject" }), 409);
    await client.runs.cancel(tid, busy.run_id, true);
    assert.deepEqual((await client.runs.list(tid)).map((r) => r.run_id), [busy.run_id]);
  });
});

describe("every stream mode", () => {
  test("checkpoints, tasks and debug: one checkpoints event per checkpoint the run wrote (as history reads them), task start/result pairs, debug wrapping both", async () => {
    const { client, requests } = sdk();
    const tid = await newThread(client);
    const chunks = await collect(client.runs.stream(tid, "foo_bar", { input: { foo: "" }, streamMode: ["checkpoints", "tasks", "debug"] }));
    assert.deepEqual(streamRequests(requests)[0].body.stream_mode, ["checkpoints", "tasks", "debug"]);
    const runId = chunks[0].data.run_id;
    const events = body(chunks, runId);
    ids(chunks);
    assert.deepEqual([...new Set(events.map(([e]) => e))].sort(), ["checkpoints", "debug", "tasks"]);

    // checkpoints: oldest first, the same checkpoints history returns newest first.
    const cps = events.filter(([e]) => e === "checkpoints").map(([, d]) => d);
    const history = await client.threads.getHistory(tid);
    assert.deepEqual(cps.map((c) => c.config.configurable.checkpoint_id), history.map((h) => h.checkpoint.checkpoint_id).reverse());
    assert.deepEqual(cps.map((c) => c.values), history.map((h) => h.values).reverse());
    assert.deepEqual(cps.map((c) => c.next), [["__start__"], ["node_a"], ["node_b"], []]);
    assert.deepEqual(cps.map((c) => c.metadata.step), [-1, 0, 1, 2]);
    assert.deepEqual(cps.map((c) => c.metadata.source), ["input", "loop", "loop", "loop"]);
    assert.deepEqual(cps.at(-1).values, FOO_BAR_RESULT);
    for (const [i, c] of cps.entries()) {
      assert.deepEqual(Object.keys(c).sort(), ["checkpoint", "config", "metadata", "next", "parent_checkpoint", "parent_config", "tasks", "values"]);
      assert.equal(c.config.configurable.thread_id, tid);
      assert.equal(c.checkpoint.checkpoint_id, c.config.configurable.checkpoint_id);
      assert.equal(c.metadata.run_id, runId);
      assert.deepEqual(c.tasks.map((t) => t.name), c.next);
      if (i === 0) assert.equal(c.parent_config, null);
      else assert.equal(c.parent_config.configurable.checkpoint_id, cps[i - 1].config.configurable.checkpoint_id);
    }

    // tasks: start {id, name, input, triggers} then result {id, name, error, result, interrupts} per node.
    const tasks = events.filter(([e]) => e === "tasks").map(([, d]) => d);
    assert.deepEqual(tasks.map((t) => [t.name, "input" in t ? "start" : "result"]),
      [["node_a", "start"], ["node_a", "result"], ["node_b", "start"], ["node_b", "result"]]);
    assert.deepEqual(tasks[0].input, { foo: "", bar: [] });
    assert.deepEqual(tasks[1], { id: tasks[0].id, name: "node_a", error: null, result: { foo: "a", bar: ["a"] }, interrupts: [] });
    assert.deepEqual(tasks[2].input, { foo: "a", bar: ["a"] });
    assert.deepEqual(tasks[3].result, { foo: "b", bar: ["b"] });
    assert.equal(tasks[0].id, cps[1].tasks[0].id, "the task of a checkpoint is the task that runs next");
    assert.ok(Array.isArray(tasks[0].triggers) && tasks[0].triggers.length > 0);

    // debug: {type, step, timestamp, payload} — the same payloads, in the same order.
    const debug = events.filter(([e]) => e === "debug").map(([, d]) => d);
    const kind = { checkpoint: "checkpoints", task: "tasks", task_result: "tasks" };
    assert.deepEqual(debug.map((d) => d.type), ["checkpoint", "checkpoint", "task", "task_result", "checkpoint", "task", "task_result", "checkpoint"]);
    const plain = events.filter(([e]) => e !== "debug");
    assert.deepEqual(debug.map((d) => [kind[d.type], d.payload]), plain);
    for (const d of debug) {
      assert.ok(!Number.isNaN(Date.parse(d.timestamp)), d.timestamp);
      assert.equal(typeof d.step, "number");
    }
  });

  test("tasks on hitl: the interrupted task's result lists its interrupt", async () => {
    const { client } = sdk();
    const tid = await newThread(client);
    const events = body(await collect(client.runs.stream(tid, "hitl", { input: { input: "x" }, streamMode: "tasks" })));
    const ask = events.filter(([e, d]) => e === "tasks" && d.name === "ask").map(([, d]) => d);
    assert.equal(ask.length, 2, JSON.stringify(events));
    assert.deepEqual(ask[1].interrupts.map((i) => i.value), [{ question: "approve?", input: "x" }]);
    const state = await client.threads.getState(tid);
    assert.equal(ask[1].interrupts[0].id, state.tasks[0].interrupts[0].id);
  });

  test("custom, events and tools are accepted; the built-in graphs emit none of them (metadata only), and the run succeeds", async () => {
    const { client, requests } = sdk();
    const tid = await newThread(client);
    const chunks = await collect(client.runs.stream(tid, "foo_bar", { input: { foo: "" }, streamMode: ["custom", "events", "tools"] }));
    assert.deepEqual(streamRequests(requests)[0].body.stream_mode, ["custom", "events", "tools"]);
    assert.deepEqual(body(chunks), []);
    const run = await client.runs.get(tid, chunks[0].data.run_id);
    assert.equal(run.status, "success");
    assert.deepEqual(run.kwargs.stream_mode, ["custom", "events", "tools"]);
    assert.deepEqual((await client.threads.get(tid)).values, FOO_BAR_RESULT);
  });

  test("all modes at once on echo_chat: each family arrives under its event name, values last", async () => {
    const { client } = sdk();
    const tid = await newThread(client);
    const modes = ["values", "updates", "messages-tuple", "custom", "debug", "checkpoints", "tasks", "events"];
    const events = body(await collect(client.runs.stream(tid, "echo_chat", { input: { messages: [{ role: "user", content: "all" }] }, streamMode: modes })));
    assert.deepEqual([...new Set(events.map(([e]) => e))].sort(), ["checkpoints", "debug", "messages", "tasks", "updates", "values"]);
    assert.equal(events.filter(([e]) => e === "messages").map(([, [m]]) => m.content).join(""), "echo: all");
    assert.deepEqual(events.filter(([e]) => e === "updates").map(([, d]) => Object.keys(d)), [["echo"]]);
    const lastValues = events.filter(([e]) => e === "values").at(-1)[1];
    assert.deepEqual(lastValues.messages.map((m) => m.content), ["all", "echo: all"]);
  });

  test("joinStream streamMode picks modes out of a resumable run's log", async () => {
    const { client } = sdk();
    const tid = await newThread(client);
    const original = await collect(client.runs.stream(tid, "foo_bar", { input: { foo: "" }, streamMode: ["values", "checkpoints", "tasks"], streamResumable: true }));
    const runId = original[0].data.run_id;
    const cps = await collect(client.runs.joinStream(tid, runId, { lastEventId: "-1", streamMode: "checkpoints" }));
    assert.deepEqual(cps, original.filter((c) => c.event === "metadata" || c.event === "checkpoints"));
    const two = await collect(client.runs.joinStream(tid, runId, { lastEventId: "-1", streamMode: ["tasks", "values"] }));
    assert.deepEqual(two, original.filter((c) => c.event !== "checkpoints"));
  });
});

describe("threads.joinStream (GET /threads/{id}/stream)", () => {
  /** Reads a thread stream in the background until stop() (the stream never ends on its own). */
  function follow(client, tid, options = {}) {
    const ac = new AbortController();
    const chunks = [];
    let error = null;
    const done = (async () => {
      try {
        for await (const c of client.threads.joinStream(tid, { ...options, signal: ac.signal })) chunks.push(c);
      } catch (e) {
        if (e.name !== "AbortError") error = e;
      }
    })();
    return { chunks, stop: async () => { ac.abort(); await done; return error; }, done };
  }

  test("live: every event of each run on the thread, in order; Last-Event-ID replays after an id it sent", async () => {
    const { client, requests } = sdk();
    const tid = await newThread(client);
    const live = follow(client, tid);
    await sleep(150);
    const r1 = await client.runs.create(tid, "foo_bar", { input: { foo: "" }, streamMode: ["values", "updates"] });
    await client.runs.join(tid, r1.run_id);
    const r2 = await client.runs.create(tid, "foo_bar", { input: { foo: "x" } });
    await client.runs.join(tid, r2.run_id);
    await waitUntil(() => live.chunks.filter((c) => c.event === "metadata").length === 2 && live.chunks.at(-1).event === "values"
      && live.chunks.at(-1).data.bar.length === 4);
    assert.equal(await live.stop(), null);
    const req = streamRequests(requests)[0];
    assert.equal(req.method, "GET");
    assert.equal(new URL(req.url).pathname, `/threads/${tid}/stream`);

    const got = live.chunks.map((c) => [c.event, c.data]);
    const metas = got.filter(([e]) => e === "metadata").map(([, d]) => d.run_id);
    assert.deepEqual(metas, [r1.run_id, r2.run_id]);
    const first = got.slice(0, got.findIndex(([e, d]) => e === "metadata" && d.run_id === r2.run_id));
    assert.deepEqual(first.filter(([e]) => e === "values").map(([, d]) => d), [{ foo: "", bar: [] }, { foo: "a", bar: ["a"] }, FOO_BAR_RESULT]);
    assert.deepEqual(got.at(-1), ["values", { foo: "b", bar: ["a", "b", "a", "b"] }]);
    const idsSeen = live.chunks.map((c) => c.id);
    assert.ok(idsSeen.every((id) => typeof id === "string" && id.length > 0), `ids: ${idsSeen}`);
    assert.equal(new Set(idsSeen).size, idsSeen.length, "ids are unique");

    // Resume after the third event: the rest is replayed, then it stays open.
    const resumed = follow(client, tid, { lastEventId: live.chunks[2].id });
    await waitUntil(() => resumed.chunks.length >= live.chunks.length - 3);
    assert.equal(await resumed.stop(), null);
    assert.deepEqual(resumed.chunks, live.chunks.slice(3));
  });

  test("an unknown thread → 404; a Last-Event-ID it never sent → 422", async () => {
    const { client } = sdk();
    await streamRejects(client.threads.joinStream(randomUUID()), 404);
    const tid = await newThread(client);
    await streamRejects(client.threads.joinStream(tid, { lastEventId: "garbage" }), 422);
  });
});

describe("stateless runs.stream(null, …)", () => {
  test("POST /runs/stream: metadata, values…; onRunCreated without a thread id; messages-tuple + values", async () => {
    const { client, requests } = sdk();
    const created = [];
    const chunks = await collect(
      client.runs.stream(null, "foo_bar", { input: { foo: "" }, streamMode: ["values", "updates"], onRunCreated: (m) => created.push(m) }),
    );
    const req = streamRequests(requests);
    assert.equal(req.length, 1);
    assert.match(req[0].url, /\/runs\/stream$/);
    assert.doesNotMatch(req[0].url, /\/threads\//);
    // Content-Location of a stateless run is /runs/{run_id}: no thread id.
    assert.deepEqual(created, [{ run_id: chunks[0].data.run_id, thread_id: undefined }]);
    assert.deepEqual(body(chunks, created[0].run_id), FOO_BAR_EVENTS);
    assert.deepEqual(ids(chunks), [0, 1, 2, 3, 4, 5]);

    // echo_chat streams its messages statelessly too.
    const chat = body(await collect(client.runs.stream(null, "echo_chat", {
      input: { messages: [{ role: "user", content: "yo" }] },
      streamMode: ["messages-tuple", "values"],
    })));
    assert.equal(chat.filter(([e]) => e === "messages").map(([, [m]]) => m.content).join(""), "echo: yo");
    assert.deepEqual(chat.at(-1)[1].messages.map((m) => [m.type, m.content]), [["human", "yo"], ["ai", "echo: yo"]]);
  });
});

describe("runs.joinStream", () => {
  test("a finished run: lastEventId -1 replays every event; an id in the middle only later ones; none: nothing", async () => {
    const { client, requests } = sdk();
    const tid = await newThread(client);
    const original = await collect(
      client.runs.stream(tid, "foo_bar", { input: { foo: "" }, streamMode: ["values", "updates"], streamResumable: true }),
    );
    assert.equal(streamRequests(requests)[0].body.stream_resumable, true);
    const runId = original[0].data.run_id;
    assert.deepEqual(body(original, runId), FOO_BAR_EVENTS);

    // -1: from the first event, metadata included, with the same ids.
    requests.length = 0;
    const all = await collect(client.runs.joinStream(tid, runId, { lastEventId: "-1" }));
    const req = streamRequests(requests);
    assert.equal(req.length, 1, `one join request: ${req.map((r) => r.url)}`);
    assert.equal(req[0].method, "GET");
    assert.equal(new URL(req[0].url).pathname, `/threads/${tid}/runs/${runId}/stream`);
    assert.equal(req[0].headers.get("last-event-id"), "-1");
    assert.deepEqual(all, original);

    // After the second event (the first values): the rest only.
    const mid = original[2].id;
    const rest = await collect(client.runs.joinStream(tid, runId, { lastEventId: mid }));
    assert.deepEqual(rest, original.slice(3));
    assert.deepEqual(rest.map((c) => [c.event, c.data]), FOO_BAR_EVENTS.slice(2));
    // After the last one: nothing.
    assert.deepEqual(await collect(client.runs.joinStream(tid, runId, { lastEventId: original.at(-1).id })), []);

    // streamMode narrows the replay (metadata always comes).
    const upd = await collect(client.runs.joinStream(tid, runId, { lastEventId: "-1", streamMode: "updates" }));
    assert.deepEqual(upd, original.filter((c) => c.event === "metadata" || c.event === "updates"));

    // Without Last-Event-ID only new events are sent: none, the run is over.
    requests.length = 0;
    assert.deepEqual(await collect(client.runs.joinStream(tid, runId)), []);
    assert.equal(streamRequests(requests)[0].headers.get("last-event-id"), null);
  });

  test("a running run created with streamResumable: a join sees the rest live; a -1 join sees it all", async () => {
    const { client, requests } = sdk();
    const tid = await newThread(client);
    const run = await client.runs.create(tid, "slow", {
      input: { ms: 300, tag: "j" },
      streamMode: ["values", "updates"],
      streamResumable: true,
    });
    assert.equal(requests.at(-1).body.stream_resumable, true);
    await waitForStatus(client, tid, run.run_id, "running");
    // A -1 join replays from the first event and then goes on live; once it
    // has seen node `first`'s update, a join without Last-Event-ID starts.
    const full = [];
    let live, liveStarted;
    for await (const c of client.runs.joinStream(tid, run.run_id, { lastEventId: "-1" })) {
      full.push(c);
      if (!live && c.event === "updates") {
        liveStarted = Date.now();
        live = collect(client.runs.joinStream(tid, run.run_id)).then((chunks) => ({ chunks, took: Date.now() - liveStarted }));
      }
    }
    assert.ok(live, `no updates event in ${JSON.stringify(full)}`);
    assert.deepEqual(body(full, run.run_id), [
      ["values", { ms: 300, tag: "j", log: [] }],
      ["updates", { first: { log: ["first:j"] } }],
      ["values", { ms: 300, tag: "j", log: ["first:j"] }],
      ["updates", { second: { log: ["second:j"] } }],
      ["values", { ms: 300, tag: "j", log: ["first:j", "second:j"] }],
    ]);
    ids(full);

    // The live join gets only what came after it joined — not the metadata
    // nor node first's update, but node second's, which took 300 ms — with
    // the same ids and data as the full stream, and closes when the run ends.
    const { chunks: rest, took } = await live;
    assert.ok(took >= 200, `the live join ended after ${took} ms, before node second could have run`);
    const seen = full.findIndex((c) => c.event === "updates");
    assert.ok(rest.length === full.length - seen - 1 || rest.length === full.length - seen - 2, `live join: ${JSON.stringify(rest)}`);
    assert.deepEqual(rest, full.slice(full.length - rest.length));
    assert.deepEqual(rest.slice(-2).map((c) => c.event), ["updates", "values"]);
    assert.equal((await client.runs.get(tid, run.run_id)).status, "success");
  });

  test("unknown run or thread → one error event with a 404 message, as the official servers send it", async () => {
    const { client } = sdk();
    const tid = await newThread(client);
    for (const [thread, run] of [[tid, randomUUID()], [randomUUID(), randomUUID()]]) {
      const got = [];
      for await (const c of client.runs.joinStream(thread, run, { lastEventId: "-1" })) got.push(c);
      assert.equal(got.length, 1, JSON.stringify(got));
      assert.equal(got[0].event, "error");
      assert.match(got[0].data.message, /^404: (Run|Thread) /);
    }
  });
});

describe("disconnects", () => {
  /** Streams until the first chunk arrives, then aborts; returns the chunks seen. */
  async function streamThenAbort(gen, controller) {
    const seen = [];
    try {
      for await (const c of gen) {
        seen.push(c);
        controller.abort();
        break;
      }
    } catch (e) {
      assert.equal(e.name, "AbortError", `unexpected ${e}`);
    }
    return seen;
  }

  test("onDisconnect cancel: aborting the stream cancels the run (interrupted)", async () => {
    const { client, requests } = sdk();
    const tid = await newThread(client);
    const ac = new AbortController();
    const created = [];
    const seen = await streamThenAbort(
      client.runs.stream(tid, "slow", {
        input: { ms: 5000, tag: "d" },
        onDisconnect: "cancel",
        signal: ac.signal,
        onRunCreated: (m) => created.push(m),
      }),
      ac,
    );
    assert.equal(streamRequests(requests)[0].body.on_disconnect, "cancel");
    assert.equal(seen[0].event, "metadata");
    const t0 = Date.now();
    await waitForStatus(client, tid, created[0].run_id, "interrupted", 4_000);
    assert.ok(Date.now() - t0 < 4_000);
    assert.equal((await client.threads.get(tid)).status, "interrupted");
  });

  test("default on_disconnect (continue): the run finishes after the client left", async () => {
    const { client } = sdk();
    const tid = await newThread(client);
    const ac = new AbortController();
    const created = [];
    await streamThenAbort(
      client.runs.stream(tid, "slow", { input: { ms: 200, tag: "c" }, signal: ac.signal, onRunCreated: (m) => created.push(m) }),
      ac,
    );
    await waitForStatus(client, tid, created[0].run_id, "success");
    assert.deepEqual((await client.threads.get(tid)).values.log, ["first:c", "second:c"]);
  });

  test("joinStream cancelOnDisconnect: aborting the join cancels the run", async () => {
    const { client, requests } = sdk();
    const tid = await newThread(client);
    const run = await client.runs.create(tid, "slow", { input: { ms: 5000, tag: "j" } });
    await waitForStatus(client, tid, run.run_id, "running");
    const ac = new AbortController();
    const seen = await streamThenAbort(
      client.runs.joinStream(tid, run.run_id, { lastEventId: "-1", cancelOnDisconnect: true, signal: ac.signal }),
      ac,
    );
    assert.equal(new URL(streamRequests(requests)[0].url).searchParams.get("cancel_on_disconnect"), "1");
    assert.equal(seen[0].event, "metadata");
    await waitForStatus(client, tid, run.run_id, "interrupted", 4_000);
  });
});

// When a run stream closes, the run has ended: its status and the "end"
// event commit together, so runs.get right after the stream says success,
// the thread is idle, and the 1.x SDK (which checks isRunActive when a
// stream ends) never reconnects.
test("when a run stream closes the run has ended: runs.get says success, the thread is idle, no reconnect", async () => {
  const { client, requests } = sdk();
  const bad = [];
  for (let i = 0; i < 40; i++) {
    const tid = await newThread(client);
    requests.length = 0;
    const chunks = await collect(client.runs.stream(tid, "echo_chat", { input: { messages: [{ role: "user", content: `m${i}` }] } }));
    const runId = chunks[0].data.run_id;
    const [run, thread] = await Promise.all([client.runs.get(tid, runId), client.threads.get(tid)]);
    const streams = streamRequests(requests).length;
    if (run.status !== "success" || thread.status !== "idle" || streams !== 1) {
      bad.push({ i, run: run.status, thread: thread.status, streamRequests: streams });
    }
  }
  assert.deepEqual(bad, []);
});
