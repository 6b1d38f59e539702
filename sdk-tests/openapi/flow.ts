// The flow of a client generated from api/openapi.yaml: openapi-typescript's types (./schema, generated at test
// time next to a copy of this file, default options) and openapi-fetch, type-checked with tsc --strict, then run
// against a server by clients.test.mjs.
//
// It reads answers the natural way (thread.metadata.topic, state.values.foo, item.value.colour,
// state.checkpoint?.checkpoint_id) and uses what it reads as the types say (a string's methods, an array's), so a
// schema that is wrong for a client fails compilation: a free-form object declared with no members
// (Record<string, never>: every member is never, and never has no methods), a field missing from a schema, a
// nullable field not declared nullable (or declared nullable for nothing), an enum without a value the server
// sends. Each step then checks at run time what the server answered.

import createClient from "openapi-fetch";
import type { paths } from "./schema.js";

type Log = (msg: string) => void;

class FlowError extends Error {}

function check(cond: boolean, what: string): asserts cond {
  if (!cond) throw new FlowError(what);
}

/** The data of a 2xx answer, or an error naming the step, its status and body. */
function ok<T>(r: { data?: T; error?: unknown; response: Response }, step: string): T {
  if (!r.response.ok || r.data === undefined) {
    throw new FlowError(`${step}: ${r.response.status} ${JSON.stringify(r.error ?? null)}`);
  }
  return r.data;
}

/** A 2xx answer without a body (204). */
function done(r: { error?: unknown; response: Response }, step: string): void {
  if (!r.response.ok) throw new FlowError(`${step}: ${r.response.status} ${JSON.stringify(r.error ?? null)}`);
}

/** The events of a text/event-stream answer. */
function sse(text: string): { event: string; data: string }[] {
  const out: { event: string; data: string }[] = [];
  for (const block of text.replace(/\r\n/g, "\n").split("\n\n")) {
    let event = "message";
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
    if (data.length) out.push({ event, data: data.join("\n") });
  }
  return out;
}

