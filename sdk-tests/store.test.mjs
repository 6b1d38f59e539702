// Store API (long-term memory, reference §10) through the official JS SDK,
// both lines (their StoreClient is the same): putItem (upsert, ttl, index),
// getItem (absent → null, refreshTtl), deleteItem (idempotent), searchItems
// (namespacePrefix, filter, limit/offset, query), listNamespaces (prefix,
// suffix, maxDepth, limit/offset), and invalid namespaces. The SDK itself
// rejects a label with a period before sending anything, so what the server
// does with one is checked with plain fetch. Every test works under its own
// root label, so tests (and other users of a shared server) do not meet.

import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { useServer } from "./harness.mjs";
import { recordingClient, rejectsWith, rawRequest, assertDetail } from "./helpers.mjs";

const server = useServer();
const sdk = () => recordingClient(server.url);
const raw = (method, path, body) => rawRequest(server.url, method, path, body);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** A fresh root label (no periods). */
const root = () => `t${randomUUID().replaceAll("-", "")}`;

function assertItem(item, namespace, key, value) {
  assert.deepEqual(item.namespace, namespace);
  assert.equal(item.key, key);
  assert.deepEqual(item.value, value);
  for (const f of ["created_at", "updated_at"]) assert.ok(!Number.isNaN(Date.parse(item[f])), `${f}: ${JSON.stringify(item)}`);
  // The SDK adds camelCase copies.
  assert.equal(item.createdAt, item.created_at);
  assert.equal(item.updatedAt, item.updated_at);
  assert.ok(Date.parse(item.updated_at) >= Date.parse(item.created_at));
}

describe("putItem / getItem / deleteItem", () => {
  test("put (204 → undefined) then get; a second put replaces the value, keeps created_at, moves updated_at", async () => {
    const { client, requests } = sdk();
    const ns = [root(), "users", "alice"];
    assert.equal(await client.store.putItem(ns, "prefs", { theme: "dark", n: 1, nested: { a: [1, 2] } }), undefined);
    assert.equal(requests.at(-1).method, "PUT");
    assert.match(requests.at(-1).url, /\/store\/items$/);
    assert.deepEqual(requests.at(-1).body, { namespace: ns, key: "prefs", value: { theme: "dark", n: 1, nested: { a: [1, 2] } } });

    const first = await client.store.getItem(ns, "prefs");
    const q = new URL(requests.at(-1).url).searchParams;
    assert.equal(q.get("namespace"), ns.join("."));
    assert.equal(q.get("key"), "prefs");
    assertItem(first, ns, "prefs", { theme: "dark", n: 1, nested: { a: [1, 2] } });

    await sleep(5);
    await client.store.putItem(ns, "prefs", { theme: "light" });
    const second = await client.store.getItem(ns, "prefs");
    assertItem(second, ns, "prefs", { theme: "light" });
    assert.equal(second.created_at, first.created_at, "an upsert keeps created_at");
    assert.ok(Date.parse(second.updated_at) > Date.parse(first.updated_at), `updated_at ${first.updated_at} → ${second.updated_at}`);

    // Same key in another namespace is another item.
    const other = [ns[0], "users", "bob"];
    assert.equal(await client.store.getItem(other, "prefs"), null);
    await client.store.putItem(other, "prefs", { theme: "blue" });
    assert.deepEqual((await client.store.getItem(other, "prefs")).value, { theme: "blue" });
    assert.deepEqual((await client.store.getItem(ns, "prefs")).value, { theme: "light" });
  });

  test("getItem of an absent key or namespace → null (HTTP 200 null, not 404)", async () => {
    const { client } = sdk();
    const ns = [root(), "x"];
    assert.equal(await client.store.getItem(ns, "nope"), null);
    await client.store.putItem(ns, "k", { v: 1 });
    assert.equal(await client.store.getItem(ns, "K"), null, "keys are case-sensitive");
    assert.equal(await client.store.getItem([ns[0]], "k"), null, "a prefix is another namespace");
    assert.equal(await client.store.getItem([...ns, "deeper"], "k"), null);
    const r = await raw("GET", `/store/items?namespace=${ns.join(".")}&key=nope`);
    assert.equal(r.status, 200);
    assert.equal(r.text.trim(), "null");
  });

  test("deleteItem: 204, then get → null; deleting again (or something never stored) is fine", async () => {
    const { client, requests } = sdk();
    const ns = [root(), "d"];
    await client.store.putItem(ns, "a", { v: 1 });
    await client.store.putItem(ns, "b", { v: 2 });
    assert.equal(await client.store.deleteItem(ns, "a"), undefined);
    assert.equal(requests.at(-1).method, "DELETE");
    assert.deepEqual(requests.at(-1).body, { namespace: ns, key: "a" });
    assert.equal(await client.store.getItem(ns, "a"), null);
    assert.deepEqual((await client.store.getItem(ns, "b")).value, { v: 2 }, "only that key goes");
    assert.equal(await client.store.deleteItem(ns, "a"), undefined);
    assert.equal(await client.store.deleteItem([root()], "never"), undefined);
    // A deleted key can be written again.
    await client.store.putItem(ns, "a", { v: 3 });
    assert.deepEqual((await client.store.getItem(ns, "a")).value, { v: 3 });
  });

  test("ttl (minutes) and index options are accepted; getItem with refreshTtl reads the item", async () => {
    const { client, requests } = sdk();
    const ns = [root(), "ttl"];
    await client.store.putItem(ns, "short", { v: 1 }, { ttl: 5 });
    assert.equal(requests.at(-1).body.ttl, 5);
    await client.store.putItem(ns, "none", { v: 2 }, { ttl: null, index: false });
    assert.equal(requests.at(-1).body.index, false);
    await client.store.putItem(ns, "fields", { text: "hello", other: 1 }, { index: ["text"] });
    assert.deepEqual(requests.at(-1).body.index, ["text"]);

    const a = await client.store.getItem(ns, "short", { refreshTtl: true });
    assert.equal(new URL(requests.at(-1).url).searchParams.get("refresh_ttl"), "true");
    assertItem(a, ns, "short", { v: 1 });
    const b = await client.store.getItem(ns, "short", { refreshTtl: false });
    assert.equal(new URL(requests.at(-1).url).searchParams.get("refresh_ttl"), "false");
    assert.deepEqual(b.value, { v: 1 });
    assert.deepEqual((await client.store.getItem(ns, "none")).value, { v: 2 });
    assert.deepEqual((await client.store.getItem(ns, "fields")).value, { text: "hello", other: 1 });
    // searchItems passes refresh_ttl too.
    const s = await client.store.searchItems([ns[0]], { refreshTtl: true });
    assert.equal(requests.at(-1).body.refresh_ttl, true);
    assert.equal(s.items.length, 3);
  });

  test("a non-object value → 422 (raw: the SDK's types allow only objects) and nothing is stored", async () => {
    const ns = [root()];
    for (const value of [[1, 2], "text", 3]) {
      const r = await raw("PUT", "/store/items", { namespace: ns, key: "k", value });
      assertDetail(r, 422);
    }
    const { client } = sdk();
    assert.equal(await client.store.getItem(ns, "k"), null);
  });
});

