// The cost of a project's auth.path per request: GET /threads/{id} at
// concurrency 1 and 16 against `weft dev` serving test/fixtures/auth with
// and without auth.path (its authenticate and threads handler: one call to
// the worker each), in one run. Prints requests/s and mean latency of each
// and the ratios (with / without).
//
//   node bench/auth.mjs --weft ../bin/weft [--seconds 5]
import { spawn } from "node:child_process";
import { parseArgs } from "node:util";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { createServer } from "node:net";

const here = dirname(fileURLToPath(import.meta.url));
const { values: args } = parseArgs({
  options: { weft: { type: "string", default: join(here, "..", "..", "bin", "weft") }, seconds: { type: "string", default: "5" } },
});
const seconds = Number(args.seconds);

const freePort = () =>
  new Promise((ok) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });

async function startDev(config) {
  const port = await freePort();
  const data = mkdtempSync(join(tmpdir(), "weft-bench-auth-"));
  const proc = spawn(args.weft, ["dev", "--config", config], {
    env: { ...process.env, WEFT_ADDR: `127.0.0.1:${port}`, WEFT_DATA_DIR: data, WEFT_LOG_LEVEL: "warn" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  const headers = { authorization: "Bearer token-alice", "content-type": "application/json" };
  for (let i = 0; i < 600; i++) {
    try {
      const r = await fetch(`${url}/threads`, { method: "POST", headers, body: "{}" });
      if (r.status === 200) {
        const t = await r.json();
        return { proc, data, url, headers, threadId: t.thread_id };
      }
    } catch {}
    await new Promise((r) => setTimeout(r, 200));
  }
  proc.kill("SIGTERM");
  throw new Error(`weft dev --config ${config} did not serve`);
}

async function load({ url, headers, threadId }, concurrency) {
  const end = Date.now() + seconds * 1000;
  let n = 0;
  let total = 0;
  const one = async () => {
    while (Date.now() < end) {
      const t0 = performance.now();
      const r = await fetch(`${url}/threads/${threadId}`, { headers });
      await r.arrayBuffer();
      if (r.status !== 200) throw new Error(`GET /threads/{id}: ${r.status}`);
      total += performance.now() - t0;
      n++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, one));
  return { rps: n / seconds, ms: total / n };
}

const results = {};
for (const [name, config] of [
  ["without auth.path", "langgraph.noauth.json"],
  ["with auth.path", "langgraph.json"],
]) {
  const dev = await startDev(join(here, "..", "test", "fixtures", "auth", config));
  try {
    await load(dev, 4); // warm up
    results[name] = {};
    for (const c of [1, 16]) {
      results[name][c] = await load(dev, c);
      const r = results[name][c];
      console.log(`${name.padEnd(18)} c${String(c).padEnd(3)} ${r.rps.toFixed(0).padStart(6)} req/s  ${r.ms.toFixed(2)} ms/req`);
    }
  } finally {
    dev.proc.kill("SIGTERM");
    await new Promise((ok) => dev.proc.once("exit", ok));
    rmSync(dev.data, { recursive: true, force: true });
  }
}
for (const c of [1, 16]) {
  const a = results["with auth.path"][c];
  const b = results["without auth.path"][c];
  console.log(`c${c}: with/without auth.path: throughput ${(a.rps / b.rps).toFixed(2)}x, latency ${(a.ms / b.ms).toFixed(2)}x (+${(a.ms - b.ms).toFixed(2)} ms/req)`);
}
