// Benchmark: a foo_bar-shaped graph executed in-process by Weft (the
// built-in foo_bar) vs through this JS worker (test/fixtures foo_bar.mjs,
// "foo_bar_js": LangGraph.js's Pregel loop, checkpoints through the commit
// endpoint). Each sample is POST /threads/{id}/runs/wait on a fresh thread
// (created before the clock starts) and the answer is checked. Reported:
// p50/p95 latency at concurrency 1 and runs/s at concurrency 16, the
// worker's numbers as ratios of the in-process ones, and the CPU time each
// process spent per run. At c1 it also times the same graph run by
// LangGraph.js alone in the bench's process (graph.invoke with LangGraph's
// MemorySaver, each after an in-process run): in-process plus that is the
// c1 ratio of a worker whose only cost was LangGraph.js itself, and the
// rest of the worker's p50 is Weft's part; the commit coordinator's own
// timing of each path's commits at c1 comes from the server's /metrics.
// The machine may be shared: each phase runs the paths interleaved in
// short slices (c1: 0.5 s, c16: 1 s; their order alternating), so that a
// slowdown of the machine falls on all alike; --rounds repeats the phases,
// and the summary gives the median ratio with its spread.
//
//   node bench/bench.mjs                       # starts its own server (go build) and worker
//   node bench/bench.mjs --rounds 5            # rounds (default 3)
//   node bench/bench.mjs --duration 10         # seconds per path and phase (default 5)
//   node bench/bench.mjs --warmup 20           # seconds of warm-up at c4, both paths interleaved (default 10)
//   node bench/bench.mjs --linger-ms 0         # the worker's --linger-ms (default: the worker's, 5)
//   node bench/bench.mjs --stateless           # stateless POST /runs/wait (a temporary thread per run)
//   WEFT_URL=http://127.0.0.1:8123 node bench/bench.mjs   # an already running server (a worker is still started; no CPU split)
//   WEFT_WORKER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" node bench/bench.mjs   # profile the worker

import { parseArgs } from "node:util";
import { readFileSync, readdirSync } from "node:fs";
import { startServer } from "../../sdk-tests/harness.mjs";
import { startWorker } from "../test/helpers.mjs";
import { MemorySaver } from "@langchain/langgraph";
import { graph as fooBarJS } from "../test/fixtures/foo_bar.mjs";

const { values: args } = parseArgs({
  options: {
    duration: { type: "string", default: "5" },
    rounds: { type: "string", default: "3" },
    concurrency: { type: "string", default: "16" },
    "worker-concurrency": { type: "string", default: "32" },
    "linger-ms": { type: "string", default: "5" },
    warmup: { type: "string", default: "10" },
    stateless: { type: "boolean", default: false },
  },
});
const DURATION = Number(args.duration) * 1000;
const ROUNDS = Number(args.rounds);
const CONC = Number(args.concurrency);
const WARMUP = Number(args.warmup) * 1000;

// The server as it runs by default (the test harness stores every event
// repeating a checkpoint as a reference, however small, to exercise them).
const server = await startServer({ env: { WEFT_EVENT_REF_MIN_BYTES: "1024" } });
const url = server.url;
const worker = await startWorker(url, ["--graphs", "foo_bar_js", "--concurrency", args["worker-concurrency"], "--linger-ms", args["linger-ms"], "--log-level", "info"]);

