// Benchmark: the same LangGraph.js graphs through Weft's JS worker (`weft
// dev`) and through LangGraph.js's own in-memory dev server, side by side in
// one run (issue 39, items 2 and 4 for JavaScript; the JavaScript twin of
// worker-py/bench/bench.py).
//
//   node bench/servers.mjs                  # 3 rounds (about 8 min on 2 cores)
//   node bench/servers.mjs --quick          # CI: everything very briefly, proves the bench works
//   node bench/servers.mjs --rounds 1 --duration 3 --json /tmp/js-servers.json
//   WEFT_BIN=/tmp/weft node bench/servers.mjs
//
// Servers, each started here on loopback on a copy of bench/project (its
// node_modules a symlink to sdk-tests/agents-js/node_modules, so both load
// the same @langchain/langgraph) and stopped by PID at the end:
//   langgraphjs: `langgraphjs dev` (@langchain/langgraph-cli, in memory,
//                offline, --n-jobs-per-worker --jobs), the CLI and the
//                server it spawns in a process group of their own
//   worker:      `weft dev --config` ($WEFT_BIN, else bin/weft): Weft's JS
//                worker (--concurrency --jobs) runs the graph with
//                LangGraph.js and commits every checkpoint to Weft, which
//                persists it in its managed PostgreSQL
// Graphs: foo_bar (START -> node_a -> node_b -> END; foo the last value, bar
// an appended list) and echo_chat (a MessagesAnnotation chat answering
// "echo: <text>"). Measured, every answer checked:
//   stateless: POST /runs/wait of foo_bar, no thread
//   thread:    POST /threads/{id}/runs/wait of foo_bar on a fresh thread
//              created before the clock starts
//              (c1: one client back to back, p50/p95; cN: N clients at once,
//              runs/s; CPU ms per run at cN of each server's process tree
//              from /proc: server, its PostgreSQL, the JS worker)
//   chat:      one echo_chat thread per server, --turns turns of POST
//              /threads/{id}/runs/wait with one human message of 200 random
//              characters each: p50 over turns 1-30 and 1-turns
//   reads:     when the chat holds 60 messages (after turn 30): POST
//              /threads/{id}/history {"limit": 10} and GET
//              /threads/{id}/state, at c1 and cN: requests/s and p50
// The machine may be shared: the servers run interleaved in short slices
// (c1 0.5 s, cN 1 s, the chat turn by turn), their order alternating, so a
// slowdown falls on both alike; --rounds repeats everything, and the summary
// gives medians with their spread and the ratios of each round's figures.
//
// This file: the command line, the HTTP requests (each answer checked), CPU
// from /proc, the phases, the chat and its reads, main. The servers'
// processes are in servers-start.mjs, everything printed at the end in
// report.mjs.

import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync, chmodSync, fstatSync } from "node:fs";
import http from "node:http";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { LABEL, median, pct, report } from "./report.mjs";
import { logTail, projectCopy, sleep, startLangGraphJS, startWeftDev, stopAll } from "./servers-start.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, "../..");
const GRAPHS = ["foo_bar", "echo_chat"];
const WANT = { foo: "b", bar: ["a", "b"] };
const READS_AT = 30; // the reads happen when the chat holds 60 messages
const TEXT_CHARS = 200;
const READY_MS = 90_000;
const TICK_MS = 10; // USER_HZ is 100 on Linux