describe("invalid namespaces and requests", () => {
  test("the SDK refuses a label with a period itself (no request)", async () => {
    const { client, requests } = sdk();
    for (const call of [
      () => client.store.putItem(["a.b"], "k", { v: 1 }),
      () => client.store.getItem(["a.b"], "k"),
      () => client.store.deleteItem(["a.b"], "k"),
    ]) {
      await assert.rejects(call(), (e) => e.constructor === Error && /cannot contain periods/.test(e.message));
    }
    assert.equal(requests.length, 0);
  });

  test("the server rejects labels with periods or empty labels → 422, and stores nothing", async () => {
    const r0 = root();
    for (const namespace of [[r0, "a.b"], [r0, ""], [""], []]) {
      assertDetail(await raw("PUT", "/store/items", { namespace, key: "k", value: { v: 1 } }), 422);
    }
    // Through the SDK an empty label is not pre-validated: the server's 422 comes back as an HTTPError.
    const { client } = sdk();
    await rejectsWith(client.store.putItem([r0, ""], "k", { v: 1 }), 422);
    // GET joins labels with "." — an empty label shows as "..".
    assertDetail(await raw("GET", `/store/items?namespace=${r0}..x&key=k`), 422);
    assertDetail(await raw("DELETE", "/store/items", { namespace: [r0, "a.b"], key: "k" }), 422);
    // search / list with such a prefix.
    assertDetail(await raw("POST", "/store/items/search", { namespace_prefix: [r0, "a.b"] }), 422);
    assertDetail(await raw("POST", "/store/namespaces", { prefix: [r0, ""] }), 422);
    assert.deepEqual((await client.store.searchItems([r0])).items, []);
  });

  test("missing key → 400 (GET) / 422 (PUT, DELETE)", async () => {
    const r0 = root();
    assertDetail(await raw("GET", `/store/items?namespace=${r0}`), 400);
    assertDetail(await raw("PUT", "/store/items", { namespace: [r0], value: { v: 1 } }), 422);
    assertDetail(await raw("PUT", "/store/items", { namespace: [r0], key: "k" }), 422);
    assertDetail(await raw("DELETE", "/store/items", { namespace: [r0] }), 422);
  });
});

