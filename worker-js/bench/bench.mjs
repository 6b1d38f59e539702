// Benchmark: a foo_bar-shaped graph executed in-process by Weft (the
// built-in foo_bar) vs through this JS worker (test/fixtures foo_bar.mjs,
// "foo_bar_js": LangGraph.js's Pregel loop, checkpoints through the commit
// endpoint). Each sample is POST /threads/{id}/runs/wait on a fresh thread
// (created before the clock starts) and the answer is checked. Reported:
// runs/s at concurrency 16 and p50/p95 latency at concurrency 1, and the
// worker's numbers as ratios of the in-process ones (target: within 2x).
//
//   node bench/bench.mjs                       # starts its own server (go build) and worker
//   node bench/bench.mjs --duration 10         # seconds per phase (default 5)
//   node bench/bench.mjs --linger-ms 0         # the worker's --linger-ms (default: the worker's, 5)
//   WEFT_URL=http://127.0.0.1:8123 node bench/bench.mjs   # an already running server (a worker is still started)
//   WEFT_WORKER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" node bench/bench.mjs   # profile the worker

import { parseArgs } from "node:util";
import { startServer } from "../../sdk-tests/harness.mjs";
import { startWorker } from "../test/helpers.mjs";

const { values: args } = parseArgs({
  options: {
    duration: { type: "string", default: "5" },
    concurrency: { type: "string", default: "16" },
    "worker-concurrency": { type: "string", default: "32" },
    "linger-ms": { type: "string", default: "5" },
  },
});
const DURATION = Number(args.duration) * 1000;
const CONC = Number(args.concurrency);

const server = await startServer();
const url = server.url;
const worker = await startWorker(url, ["--graphs", "foo_bar_js", "--concurrency", args["worker-concurrency"], "--linger-ms", args["linger-ms"], "--log-level", "info"]);

async function json(method, path, body) {
  const res = await fetch(url + path, { method, headers: { "content-type": "application/json" }, body: body && JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

async function once(graph) {
  const { thread_id } = await json("POST", "/threads", {});
  const t0 = performance.now();
  const out = await json("POST", `/threads/${thread_id}/runs/wait`, { assistant_id: graph, input: {} });
  const ms = performance.now() - t0;
  if (out.foo !== "b" || JSON.stringify(out.bar) !== '["a","b"]') throw new Error(`${graph}: unexpected answer ${JSON.stringify(out)}`);
  return ms;
}

async function phase(graph, conc, ms) {
  const lat = [];
  const end = performance.now() + ms;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: conc }, async () => {
      while (performance.now() < end) lat.push(await once(graph));
    }),
  );
  const secs = (performance.now() - start) / 1000;
  lat.sort((a, b) => a - b);
  const q = (p) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))];
  return { runs: lat.length, perSec: lat.length / secs, p50: q(0.5), p95: q(0.95) };
}

const results = {};
try {
  for (const graph of ["foo_bar", "foo_bar_js"]) await phase(graph, 4, 1000); // warm-up
  for (const graph of ["foo_bar", "foo_bar_js"]) {
    results[graph] = { c1: await phase(graph, 1, DURATION), c16: await phase(graph, CONC, DURATION) };
  }
} finally {
  await worker.stop();
  await server.stop();
}

const f = (n) => n.toFixed(1);
console.log(`What is measured: POST /threads/{id}/runs/wait of a foo_bar-shaped graph (START -> node_a -> node_b -> END) on a fresh
thread (created before the clock starts); every answer is checked. One server, its own PostgreSQL, one worker process.
  in-process: Weft's built-in foo_bar, executed by the server's in-process pool
  JS worker:  foo_bar_js (test/fixtures/foo_bar.mjs), executed by weft-worker (LangGraph.js) claiming it over HTTP and
              writing its checkpoints through POST /dispatch/{id}/commit (--linger-ms ${args["linger-ms"]}, --concurrency ${args["worker-concurrency"]})
c1: one client running back to back (latency); c${CONC}: ${CONC} clients at once (throughput). ${DURATION / 1000} s per phase after a 1 s warm-up.
`);
console.log("executed by    c1 p50 ms  c1 p95 ms  c1 runs/s  c" + CONC + " runs/s  c" + CONC + " p50 ms");
for (const [graph, by] of [["foo_bar", "in-process"], ["foo_bar_js", "JS worker"]]) {
  const r = results[graph];
  console.log(`${by.padEnd(13)} ${f(r.c1.p50).padStart(10)}  ${f(r.c1.p95).padStart(9)}  ${f(r.c1.perSec).padStart(9)}  ${f(r.c16.perSec).padStart(10)}  ${f(r.c16.p50).padStart(9)}`);
}
const tput = results.foo_bar_js.c16.perSec / results.foo_bar.c16.perSec;
const p50 = results.foo_bar_js.c1.p50 / results.foo_bar.c1.p50;
console.log(`\nJS worker / in-process (issue 11 target: within 2x):`);
console.log(`  c1 p50 latency  ${p50.toFixed(2)}x  (target <= 2.00x: ${p50 <= 2 ? "PASS" : "MISS"})`);
console.log(`  c${CONC} throughput ${tput.toFixed(2)}x  (target >= 0.50x: ${tput >= 0.5 ? "PASS" : "MISS"})`);