const { values: opt } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    duration: { type: "string", default: "5" },
    warmup: { type: "string", default: "10" },
    turns: { type: "string", default: "100" },
    concurrency: { type: "string", default: "16" },
    jobs: { type: "string", default: "32" },
    modes: { type: "string", default: "stateless,thread" },
    seed: { type: "string", default: "39" },
    json: { type: "string" },
    quick: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (opt.help) {
  console.log(`usage: node bench/servers.mjs [--rounds 3] [--duration 5] [--warmup 10] [--turns 100] [--concurrency 16]
       [--jobs 32] [--modes stateless,thread] [--seed 39] [--json FILE] [--quick]
--duration: seconds per server, mode and phase; --warmup: seconds per server and mode at c4; --jobs: runs at once
(the JS worker's --concurrency, langgraphjs dev --n-jobs-per-worker); --quick: 1 round, 1 s phases, a 10-turn chat
(CI: proves the bench works). WEFT_BIN: the weft binary (default bin/weft).`);
  process.exit(0);
}
const num = (name) => {
  const v = Number(opt[name]);
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${name}: want a number, not ${opt[name]}`);
  return v;
};
const A = {
  rounds: num("rounds"), duration: num("duration"), warmup: num("warmup"), turns: Math.max(4, Math.round(num("turns"))),
  conc: Math.max(1, num("concurrency")), jobs: Math.max(1, num("jobs")), seed: num("seed"),
  modes: opt.modes.split(",").map((m) => m.trim()).filter(Boolean), quick: opt.quick, json: opt.json,
};
if (A.quick) Object.assign(A, { rounds: 1, duration: 1, warmup: 0.5, turns: Math.min(A.turns, 10) });
for (const m of A.modes) if (m !== "stateless" && m !== "thread") throw new Error(`--modes: unknown ${m} (stateless, thread)`);
const WEFT_BIN = resolve(process.env.WEFT_BIN || join(REPO, "bin", "weft"));

// --- the servers: started by servers-start.mjs, up when waitUp says so ---------------------------------

// Waits until srv answers GET /ok and lists GRAPHS; throws (with its log)
// when it exits or is not ready within READY_MS.
async function waitUp(srv, what) {
  const end = Date.now() + READY_MS;
  let found = [];
  for (;;) {
    if (srv.exitedNow()) throw new Error(`${what} exited:\n${logTail(srv.logPath)}`);
    if (Date.now() > end) throw new Error(`${what} not ready within ${READY_MS / 1000} s (graphs seen: ${found}):\n${logTail(srv.logPath)}`);
    try {
      if ((await request(srv.url, "GET", "/ok", undefined, 2000)).status === 200) {
        const r = await request(srv.url, "POST", "/assistants/search", { limit: 100 }, 2000);
        found = r.status === 200 ? JSON.parse(r.text).map((a) => a.graph_id) : [];
        if (GRAPHS.every((g) => found.includes(g))) return;
      }
    } catch {}
    await sleep(200);
  }
}

// --- HTTP: node:http with keep-alive (cheaper per request than fetch) -----------------------------------

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

function request(base, method, path, body, timeoutMs = 120_000) {
  return new Promise((res, rej) => {
    const data = body === undefined ? null : Buffer.from(JSON.stringify(body));
    const headers = data ? { "content-type": "application/json", "content-length": data.length } : {};
    const req = http.request(base + path, { method, agent, headers }, (r) => {
      const chunks = [];
      r.on("data", (c) => chunks.push(c));
      r.on("error", rej);
      r.on("end", () => {
        const buf = Buffer.concat(chunks);
        res({ status: r.statusCode, headers: r.headers, text: buf.toString("utf8"), bytes: buf.length });
      });
    });
    req.on("error", rej);
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`)));
    req.end(data);
  });
}

const short = (t) => (t.length > 600 ? `${t.slice(0, 300)} … ${t.slice(-300)}` : t);
const runIdOf = (r) => String(r.headers["content-location"] ?? "").split("/").pop();

async function newThread(srv) {
  const r = await request(srv.url, "POST", "/threads", {});
  if (r.status !== 200) throw new Error(`${srv.name}: POST /threads: ${r.status} ${short(r.text)}`);
  return JSON.parse(r.text).thread_id;
}

// One foo_bar run: its latency in ms (the thread, if any, created before the
// clock starts). byRun: run id -> [ms, wall-clock ms at the answer], to pair
// with what the server logged of the run.
async function once(srv, stateless, byRun) {
  const path = stateless ? "/runs/wait" : `/threads/${await newThread(srv)}/runs/wait`;
  const t0 = performance.now();
  const r = await request(srv.url, "POST", path, { assistant_id: "foo_bar", input: {} });
  const ms = performance.now() - t0;
  let out;
  try {
    out = JSON.parse(r.text);
  } catch {}
  if (r.status !== 200 || out?.foo !== WANT.foo || JSON.stringify(out?.bar) !== JSON.stringify(WANT.bar) || Object.keys(out).length !== 2) {
    throw new Error(`${srv.name}: POST ${path}: ${r.status} ${short(r.text)}`);
  }
  byRun?.set(runIdOf(r), [ms, Date.now()]);
  return ms;
}