// CPU time (ms) of the processes involved, from /proc (Linux; {} elsewhere
// or with WEFT_URL): the server (this process's child), its PostgreSQL
// (the postmaster and its backends: ppid = the postmaster), the worker, and
// this client.
function procStat(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    return { ppid: Number(f[1]), comm: s.slice(s.indexOf("(") + 1, s.lastIndexOf(")")), ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) };
  } catch {
    return null;
  }
}
const TICK_MS = 10; // USER_HZ is 100 on Linux
function cpuNow() {
  let procs;
  try {
    procs = readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map((d) => ({ pid: Number(d), ...procStat(d) }));
  } catch {
    return {};
  }
  const serverProc = procs.find((p) => p.ppid === process.pid && p.comm === "weft");
  // The managed cluster's postmaster: the "postgres" started with the
  // socket directory the harness connects to.
  let pmPid = null;
  const dir = server.db?.host;
  for (const p of dir ? procs : []) {
    try {
      if (p.comm === "postgres" && readFileSync(`/proc/${p.pid}/cmdline`, "utf8").includes(dir)) pmPid = p.pid;
    } catch {}
  }
  const sum = (pred) => procs.filter(pred).reduce((a, p) => a + p.ticks, 0) * TICK_MS;
  const out = { client: sum((p) => p.pid === process.pid), worker: sum((p) => p.pid === worker.pid) };
  if (serverProc) out.server = serverProc.ticks * TICK_MS;
  if (pmPid) out.postgres = sum((p) => p.pid === pmPid || p.ppid === pmPid);
  return out;
}

