// Assistants API (reference §3) through the official JS SDK, both lines:
// create (ifExists raise / do_nothing, unknown graph, bad id), get (uuid and
// graph name), update (a new version, metadata merged, config replaced),
// delete (with and without deleteThreads), search (metadata, graphId, name,
// limit/offset, sortBy/sortOrder, select, includePagination → next), count,
// getVersions, setLatest, getGraph (xray), getSchemas, getSubgraphs; and
// that a run made with a created assistant executes with that assistant's
// config/context as it was when the run was created. The two lines have the
// same AssistantsClient. Every test tags its assistants with a fresh
// metadata value, so the system assistants and other tests do not matter.

import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { useServer } from "./harness.mjs";
import { recordingClient, rejectsWith, newTaggedThread, waitForStatus } from "./helpers.mjs";

const server = useServer();
const sdk = () => recordingClient(server.url);

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ASSISTANT_FIELDS = ["assistant_id", "graph_id", "config", "context", "created_at", "updated_at", "metadata", "version", "name", "description"];
const SCHEMA_KEYS = ["graph_id", "input_schema", "output_schema", "state_schema", "config_schema", "context_schema"];
const FOO_BAR_ID = "59bfe87c-f4fa-5cd5-8a97-4f116167b027"; // uuid5(NAMESPACE, "foo_bar")
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function assertAssistantShape(a) {
  for (const f of ASSISTANT_FIELDS) assert.ok(Object.hasOwn(a, f), `assistant lacks field ${f}: ${JSON.stringify(a)}`);
  assert.match(a.assistant_id, UUID_RE);
  assert.equal(typeof a.graph_id, "string");
  assert.equal(typeof a.config, "object");
  assert.notEqual(a.config, null);
  assert.equal(typeof a.context, "object");
  assert.equal(typeof a.metadata, "object");
  assert.notEqual(a.metadata, null);
  assert.ok(Number.isInteger(a.version) && a.version >= 1, `version ${a.version}`);
  assert.equal(typeof a.name, "string");
  assert.ok(a.description === null || typeof a.description === "string");
  for (const f of ["created_at", "updated_at"]) assert.ok(!Number.isNaN(Date.parse(a[f])), `${f}: ${a[f]}`);
  assert.ok(Date.parse(a.updated_at) >= Date.parse(a.created_at));
}

/** Creates n foo_bar/echo_chat assistants tagged {tag}, oldest first (distinct created_at). */
async function seed(client, n, extra = () => ({})) {
  const tag = randomUUID();
  const out = [];
  for (let i = 0; i < n; i++) {
    const e = extra(i);
    out.push(await client.assistants.create({
      graphId: e.graphId ?? "foo_bar",
      name: e.name ?? `seed-${i}-${tag}`,
      metadata: { tag, i, ...(e.metadata ?? {}) },
    }));
    await sleep(3);
  }
  return { tag, assistants: out };
}

const ids = (list) => list.map((a) => a.assistant_id);

