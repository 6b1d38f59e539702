// Semantic search in the store (issue 20) through the official JS SDK, both
// lines: this file starts its own server with a semantic index
// (WEFT_STORE_INDEX, fields ["text"]) whose embeddings endpoint
// (OPENAI_BASE_URL) is a deterministic fake started here on loopback: every
// input becomes a bag-of-words vector (lower-cased words hashed by FNV-1a
// into 64 buckets), so the test knows every score. putItem's index option
// (false, a field list) and searchItems' query are checked end to end:
// `score` is a number, items come best first, prefix and filter hold,
// unindexed items are left out; a failing endpoint never fails a put, and a
// query while it fails is a 503 {"detail"} (checked with plain fetch: the
// SDK retries a 503). With WEFT_URL (someone else's server) the file is
// skipped: it needs the server it configures.

import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { useServer } from "./harness.mjs";
import { recordingClient, rawRequest, assertDetail } from "./helpers.mjs";

const DIMS = 64;
const skip = process.env.WEFT_URL ? "needs the server this file starts (semantic index + fake embeddings endpoint)" : false;

/** FNV-1a, 32 bits, of the UTF-8 bytes of s. */
function fnv1a(s) {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(s, "utf8")) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** The fake's embedding of text. */
function embed(text) {
  const v = new Array(DIMS).fill(0);
  for (const w of text.toLowerCase().split(/[^\p{L}\p{Nd}]+/u).filter(Boolean)) v[fnv1a(w) % DIMS] += 1;
  return v;
}

function cosine(a, b) {
  const x = embed(a), y = embed(b);
  let dot = 0, nx = 0, ny = 0;
  for (let i = 0; i < DIMS; i++) {
    dot += x[i] * y[i];
    nx += x[i] * x[i];
    ny += y[i] * y[i];
  }
  return nx && ny ? dot / Math.sqrt(nx * ny) : 0;
}

// The fake OpenAI-compatible endpoint: POST /embeddings {model, input: [..]},
// listening before the server starts (top-level await).
const fake = { failing: 0, requests: [], url: null, server: null };
if (!skip) {
  fake.server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const send = (status, obj) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(obj));
      };
      if (req.method !== "POST" || req.url !== "/embeddings") return send(404, { error: { message: "not found" } });
      const { model, input } = JSON.parse(body);
      fake.requests.push({ model, input, authorization: req.headers.authorization });
      if (fake.failing) return send(fake.failing, { error: { message: "the fake embeddings endpoint is failing" } });
      send(200, { object: "list", model, data: input.map((t, index) => ({ object: "embedding", index, embedding: embed(t) })) });
    });
  });
  await new Promise((r) => fake.server.listen(0, "127.0.0.1", r));
  fake.url = `http://127.0.0.1:${fake.server.address().port}`;
}
after(() => fake.server?.close());

