// Failures: a worker killed with SIGKILL mid-run, a stale worker's commit,
// SIGTERM with runs in flight, and two workers sharing one graph. The
// server runs with a 2 s lease so lost claims come back quickly.

import { test } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { Client } from "@langchain/langgraph-sdk";
import { useWeft, post, get, until, sleep } from "./helpers.mjs";

const weft = useWeft({ WEFT_LEASE: "2s", WEFT_MAX_ATTEMPTS: "5" });
const client = () => new Client({ apiUrl: weft.url });

/** The run's dispatch attempts: [{worker, outcome}]. */
async function attempts(threadId, runId) {
  const { body } = await get(weft.url, `/threads/${threadId}/runs/${runId}/dispatches`);
  return body.flatMap((d) => d.attempts.map((a) => ({ worker: a.worker, outcome: a.outcome })));
}

/** The thread's checkpoints: [{step, source, run_id}] oldest first. */
async function checkpoints(threadId) {
  const h = await client().threads.getHistory(threadId, { limit: 1000 });
  return h.reverse().map((s) => ({ step: s.metadata.step, source: s.metadata.source, run_id: s.metadata.run_id, id: s.checkpoint.checkpoint_id }));
}

test("kill -9 mid-run: another worker retries it from the last checkpoint; it completes once, no checkpoint twice", async () => {
  const victim = await weft.startWorker(["--worker-id", "victim", "--graphs", "slow_js"]);
  const c = client();
  const t = await c.threads.create();
  // An input long enough to be stored by reference once its checkpoint is
  // committed (the nodes overwrite worker).
  const input = { ms: 400, worker: "w".repeat(150) };
  const run = await c.runs.create(t.thread_id, "slow_js", { input });
  // Let it get past its first step, then kill it without warning.
  await until(async () => (await c.threads.getState(t.thread_id)).values.steps?.length >= 1, 20_000, "first step");
  await victim.kill();
  const rescuer = await weft.startWorker(["--worker-id", "rescuer", "--graphs", "slow_js"]);
  const done = await c.runs.join(t.thread_id, run.run_id);
  assert.deepEqual(done.steps, ["one", "two", "three"]);
  assert.equal(done.worker, String(rescuer.pid), "the last step ran on the rescuer");
  const got = await c.runs.get(t.thread_id, run.run_id);
  assert.equal(got.status, "success");
  assert.deepEqual(got.kwargs.input, input, "the retried run's input reads as sent");
  const db = new pg.Client(weft.db);
  await db.connect();
  const { rows } = await db.query(`SELECT kwargs ? 'input_ref' AS ref FROM runs WHERE run_id = $1`, [run.run_id]);
  await db.end();
  assert.deepEqual(rows, [{ ref: true }], "stored by reference");
  const tries = await attempts(t.thread_id, run.run_id);
  assert.deepEqual(tries.map((a) => [a.worker, a.outcome]), [["victim", "lease_expired"], ["rescuer", "success"]]);
  const cps = await checkpoints(t.thread_id);
  assert.deepEqual(cps.map((x) => `${x.source}:${x.step}`), ["input:-1", "loop:0", "loop:1", "loop:2", "loop:3"], "one checkpoint per step");
  assert.ok(cps.every((x) => x.run_id === run.run_id));
  for (let i = 1; i < cps.length; i++) {
    const s = await c.threads.getState(t.thread_id, cps[i].id);
    assert.equal(s.parent_checkpoint.checkpoint_id, cps[i - 1].id, "one chain, no fork");
  }
  assert.equal((await c.threads.get(t.thread_id)).status, "idle");
  await rescuer.stop();
});