describe("assistants.create", () => {
  test("a new assistant: every field, version 1; get returns the same by uuid", async () => {
    const { client, requests } = sdk();
    const tag = randomUUID();
    const a = await client.assistants.create({
      graphId: "foo_bar",
      config: { tags: ["t1"], recursion_limit: 12, configurable: { model: "m1" } },
      metadata: { tag, owner: "alice", nested: { n: [1, 2] } },
      name: `Research bot ${tag}`,
      description: "does research",
    });
    assert.equal(requests.at(-1).method, "POST");
    assert.match(requests.at(-1).url, /\/assistants$/);
    assert.equal(requests.at(-1).body.graph_id, "foo_bar");
    assertAssistantShape(a);
    assert.notEqual(a.assistant_id, FOO_BAR_ID);
    assert.equal(a.graph_id, "foo_bar");
    assert.equal(a.version, 1);
    assert.equal(a.name, `Research bot ${tag}`);
    assert.equal(a.description, "does research");
    assert.deepEqual(a.metadata, { tag, owner: "alice", nested: { n: [1, 2] } });
    assert.deepEqual(a.config.tags, ["t1"]);
    assert.equal(a.config.recursion_limit, 12);
    assert.deepEqual(a.config.configurable?.model, "m1");

    const got = await client.assistants.get(a.assistant_id);
    assert.match(requests.at(-1).url, new RegExp(`/assistants/${a.assistant_id}$`));
    assert.deepEqual(got, a);
  });

  test("context is stored; the defaults: name, description null, metadata {}", async () => {
    const { client } = sdk();
    const a = await client.assistants.create({ graphId: "echo_chat", context: { user: "u1", depth: 2 } });
    assertAssistantShape(a);
    assert.equal(a.graph_id, "echo_chat");
    assert.deepEqual(a.context, { user: "u1", depth: 2 });
    // Official: "Untitled"; the JS server: the graph id. Either is a name.
    assert.ok(["Untitled", "echo_chat"].includes(a.name), `default name ${JSON.stringify(a.name)}`);
    assert.equal(a.description, null);
    assert.deepEqual(a.metadata, {});
    assert.deepEqual(await client.assistants.get(a.assistant_id), a);
  });

  test("with assistantId: that id; ifExists raise (default) → 409 not retried; do_nothing returns the existing one unchanged", async () => {
    const { client, requests } = sdk();
    const id = randomUUID();
    const first = await client.assistants.create({ assistantId: id, graphId: "foo_bar", name: "first", metadata: { v: 1 } });
    assert.equal(first.assistant_id, id);

    requests.length = 0;
    await rejectsWith(client.assistants.create({ assistantId: id, graphId: "foo_bar", name: "second" }), 409);
    assert.equal(requests.length, 1, "the SDK must not retry a 409");
    await rejectsWith(client.assistants.create({ assistantId: id, graphId: "foo_bar", ifExists: "raise" }), 409);

    const again = await client.assistants.create({ assistantId: id, graphId: "echo_chat", name: "third", metadata: { v: 3 }, ifExists: "do_nothing" });
    assert.equal(requests.at(-1).body.if_exists, "do_nothing");
    assert.deepEqual(again, first);
    assert.deepEqual(await client.assistants.get(id), first);
  });

  test("unknown graph → 404; non-UUID assistantId → 422; nothing is created", async () => {
    const { client } = sdk();
    const tag = randomUUID();
    await rejectsWith(client.assistants.create({ graphId: "no_such_graph", metadata: { tag } }), 404);
    await rejectsWith(client.assistants.create({ graphId: "foo_bar", assistantId: "not-a-uuid", metadata: { tag } }), 422);
    assert.equal(await client.assistants.count({ metadata: { tag } }), 0);
  });
});

describe("assistants.get", () => {
  test("by graph name → the graph's system assistant; unknown uuid → 404; a name that is no graph → 404 or 422", async () => {
    const { client } = sdk();
    const byName = await client.assistants.get("foo_bar");
    assertAssistantShape(byName);
    assert.equal(byName.assistant_id, FOO_BAR_ID);
    assert.deepEqual(await client.assistants.get(FOO_BAR_ID), byName);
    await rejectsWith(client.assistants.get(randomUUID()), 404);
    let err;
    try {
      await client.assistants.get("no_such_graph");
    } catch (e) {
      err = e;
    }
    assert.ok(err && [404, 422].includes(err.status), `get("no_such_graph"): ${err}`);
  });
});

