// Threads API compatibility, judged through the official JS SDK
// (@langchain/langgraph-sdk). Each test tags its threads with a fresh
// metadata value, so tests do not see each other's rows and the suite also
// runs against a shared server (WEFT_URL).

import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { SDK_LINE } from "./sdk.mjs"; // @langchain/langgraph-sdk 2.0.0 or newest 1.x, by WEFT_SDK
import { useServer } from "./harness.mjs";
import { recordingClient, rejectsWith } from "./helpers.mjs";

const server = useServer();
const sdk = () => recordingClient(server.url);

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const THREAD_FIELDS = [
  "thread_id",
  "created_at",
  "updated_at",
  "state_updated_at",
  "metadata",
  "status",
  "config",
  "values",
  "interrupts",
];

/** Plain fetch for what the SDK cannot express; returns { status, headers, body }. */
async function raw(method, path, body, headers = {}) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, body: json, text };
}

function assertThreadShape(t) {
  for (const f of THREAD_FIELDS) assert.ok(Object.hasOwn(t, f), `thread lacks field ${f}: ${JSON.stringify(t)}`);
  assert.match(t.thread_id, UUID_RE);
  for (const f of ["created_at", "updated_at"]) {
    assert.equal(typeof t[f], "string");
    assert.ok(!Number.isNaN(Date.parse(t[f])), `${f} is not a timestamp: ${t[f]}`);
  }
  assert.ok(t.state_updated_at === null || !Number.isNaN(Date.parse(t.state_updated_at)));
  assert.ok(Date.parse(t.updated_at) >= Date.parse(t.created_at));
  assert.equal(typeof t.metadata, "object");
  assert.notEqual(t.metadata, null);
  assert.ok(["idle", "busy", "interrupted", "error"].includes(t.status));
  assert.equal(typeof t.config, "object");
  assert.notEqual(t.config, null);
  assert.equal(typeof t.interrupts, "object");
  assert.notEqual(t.interrupts, null);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

describe("threads.create", () => {
  test("without threadId: server generates a UUID; fresh thread shape", async () => {
    const { client } = sdk();
    const t = await client.threads.create();
    assertThreadShape(t);
    assert.equal(t.status, "idle");
    assert.equal(t.values, null);
    assert.deepEqual(t.interrupts, {});
    // The SDK always sends metadata: {...metadata, graph_id}; with nothing given that is {}.
    assert.deepEqual(t.metadata, {});
  });

  test("with threadId and metadata", async () => {
    const { client } = sdk();
    const id = randomUUID();
    const metadata = { tag: randomUUID(), user: "alice", n: 3, nested: { a: [1, 2] } };
    const t = await client.threads.create({ threadId: id, metadata });
    assertThreadShape(t);
    assert.equal(t.thread_id, id);
    assert.deepEqual(t.metadata, metadata);
  });

  test("graphId is stored as metadata.graph_id", async () => {
    const { client } = sdk();
    const tag = randomUUID();
    const t = await client.threads.create({ graphId: "agent", metadata: { tag } });
    assert.deepEqual(t.metadata, { tag, graph_id: "agent" });
    const found = await client.threads.search({ metadata: { graph_id: "agent", tag } });
    assert.deepEqual(found.map((x) => x.thread_id), [t.thread_id]);
  });

  test('ifExists "do_nothing" returns the existing thread unchanged', async () => {
    const { client } = sdk();
    const id = randomUUID();
    const first = await client.threads.create({ threadId: id, metadata: { v: 1 } });
    const again = await client.threads.create({ threadId: id, metadata: { v: 2 }, ifExists: "do_nothing" });
    assert.equal(again.thread_id, id);
    assert.deepEqual(again.metadata, { v: 1 });
    assert.equal(again.created_at, first.created_at);
  });

  test("ifExists default (raise) → HTTP 409, not retried", async () => {
    const { client, requests } = sdk();
    const id = randomUUID();
    await client.threads.create({ threadId: id });
    requests.length = 0;
    await rejectsWith(client.threads.create({ threadId: id }), 409);
    assert.equal(requests.length, 1, "the SDK must not retry a 409");
    requests.length = 0;
    await rejectsWith(client.threads.create({ threadId: id, ifExists: "raise" }), 409);
    assert.equal(requests.length, 1);
  });

  test("non-UUID threadId → HTTP 422", async () => {
    const { client } = sdk();
    await rejectsWith(client.threads.create({ threadId: "not-a-uuid" }), 422);
  });

  test("unknown request fields are ignored and explicit nulls accepted (raw fetch: SDK 2.0.0 strips both)", async () => {
    // Newer SDKs / the Python SDK send fields an older server may not know.
    const r = await raw("POST", "/threads", { metadata: null, thread_id: null, if_exists: null, future_field: { x: 1 } });
    assert.equal(r.status, 200, r.text);
    assert.match(r.body.thread_id, UUID_RE);
    const s = await raw("POST", "/threads/search", { limit: 1, extract: null, another_future_field: true });
    assert.equal(s.status, 200, s.text);
  });

  test("ttl (sent by the SDK as {ttl, strategy}) is accepted", async () => {
    const { client } = sdk();
    const t = await client.threads.create({ ttl: 60 });
    assertThreadShape(t);
  });
});

describe("thread ttl", () => {
  /** The thread's ttl as GET /threads/{id}?include=ttl shows it (raw: only the 1.x SDK sends include). */
  const ttlOf = async (id) => (await raw("GET", `/threads/${id}?include=ttl`)).body.ttl;

  test("create({ttl}) (sent as {ttl, strategy: delete}) sets it; update({ttl}) replaces it and restarts the clock; a thread without one has none", async () => {
    const { client, requests } = sdk();
    const t = await client.threads.create({ ttl: 30 });
    assert.deepEqual(requests.at(-1).body.ttl, { ttl: 30, strategy: "delete" });
    const before = Date.now();
    const ttl = await ttlOf(t.thread_id);
    assert.equal(ttl.strategy, "delete");
    assert.equal(ttl.ttl_minutes, 30);
    const expires = Date.parse(ttl.expires_at);
    assert.ok(Math.abs(expires - (Date.parse(t.created_at) + 30 * 60_000)) < 60_000, `expires_at ${ttl.expires_at} vs created_at ${t.created_at}`);
    // Without include the field is absent (as on the official server).
    assert.equal((await client.threads.get(t.thread_id)).ttl, undefined);

    await sleep(5);
    const u = await client.threads.update(t.thread_id, { ttl: { ttl: 90, strategy: "delete" } });
    assert.deepEqual(requests.at(-1).body.ttl, { ttl: 90, strategy: "delete" });
    assert.equal(u.thread_id, t.thread_id);
    const ttl2 = await ttlOf(t.thread_id);
    assert.equal(ttl2.ttl_minutes, 90);
    assert.ok(Date.parse(ttl2.expires_at) >= before + 89 * 60_000, `expires_at ${ttl2.expires_at}`);
    // A patch without ttl keeps the ttl and restarts its clock.
    await sleep(5);
    await client.threads.update(t.thread_id, { metadata: { touched: true } });
    const ttl3 = await ttlOf(t.thread_id);
    assert.equal(ttl3.ttl_minutes, 90);
    assert.ok(Date.parse(ttl3.expires_at) >= Date.parse(ttl2.expires_at));

    const plain = await client.threads.create();
    assert.equal(await ttlOf(plain.thread_id), undefined);
  });

  test("a bad ttl → 422 (raw: the SDK only sends numbers) and nothing is created", async () => {
    const tag = randomUUID();
    for (const ttl of [-5, 0, "soon", { ttl: 10, strategy: "explode" }]) {
      const r = await raw("POST", "/threads", { ttl, metadata: { tag } });
      assert.equal(r.status, 422, `ttl ${JSON.stringify(ttl)}: ${r.text}`);
      assert.equal(typeof r.body.detail, "string");
    }
    const { client } = sdk();
    assert.equal(await client.threads.count({ metadata: { tag } }), 0);
  });
});

describe("threads.get", () => {
  test("returns every Thread field", async () => {
    const { client } = sdk();
    const created = await client.threads.create({ metadata: { k: "v" } });
    const t = await client.threads.get(created.thread_id);
    assertThreadShape(t);
    assert.equal(t.thread_id, created.thread_id);
    assert.equal(t.created_at, created.created_at);
    assert.equal(t.updated_at, created.updated_at);
    assert.deepEqual(t.metadata, { k: "v" });
    assert.equal(t.status, "idle");
    assert.equal(t.values, null);
    assert.deepEqual(t.interrupts, {});
  });

  test("unknown id → HTTP 404 exactly once (no SDK retry); the server saw one request", async () => {
    const { client, requests } = sdk();
    const id = randomUUID();
    const err = await rejectsWith(client.threads.get(id), 404);
    assert.match(err.text, new RegExp(id));
    assert.equal(requests.length, 1, "the SDK must not retry a 404");
    const log = server.logLines();
    if (log) {
      // The harness owns the server: count its request log lines too.
      await sleep(50);
      const seen = server.logLines().filter((l) => l.includes(`path=/threads/${id}`) && l.includes("method=GET"));
      assert.equal(seen.length, 1, `server logged ${seen.length} requests:\n${seen.join("\n")}`);
    }
  });

  test("non-UUID id → HTTP 422, not retried", async () => {
    const { client, requests } = sdk();
    await rejectsWith(client.threads.get("definitely-not-a-uuid"), 422);
    assert.equal(requests.length, 1);
  });
});

describe("threads.update", () => {
  test("metadata is merged (shallow), updated_at moves forward", async () => {
    const { client } = sdk();
    const t = await client.threads.create({ metadata: { a: 1, b: 2, keep: { x: 1 } } });
    await sleep(5);
    const u = await client.threads.update(t.thread_id, { metadata: { b: 3, c: 4 } });
    assertThreadShape(u);
    assert.deepEqual(u.metadata, { a: 1, b: 3, c: 4, keep: { x: 1 } });
    assert.equal(u.created_at, t.created_at);
    assert.ok(Date.parse(u.updated_at) >= Date.parse(t.updated_at));
    const g = await client.threads.get(t.thread_id);
    assert.deepEqual(g.metadata, u.metadata);
  });

  test("empty update returns the thread unchanged", async () => {
    const { client } = sdk();
    const t = await client.threads.create({ metadata: { a: 1 } });
    const u = await client.threads.update(t.thread_id, {});
    assert.equal(u.thread_id, t.thread_id);
    assert.deepEqual(u.metadata, { a: 1 });
  });

  test("unknown id → HTTP 404", async () => {
    const { client } = sdk();
    await rejectsWith(client.threads.update(randomUUID(), { metadata: { a: 1 } }), 404);
  });
});

describe("threads.delete", () => {
  test("deletes (204 → undefined); later get/delete → 404", async () => {
    const { client, requests } = sdk();
    const t = await client.threads.create();
    const res = await client.threads.delete(t.thread_id);
    assert.equal(res, undefined);
    await rejectsWith(client.threads.get(t.thread_id), 404);
    requests.length = 0;
    await rejectsWith(client.threads.delete(t.thread_id), 404);
    assert.equal(requests.length, 1);
  });
});

describe("threads.search / threads.count", () => {
  /** Creates n threads tagged {tag}, oldest first, with extra metadata per index. */
  async function seed(client, n, extra = () => ({})) {
    const tag = randomUUID();
    const out = [];
    for (let i = 0; i < n; i++) {
      out.push(await client.threads.create({ metadata: { tag, i, ...extra(i) } }));
      await sleep(2); // distinct timestamps
    }
    return { tag, threads: out };
  }

  test("metadata filter is containment (incl. nested objects)", async () => {
    const { client } = sdk();
    const { tag, threads } = await seed(client, 4, (i) => ({
      kind: i % 2 === 0 ? "even" : "odd",
      owner: { name: "bob", team: i < 2 ? "red" : "blue" },
    }));
    const even = await client.threads.search({ metadata: { tag, kind: "even" } });
    assert.deepEqual(
      even.map((t) => t.thread_id).sort(),
      [threads[0].thread_id, threads[2].thread_id].sort(),
    );
    const red = await client.threads.search({ metadata: { tag, owner: { team: "red" } } });
    assert.deepEqual(red.map((t) => t.thread_id).sort(), [threads[0].thread_id, threads[1].thread_id].sort());
    const none = await client.threads.search({ metadata: { tag, kind: "neither" } });
    assert.deepEqual(none, []);
    for (const t of even) assertThreadShape(t);
  });

  test("default order is updated_at desc (official server)", async () => {
    const { client } = sdk();
    const { tag, threads } = await seed(client, 3);
    const ids = (await client.threads.search({ metadata: { tag } })).map((t) => t.thread_id);
    assert.deepEqual(ids, threads.map((t) => t.thread_id).reverse());
    // Touch the oldest: it becomes the most recently updated.
    await client.threads.update(threads[0].thread_id, { metadata: { touched: true } });
    const after = (await client.threads.search({ metadata: { tag } })).map((t) => t.thread_id);
    assert.equal(after[0], threads[0].thread_id);
  });

  test("limit/offset paging covers every thread once", async () => {
    const { client } = sdk();
    const { tag, threads } = await seed(client, 5);
    const pages = [];
    for (let offset = 0; offset < 6; offset += 2) {
      pages.push(await client.threads.search({ metadata: { tag }, limit: 2, offset, sortBy: "created_at", sortOrder: "asc" }));
    }
    assert.deepEqual(pages.map((p) => p.length), [2, 2, 1]);
    assert.deepEqual(
      pages.flat().map((t) => t.thread_id),
      threads.map((t) => t.thread_id),
    );
    const past = await client.threads.search({ metadata: { tag }, limit: 2, offset: 10 });
    assert.deepEqual(past, []);
  });

  test("X-Pagination-* headers on POST /threads/search (raw fetch: the SDK's threads.search does not expose them)", async () => {
    const { client } = sdk();
    const { tag } = await seed(client, 3);
    const first = await raw("POST", "/threads/search", { metadata: { tag }, limit: 2, offset: 0 });
    assert.equal(first.status, 200);
    assert.equal(first.body.length, 2);
    assert.equal(first.headers.get("x-pagination-next"), "2");
    const last = await raw("POST", "/threads/search", { metadata: { tag }, limit: 2, offset: 2 });
    assert.equal(last.body.length, 1);
    assert.equal(last.headers.get("x-pagination-next"), null);
    assert.equal(last.headers.get("x-pagination-total"), "3");
  });

  test("sortBy / sortOrder", async () => {
    const { client } = sdk();
    const { tag, threads } = await seed(client, 4);
    const created = threads.map((t) => t.thread_id);
    const asc = await client.threads.search({ metadata: { tag }, sortBy: "created_at", sortOrder: "asc" });
    assert.deepEqual(asc.map((t) => t.thread_id), created);
    const desc = await client.threads.search({ metadata: { tag }, sortBy: "created_at", sortOrder: "desc" });
    assert.deepEqual(desc.map((t) => t.thread_id), [...created].reverse());
    const byId = await client.threads.search({ metadata: { tag }, sortBy: "thread_id", sortOrder: "asc" });
    assert.deepEqual(byId.map((t) => t.thread_id), [...created].sort());
    const byIdDesc = await client.threads.search({ metadata: { tag }, sortBy: "thread_id", sortOrder: "desc" });
    assert.deepEqual(byIdDesc.map((t) => t.thread_id), [...created].sort().reverse());
    const byUpdated = await client.threads.search({ metadata: { tag }, sortBy: "updated_at", sortOrder: "asc" });
    assert.deepEqual(byUpdated.map((t) => t.thread_id), created);
    // Every sort column the SDK types accept is accepted.
    for (const sortBy of ["status", "state_updated_at"]) {
      const r = await client.threads.search({ metadata: { tag }, sortBy, sortOrder: "asc" });
      assert.equal(r.length, 4, sortBy);
    }
  });

  test("invalid sortBy → HTTP 422", async () => {
    const { client } = sdk();
    await rejectsWith(client.threads.search({ sortBy: "bogus" }), 422);
  });

  test("status filter", async () => {
    const { client } = sdk();
    const { tag } = await seed(client, 2);
    assert.equal((await client.threads.search({ metadata: { tag }, status: "idle" })).length, 2);
    for (const status of ["busy", "interrupted", "error"]) {
      assert.deepEqual(await client.threads.search({ metadata: { tag }, status }), [], status);
    }
  });

  test("ids filter", async () => {
    const { client } = sdk();
    const { threads } = await seed(client, 3);
    const ids = [threads[0].thread_id, threads[2].thread_id];
    const r = await client.threads.search({ ids });
    assert.deepEqual(r.map((t) => t.thread_id).sort(), [...ids].sort());
  });

  test("values filter (fresh threads have values null → no match)", async () => {
    const { client } = sdk();
    const { tag } = await seed(client, 1);
    assert.deepEqual(await client.threads.search({ metadata: { tag }, values: { x: 1 } }), []);
    assert.equal(await client.threads.count({ metadata: { tag }, values: { x: 1 } }), 0);
  });

  test("select projects the returned fields", async () => {
    const { client } = sdk();
    const { tag, threads } = await seed(client, 2);
    const r = await client.threads.search({
      metadata: { tag },
      select: ["thread_id", "metadata"],
      sortBy: "created_at",
      sortOrder: "asc",
    });
    assert.equal(r.length, 2);
    for (const [i, t] of r.entries()) {
      assert.deepEqual(Object.keys(t).sort(), ["metadata", "thread_id"]);
      assert.equal(t.thread_id, threads[i].thread_id);
      assert.deepEqual(t.metadata, { tag, i });
    }
    const st = await client.threads.search({ metadata: { tag }, select: ["status", "values", "interrupts"] });
    for (const t of st) assert.deepEqual(t, { status: "idle", values: null, interrupts: {} });
  });

  test("unknown select field → HTTP 422", async () => {
    const { client } = sdk();
    await rejectsWith(client.threads.search({ select: ["no_such_field"] }), 422);
  });

  test("threads.count", async () => {
    const { client } = sdk();
    const { tag } = await seed(client, 3, (i) => ({ kind: i === 0 ? "a" : "b" }));
    assert.equal(await client.threads.count({ metadata: { tag } }), 3);
    assert.equal(await client.threads.count({ metadata: { tag, kind: "b" } }), 2);
    assert.equal(await client.threads.count({ metadata: { tag }, status: "idle" }), 3);
    assert.equal(await client.threads.count({ metadata: { tag }, status: "busy" }), 0);
    assert.equal(typeof (await client.threads.count()), "number");
  });
});

// Hierarchy (Weft extension). The SDK's threads.create builds its JSON body
// from a fixed list of fields (metadata, thread_id, if_exists, supersteps,
// ttl) and drops anything else, so parent_thread_id cannot be sent through
// it; threads.search likewise has no parent_thread_id / root_only, there is
// no SDK method for GET /threads/{id}/children, and threads.delete takes no
// strategy. Those calls use plain fetch; reads and the default delete go
// through the SDK, which passes unknown response fields through untouched.
describe("hierarchy (parent_thread_id)", () => {
  async function createChild(parent, metadata = {}) {
    const r = await raw("POST", "/threads", { parent_thread_id: parent, metadata });
    assert.equal(r.status, 200, r.text);
    return r.body;
  }

  test("child is visible through the SDK with parent_thread_id", async () => {
    const { client } = sdk();
    const tag = randomUUID();
    const parent = await client.threads.create({ metadata: { tag } });
    const child = await createChild(parent.thread_id, { tag });
    const got = await client.threads.get(child.thread_id);
    assertThreadShape(got);
    assert.equal(got.parent_thread_id, parent.thread_id);
    // A thread created through the SDK is a root.
    assert.equal((await client.threads.get(parent.thread_id)).parent_thread_id ?? null, null);

    const kids = await raw("GET", `/threads/${parent.thread_id}/children`);
    assert.equal(kids.status, 200);
    assert.deepEqual(kids.body.map((t) => t.thread_id), [child.thread_id]);

    const byParent = await raw("POST", "/threads/search", { metadata: { tag }, parent_thread_id: parent.thread_id });
    assert.deepEqual(byParent.body.map((t) => t.thread_id), [child.thread_id]);
    const roots = await raw("POST", "/threads/search", { metadata: { tag }, root_only: true });
    assert.deepEqual(roots.body.map((t) => t.thread_id), [parent.thread_id]);
    // SDK search still sees both (no hierarchy filter).
    assert.equal((await client.threads.search({ metadata: { tag } })).length, 2);
  });

  test("unknown parent → 404 or 422; child of unknown thread's children → 404", async () => {
    const r = await raw("POST", "/threads", { parent_thread_id: randomUUID() });
    assert.ok([404, 422].includes(r.status), `status ${r.status}: ${r.text}`);
    assert.equal(typeof r.body?.detail, "string");
    const kids = await raw("GET", `/threads/${randomUUID()}/children`);
    assert.equal(kids.status, 404);
  });

  test("SDK delete (default strategy detach) makes children roots", async () => {
    const { client } = sdk();
    const parent = await client.threads.create();
    const child = await createChild(parent.thread_id);
    await client.threads.delete(parent.thread_id);
    const got = await client.threads.get(child.thread_id);
    assert.equal(got.parent_thread_id, null);
  });

  test("delete strategy=reject → 409 while children exist; cascade removes the subtree", async () => {
    const { client } = sdk();
    const root = await client.threads.create();
    const child = await createChild(root.thread_id);
    const grandchild = await createChild(child.thread_id);
    const rej = await raw("DELETE", `/threads/${root.thread_id}?strategy=reject`);
    assert.equal(rej.status, 409, rej.text);
    assert.equal(typeof rej.body.detail, "string");
    assert.equal((await client.threads.get(root.thread_id)).thread_id, root.thread_id);
    const cas = await raw("DELETE", `/threads/${root.thread_id}?strategy=cascade`);
    assert.equal(cas.status, 204, cas.text);
    for (const id of [root.thread_id, child.thread_id, grandchild.thread_id]) {
      await rejectsWith(client.threads.get(id), 404);
    }
  });
});

describe("CORS as a browser SDK sees it", () => {
  test("responses expose Content-Location (and pagination headers) to an Origin", async () => {
    const res = await raw("POST", "/threads/search", { limit: 1 }, { Origin: "http://localhost:3000" });
    assert.equal(res.status, 200);
    const allow = res.headers.get("access-control-allow-origin");
    assert.ok(allow === "*" || allow === "http://localhost:3000", `allow-origin ${allow}`);
    const exposed = (res.headers.get("access-control-expose-headers") ?? "")
      .split(",")
      .map((h) => h.trim().toLowerCase());
    for (const h of ["content-location", "x-pagination-next", "x-pagination-total"]) {
      assert.ok(exposed.includes(h) || exposed.includes("*"), `${h} not exposed: ${exposed}`);
    }
  });

  test("preflight allows the SDK's methods and headers", async () => {
    const res = await fetch(`${server.url}/threads/${randomUUID()}`, {
      method: "OPTIONS",
      headers: {
        Origin: "http://localhost:3000",
        "Access-Control-Request-Method": "PATCH",
        "Access-Control-Request-Headers": "content-type,x-api-key,last-event-id",
      },
    });
    await res.body?.cancel();
    assert.ok(res.status === 200 || res.status === 204, `preflight status ${res.status}`);
    assert.ok(res.headers.get("access-control-allow-origin"));
    const methods = (res.headers.get("access-control-allow-methods") ?? "").toUpperCase();
    assert.ok(methods === "*" || methods.includes("PATCH"), `allow-methods ${methods}`);
    const allowed = (res.headers.get("access-control-allow-headers") ?? "").toLowerCase();
    for (const h of ["content-type", "x-api-key", "last-event-id"]) {
      assert.ok(allowed === "*" || allowed.includes(h), `${h} not allowed: ${allowed}`);
    }
  });
});

// Options only the 1.x SDK line has (2.0.0 = the 1.6.3 feature set lacks
// them), on routes Weft implements. These check that the requests the newer
// SDK sends are accepted and keep their core meaning; what the options add
// (a minimal response, the ttl field, `extracted`) is not required here.
if (SDK_LINE === "2") {
  test("SDK 2.0.0 line: no threads.prune; returnMinimal / include / extract are not sent", async () => {
    const { client, requests } = sdk();
    assert.equal(client.threads.prune, undefined);
    const t = await client.threads.create({ metadata: { a: 1 } });
    const u = await client.threads.update(t.thread_id, { metadata: { b: 2 }, returnMinimal: true });
    assert.equal(requests.at(-1).headers.get("prefer"), null);
    assert.deepEqual(u.metadata, { a: 1, b: 2 });
    await client.threads.get(t.thread_id, { include: ["ttl"] });
    assert.equal(new URL(requests.at(-1).url).searchParams.get("include"), null);
    await client.threads.search({ ids: [t.thread_id], extract: { x: "values" } });
    assert.equal(requests.at(-1).body.extract, undefined);
  });
}

if (SDK_LINE === "1") describe("SDK 1.x-only thread options", () => {
  test('threads.update({returnMinimal}) sends "Prefer: return=minimal"; the update applies', async () => {
    const { client, requests } = sdk();
    const t = await client.threads.create({ metadata: { a: 1 } });
    requests.length = 0;
    const u = await client.threads.update(t.thread_id, { metadata: { b: 2 }, returnMinimal: true });
    assert.equal(requests.length, 1);
    assert.equal(requests[0].method, "PATCH");
    assert.equal(requests[0].headers.get("prefer"), "return=minimal");
    // A server may answer 204 (the SDK resolves undefined) or still send the Thread.
    if (u !== undefined) assert.deepEqual(u.metadata, { a: 1, b: 2 });
    assert.deepEqual((await client.threads.get(t.thread_id)).metadata, { a: 1, b: 2 });
  });

  test("browser preflight for that PATCH allows the Prefer header", async () => {
    const res = await fetch(`${server.url}/threads/${randomUUID()}`, {
      method: "OPTIONS",
      headers: {
        Origin: "http://localhost:3000",
        "Access-Control-Request-Method": "PATCH",
        "Access-Control-Request-Headers": "content-type,prefer",
      },
    });
    await res.body?.cancel();
    assert.ok(res.status === 200 || res.status === 204, `preflight status ${res.status}`);
    const allowed = (res.headers.get("access-control-allow-headers") ?? "").toLowerCase();
    assert.ok(allowed === "*" || allowed.includes("prefer"), `prefer not allowed: ${allowed}`);
  });

  test('threads.get(id, {include: ["ttl"]}) (GET ?include=ttl) returns the thread', async () => {
    const { client, requests } = sdk();
    const created = await client.threads.create({ metadata: { k: "v" } });
    requests.length = 0;
    const t = await client.threads.get(created.thread_id, { include: ["ttl"] });
    assert.equal(new URL(requests.at(-1).url).searchParams.get("include"), "ttl");
    assertThreadShape(t);
    assert.equal(t.thread_id, created.thread_id);
    assert.deepEqual(t.metadata, { k: "v" });
  });

  test("threads.prune: keep_latest keeps the latest state only; delete removes the threads", async () => {
    const { client } = sdk();
    const a = await client.threads.create({ graphId: "foo_bar" });
    const b = await client.threads.create({ graphId: "foo_bar" });
    for (const t of [a, b]) {
      await client.threads.updateState(t.thread_id, { values: { foo: "x", bar: ["1"] }, asNode: "node_a" });
      await client.threads.updateState(t.thread_id, { values: { foo: "y", bar: ["2"] }, asNode: "node_b" });
    }
    const latest = await client.threads.getState(a.thread_id);
    const kept = await client.threads.prune([a.thread_id, randomUUID()], { strategy: "keep_latest" });
    assert.deepEqual(kept, { pruned_count: 1 });
    const h = await client.threads.getHistory(a.thread_id);
    assert.equal(h.length, 1);
    assert.equal(h[0].checkpoint.checkpoint_id, latest.checkpoint.checkpoint_id);
    assert.deepEqual(h[0].values, { foo: "y", bar: ["1", "2"] });

    const deleted = await client.threads.prune([a.thread_id, b.thread_id]);
    assert.deepEqual(deleted, { pruned_count: 2 });
    for (const t of [a, b]) {
      await assert.rejects(client.threads.get(t.thread_id), (e) => e.status === 404);
    }
  });

  test("threads.search({extract}) is accepted; filters still apply", async () => {
    const { client } = sdk();
    const tag = randomUUID();
    const a = await client.threads.create({ metadata: { tag } });
    await client.threads.create({ metadata: { tag: randomUUID() } });
    const found = await client.threads.search({ metadata: { tag }, extract: { last: "values.messages[-1]" } });
    assert.deepEqual(found.map((x) => x.thread_id), [a.thread_id]);
  });
});
