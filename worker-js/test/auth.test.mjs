// The JS worker against a server with WEFT_AUTH=keys: it authenticates with
// a key of the worker scope (WEFT_API_KEY or --api-key, sent as x-api-key);
// without one, or with a tenant key, the server refuses it. Keys are put in
// api_keys as `weft keys create` does: only their SHA-256 hash.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import { Client } from "@langchain/langgraph-sdk";
import { useWeft } from "./helpers.mjs";

const weft = useWeft({ WEFT_AUTH: "keys" });
let pool;
after(() => pool?.end());

async function makeKey(tenant, scopes) {
  if (!pool) {
    pool = new pg.Pool({ ...weft.db, max: 1 });
    pool.on("error", () => {}); // the server stops its PostgreSQL at the end, maybe before after() ends the pool
  }
  const key = `weft_${randomBytes(32).toString("base64url")}`;
  await pool.query(`INSERT INTO api_keys (key_id, key_hash, tenant, scopes) VALUES ($1, $2, $3, $4)`, [
    randomUUID(),
    createHash("sha256").update(key).digest(),
    tenant,
    scopes,
  ]);
  return key;
}

test("without a worker key the worker is refused; with one it serves runs", async () => {
  const tenantKey = await makeKey("acme", ["tenant"]);
  const workerKey = await makeKey("", ["worker"]);

  // No key: 401; a tenant key: 403 (the worker API needs the worker scope).
  await assert.rejects(weft.startWorker(["--graphs", "foo_bar_js"], { WEFT_API_KEY: "" }), /401/);
  await assert.rejects(weft.startWorker(["--graphs", "foo_bar_js", "--api-key", tenantKey]), /403/);

  await weft.startWorker(["--graphs", "foo_bar_js"], { WEFT_API_KEY: workerKey });
  const anonymous = new Client({ apiUrl: weft.url, apiKey: null });
  await assert.rejects(anonymous.threads.create(), /401/);
  // The SDK's apiKey option sends x-api-key.
  const client = new Client({ apiUrl: weft.url, apiKey: tenantKey });
  const t = await client.threads.create();
  const out = await client.runs.wait(t.thread_id, "foo_bar_js", { input: {} });
  assert.deepEqual(out, { foo: "b", bar: ["a", "b"] });
});