describe("assistants.update", () => {
  test("makes a new version: metadata merged, config / context / name / description replaced; created_at kept", async () => {
    const { client, requests } = sdk();
    const tag = randomUUID();
    const a = await client.assistants.create({
      graphId: "foo_bar",
      name: "v1",
      config: { configurable: { model: "m1", keep: true } },
      metadata: { tag, a: 1, b: 2 },
    });
    await sleep(5);
    const u = await client.assistants.update(a.assistant_id, {
      name: "v2",
      description: "second",
      config: { configurable: { model: "m2" } },
      metadata: { b: 3, c: 4 },
    });
    assert.equal(requests.at(-1).method, "PATCH");
    assert.match(requests.at(-1).url, new RegExp(`/assistants/${a.assistant_id}$`));
    assertAssistantShape(u);
    assert.equal(u.assistant_id, a.assistant_id);
    assert.equal(u.version, 2);
    assert.equal(u.graph_id, "foo_bar");
    assert.equal(u.name, "v2");
    assert.equal(u.description, "second");
    assert.deepEqual(u.metadata, { tag, a: 1, b: 3, c: 4 });
    assert.deepEqual(u.config.configurable, { model: "m2" }, "config replaces, it is not merged");
    assert.equal(u.created_at, a.created_at);
    assert.ok(Date.parse(u.updated_at) > Date.parse(a.updated_at), `updated_at ${a.updated_at} → ${u.updated_at}`);
    assert.deepEqual(await client.assistants.get(a.assistant_id), u);

    // Only metadata: still a new version, the rest unchanged.
    const u3 = await client.assistants.update(a.assistant_id, { metadata: { d: 5 } });
    assert.equal(u3.version, 3);
    assert.equal(u3.name, "v2");
    assert.deepEqual(u3.config.configurable, { model: "m2" });
    assert.deepEqual(u3.metadata, { tag, a: 1, b: 3, c: 4, d: 5 });
  });

  test("unknown assistant → 404; an unknown graph_id → 404 or 422 and the assistant is unchanged", async () => {
    const { client } = sdk();
    await rejectsWith(client.assistants.update(randomUUID(), { name: "x" }), 404);
    const a = await client.assistants.create({ graphId: "foo_bar", name: "keep" });
    let err;
    try {
      await client.assistants.update(a.assistant_id, { graphId: "no_such_graph", name: "changed" });
    } catch (e) {
      err = e;
    }
    assert.ok(err && [404, 422].includes(err.status), `update to an unknown graph: ${err}`);
    assert.deepEqual(await client.assistants.get(a.assistant_id), a);
  });
});

describe("assistants.getVersions / setLatest", () => {
  test("versions newest first with each version's config / name / metadata; limit/offset; metadata filter; setLatest restores one", async () => {
    const { client, requests } = sdk();
    const tag = randomUUID();
    const a = await client.assistants.create({ graphId: "foo_bar", name: "n1", config: { configurable: { v: 1 } }, metadata: { tag, step: 1 } });
    await client.assistants.update(a.assistant_id, { name: "n2", config: { configurable: { v: 2 } }, metadata: { step: 2 } });
    await client.assistants.update(a.assistant_id, { name: "n3", config: { configurable: { v: 3 } }, metadata: { step: 3 } });

    const versions = await client.assistants.getVersions(a.assistant_id);
    assert.equal(requests.at(-1).method, "POST");
    assert.match(requests.at(-1).url, new RegExp(`/assistants/${a.assistant_id}/versions$`));
    assert.deepEqual(versions.map((v) => v.version), [3, 2, 1]);
    for (const v of versions) {
      assert.equal(v.assistant_id, a.assistant_id);
      assert.equal(v.graph_id, "foo_bar");
      assert.equal(v.name, `n${v.version}`);
      assert.deepEqual(v.config.configurable, { v: v.version });
      assert.equal(v.metadata.step, v.version);
      assert.equal(v.metadata.tag, tag);
      assert.ok(!Number.isNaN(Date.parse(v.created_at)));
    }

    const page1 = await client.assistants.getVersions(a.assistant_id, { limit: 2 });
    assert.deepEqual(page1.map((v) => v.version), [3, 2]);
    const page2 = await client.assistants.getVersions(a.assistant_id, { limit: 2, offset: 2 });
    assert.deepEqual(page2.map((v) => v.version), [1]);
    assert.deepEqual(await client.assistants.getVersions(a.assistant_id, { offset: 3 }), []);
    const step2 = await client.assistants.getVersions(a.assistant_id, { metadata: { step: 2 } });
    assert.deepEqual(step2.map((v) => v.version), [2]);

    // setLatest: version 1's config, name and metadata become current.
    const back = await client.assistants.setLatest(a.assistant_id, 1);
    assert.match(requests.at(-1).url, new RegExp(`/assistants/${a.assistant_id}/latest$`));
    assert.deepEqual(requests.at(-1).body, { version: 1 });
    assertAssistantShape(back);
    assert.equal(back.version, 1);
    assert.equal(back.name, "n1");
    assert.deepEqual(back.config.configurable, { v: 1 });
    assert.equal(back.metadata.step, 1);
    assert.deepEqual(await client.assistants.get(a.assistant_id), back);
    // No version is lost; the next update is version 4.
    assert.deepEqual((await client.assistants.getVersions(a.assistant_id)).map((v) => v.version), [3, 2, 1]);
    const u4 = await client.assistants.update(a.assistant_id, { name: "n4" });
    assert.equal(u4.version, 4);
    assert.deepEqual(u4.config.configurable, { v: 1 }, "the update starts from the current (version 1) config");

    await rejectsWith(client.assistants.setLatest(a.assistant_id, 99), 404);
    await rejectsWith(client.assistants.setLatest(randomUUID(), 1), 404);
    assert.equal((await client.assistants.get(a.assistant_id)).version, 4);
  });

  test("getVersions of an unknown assistant → 404", async () => {
    const { client } = sdk();
    await rejectsWith(client.assistants.getVersions(randomUUID()), 404);
  });
});

