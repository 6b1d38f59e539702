// executeRun against a recording stand-in for Weft's worker API (no
// server): which requests one run of foo_bar_js makes, and what it leaves.

import { test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { WeftSaver } from "../src/saver.mjs";
import { executeRun } from "../src/run.mjs";
import { graph } from "./fixtures/foo_bar.mjs";

function fakeRun(threadEmpty) {
  const calls = [];
  const client = {
    async request(method, path, body, opts) {
      calls.push({ path, body: JSON.parse(opts?.rawBody ?? JSON.stringify(body ?? null)) });
      return {};
    },
    async post(path, body) {
      calls.push({ path, body });
      return [];
    },
  };
  const saver = new WeftSaver(client);
  graph.checkpointer = saver;
  const claimed = {
    dispatch: { dispatch_id: randomUUID(), graph_id: "foo_bar_js", attempt: 1 },
    run: { run_id: randomUUID(), thread_id: randomUUID(), assistant_id: randomUUID(), kwargs: { input: {} }, metadata: {} },
    claim_token: randomUUID(),
    ...(threadEmpty ? { thread_empty: true } : {}),
  };
  return { calls, client, saver, claimed };
}

test("a new thread's run (thread_empty) reads no checkpoint; without the flag it reads one", async () => {
  for (const empty of [true, false]) {
    const { calls, client, saver, claimed } = fakeRun(empty);
    const res = await executeRun({ claimed, graph, saver, client, log: () => {}, heartbeatMs: 60_000 });
    assert.deepEqual(res, { outcome: "ended", status: "success" });
    const reads = calls.filter((c) => c.path.startsWith("/dispatch/checkpoints/"));
    assert.equal(reads.length, empty ? 0 : 1, JSON.stringify(calls.map((c) => c.path)));
    const commits = calls.filter((c) => c.path.endsWith("/commit"));
    const end = commits.at(-1).body;
    assert.deepEqual(end.end, { status: "success", result: { foo: "b", bar: ["a", "b"] } });
    // Every checkpoint of the run was committed, the last one complete.
    const cps = commits.flatMap((c) => c.body.checkpoints);
    assert.equal(cps.length, 4); // input, steps 0, 1, 2
    assert.equal(cps.at(-1).complete, true);
  }
});

test("no timer outlives a run (the heartbeat's sleep and the commits' linger end with it)", async () => {
  for (const lingerMs of [0, 60_000]) {
    const { client, saver, claimed } = fakeRun(true);
    const before = process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
    await executeRun({ claimed, graph, saver, client, log: () => {}, heartbeatMs: 60_000, lingerMs });
    await new Promise((r) => setImmediate(r));
    const after = process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
    assert.equal(after, before, `lingerMs ${lingerMs}`);
  }
});

test("a claim's traceparent reaches the run's commits (traceparent header of the same trace)", async () => {
  const { calls, saver, claimed } = fakeRun(true);
  const headers = [];
  const client = {
    async request(method, path, body, opts) {
      calls.push({ path, body: JSON.parse(opts?.rawBody ?? JSON.stringify(body ?? null)) });
      headers.push({ path, traceparent: opts?.headers?.traceparent });
      return {};
    },
    async post(path, body, opts) {
      headers.push({ path, traceparent: opts?.headers?.traceparent });
      return [];
    },
  };
  const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
  claimed.traceparent = `00-${traceId}-00f067aa0ba902b7-01`;
  const res = await executeRun({ claimed, graph, saver, client, log: () => {}, heartbeatMs: 60_000 });
  assert.deepEqual(res, { outcome: "ended", status: "success" });
  const commits = headers.filter((h) => h.path.endsWith("/commit"));
  assert.ok(commits.length >= 1);
  for (const c of commits) {
    // The run's own span's traceparent when @opentelemetry/api is
    // installed, else the claim's: the trace is the claim's either way.
    assert.match(c.traceparent ?? "", new RegExp(`^00-${traceId}-[0-9a-f]{16}-0[01]$`), JSON.stringify(c));
  }

  // A claim without one sends none.
  const plain = fakeRun(true);
  const seen = [];
  plain.client.request = async (method, path, body, opts) => {
    seen.push(opts?.headers?.traceparent);
    return {};
  };
  await executeRun({ claimed: plain.claimed, graph, saver: plain.saver, client: plain.client, log: () => {}, heartbeatMs: 60_000 });
  assert.ok(seen.length >= 1 && seen.every((t) => t === undefined), JSON.stringify(seen));
});

test("dumpJSON writes what LangGraph's serializer writes, plain data through JSON.stringify", async () => {
  const { HumanMessage, AIMessage } = await import("@langchain/core/messages");
  const saver = new WeftSaver(null);
  const viaSerde = async (v) => new TextDecoder().decode((await saver.serde.dumpsTyped(v))[1]);
  const cyclic = { a: 1 };
  cyclic.self = cyclic;
  let deep = 1;
  for (let i = 0; i < 40; i++) deep = [deep];
  const values = [null, true, 0, -0, 1.5, NaN, Infinity, "a\u2028b\ud800", [], {}, [1, [2, { a: "x" }]], { a: undefined },
    [1, , 3], [undefined], new Map([["a", 1]]), new Set([1]), new Date(0), { d: new Date(0) }, new HumanMessage("hi"),
    [new AIMessage("x")], Object.create(null), { toJSON: () => 5 }, cyclic, deep];
  for (const v of values) assert.equal(await saver.dumpJSON(v), await viaSerde(v));
});

test("the end's commit carries the last root checkpoint complete with its writes, also when an earlier commit sent them", async () => {
  const sent = [];
  const client = {
    async request(method, path, body, opts) {
      sent.push(JSON.parse(opts.rawBody));
      return {};
    },
  };
  const { Committer } = await import("../src/run.mjs");
  const c = new Committer({ client, dispatchId: "d", token: "t", onCancel() {}, onFail() {} });
  const complete = async () => '{"checkpoint":{"id":"cp2"},"complete":true}';
  c.addCheckpoint('{"checkpoint":{"id":"cp1"}}', async () => '{"checkpoint":{"id":"cp1"},"complete":true}', "cp1");
  c.addWrites('{"checkpoint_ns":"","checkpoint_id":"cp1","writes":[1]}', "", "cp1");
  c.addCheckpoint('{"checkpoint":{"id":"cp2"}}', complete, "cp2");
  c.addWrites('{"checkpoint_ns":"","checkpoint_id":"cp2","writes":["early"]}', "", "cp2");
  c.addWrites('{"checkpoint_ns":"sub","checkpoint_id":"cp2","writes":["sub"]}', "sub", "cp2");
  await c.flush(); // everything so far goes out; cp2 is sent as it was put
  c.addWrites('{"checkpoint_ns":"","checkpoint_id":"cp2","writes":["late"]}', "", "cp2");
  await c.end({ status: "success", json: '{"status":"success"}' });
  assert.equal(sent.length, 2);
  assert.deepEqual(sent[0].checkpoints.map((x) => [x.checkpoint.id, !!x.complete]), [["cp1", false], ["cp2", false]]);
  const end = sent[1];
  assert.deepEqual(end.checkpoints, [{ checkpoint: { id: "cp2" }, complete: true }]);
  // The writes under cp2: the late one (unsent) once, the early one again; not cp1's nor the subgraph's.
  assert.deepEqual(end.writes.map((w) => w.writes[0]).sort(), ["early", "late"]);

  // Without an earlier commit the complete rendering replaces the put.
  const sent2 = [];
  const c2 = new Committer({ client: { async request(m, p, b, o) { sent2.push(JSON.parse(o.rawBody)); return {}; } }, dispatchId: "d", token: "t", onCancel() {}, onFail() {} });
  c2.addCheckpoint('{"checkpoint":{"id":"cp9"}}', async () => '{"checkpoint":{"id":"cp9"},"complete":true}', "cp9");
  await c2.end({ status: "success", json: '{"status":"success"}' });
  assert.deepEqual(sent2.map((s) => s.checkpoints), [[{ checkpoint: { id: "cp9" }, complete: true }]]);
});