export async function flow(baseUrl: string, apiKey: string | undefined, log: Log): Promise<void> {
  const client = createClient<paths>({ baseUrl, headers: apiKey ? { "x-api-key": apiKey } : {} });
  const suite = `openapi-ts-${Date.now()}`;

  // threads: create / get / patch / search / count / copy / delete
  const thread = ok(await client.POST("/threads", { body: { metadata: { suite, topic: "cats" } } }), "create thread");
  const thread_id = thread.thread_id;
  const topic = thread.metadata.topic;
  check(typeof topic === "string" && topic.toUpperCase() === "CATS", `thread metadata ${JSON.stringify(thread.metadata)}`);
  check(thread.status === "idle", `new thread status ${thread.status}`);
  const got = ok(await client.GET("/threads/{thread_id}", { params: { path: { thread_id } } }), "get thread");
  check(got.thread_id === thread_id, "get thread: id");
  const patched = ok(
    await client.PATCH("/threads/{thread_id}", { params: { path: { thread_id } }, body: { metadata: { topic: "dogs" } } }),
    "patch thread",
  );
  const topic2 = patched.metadata.topic;
  check(typeof topic2 === "string" && topic2.startsWith("dog"), `patched metadata ${JSON.stringify(patched.metadata)}`);
  const found = ok(await client.POST("/threads/search", { body: { metadata: { suite }, limit: 10 } }), "search threads");
  check(found.length === 1 && found[0].thread_id === thread_id, `search threads: ${found.length}`);
  const count = ok(await client.POST("/threads/count", { body: { metadata: { suite } } }), "count threads");
  check(count === 1, `count threads: ${count}`);
  log("threads: create, get, patch, search, count");

  // runs: create + join, wait, stream, get, list, cancel
  const input = { foo: "" };
  const run = ok(
    await client.POST("/threads/{thread_id}/runs", { params: { path: { thread_id } }, body: { assistant_id: "foo_bar", input } }),
    "create run",
  );
  check(run.thread_id === thread_id, "run: thread id");
  const joined = ok(
    await client.GET("/threads/{thread_id}/runs/{run_id}/join", { params: { path: { thread_id, run_id: run.run_id } } }),
    "join run",
  );
  const joinedFoo = joined.foo;
  check(typeof joinedFoo === "string" && joinedFoo.length === 1, `join: ${JSON.stringify(joined)}`);
  const waited = ok(
    await client.POST("/threads/{thread_id}/runs/wait", { params: { path: { thread_id } }, body: { assistant_id: "foo_bar", input } }),
    "wait run",
  );
  const waitedBar = waited.bar;
  check(Array.isArray(waitedBar) && waitedBar.includes("b"), `wait: ${JSON.stringify(waited)}`);
  const text = ok(
    await client.POST("/threads/{thread_id}/runs/stream", {
      params: { path: { thread_id } },
      body: { assistant_id: "foo_bar", input, stream_mode: ["values"] },
      parseAs: "text",
    }),
    "stream run",
  );
  const events = sse(text);
  check(events[0]?.event === "metadata" && events.some((e) => e.event === "values"), `stream: ${text.slice(0, 300)}`);
  const got_run = ok(
    await client.GET("/threads/{thread_id}/runs/{run_id}", { params: { path: { thread_id, run_id: run.run_id } } }),
    "get run",
  );
  check(got_run.status === "success", `run status ${got_run.status}`);
  const runs = ok(await client.GET("/threads/{thread_id}/runs", { params: { path: { thread_id } } }), "list runs");
  check(runs.length === 3, `list runs: ${runs.length}`);
  const slow = ok(await client.POST("/threads", { body: {} }), "create thread (slow)");
  const srun = ok(
    await client.POST("/threads/{thread_id}/runs", {
      params: { path: { thread_id: slow.thread_id } },
      body: { assistant_id: "slow", input: { ms: 5000 } },
    }),
    "create slow run",
  );
  done(
    await client.POST("/threads/{thread_id}/runs/{run_id}/cancel", {
      params: { path: { thread_id: slow.thread_id, run_id: srun.run_id }, query: { wait: true } },
    }),
    "cancel run",
  );
  const cancelled = ok(
    await client.GET("/threads/{thread_id}/runs/{run_id}", { params: { path: { thread_id: slow.thread_id, run_id: srun.run_id } } }),
    "get cancelled run",
  );
  check(cancelled.status === "interrupted" || cancelled.status === "error", `cancelled run status ${cancelled.status}`);
  log("runs: create, join, wait, stream, get, list, cancel");

  // state and history
  const state = ok(await client.GET("/threads/{thread_id}/state", { params: { path: { thread_id } } }), "get state");
  const foo = state.values.foo;
  check(typeof foo === "string" && foo.toUpperCase() === "B", `state values ${JSON.stringify(state.values)}`);
  const bar = state.values.bar;
  check(Array.isArray(bar) && bar.slice(-2).join() === "a,b", `state values ${JSON.stringify(state.values)}`);
  const head = state.checkpoint?.checkpoint_id;
  check(typeof head === "string", "state: checkpoint");
  check(state.next.length === 0, `state next ${state.next}`);
  const history = ok(
    await client.POST("/threads/{thread_id}/history", { params: { path: { thread_id } }, body: { limit: 5 } }),
    "history",
  );
  check(history.length === 5 && history[0].checkpoint?.checkpoint_id === head, `history: ${history.length}`);
  const before = history[1].checkpoint?.checkpoint_id;
  check(typeof before === "string", "history: checkpoint");
  const at = ok(
    await client.GET("/threads/{thread_id}/state/{checkpoint_id}", { params: { path: { thread_id, checkpoint_id: before } } }),
    "state at checkpoint",
  );
  check(at.checkpoint?.checkpoint_id === before, "state at checkpoint: id");
  ok(await client.POST("/threads/{thread_id}/state", { params: { path: { thread_id } }, body: { values: { foo: "edited" } } }), "update state");
  const edited = ok(await client.GET("/threads/{thread_id}/state", { params: { path: { thread_id } } }), "get state (edited)");
  const editedFoo = edited.values.foo;
  check(typeof editedFoo === "string" && editedFoo.endsWith("edited"), `edited values ${JSON.stringify(edited.values)}`);
  const copy = ok(await client.POST("/threads/{thread_id}/copy", { params: { path: { thread_id } } }), "copy thread");
  check(copy.thread_id !== thread_id, "copy: new id");
  log("state: get, history (POST and GET), at a checkpoint, update; copy");

  // assistants: create / get / patch / search / versions / graph / schemas
  const assistant = ok(
    await client.POST("/assistants", { body: { graph_id: "foo_bar", name: "ts", metadata: { suite } } }),
    "create assistant",
  );
  const assistant_id = assistant.assistant_id;
  const aSuite = assistant.metadata.suite;
  check(typeof aSuite === "string" && aSuite.startsWith("openapi-ts"), `assistant metadata ${JSON.stringify(assistant.metadata)}`);
  check(assistant.version === 1 && assistant.graph_id === "foo_bar", "assistant: version, graph");
  const gotA = ok(await client.GET("/assistants/{assistant_id}", { params: { path: { assistant_id } } }), "get assistant");
  check(gotA.name.toUpperCase() === "TS", `assistant name ${gotA.name}`);
  ok(await client.PATCH("/assistants/{assistant_id}", { params: { path: { assistant_id } }, body: { name: "ts2" } }), "patch assistant");
  const foundA = ok(await client.POST("/assistants/search", { body: { metadata: { suite } } }), "search assistants");
  check(foundA.length === 1 && foundA[0].assistant_id === assistant_id, `search assistants: ${foundA.length}`);
  const versions = ok(
    await client.POST("/assistants/{assistant_id}/versions", { params: { path: { assistant_id } }, body: {} }),
    "assistant versions",
  );
  check(versions.map((v) => v.version).sort().join() === "1,2", "versions");
  const graph = ok(await client.GET("/assistants/{assistant_id}/graph", { params: { path: { assistant_id } } }), "assistant graph");
  check(graph.nodes.some((n) => n.id === "node_a"), `graph: ${JSON.stringify(graph).slice(0, 300)}`);
  const schemas = ok(await client.GET("/assistants/{assistant_id}/schemas", { params: { path: { assistant_id } } }), "assistant schemas");
  check(schemas.graph_id === "foo_bar", "schemas: graph id");
  log("assistants: create, get, patch, search, versions, graph, schemas");

  // crons: create / search / delete
  const cron = ok(
    await client.POST("/threads/{thread_id}/runs/crons", {
      params: { path: { thread_id } },
      body: { assistant_id: "foo_bar", schedule: "0 0 1 1 *", input },
    }),
    "create cron",
  );
  const crons = ok(await client.POST("/runs/crons/search", { body: { thread_id } }), "search crons");
  check(crons.length === 1 && crons[0].cron_id === cron.cron_id, `search crons: ${crons.length}`);
  done(await client.DELETE("/runs/crons/{cron_id}", { params: { path: { cron_id: cron.cron_id } } }), "delete cron");
  const none = ok(await client.POST("/runs/crons/search", { body: { thread_id } }), "search crons (after delete)");
  check(none.length === 0, "cron deleted");
  log("crons: create, search, delete");

  // store: put / get / search / namespaces / delete
  const namespace = [suite, "prefs"];
  done(await client.PUT("/store/items", { body: { namespace, key: "colour", value: { colour: "teal" } } }), "put item");
  // the namespace as its labels joined by "." (what the JS SDK sends); null when there is no such item
  const item = ok(await client.GET("/store/items", { params: { query: { namespace: namespace.join("."), key: "colour" } } }), "get item");
  check(item !== null, "get item: null");
  const colour = item.value.colour;
  check(typeof colour === "string" && colour.toUpperCase() === "TEAL", `item value ${JSON.stringify(item.value)}`);
  check(item.namespace.join(".") === namespace.join("."), `item namespace ${item.namespace}`);
  const searched = ok(await client.POST("/store/items/search", { body: { namespace_prefix: [suite] } }), "search items");
  check(searched.items.length === 1 && searched.items[0].key === "colour", `search items: ${searched.items.length}`);
  const namespaces = ok(await client.POST("/store/namespaces", { body: { prefix: [suite] } }), "list namespaces");
  check(namespaces.namespaces.some((ns) => ns.join(".") === namespace.join(".")), "namespaces");
  done(await client.DELETE("/store/items", { body: { namespace, key: "colour" } }), "delete item");
  log("store: put, get, search, namespaces, delete");

  done(await client.DELETE("/threads/{thread_id}", { params: { path: { thread_id: copy.thread_id } } }), "delete thread");
  log("threads: delete");
}