describe("assistants.delete", () => {
  test("204 → undefined; afterwards get / delete / update → 404; its threads stay by default", async () => {
    const { client, requests } = sdk();
    const a = await client.assistants.create({ graphId: "foo_bar" });
    const tid = await newTaggedThread(client, "assistants");
    await client.runs.wait(tid, a.assistant_id, { input: { foo: "" } });
    assert.equal((await client.threads.get(tid)).metadata.assistant_id, a.assistant_id);

    assert.equal(await client.assistants.delete(a.assistant_id), undefined);
    assert.equal(requests.at(-1).method, "DELETE");
    assert.equal(new URL(requests.at(-1).url).searchParams.get("delete_threads"), "false");
    await rejectsWith(client.assistants.get(a.assistant_id), 404);
    await rejectsWith(client.assistants.delete(a.assistant_id), 404);
    await rejectsWith(client.assistants.update(a.assistant_id, { name: "x" }), 404);
    assert.equal((await client.threads.get(tid)).thread_id, tid, "delete_threads=false keeps the thread");
    // A run can no longer name it.
    await rejectsWith(client.runs.create(tid, a.assistant_id, { input: { foo: "" } }), 404);
  });

  test("deleteThreads: the threads whose metadata.assistant_id is it go too, others stay", async () => {
    const { client, requests } = sdk();
    const a = await client.assistants.create({ graphId: "foo_bar" });
    const mine = await newTaggedThread(client, "assistants");
    await client.runs.wait(mine, a.assistant_id, { input: { foo: "" } });
    const other = await newTaggedThread(client, "assistants");
    await client.runs.wait(other, "foo_bar", { input: { foo: "" } });

    assert.equal(await client.assistants.delete(a.assistant_id, { deleteThreads: true }), undefined);
    assert.equal(new URL(requests.at(-1).url).searchParams.get("delete_threads"), "true");
    await rejectsWith(client.assistants.get(a.assistant_id), 404);
    await rejectsWith(client.threads.get(mine), 404);
    assert.equal((await client.threads.get(other)).status, "idle");
  });

  test("unknown assistant → 404", async () => {
    const { client } = sdk();
    await rejectsWith(client.assistants.delete(randomUUID()), 404);
  });
});