describe("searchItems", () => {
  /** Stores the items under root r0, oldest first; returns them in write order. */
  async function seed(client) {
    const r0 = root();
    const items = [
      [[r0, "docs", "a"], "1", { kind: "note", text: "the quick brown fox", n: 1 }],
      [[r0, "docs", "a"], "2", { kind: "todo", text: "buy milk", n: 2 }],
      [[r0, "docs", "b"], "3", { kind: "note", text: "lazy dog", n: 3, tags: { x: true } }],
      [[r0, "other"], "4", { kind: "note", text: "fox again", n: 4 }],
      [[r0, "docs"], "5", { kind: "todo", text: "call bob", n: 5 }],
    ];
    for (const [ns, key, value] of items) {
      await client.store.putItem(ns, key, value);
      await sleep(3); // distinct updated_at
    }
    return { r0, items };
  }
  const keys = (res) => res.items.map((i) => i.key);

  test("namespacePrefix selects the subtree; items carry namespace/key/value; listing order is newest update first", async () => {
    const { client, requests } = sdk();
    const { r0 } = await seed(client);
    const all = await client.store.searchItems([r0]);
    assert.match(requests.at(-1).url, /\/store\/items\/search$/);
    assert.deepEqual(requests.at(-1).body, { namespace_prefix: [r0], limit: 10, offset: 0 });
    assert.deepEqual(Object.keys(all), ["items"]);
    assert.deepEqual(keys(all), ["5", "4", "3", "2", "1"]);
    const three = all.items.find((i) => i.key === "3");
    assertItem(three, [r0, "docs", "b"], "3", { kind: "note", text: "lazy dog", n: 3, tags: { x: true } });

    assert.deepEqual(keys(await client.store.searchItems([r0, "docs"])), ["5", "3", "2", "1"]);
    assert.deepEqual(keys(await client.store.searchItems([r0, "docs", "a"])), ["2", "1"]);
    assert.deepEqual(keys(await client.store.searchItems([r0, "doc"])), [], "a prefix matches whole labels");
    assert.deepEqual(keys(await client.store.searchItems([r0, "docs", "a", "deeper"])), []);

    // Updating an item moves it to the front.
    await client.store.putItem([r0, "docs", "a"], "1", { kind: "note", text: "the quick brown fox", n: 10 });
    assert.deepEqual(keys(await client.store.searchItems([r0])), ["1", "5", "4", "3", "2"]);
  });

  test("filter: exact match on value fields (several fields, nested object)", async () => {
    const { client } = sdk();
    const { r0 } = await seed(client);
    assert.deepEqual(keys(await client.store.searchItems([r0], { filter: { kind: "note" } })), ["4", "3", "1"]);
    assert.deepEqual(keys(await client.store.searchItems([r0], { filter: { kind: "note", n: 3 } })), ["3"]);
    assert.deepEqual(keys(await client.store.searchItems([r0, "docs"], { filter: { kind: "todo" } })), ["5", "2"]);
    assert.deepEqual(keys(await client.store.searchItems([r0], { filter: { tags: { x: true } } })), ["3"]);
    assert.deepEqual(keys(await client.store.searchItems([r0], { filter: { kind: "nope" } })), []);
    assert.deepEqual(keys(await client.store.searchItems([r0], { filter: { n: "3" } })), [], "\"3\" is not 3");
  });

  test("limit / offset page through the listing", async () => {
    const { client } = sdk();
    const { r0 } = await seed(client);
    const pages = [];
    for (let offset = 0; offset < 6; offset += 2) pages.push(keys(await client.store.searchItems([r0], { limit: 2, offset })));
    assert.deepEqual(pages, [["5", "4"], ["3", "2"], ["1"]]);
    assert.deepEqual(keys(await client.store.searchItems([r0], { limit: 2, offset: 10 })), []);
    assert.deepEqual(keys(await client.store.searchItems([r0], { limit: 1, filter: { kind: "note" } })), ["4"]);
  });

  test("query: accepted without an index; results stay within the prefix and filter and include the matching item", async () => {
    const { client, requests } = sdk();
    const { r0 } = await seed(client);
    const res = await client.store.searchItems([r0], { query: "fox" });
    assert.equal(requests.at(-1).body.query, "fox");
    const k = keys(res);
    assert.ok(k.includes("1") && k.includes("4"), `items with "fox" are found: ${k}`);
    for (const item of res.items) {
      assert.equal(item.namespace[0], r0);
      assert.ok(item.score === undefined || item.score === null || typeof item.score === "number", `score ${item.score}`);
    }
    const filtered = keys(await client.store.searchItems([r0, "docs"], { query: "fox", filter: { kind: "note" } }));
    assert.ok(filtered.includes("1"), `${filtered}`);
    for (const key of filtered) assert.ok(["1", "3"].includes(key), `${key} is outside docs/note`);
  });

  test("a bad limit / offset → 422", async () => {
    const { client } = sdk();
    const r0 = root();
    await rejectsWith(client.store.searchItems([r0], { limit: -1 }), 422);
    await rejectsWith(client.store.searchItems([r0], { offset: -1 }), 422);
  });
});

