// The project's auth.path served to the server (src/auth.mjs): authenticate
// and on() handlers over a unix socket, as weft dev's server calls them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { request } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { loadAuth, AuthHandlers, serveAuth, containment } from "../src/auth.mjs";

const here = dirname(fileURLToPath(import.meta.url));

function post(socket, path, body) {
  return new Promise((ok, fail) => {
    const b = JSON.stringify(body);
    const req = request({ socketPath: socket, path, method: "POST", headers: { "content-type": "application/json" } }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => ok(JSON.parse(Buffer.concat(chunks).toString())));
    });
    req.on("error", fail);
    req.end(b);
  });
}

test("containment: $eq and $contains as jsonb containment", () => {
  assert.deepEqual(containment({ a: 1, b: { $eq: "x" }, c: { $contains: "y" }, d: { $contains: ["p", "q"] } }), {
    a: 1, b: "x", c: ["y"], d: ["p", "q"],
  });
  assert.equal(containment(undefined), null);
});

test("auth.path over a unix socket: 401, owner stamp and filters, denial, store guard", async () => {
  const auth = await loadAuth("./auth.mjs:auth", join(here, "fixtures", "auth"));
  const dir = mkdtempSync(join(tmpdir(), "weft-auth-test-"));
  const socket = join(dir, "auth.sock");
  const server = await serveAuth(new AuthHandlers(auth), socket);
  try {
    const url = "http://127.0.0.1/threads";
    // No token: the handler's 401 with its header.
    let r = await post(socket, "/authenticate", { method: "POST", url, headers: {} });
    assert.equal(r.status, 401);
    assert.equal(r.detail, "Invalid token");
    assert.equal(r.headers["www-authenticate"], "Bearer");
    // A token: the user, normalized as LangGraph's server does.
    r = await post(socket, "/authenticate", { method: "POST", url, headers: { authorization: "Bearer token-alice" } });
    assert.equal(r.user.identity, "alice");
    assert.equal(r.user.display_name, "alice");
    assert.deepEqual(r.scopes, ["read", "write"]);
    const { user, scopes } = r;
    // threads:create stamps the owner and filters by it.
    r = await post(socket, "/authorize", { user, scopes, resource: "threads", action: "create", value: { metadata: { a: 1 } } });
    assert.deepEqual(r.value.metadata, { a: 1, owner: "alice" });
    assert.deepEqual(r.filters, { owner: "alice" });
    // threads:read: filters only (another user's thread is then a 404).
    r = await post(socket, "/authorize", { user, scopes, resource: "threads", action: "read", value: { thread_id: "t" } });
    assert.deepEqual(r.filters, { owner: "alice" });
    // threads:delete returns false: 403.
    r = await post(socket, "/authorize", { user, scopes, resource: "threads", action: "delete", value: {} });
    assert.equal(r.status, 403);
    // The store: another user's namespace is refused, one's own allowed with the filter.
    r = await post(socket, "/authorize", { user, scopes, resource: "store", action: "put", value: { namespace: ["bob"], key: "k" } });
    assert.equal(r.status, 403);
    r = await post(socket, "/authorize", { user, scopes, resource: "store", action: "put", value: { namespace: ["alice"], key: "k" } });
    assert.deepEqual(r.filters, { namespace: ["alice"] });
    // /check: both in one call (what the server sends per request).
    r = await post(socket, "/check", { request: { method: "GET", url, headers: {} }, resource: "threads", action: "read", value: {} });
    assert.equal(r.status, 401);
    r = await post(socket, "/check", {
      request: { method: "GET", url, headers: { authorization: "Bearer token-bob" } }, resource: "threads", action: "read", value: {},
    });
    assert.equal(r.user.identity, "bob");
    assert.deepEqual(r.filters, { owner: "bob" });
    // A refusal of the on() handler says who was refused (auth.cache keeps it).
    r = await post(socket, "/check", {
      request: { method: "DELETE", url, headers: { authorization: "Bearer token-bob" } }, resource: "threads", action: "delete", value: {},
    });
    assert.equal(r.status, 403);
    assert.equal(r.user.identity, "bob");
    // A resource without a handler: allowed, no filters.
    r = await post(socket, "/authorize", { user, scopes, resource: "crons", action: "read", value: {} });
    assert.equal(r.filters, null);
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