describe("assistants.search / count", () => {
  test("metadata containment, graphId, name (case-insensitive substring), and together", async () => {
    const { client, requests } = sdk();
    const { tag, assistants } = await seed(client, 4, (i) => ({
      graphId: i % 2 === 0 ? "foo_bar" : "echo_chat",
      name: i < 2 ? `Alpha ${i}` : `Beta ${i}`,
      metadata: { team: { name: i < 3 ? "red" : "blue" } },
    }));
    const all = await client.assistants.search({ metadata: { tag } });
    assert.match(requests.at(-1).url, /\/assistants\/search$/);
    assert.deepEqual(requests.at(-1).body.metadata, { tag });
    assert.deepEqual(ids(all).sort(), ids(assistants).sort());
    all.forEach(assertAssistantShape);

    assert.deepEqual(ids(await client.assistants.search({ metadata: { tag, team: { name: "blue" } } })), [assistants[3].assistant_id]);
    const foo = await client.assistants.search({ metadata: { tag }, graphId: "foo_bar" });
    assert.deepEqual(ids(foo).sort(), [assistants[0].assistant_id, assistants[2].assistant_id].sort());
    const alpha = await client.assistants.search({ metadata: { tag }, name: "alpha" });
    assert.deepEqual(ids(alpha).sort(), [assistants[0].assistant_id, assistants[1].assistant_id].sort());
    const both = await client.assistants.search({ metadata: { tag }, name: "ETA", graphId: "echo_chat" });
    assert.deepEqual(ids(both), [assistants[3].assistant_id]);
    assert.deepEqual(await client.assistants.search({ metadata: { tag }, name: "gamma" }), []);

    assert.equal(await client.assistants.count({ metadata: { tag } }), 4);
    assert.match(requests.at(-1).url, /\/assistants\/count$/);
    assert.equal(await client.assistants.count({ metadata: { tag }, graphId: "echo_chat" }), 2);
    assert.equal(await client.assistants.count({ metadata: { tag }, name: "beta" }), 2);
    assert.equal(await client.assistants.count({ metadata: { tag }, name: "alpha", graphId: "foo_bar" }), 1);
    assert.equal(await client.assistants.count({ metadata: { tag: randomUUID() } }), 0);
    // The system assistants are counted too.
    assert.ok((await client.assistants.count()) >= 4 + 4);
    assert.equal(await client.assistants.count({ graphId: "hitl", metadata: { created_by: "system" } }), 1);
  });

  test("default order created_at desc; sortBy / sortOrder; limit / offset pages cover everything once", async () => {
    const { client } = sdk();
    // Names out of creation order, mixed case: the name sort is case-insensitive.
    const names = ["delta", "Alpha", "charlie", "Bravo", "echo"];
    const { tag, assistants } = await seed(client, 5, (i) => ({ name: names[i] }));
    const created = ids(assistants);

    assert.deepEqual(ids(await client.assistants.search({ metadata: { tag } })), [...created].reverse());
    assert.deepEqual(ids(await client.assistants.search({ metadata: { tag }, sortBy: "created_at", sortOrder: "asc" })), created);
    assert.deepEqual(ids(await client.assistants.search({ metadata: { tag }, sortBy: "created_at", sortOrder: "desc" })), [...created].reverse());
    const byName = await client.assistants.search({ metadata: { tag }, sortBy: "name", sortOrder: "asc" });
    assert.deepEqual(byName.map((a) => a.name), ["Alpha", "Bravo", "charlie", "delta", "echo"]);
    const byNameDesc = await client.assistants.search({ metadata: { tag }, sortBy: "name", sortOrder: "desc" });
    assert.deepEqual(byNameDesc.map((a) => a.name), ["echo", "delta", "charlie", "Bravo", "Alpha"]);
    assert.deepEqual(ids(await client.assistants.search({ metadata: { tag }, sortBy: "assistant_id", sortOrder: "asc" })), [...created].sort());
    assert.deepEqual(ids(await client.assistants.search({ metadata: { tag }, sortBy: "updated_at", sortOrder: "asc" })), created);
    assert.equal((await client.assistants.search({ metadata: { tag }, sortBy: "graph_id", sortOrder: "asc" })).length, 5);

    const pages = [];
    for (let offset = 0; offset < 6; offset += 2) {
      pages.push(await client.assistants.search({ metadata: { tag }, limit: 2, offset, sortBy: "created_at", sortOrder: "asc" }));
    }
    assert.deepEqual(pages.map((p) => p.length), [2, 2, 1]);
    assert.deepEqual(pages.flat().map((a) => a.assistant_id), created);
    assert.deepEqual(await client.assistants.search({ metadata: { tag }, limit: 2, offset: 10 }), []);
  });

  test("includePagination: {assistants, next} from X-Pagination-Next; next is null on the last page", async () => {
    const { client } = sdk();
    const { tag, assistants } = await seed(client, 3);
    const created = ids(assistants);
    const p1 = await client.assistants.search({ metadata: { tag }, limit: 2, sortBy: "created_at", sortOrder: "asc", includePagination: true });
    assert.deepEqual(Object.keys(p1).sort(), ["assistants", "next"]);
    assert.deepEqual(ids(p1.assistants), created.slice(0, 2));
    assert.equal(p1.next, "2");
    const p2 = await client.assistants.search({
      metadata: { tag }, limit: 2, offset: Number(p1.next), sortBy: "created_at", sortOrder: "asc", includePagination: true,
    });
    assert.deepEqual(ids(p2.assistants), created.slice(2));
    assert.equal(p2.next, null);
    const exact = await client.assistants.search({ metadata: { tag }, limit: 3, includePagination: true });
    assert.equal(exact.assistants.length, 3);
    assert.equal(exact.next, null, "a page that ends exactly at the last row has no next");
  });

  test("select projects the fields; an unknown select field or sortBy → 422", async () => {
    const { client, requests } = sdk();
    const { tag, assistants } = await seed(client, 2);
    const r = await client.assistants.search({ metadata: { tag }, select: ["assistant_id", "name"], sortBy: "created_at", sortOrder: "asc" });
    assert.deepEqual(requests.at(-1).body.select, ["assistant_id", "name"]);
    assert.deepEqual(r, assistants.map((a) => ({ assistant_id: a.assistant_id, name: a.name })));
    const meta = await client.assistants.search({ metadata: { tag }, select: ["metadata", "version"], sortBy: "created_at", sortOrder: "asc" });
    assert.deepEqual(meta, assistants.map((a) => ({ metadata: a.metadata, version: 1 })));

    await rejectsWith(client.assistants.search({ select: ["no_such_field"] }), 422);
    await rejectsWith(client.assistants.search({ sortBy: "bogus" }), 422);
    await rejectsWith(client.assistants.search({ sortOrder: "sideways" }), 422);
  });
});