async function json(method, path, body) {
  const res = await fetch(url + path, { method, headers: { "content-type": "application/json" }, body: body && JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

async function once(graph) {
  let path = "/runs/wait";
  if (!args.stateless) path = `/threads/${(await json("POST", "/threads", {})).thread_id}/runs/wait`;
  const t0 = performance.now();
  const out = await json("POST", path, { assistant_id: graph, input: {} });
  const ms = performance.now() - t0;
  if (out.foo !== "b" || JSON.stringify(out.bar) !== '["a","b"]') throw new Error(`${graph}: unexpected answer ${JSON.stringify(out)}`);
  return ms;
}

// The commit coordinator's own timing of the commits so far, by source
// (in_process, worker), from the server's /metrics: seconds (the fence
// check and every write, one transaction; not the worker's HTTP request),
// and how many; null when /metrics cannot be read.
async function commitTotals() {
  let text;
  try {
    const res = await fetch(url + "/metrics");
    if (!res.ok) return null;
    text = await res.text();
  } catch {
    return null;
  }
  const out = {};
  for (const m of text.matchAll(/^weft_commit_duration_seconds_(sum|count)\{source="(\w+)"\} (\S+)$/gm)) {
    out[m[2]] ??= { sum: 0, count: 0 };
    out[m[2]][m[1]] = Number(m[3]);
  }
  return out;
}

// One measurement of a path: runs, wall seconds, latencies, CPU ms.
function sample() {
  return { runs: 0, secs: 0, lat: [], cpu: {} };
}

// Runs graph with conc clients for ms, into acc.
async function slice(acc, graph, conc, ms) {
  const cpu0 = cpuNow();
  const end = performance.now() + ms;
  const start = performance.now();
  let runs = 0;
  await Promise.all(
    Array.from({ length: conc }, async () => {
      while (performance.now() < end) {
        acc.lat.push(await once(graph));
        runs++;
      }
    }),
  );
  acc.secs += (performance.now() - start) / 1000;
  acc.runs += runs;
  const cpu1 = cpuNow();
  for (const k of Object.keys(cpu1)) if (k in cpu0) acc.cpu[k] = (acc.cpu[k] ?? 0) + (cpu1[k] - cpu0[k]);
}

// LangGraph.js alone: the worker's graph (the same fixture) invoked in
// this process with LangGraph's MemorySaver: no HTTP, no Weft. Each
// invocation follows an in-process run (not counted), so that it starts,
// like the worker's runs at c1, after a few milliseconds in which the
// server and PostgreSQL had the CPUs.
fooBarJS.checkpointer = new MemorySaver();
async function graphAloneSlice(acc, ms) {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    await once("foo_bar");
    acc.runs++; // in-process runs too: the commits a run counts them
    acc.lat.push(await invokeAlone());
  }
}

async function invokeAlone() {
  const thread_id = crypto.randomUUID();
  const t0 = performance.now();
  const out = await fooBarJS.invoke({}, { configurable: { thread_id } });
  const ms = performance.now() - t0;
  if (out.foo !== "b") throw new Error(`LangGraph.js alone: unexpected answer ${JSON.stringify(out)}`);
  await fooBarJS.checkpointer.deleteThread(thread_id);
  return ms;
}

// A phase runs both paths for ms each, interleaved in slices of sliceMs
// (their order alternating): a slowdown of the machine, however short,
// falls on both alike. At c1 it also times LangGraph.js alone, for as long.
async function phase(conc, ms, sliceMs) {
  const acc = Object.fromEntries(GRAPHS.map(([g]) => [g, sample()]));
  const alone = sample();
  const n = Math.max(1, Math.round(ms / sliceMs));
  const commits0 = conc === 1 ? await commitTotals() : null;
  for (let i = 0; i < n; i++) {
    for (const [g] of i % 2 === 0 ? GRAPHS : [...GRAPHS].reverse()) await slice(acc[g], g, conc, ms / n);
    if (conc === 1) await graphAloneSlice(alone, ms / n);
  }
  const commits1 = commits0 && (await commitTotals());
  const out = {};
  // At c1, the commits of each path: mean ms in the coordinator, and how many a run.
  const runsOf = { in_process: acc.foo_bar.runs + alone.runs, worker: acc.foo_bar_js.runs };
  if (commits0 && commits1) {
    out.commits = {};
    for (const [src, runs] of Object.entries(runsOf)) {
      const a = commits0[src] ?? { sum: 0, count: 0 };
      const b = commits1[src];
      if (b && b.count > a.count) out.commits[src] = { ms: ((b.sum - a.sum) * 1000) / (b.count - a.count), perRun: (b.count - a.count) / runs };
    }
  }
  for (const [g, a] of Object.entries(acc)) {
    a.lat.sort((x, y) => x - y);
    const q = (p) => a.lat[Math.min(a.lat.length - 1, Math.floor(p * a.lat.length))];
    const cpu = {};
    for (const [k, v] of Object.entries(a.cpu)) cpu[k] = v / a.runs;
    out[g] = { runs: a.runs, perSec: a.runs / a.secs, p50: q(0.5), p95: q(0.95), cpu };
  }
  if (alone.lat.length) {
    alone.lat.sort((x, y) => x - y);
    out.alone = { p50: alone.lat[Math.floor(alone.lat.length / 2)] };
  }
  return out;
}

const GRAPHS = [["foo_bar", "in-process"], ["foo_bar_js", "JS worker"]];
const rounds = [];
try {
  // Warm-up: both processes' code paths (the worker's LangGraph.js takes
  // a few thousand runs to reach its pace).
  await phase(4, WARMUP, 1000);
  // And LangGraph.js alone in this process, back to back, as long.
  for (const end = performance.now() + WARMUP; performance.now() < end; ) await invokeAlone();
  for (let r = 0; r < ROUNDS; r++) {
    const c1 = await phase(1, DURATION, 500);
    const c16 = await phase(CONC, DURATION, 1000);
    rounds.push({ ...Object.fromEntries(GRAPHS.map(([g]) => [g, { c1: c1[g], c16: c16[g] }])), alone: c1.alone, commits: c1.commits });
  }
} finally {
  await worker.stop();
  await server.stop();
}

const f = (n) => n.toFixed(1);
console.log(`What is measured: ${args.stateless ? "stateless POST /runs/wait" : "POST /threads/{id}/runs/wait"} of a foo_bar-shaped graph (START -> node_a -> node_b -> END)${args.stateless ? "" : " on a fresh\nthread (created before the clock starts)"}; every answer is checked. One server, its own PostgreSQL, one worker process.
  in-process: Weft's built-in foo_bar, executed by the server's in-process pool
  JS worker:  foo_bar_js (test/fixtures/foo_bar.mjs), executed by weft-worker (LangGraph.js) claiming it over HTTP and
              writing its checkpoints through POST /dispatch/{id}/commit (--linger-ms ${args["linger-ms"]}, --concurrency ${args["worker-concurrency"]})
c1: one client running back to back (latency); c${CONC}: ${CONC} clients at once (throughput). ${DURATION / 1000} s per path and phase,
the paths interleaved in slices (c1: 0.5 s, c${CONC}: 1 s), after a ${WARMUP / 1000} s warm-up at c4; ${ROUNDS} round(s). CPU: ms of CPU per run at c${CONC} (from /proc) of the
server, its PostgreSQL (all backends), the worker process and this client. LangGraph.js alone: the fixture graph invoked
in this process with LangGraph's MemorySaver (no HTTP, no Weft), each invocation after an in-process run, in the c1 slices.
`);
const cpuCols = ["server", "postgres", "worker", "client"];
console.log("round  executed by    c1 p50 ms  c1 p95 ms  c1 runs/s  c" + CONC + " runs/s  c" + CONC + " p50 ms  CPU ms/run: " + cpuCols.join(" / "));
const ratios = [];
rounds.forEach((res, i) => {
  for (const [graph, by] of GRAPHS) {
    const r = res[graph];
    const cpu = cpuCols.map((k) => (k in r.c16.cpu ? f(r.c16.cpu[k]) : "-")).join(" / ");
    console.log(`${String(i + 1).padStart(5)}  ${by.padEnd(13)} ${f(r.c1.p50).padStart(10)}  ${f(r.c1.p95).padStart(9)}  ${f(r.c1.perSec).padStart(9)}  ${f(r.c16.perSec).padStart(10)}  ${f(r.c16.p50).padStart(9)}  ${cpu}`);
  }
  console.log(`${String(i + 1).padStart(5)}  ${"LangGraph.js".padEnd(13)} ${f(res.alone.p50).padStart(10)}  alone (graph.invoke in this process, MemorySaver)`);
  ratios.push({
    p50: res.foo_bar_js.c1.p50 / res.foo_bar.c1.p50,
    tput: res.foo_bar_js.c16.perSec / res.foo_bar.c16.perSec,
    floor: (res.foo_bar.c1.p50 + res.alone.p50) / res.foo_bar.c1.p50,
    alone: res.alone.p50,
    rest: res.foo_bar_js.c1.p50 - res.foo_bar.c1.p50 - res.alone.p50,
  });
});
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const spread = (xs) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`;
const p50s = ratios.map((r) => r.p50);
const tputs = ratios.map((r) => r.tput);
const p50 = median(p50s);
const tput = median(tputs);
console.log(`\nJS worker / in-process, median of ${ROUNDS} round(s) [min–max] (issue 18 target):`);
console.log(`  c1 p50 latency  ${p50.toFixed(2)}x [${spread(p50s)}]  (target <= 1.50x: ${p50 <= 1.5 ? "PASS" : "MISS"})`);
console.log(`  c${CONC} throughput ${tput.toFixed(2)}x [${spread(tputs)}]  (target >= 0.75x: ${tput >= 0.75 ? "PASS" : "MISS"})`);
const floors = ratios.map((r) => r.floor);
console.log(`Where the c1 difference goes (medians over rounds): LangGraph.js alone takes ${median(ratios.map((r) => r.alone)).toFixed(1)} ms a run here; in-process plus
that is ${median(floors).toFixed(2)}x in-process [${spread(floors)}], the c1 ratio of a worker whose only cost was LangGraph.js itself. The other
${median(ratios.map((r) => r.rest)).toFixed(1)} ms of the worker's p50 are Weft's part: the claim's answer, the worker's own code, the commit's request and its batch.`);
const commitRounds = rounds.map((r) => r.commits).filter((c) => c?.in_process && c?.worker);
if (commitRounds.length) {
  const m = (src, k) => median(commitRounds.map((c) => c[src][k]));
  console.log(`The commits at c1 in the commit coordinator (fence check and every write, one transaction; from /metrics, medians
over rounds of each round's mean): in-process ${m("in_process", "ms").toFixed(2)} ms, ${m("in_process", "perRun").toFixed(2)} a run; JS worker ${m("worker", "ms").toFixed(2)} ms, ${m("worker", "perRun").toFixed(2)} a run.`);
}