describe("listNamespaces", () => {
  async function seed(client) {
    const r0 = root();
    for (const ns of [
      [r0, "a"],
      [r0, "a", "x"],
      [r0, "a", "y"],
      [r0, "b", "x"],
      [r0, "c", "d", "x"],
    ]) await client.store.putItem(ns, "k", { v: 1 });
    return r0;
  }
  const sorted = (res) => res.namespaces.map((n) => n.join("/")).sort();

  test("prefix: every namespace with an item under it, once, as {namespaces}", async () => {
    const { client, requests } = sdk();
    const r0 = await seed(client);
    const res = await client.store.listNamespaces({ prefix: [r0] });
    assert.match(requests.at(-1).url, /\/store\/namespaces$/);
    assert.deepEqual(requests.at(-1).body, { prefix: [r0], limit: 100, offset: 0 });
    assert.deepEqual(Object.keys(res), ["namespaces"]);
    assert.deepEqual(sorted(res), [`${r0}/a`, `${r0}/a/x`, `${r0}/a/y`, `${r0}/b/x`, `${r0}/c/d/x`]);
    assert.deepEqual(sorted(await client.store.listNamespaces({ prefix: [r0, "a"] })), [`${r0}/a`, `${r0}/a/x`, `${r0}/a/y`]);
    assert.deepEqual((await client.store.listNamespaces({ prefix: [r0, "zzz"] })).namespaces, []);
    // A namespace whose only item was deleted is gone.
    await client.store.deleteItem([r0, "b", "x"], "k");
    assert.deepEqual(sorted(await client.store.listNamespaces({ prefix: [r0, "b"] })), []);
  });

  test("suffix, prefix + suffix", async () => {
    const { client } = sdk();
    const r0 = await seed(client);
    assert.deepEqual(sorted(await client.store.listNamespaces({ prefix: [r0], suffix: ["x"] })), [`${r0}/a/x`, `${r0}/b/x`, `${r0}/c/d/x`]);
    assert.deepEqual(sorted(await client.store.listNamespaces({ prefix: [r0], suffix: ["d", "x"] })), [`${r0}/c/d/x`]);
    assert.deepEqual(sorted(await client.store.listNamespaces({ prefix: [r0, "a"], suffix: ["y"] })), [`${r0}/a/y`]);
    assert.deepEqual((await client.store.listNamespaces({ prefix: [r0], suffix: ["nope"] })).namespaces, []);
  });

  test("maxDepth truncates and dedupes", async () => {
    const { client, requests } = sdk();
    const r0 = await seed(client);
    assert.deepEqual(sorted(await client.store.listNamespaces({ prefix: [r0], maxDepth: 2 })), [`${r0}/a`, `${r0}/b`, `${r0}/c`]);
    assert.equal(requests.at(-1).body.max_depth, 2);
    assert.deepEqual(sorted(await client.store.listNamespaces({ prefix: [r0], maxDepth: 1 })), [r0]);
    assert.deepEqual(sorted(await client.store.listNamespaces({ prefix: [r0], maxDepth: 3 })),
      [`${r0}/a`, `${r0}/a/x`, `${r0}/a/y`, `${r0}/b/x`, `${r0}/c/d`]);
  });

  test("limit / offset pages are consecutive slices of the full list", async () => {
    const { client } = sdk();
    const r0 = await seed(client);
    const full = (await client.store.listNamespaces({ prefix: [r0] })).namespaces;
    assert.equal(full.length, 5);
    const pages = [];
    for (let offset = 0; offset < 6; offset += 2) pages.push((await client.store.listNamespaces({ prefix: [r0], limit: 2, offset })).namespaces);
    assert.deepEqual(pages.map((p) => p.length), [2, 2, 1]);
    assert.deepEqual(pages.flat(), full);
    assert.deepEqual((await client.store.listNamespaces({ prefix: [r0], offset: 5 })).namespaces, []);
  });
});