describe("graph, schemas, subgraphs", () => {
  test("getGraph: nodes __start__, node_a, node_b, __end__ and their edges; by graph name, uuid, and a created assistant; xray", async () => {
    const { client, requests } = sdk();
    const g = await client.assistants.getGraph("foo_bar");
    assert.match(requests.at(-1).url, /\/assistants\/foo_bar\/graph$/);
    assert.deepEqual(g.nodes.map((n) => String(n.id)).sort(), ["__end__", "__start__", "node_a", "node_b"]);
    for (const n of g.nodes) assert.ok(n.data !== undefined, `node without data: ${JSON.stringify(n)}`);
    const edges = g.edges.map((e) => `${e.source}->${e.target}`).sort();
    assert.deepEqual(edges, ["__start__->node_a", "node_a->node_b", "node_b->__end__"]);

    assert.deepEqual(await client.assistants.getGraph(FOO_BAR_ID), g);
    const a = await client.assistants.create({ graphId: "foo_bar" });
    assert.deepEqual(await client.assistants.getGraph(a.assistant_id), g);

    // xray (the SDK JSON-encodes it: xray=true, xray=1): no subgraphs, same drawing.
    assert.deepEqual(await client.assistants.getGraph("foo_bar", { xray: true }), g);
    assert.equal(new URL(requests.at(-1).url).searchParams.get("xray"), "true");
    assert.deepEqual(await client.assistants.getGraph("foo_bar", { xray: 1 }), g);
    assert.equal(new URL(requests.at(-1).url).searchParams.get("xray"), "1");
    assert.deepEqual(await client.assistants.getGraph("foo_bar", { xray: false }), g);

    const hitl = await client.assistants.getGraph("hitl");
    assert.deepEqual(hitl.edges.map((e) => `${e.source}->${e.target}`).sort(),
      ["__start__->prepare", "ask->finish", "finish->__end__", "prepare->ask"]);
    await rejectsWith(client.assistants.getGraph(randomUUID()), 404);
  });

  test("getSchemas: {graph_id, input/output/state/config/context_schema}; the state schema names the channels", async () => {
    const { client, requests } = sdk();
    const s = await client.assistants.getSchemas("foo_bar");
    assert.match(requests.at(-1).url, /\/assistants\/foo_bar\/schemas$/);
    for (const k of SCHEMA_KEYS) assert.ok(Object.hasOwn(s, k), `schemas lack ${k}: ${JSON.stringify(s)}`);
    assert.equal(s.graph_id, "foo_bar");
    for (const k of SCHEMA_KEYS.slice(1)) assert.ok(s[k] === null || typeof s[k] === "object", `${k}: ${JSON.stringify(s[k])}`);
    assert.equal(typeof s.state_schema, "object");
    assert.notEqual(s.state_schema, null, "foo_bar has a state schema");
    assert.deepEqual(Object.keys(s.state_schema.properties ?? {}).sort(), ["bar", "foo"]);

    const chat = await client.assistants.getSchemas((await client.assistants.create({ graphId: "echo_chat" })).assistant_id);
    assert.equal(chat.graph_id, "echo_chat");
    assert.deepEqual(Object.keys(chat.state_schema.properties ?? {}), ["messages"]);
    await rejectsWith(client.assistants.getSchemas(randomUUID()), 404);
  });

  test("getSubgraphs: {} for graphs without subgraphs (also with recurse and a namespace); unknown → 404", async () => {
    const { client, requests } = sdk();
    assert.deepEqual(await client.assistants.getSubgraphs("foo_bar"), {});
    assert.match(requests.at(-1).url, /\/assistants\/foo_bar\/subgraphs$/);
    assert.deepEqual(await client.assistants.getSubgraphs(FOO_BAR_ID, { recurse: true }), {});
    assert.equal(new URL(requests.at(-1).url).searchParams.get("recurse"), "true");
    assert.deepEqual(await client.assistants.getSubgraphs("foo_bar", { namespace: "node_a" }), {});
    assert.match(requests.at(-1).url, /\/assistants\/foo_bar\/subgraphs\/node_a$/);
    await rejectsWith(client.assistants.getSubgraphs(randomUUID()), 404);
  });
});