// Turn n of the chat on thread tid: [ms, run id, wall-clock ms at the answer].
async function turn(srv, tid, n, text) {
  const t0 = performance.now();
  const r = await request(srv.url, "POST", `/threads/${tid}/runs/wait`, { assistant_id: "echo_chat", input: { messages: [{ type: "human", content: text }] } });
  const ms = performance.now() - t0;
  let msgs;
  try {
    msgs = JSON.parse(r.text).messages;
  } catch {}
  const last = msgs?.at(-1);
  if (r.status !== 200 || msgs?.length !== 2 * n || last?.type !== "ai" || last?.content !== `echo: ${text}` || msgs.at(-2)?.content !== text) {
    throw new Error(`${srv.name}: chat turn ${n}: ${r.status} ${short(r.text)}`);
  }
  return [ms, runIdOf(r), Date.now()];
}

// The reads of the chat thread: [ms, bytes], the answer checked.
const READS = {
  history: async (srv, tid, messages) => {
    const t0 = performance.now();
    const r = await request(srv.url, "POST", `/threads/${tid}/history`, { limit: 10 });
    const ms = performance.now() - t0;
    let body;
    try {
      body = JSON.parse(r.text);
    } catch {}
    if (r.status !== 200 || !Array.isArray(body) || body.length !== 10 || body[0]?.values?.messages?.length !== messages) {
      throw new Error(`${srv.name}: POST /threads/{id}/history: ${r.status} ${short(r.text)}`);
    }
    return [ms, r.bytes];
  },
  state: async (srv, tid, messages) => {
    const t0 = performance.now();
    const r = await request(srv.url, "GET", `/threads/${tid}/state`);
    const ms = performance.now() - t0;
    let body;
    try {
      body = JSON.parse(r.text);
    } catch {}
    const msgs = body?.values?.messages;
    if (r.status !== 200 || msgs?.length !== messages || msgs.at(-1)?.type !== "ai") {
      throw new Error(`${srv.name}: GET /threads/{id}/state: ${r.status} ${short(r.text)}`);
    }
    return [ms, r.bytes];
  },
};

// --- CPU from /proc -------------------------------------------------------------------------------------

// pid -> [ppid, comm, CPU ticks of the process and its waited-for children].
function procTable() {
  const out = new Map();
  let dirs;
  try {
    dirs = readdirSync("/proc");
  } catch {
    return out;
  }
  for (const d of dirs) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const s = readFileSync(`/proc/${d}/stat`, "utf8");
      const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
      out.set(Number(d), [Number(f[1]), s.slice(s.indexOf("(") + 1, s.lastIndexOf(")")), Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])]);
    } catch {}
  }
  return out;
}

// CPU ms of srv's process trees: for weft dev split into postgres (by
// name), worker (a node child of the server) and server (the rest); for
// LangGraph.js all of it is "server" (its CLI and the server it spawned).
function treeCpu(srv, table) {
  const kids = new Map();
  for (const [pid, [ppid]] of table) {
    if (!kids.has(ppid)) kids.set(ppid, []);
    kids.get(ppid).push(pid);
  }
  const out = srv.split ? { server: 0, postgres: 0, worker: 0 } : { server: 0 };
  const root = srv.roots()[0];
  const stack = [...srv.roots()];
  const seen = new Set();
  while (stack.length) {
    const pid = stack.pop();
    if (!table.has(pid) || seen.has(pid)) continue;
    seen.add(pid);
    const [, comm, ticks] = table.get(pid);
    let group = "server";
    if (srv.split) group = comm.startsWith("postgres") ? "postgres" : pid !== root && comm.startsWith("node") ? "worker" : "server";
    out[group] += ticks * TICK_MS;
    stack.push(...(kids.get(pid) ?? []));
  }
  return out;
}

const selfCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

// --- measuring ------------------------------------------------------------------------------------------

function acc() {
  return { n: 0, secs: 0, lat: [], cpu: {}, byRun: new Map() };
}

function result(a) {
  const cpu = {};
  for (const [k, v] of Object.entries(a.cpu)) cpu[k] = a.n ? v / a.n : null;
  return { n: a.n, perSec: a.secs ? a.n / a.secs : 0, p50: pct(a.lat, 0.5), p95: pct(a.lat, 0.95), cpu };
}

// conc clients calling op() (its latency in ms) back to back for ms; the
// CPU of srv's process trees and of this client over the slice.
async function slice(a, srv, conc, ms, op) {
  const t0 = treeCpu(srv, procTable());
  const c0 = selfCpu();
  const start = performance.now();
  const end = start + ms;
  await Promise.all(Array.from({ length: conc }, async () => {
    while (performance.now() < end) {
      a.lat.push(await op());
      a.n++;
    }
  }));
  a.secs += (performance.now() - start) / 1000;
  const t1 = treeCpu(srv, procTable());
  for (const k of Object.keys(t1)) a.cpu[k] = (a.cpu[k] ?? 0) + t1[k] - (t0[k] ?? 0);
  a.cpu.client = (a.cpu.client ?? 0) + selfCpu() - c0;
}