test("a stale worker's commit is refused (409) once its lease is gone", async () => {
  // Register foo_bar_js, then leave its runs to this test.
  await (await weft.startWorker(["--graphs", "foo_bar_js"])).stop();
  const c = client();
  const t = await c.threads.create();
  const run = await c.runs.create(t.thread_id, "foo_bar_js", { input: {} });
  const claim = await post(weft.url, "/dispatch/claim", { worker_id: "stale", graph_ids: ["foo_bar_js"], wait_ms: 5000 });
  assert.equal(claim.body.length, 1);
  const [{ dispatch, claim_token }] = claim.body;
  assert.equal(dispatch.run_id, run.run_id);
  await sleep(3000); // no heartbeat: the lease (2 s) runs out and the reaper takes the claim back
  const late = await post(weft.url, `/dispatch/${dispatch.dispatch_id}/commit`, {
    claim_token,
    events: [{ event: "values", data: { foo: "stale" } }],
    end: { status: "success", result: { foo: "stale" } },
  });
  assert.equal(late.status, 409, JSON.stringify(late.body));
  assert.equal((await post(weft.url, `/dispatch/${dispatch.dispatch_id}/heartbeat`, { claim_token })).status, 409);
  // A real worker then runs it; nothing of the stale worker is visible.
  const w = await weft.startWorker(["--graphs", "foo_bar_js"]);
  assert.deepEqual(await c.runs.join(t.thread_id, run.run_id), { foo: "b", bar: ["a", "b"] });
  const events = [];
  for await (const ch of c.runs.joinStream(t.thread_id, run.run_id, { lastEventId: "-1", streamMode: ["values"] })) events.push(ch);
  assert.ok(events.length > 0 && !JSON.stringify(events).includes("stale"), "nothing of the stale worker in the log");
  assert.equal((await c.threads.getState(t.thread_id)).values.foo, "b");
  await w.stop();
});

test("two workers serving one graph share the runs; none runs twice", async () => {
  const a = await weft.startWorker(["--worker-id", "share-a", "--graphs", "slow_js", "--concurrency", "3"]);
  const b = await weft.startWorker(["--worker-id", "share-b", "--graphs", "slow_js", "--concurrency", "3"]);
  const c = client();
  const runs = [];
  for (let i = 0; i < 12; i++) {
    const t = await c.threads.create();
    runs.push({ t: t.thread_id, r: (await c.runs.create(t.thread_id, "slow_js", { input: { ms: 100 } })).run_id });
  }
  const results = await Promise.all(runs.map(({ t, r }) => c.runs.join(t, r)));
  const byWorker = new Map();
  for (const [i, res] of results.entries()) {
    assert.deepEqual(res.steps, ["one", "two", "three"]);
    const tries = await attempts(runs[i].t, runs[i].r);
    assert.equal(tries.length, 1, `run ${i} claimed once: ${JSON.stringify(tries)}`);
    assert.equal(tries[0].outcome, "success");
    byWorker.set(tries[0].worker, (byWorker.get(tries[0].worker) ?? 0) + 1);
    const cps = await checkpoints(runs[i].t);
    assert.equal(cps.length, 5, "input, start and 3 steps, once each");
  }
  assert.ok(byWorker.get("share-a") > 0 && byWorker.get("share-b") > 0, `both workers ran some: ${JSON.stringify([...byWorker])}`);
  await Promise.all([a.stop(), b.stop()]);
});

test("SIGTERM gives running runs back (nack) after the grace period; another worker finishes them", async () => {
  const leaving = await weft.startWorker(["--worker-id", "leaving", "--graphs", "slow_js", "--grace-ms", "0"]);
  const c = client();
  const t = await c.threads.create();
  const run = await c.runs.create(t.thread_id, "slow_js", { input: { ms: 800 } });
  await until(async () => (await c.runs.get(t.thread_id, run.run_id)).status === "running", 20_000, "running");
  await sleep(200);
  await leaving.stop();
  assert.ok(leaving.logs().some((l) => l.msg === "run given back"), "the run was nacked");
  const next = await weft.startWorker(["--worker-id", "next", "--graphs", "slow_js"]);
  const done = await c.runs.join(t.thread_id, run.run_id);
  assert.deepEqual(done.steps, ["one", "two", "three"]);
  const tries = await attempts(t.thread_id, run.run_id);
  assert.deepEqual(tries.map((x) => [x.worker, x.outcome]), [["leaving", "nacked"], ["next", "success"]]);
  await next.stop();
});