describe("runs with a created assistant", () => {
  test("the run is bound to the assistant: Run.assistant_id, thread metadata, kwargs config / context", async () => {
    const { client } = sdk();
    const a = await client.assistants.create({ graphId: "foo_bar", config: { configurable: { model: "m1" } }, context: {} });
    const b = await client.assistants.create({ graphId: "echo_chat", context: { user: "u1" } });
    const tid = await newTaggedThread(client, "assistants");
    const run = await client.runs.create(tid, a.assistant_id, { input: { foo: "" } });
    assert.equal(run.assistant_id, a.assistant_id);
    assert.equal(run.kwargs.config.configurable.model, "m1", `kwargs: ${JSON.stringify(run.kwargs)}`);
    assert.deepEqual(await client.runs.join(tid, run.run_id), { foo: "b", bar: ["a", "b"] });
    const t = await client.threads.get(tid);
    assert.equal(t.metadata.assistant_id, a.assistant_id);
    assert.equal(t.metadata.graph_id, "foo_bar");

    const t2 = await newTaggedThread(client, "assistants");
    const r2 = await client.runs.create(t2, b.assistant_id, { input: { messages: [{ role: "user", content: "hi" }] } });
    assert.equal(r2.kwargs.context.user, "u1", `kwargs: ${JSON.stringify(r2.kwargs)}`);
    const res = await client.runs.join(t2, r2.run_id);
    assert.deepEqual(res.messages.map((m) => m.content), ["hi", "echo: hi"]);
  });

  test("its config governs the run (recursion_limit); an update after the run was created does not change that run", async () => {
    const { client } = sdk();
    // recursion_limit 1: foo_bar needs two supersteps → GraphRecursionError.
    const a = await client.assistants.create({ graphId: "foo_bar", config: { recursion_limit: 1 } });
    const tid = await newTaggedThread(client, "assistants");
    const failed = await client.runs.wait(tid, a.assistant_id, { input: { foo: "" }, raiseError: false });
    assert.equal(failed.__error__?.error, "GraphRecursionError", JSON.stringify(failed));

    // Queue a run with the assistant behind a slow run, then update the assistant.
    const t2 = await newTaggedThread(client, "assistants");
    const blocker = await client.runs.create(t2, "slow", { input: { ms: 400 } });
    const queued = await client.runs.create(t2, a.assistant_id, { input: { foo: "" } });
    assert.equal(queued.status, "pending");
    const updated = await client.assistants.update(a.assistant_id, { config: { recursion_limit: 25 } });
    assert.equal(updated.version, 2);
    await waitForStatus(client, t2, blocker.run_id, "success");
    await waitForStatus(client, t2, queued.run_id, "error");
    const joined = await client.runs.join(t2, queued.run_id);
    assert.equal(joined.__error__?.error, "GraphRecursionError", `the queued run used version 1's config: ${JSON.stringify(joined)}`);

    // A run created after the update uses the new config.
    const t3 = await newTaggedThread(client, "assistants");
    assert.deepEqual(await client.runs.wait(t3, a.assistant_id, { input: { foo: "" } }), { foo: "b", bar: ["a", "b"] });

    // And after setLatest back to version 1 the old config applies again.
    await client.assistants.setLatest(a.assistant_id, 1);
    const again = await client.runs.wait(t3, a.assistant_id, { input: { foo: "" }, raiseError: false });
    assert.equal(again.__error__?.error, "GraphRecursionError", JSON.stringify(again));
  });
});
