// Graph-level stream transformers (compile({transformers})) in a run of the
// worker: they see the run's protocol events, and each final-value
// projection is recorded once as a "custom:<key>" event before the run's end.

import { test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { StateGraph, Annotation, START, END } from "@langchain/langgraph";
import { WeftSaver } from "../src/saver.mjs";
import { executeRun } from "../src/run.mjs";

const State = Annotation.Root({ n: Annotation({ reducer: (a, b) => a + b, default: () => 0 }) });

// Counts the values events and the updates of node "b"; `never` is a
// projection that never settles (left out), `plain` is no final value.
const counter = () => {
  let values = 0;
  let updatesOfB = 0;
  let done;
  const count = new Promise((r) => (done = r));
  return {
    init: () => ({ count, never: new Promise(() => {}), plain: 7 }),
    process(event) {
      if (event.method === "values") values += 1;
      if (event.method === "updates" && event.params.data?.node === "b") updatesOfB += 1;
      return true;
    },
    finalize() {
      done({ values, updatesOfB });
    },
  };
};

function graphWith(transformers) {
  return new StateGraph(State)
    .addNode("a", () => ({ n: 1 }))
    .addNode("b", () => ({ n: 2 }))
    .addEdge(START, "a")
    .addEdge("a", "b")
    .addEdge("b", END)
    .compile(transformers ? { transformers } : undefined);
}

async function run(graph) {
  const events = [];
  const client = {
    async request(method, path, body, opts) {
      const b = JSON.parse(opts?.rawBody ?? JSON.stringify(body ?? null));
      for (const e of b?.events ?? []) events.push(e);
      return {};
    },
    async post() {
      return [];
    },
  };
  graph.checkpointer = new WeftSaver(client);
  const claimed = {
    dispatch: { dispatch_id: randomUUID(), graph_id: "g", attempt: 1 },
    run: { run_id: randomUUID(), thread_id: randomUUID(), assistant_id: randomUUID(), kwargs: { input: {} }, metadata: {} },
    claim_token: randomUUID(),
    thread_empty: true,
  };
  const res = await executeRun({ claimed, graph, saver: graph.checkpointer, client, log: () => {}, heartbeatMs: 60_000 });
  assert.deepEqual(res, { outcome: "ended", status: "success" });
  return events;
}

test("a transformer's final value is recorded as custom:<key> before the end; without transformers nothing is", async () => {
  const events = await run(graphWith([counter]));
  const names = events.map((e) => e.event);
  const custom = events.filter((e) => e.event.startsWith("custom:"));
  assert.equal(custom.length, 1, `events: ${names}`);
  assert.equal(custom[0].event, "custom:count");
  // Every values event of the run (after a, after b) and the update of b went through it.
  assert.equal(names.filter((n) => n === "values").length, 2, `events: ${names}`);
  assert.deepEqual(custom[0].data, { values: 2, updatesOfB: 1 });
  assert.equal(names.at(-1), "end");
  assert.ok(names.indexOf("custom:count") < names.indexOf("end"));
  // The run's own modes are unchanged: no messages or tools events recorded.
  assert.ok(!names.includes("messages") && !names.includes("tools"), `events: ${names}`);

  const plain = await run(graphWith(null));
  assert.deepEqual(plain.filter((e) => e.event.startsWith("custom")), []);
});