const rotate = (xs, i) => [...xs.slice(i % xs.length), ...xs.slice(0, i % xs.length)];

// LangGraph.js's log: run id -> {queue, exec, ended} of each run it started
// or finished past offset ("Starting background run" gives run_queue_ms, the
// ms from the run's creation to a queue loop taking it; "Background run
// succeeded" gives run_exec_ms and run_ended_at, a wall-clock time). Its
// default console format spreads a record over lines ┏ … ┗ and colours them.
function loggedRuns(srv, offset) {
  let text = "";
  try {
    const fd = openSync(srv.logPath, "r");
    const size = fstatSync(fd).size;
    const buf = Buffer.alloc(Math.max(0, size - offset));
    readSync(fd, buf, 0, buf.length, offset);
    closeSync(fd);
    text = buf.toString("utf8").replace(/\x1b\[[0-9;]*m/g, "");
  } catch {}
  const out = new Map();
  const get = (id) => out.get(id) ?? out.set(id, {}).get(id);
  for (const m of text.matchAll(/(Starting background run|Background run succeeded)([^┗]*)┗/g)) {
    const id = /run_id: '([0-9a-f-]+)'/.exec(m[2])?.[1];
    if (!id) continue;
    const q = /run_queue_ms: (\d+)/.exec(m[2]);
    const e = /run_exec_ms: (\d+)/.exec(m[2]);
    const end = /run_ended_at: (\S+?),?\s/.exec(m[2]);
    if (q) get(id).queue = Number(q[1]);
    if (e) get(id).exec = Number(e[1]);
    if (end) get(id).ended = Date.parse(end[1]);
  }
  return out;
}
const logSize = (srv) => {
  try {
    return statSync(srv.logPath).size;
  } catch {
    return 0;
  }
};

// foo_bar runs at concurrency conc, ms per server, the servers interleaved
// in slices of sliceMs (order alternating).
async function phase(servers, conc, ms, sliceMs, stateless) {
  const accs = Object.fromEntries(servers.map((s) => [s.name, acc()]));
  const n = Math.max(1, Math.round(ms / sliceMs));
  const lg = servers.find((s) => s.name === "langgraphjs");
  const log0 = lg ? logSize(lg) : 0;
  for (let i = 0; i < n; i++) {
    for (const s of rotate(servers, i)) {
      const a = accs[s.name];
      await slice(a, s, conc, ms / n, () => once(s, stateless, s === lg ? a.byRun : null));
    }
  }
  const out = Object.fromEntries(Object.entries(accs).map(([k, a]) => [k, result(a)]));
  if (lg) Object.assign(out[lg.name], waits(accs[lg.name].byRun, loggedRuns(lg, log0)));
  return out;
}

// Where LangGraph.js's runs (byRun: id -> [ms, wall-clock ms at the answer])
// spent their time, from its log: the medians of the queue wait, the run
// itself and the time from the run's end to the answer (its wait's 500 ms
// read timeout), and the p50 of the latency less both waits.
function waits(byRun, logged) {
  const paired = [...byRun].map(([id, v]) => [v, logged.get(id)]).filter(([, l]) => l?.queue != null && l.exec != null && l.ended != null);
  if (!paired.length) return {};
  return {
    queueMs: median(paired.map(([, l]) => l.queue)),
    execMs: median(paired.map(([, l]) => l.exec)),
    afterMs: median(paired.map(([[, at], l]) => at - l.ended)),
    p50Own: median(paired.map(([[ms, at], l]) => ms - l.queue - (at - l.ended))),
    paired: paired.length,
  };
}

// A read (history or state) of each server's chat thread at concurrency conc.
async function readPhase(servers, threads, kind, messages, conc, ms, sliceMs) {
  const accs = Object.fromEntries(servers.map((s) => [s.name, acc()]));
  const bytes = {};
  const n = Math.max(1, Math.round(ms / sliceMs));
  for (let i = 0; i < n; i++) {
    for (const s of rotate(servers, i)) {
      await slice(accs[s.name], s, conc, ms / n, async () => {
        const [t, b] = await READS[kind](s, threads[s.name], messages);
        bytes[s.name] = b;
        return t;
      });
    }
  }
  return Object.fromEntries(servers.map((s) => [s.name, { ...result(accs[s.name]), bytes: bytes[s.name] }]));
}

// A small seeded generator (mulberry32), so each run sends the same texts.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const randomText = (rand) => Array.from({ length: TEXT_CHARS }, () => ALPHABET[Math.floor(rand() * ALPHABET.length)]).join("");

// One echo_chat thread per server, A.turns turns, turn by turn across the
// servers (order alternating), the same text on both; the reads once the
// chats hold 2 * READS_AT messages.
async function chat(servers, rand, label) {
  const threads = {};
  for (const s of servers) threads[s.name] = await newThread(s);
  const lat = Object.fromEntries(servers.map((s) => [s.name, []]));
  const lg = servers.find((s) => s.name === "langgraphjs");
  const lgRuns = new Map(); // run id -> [latency, wall-clock ms at the answer]
  const log0 = lg ? logSize(lg) : 0;
  const readsAt = Math.min(READS_AT, A.turns);
  const reads = {};
  let note = Date.now();
  for (let i = 1; i <= A.turns; i++) {
    const text = randomText(rand);
    for (const s of rotate(servers, i)) {
      const [ms, id, at] = await turn(s, threads[s.name], i, text);
      lat[s.name].push(ms);
      if (s === lg) lgRuns.set(id, [ms, at]);
    }
    if (i === readsAt) {
      for (const kind of Object.keys(READS)) {
        for (const conc of [1, A.conc]) {
          reads[`${kind} c${conc}`] = await readPhase(servers, threads, kind, 2 * i, conc, A.duration * 1000, conc === 1 ? 500 : 1000);
        }
      }
      reads.messages = 2 * i;
    }
    if (Date.now() - note > 60_000) {
      note = Date.now();
      process.stderr.write(`  ${label}: turn ${i} of ${A.turns}\n`);
    }
  }
  const out = { lat, reads };
  if (lg) out.lgWaits = waits(lgRuns, loggedRuns(lg, log0));
  return out;
}

// --- main -----------------------------------------------------------------------------------------------

async function main() {
  const tBegin = performance.now();
  const load0 = loadavg();
  const tmp = mkdtempSync(join(tmpdir(), "weft-jsbench-"));
  chmodSync(tmp, 0o755); // run as root, weft runs PostgreSQL as another user: it must reach the data dir
  const rand = rng(A.seed);
  const rounds = [];
  let servers = [];
  let failed = false;
  try {
    mkdirSync(join(tmp, "lg"));
    mkdirSync(join(tmp, "weft"));
    const lgProject = projectCopy(join(tmp, "lg", "project"));
    const weftProject = projectCopy(join(tmp, "weft", "project"));
    const [lg, weft] = await Promise.all([
      startLangGraphJS(join(tmp, "lg"), lgProject, { jobs: A.jobs, ready: waitUp }),
      startWeftDev(join(tmp, "weft"), weftProject, { bin: WEFT_BIN, jobs: A.jobs, ready: waitUp }),
    ]);
    servers = [lg, weft];
    process.stderr.write(`servers up in ${((performance.now() - tBegin) / 1000).toFixed(0)} s: ${servers.map((s) => `${LABEL[s.name]} ${s.url}`).join(", ")}\n`);
    for (const mode of A.modes) await phase(servers, 4, A.warmup * 1000, 1000, mode === "stateless");
    for (let r = 0; r < A.rounds; r++) {
      const res = {};
      for (const mode of A.modes) {
        const c1 = await phase(servers, 1, A.duration * 1000, 500, mode === "stateless");
        const cn = await phase(servers, A.conc, A.duration * 1000, 1000, mode === "stateless");
        res[mode] = { c1, cn };
      }
      res.chat = await chat(servers, rand, `round ${r + 1} chat`);
      rounds.push(res);
      process.stderr.write(`round ${r + 1} of ${A.rounds} done (${((performance.now() - tBegin) / 1000).toFixed(0)} s)\n`);
    }
  } catch (e) {
    failed = true;
    throw e;
  } finally {
    await stopAll();
    agent.destroy();
    if (failed) process.stderr.write(`(logs kept in ${tmp})\n`);
    else rmSync(tmp, { recursive: true, force: true, maxRetries: 3 });
  }
  const setup = { A, weftBin: WEFT_BIN, readsAt: READS_AT, textChars: TEXT_CHARS, readKinds: Object.keys(READS) };
  report(setup, rounds, load0, loadavg(), (performance.now() - tBegin) / 1000);
}

main().catch((e) => {
  console.error(e?.stack ?? String(e));
  process.exitCode = 1;
});