const server = useServer({
  env: () => ({
    WEFT_STORE_INDEX: JSON.stringify({ dims: DIMS, embed: "openai:fake-embed", fields: ["text"] }),
    OPENAI_BASE_URL: fake.url,
    OPENAI_API_KEY: "sk-sdk-test",
  }),
});
const sdk = () => recordingClient(server.url);
const root = () => `t${randomUUID().replaceAll("-", "")}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls searchItems until it returns n items (items are left out until embedded). */
async function searchWhenEmbedded(client, prefix, options, n) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const res = await client.store.searchItems(prefix, options);
    if (res.items.length >= n || Date.now() > deadline) return res;
    await sleep(50);
  }
}

/** Keys ranked by the fake's cosine with query, best first (ties by key, as the server breaks them). */
function ranking(query, texts) {
  return Object.entries(texts)
    .map(([key, text]) => ({ key, score: cosine(query, text) }))
    .sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : 1));
}

function assertRanked(items, want) {
  assert.deepEqual(items.map((i) => i.key), want.map((w) => w.key));
  for (const [i, item] of items.entries()) {
    assert.equal(typeof item.score, "number", `score of ${item.key}: ${JSON.stringify(item.score)}`);
    assert.ok(Math.abs(item.score - want[i].score) < 1e-9, `score of ${item.key}: ${item.score}, want ${want[i].score}`);
    if (i > 0) assert.ok(items[i - 1].score >= item.score, "best first");
    assert.equal(typeof item.createdAt, "string");
  }
}

describe("semantic search (WEFT_STORE_INDEX)", { skip }, () => {
  test("searchItems with a query: numeric scores, best first; prefix, filter, limit / offset; index false and per-item fields", async () => {
    const { client, requests } = sdk();
    const r = root();
    const ns = [r, "mem"];
    const texts = {
      a: "the user likes italian pizza",
      b: "pizza pizza and more pizza",
      c: "the user lives in a small flat",
      d: "dinner plans for friday",
    };
    for (const [key, text] of Object.entries(texts)) await client.store.putItem(ns, key, { text, kind: key === "d" ? "plan" : "fact" });
    // Not indexed: never in a semantic search, still readable.
    await client.store.putItem(ns, "hidden", { text: "pizza pizza pizza" }, { index: false });
    assert.equal(requests.at(-1).body.index, false);
    // Its own field list: embedded by title, not by text.
    await client.store.putItem([r, "other"], "titled", { title: "pizza night", text: "nothing to see" }, { index: ["title"] });
    assert.deepEqual(requests.at(-1).body.index, ["title"]);

    const query = "what pizza does the user like";
    const res = await searchWhenEmbedded(client, [r], { query, limit: 10 }, 5);
    assert.equal(requests.at(-1).body.query, query);
    assertRanked(res.items, ranking(query, { ...texts, titled: "pizza night" }));
    assert.ok(!res.items.some((i) => i.key === "hidden"), "an index: false item is left out");
    assert.deepEqual((await client.store.getItem(ns, "hidden")).value, { text: "pizza pizza pizza" });

    // The prefix, the filter and limit / offset hold.
    assertRanked((await client.store.searchItems(ns, { query })).items, ranking(query, texts));
    assertRanked((await client.store.searchItems([r], { query, filter: { kind: "fact" } })).items, ranking(query, { a: texts.a, b: texts.b, c: texts.c }));
    const page = await client.store.searchItems([r], { query, limit: 2, offset: 1 });
    assertRanked(page.items, ranking(query, { ...texts, titled: "pizza night" }).slice(1, 3));

    // No query: the listing, newest first, score null.
    for (const item of (await client.store.searchItems(ns)).items) assert.equal(item.score, null);

    // The endpoint saw the configured model and key.
    assert.ok(fake.requests.every((q) => q.model === "fake-embed" && q.authorization === "Bearer sk-sdk-test"));
  });

  test("an updated value is embedded again", async () => {
    const { client } = sdk();
    const ns = [root()];
    await client.store.putItem(ns, "k", { text: "a sleepy cat" });
    let res = await searchWhenEmbedded(client, ns, { query: "sleepy cat" }, 1);
    assertRanked(res.items, ranking("sleepy cat", { k: "a sleepy cat" }));
    await client.store.putItem(ns, "k", { text: "a barking dog" });
    const deadline = Date.now() + 10_000;
    do {
      res = await client.store.searchItems(ns, { query: "barking dog" });
      if (res.items.length === 1) break;
      await sleep(50);
    } while (Date.now() < deadline);
    assertRanked(res.items, ranking("barking dog", { k: "a barking dog" }));
  });

  test("the endpoint failing: putItem succeeds, the item is readable, a query is a 503 {detail}; found once the endpoint is back", async () => {
    const { client } = sdk();
    const ns = [root()];
    fake.failing = 500;
    try {
      await client.store.putItem(ns, "k", { text: "resilient memory" });
      assert.deepEqual((await client.store.getItem(ns, "k")).value, { text: "resilient memory" });
      const r = await rawRequest(server.url, "POST", "/store/items/search", { namespace_prefix: ns, query: "memory" });
      assertDetail(r, 503);
      assert.match(r.body.detail, /embeddings endpoint/);
      assert.ok(r.headers.get("retry-after"), "Retry-After");
      // Listing needs no endpoint.
      assert.equal((await client.store.searchItems(ns)).items.length, 1);
    } finally {
      fake.failing = 0;
    }
    const res = await searchWhenEmbedded(client, ns, { query: "resilient memory" }, 1);
    assertRanked(res.items, ranking("resilient memory", { k: "resilient memory" }));
  });
});
