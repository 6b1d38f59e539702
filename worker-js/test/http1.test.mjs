// The worker's lean HTTP/1.1 client (src/http1.mjs) against a scripted
// server on loopback: every framing Weft's Go server can send, split at
// awkward places, and the failures a caller retries.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { HTTP1Pool } from "../src/http1.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The server answers each request with the pieces script(path, body)
// returns, written one by one with a pause between them; "CLOSE" closes
// the connection. It counts connections.
let script;
let connections = 0;
const server = net.createServer((sock) => {
  connections++;
  let buf = "";
  sock.on("data", async (d) => {
    buf += d.toString("latin1");
    for (;;) {
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) return;
      const head = buf.slice(0, end);
      const len = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (buf.length < end + 4 + len) return;
      const path = head.split(" ")[1];
      const body = buf.slice(end + 4, end + 4 + len);
      buf = buf.slice(end + 4 + len);
      for (const piece of script(path, body, head)) {
        if (piece === "CLOSE") {
          sock.end();
          return;
        }
        sock.write(piece);
        await sleep(2);
      }
    }
  });
  sock.on("error", () => {});
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const pool = new HTTP1Pool("127.0.0.1", server.address().port);
after(() => {
  pool.close();
  server.close();
});

const json = (s) => `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(s)}\r\n\r\n${s}`;

test("Content-Length bodies, split anywhere, over one kept-alive connection; the request as written", async () => {
  const big = JSON.stringify({ s: "é".repeat(70_000) });
  let seen;
  script = (path, body, head) => {
    seen = { path, body, head };
    const whole = json(path === "/big" ? big : `{"echo":${body || "null"}}`);
    return [whole.slice(0, 7), whole.slice(7, 40), whole.slice(40)];
  };
  const before = connections;
  for (let i = 0; i < 5; i++) {
    const payload = JSON.stringify({ i });
    const res = await pool.request("POST", "/echo", { "content-type": "application/json", "content-length": Buffer.byteLength(payload), "x-api-key": "k" }, payload, undefined, 5000);
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.text), { echo: { i } });
  }
  assert.match(seen.head, /^POST \/echo HTTP\/1\.1\r\nHost: 127\.0\.0\.1:\d+\r\n/);
  assert.match(seen.head, /\r\nx-api-key: k/);
  const res = await pool.request("GET", "/big", {}, undefined, undefined, 5000);
  assert.equal(res.text, big);
  assert.equal(connections - before, 1, "one connection for every request");
});

test("chunked bodies, the terminator split too; 204 without a body; a body up to the connection's end", async () => {
  const parts = ['{"a":', '"x"', ',"b":[1,2', ",3]}"];
  script = (path) => {
    if (path === "/none") return ["HTTP/1.1 204 No Content\r\nRetry-After: 3\r\n\r\n"];
    if (path === "/eof") return ["HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", '{"until":', '"close"}', "CLOSE"];
    let s = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (const p of parts) s += `${Buffer.byteLength(p).toString(16)}\r\n${p}\r\n`;
    s += "0\r\n\r\n";
    return [s.slice(0, 50), s.slice(50, s.length - 3), s.slice(s.length - 3, s.length - 1), s.slice(s.length - 1)];
  };
  const res = await pool.request("GET", "/chunked", {}, undefined, undefined, 5000);
  assert.deepEqual(JSON.parse(res.text), { a: "x", b: [1, 2, 3] });
  const none = await pool.request("DELETE", "/none", {}, undefined, undefined, 5000);
  assert.deepEqual(none, { status: 204, retryAfter: "3", text: "" });
  const eof = await pool.request("GET", "/eof", {}, undefined, undefined, 5000);
  assert.deepEqual(JSON.parse(eof.text), { until: "close" });
  // The closed connection left the pool: the next request opens another.
  const again = await pool.request("GET", "/chunked", {}, undefined, undefined, 5000);
  assert.deepEqual(JSON.parse(again.text), { a: "x", b: [1, 2, 3] });
});

test("a connection closed before the answer, a timeout and an abort fail the request; the pool goes on", async () => {
  script = (path) => {
    if (path === "/drop") return ["HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{\"a\"", "CLOSE"];
    if (path === "/slow") return [];
    return [json('{"ok":true}')];
  };
  await assert.rejects(pool.request("GET", "/drop", {}, undefined, undefined, 5000), /closed the connection before answering/);
  await assert.rejects(pool.request("GET", "/slow", {}, undefined, undefined, 100), (err) => err.name === "TimeoutError");
  const ac = new AbortController();
  const aborted = pool.request("GET", "/slow", {}, undefined, ac.signal, 5000);
  setTimeout(() => ac.abort(new Error("stop")), 30);
  await assert.rejects(aborted);
  assert.equal((await pool.request("GET", "/ok", {}, undefined, undefined, 5000)).text, '{"ok":true}');
  // Concurrent requests each get a connection of their own.
  const all = await Promise.all(Array.from({ length: 8 }, () => pool.request("GET", "/ok", {}, undefined, undefined, 5000)));
  assert.deepEqual(all.map((r) => r.text), Array(8).fill('{"ok":true}'));
});
