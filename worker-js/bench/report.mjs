// The report of the server bench (servers.mjs): what it prints once the
// servers are stopped, from the figures it measured. report() prints what was
// measured (servers, versions, settings, the machine's load), each round's
// detail, the table (medians over rounds), the ratios Weft / LangGraph.js dev
// with issue 39's targets, the CPU per run, and where LangGraph.js dev's time
// goes; with --json it also writes every raw figure. The statistics (pct,
// median, window) and the servers' labels are here too; servers.mjs measures
// with them.

import { statSync, writeFileSync } from "node:fs";
import { cpus, hostname } from "node:os";
import { versionOf } from "./servers-start.mjs";

export const LABEL = { langgraphjs: "LangGraph.js dev", worker: "Weft, JS worker" };
const NAMES = ["langgraphjs", "worker"]; // the table's column order

export function pct(xs, p) {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
}

export function median(xs) {
  const s = xs.filter((x) => x != null && Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return null;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

export const window = (xs, a, b) => median((xs ?? []).slice(a - 1, b));

const fx = (x, d = 1) => (x == null ? "n/a" : x.toFixed(d));
const spread = (xs, d = 2) => {
  const s = xs.filter((x) => x != null && Number.isFinite(x));
  return s.length ? `${Math.min(...s).toFixed(d)}-${Math.max(...s).toFixed(d)}` : "-";
};
const cell = (xs, d, R) => (median(xs) == null ? "n/a" : fx(median(xs), d) + (R > 1 ? ` (${spread(xs, d)})` : ""));

// One round's figures: metric -> server -> value.
function metrics({ A, readsAt: READS_AT, readKinds }, res) {
  const C = A.conc;
  const w30 = Math.min(READS_AT, A.turns);
  const out = {};
  const put = (k, name, v) => ((out[k] ??= {})[name] = v ?? null);
  for (const name of NAMES) {
    for (const mode of A.modes) {
      put(`${mode} c1 p50`, name, res[mode].c1[name]?.p50);
      put(`${mode} c${C} runs/s`, name, res[mode].cn[name]?.perSec);
    }
    put("chat 30", name, window(res.chat.lat[name], 1, w30));
    put("chat all", name, window(res.chat.lat[name], 1, A.turns));
    for (const kind of readKinds) {
      for (const c of [1, C]) {
        put(`${kind} c${c} req/s`, name, res.chat.reads[`${kind} c${c}`]?.[name]?.perSec);
        put(`${kind} c${c} p50`, name, res.chat.reads[`${kind} c${c}`]?.[name]?.p50);
      }
    }
  }
  return out;
}

// setup: what the bench measured with: A (its settings), weftBin, readsAt (the
// turn of the reads), textChars (of each human message), readKinds (history,
// state). load0, load1: the load average at the start and at the end;
// elapsed: the whole run's seconds.
export function report(setup, rounds, load0, load1, elapsed) {
  const { A, weftBin: WEFT_BIN, readsAt: READS_AT, textChars: TEXT_CHARS, readKinds } = setup;
  const C = A.conc;
  const R = rounds.length;
  const w30 = Math.min(READS_AT, A.turns);
  const msgs = 2 * w30;
  const now = new Date();
  const date = `${now.toISOString().slice(0, 16).replace("T", " ")} UTC`;
  const la = (l) => l.map((x) => x.toFixed(2)).join(" / ");
  let binInfo = WEFT_BIN;
  try {
    binInfo += `, built ${statSync(WEFT_BIN).mtime.toISOString().slice(0, 16).replace("T", " ")} UTC`;
  } catch {}
  console.log(`What is measured (${date}; ${hostname()}, ${cpus().length} CPUs; load average ${la(load0)} (1/5/15 min) at the start,
${la(load1)} at the end; ${elapsed.toFixed(0)} s${A.quick ? "; --quick: a check that the bench works, not figures" : ""}).
Servers, each started by the bench on this machine (loopback) on a copy of worker-js/bench/project, every answer checked:
  LangGraph.js dev:  langgraphjs dev (@langchain/langgraph-cli ${versionOf("@langchain/langgraph-cli")}, @langchain/langgraph-api ${versionOf("@langchain/langgraph-api")}), in memory,
                     --n-jobs-per-worker ${A.jobs}, offline, its default logging
  Weft, JS worker:   weft dev (${binInfo})
                     Weft's JS worker (--concurrency ${A.jobs}) runs the graph and commits every checkpoint to Weft's managed PostgreSQL
Both run @langchain/langgraph ${versionOf("@langchain/langgraph")} and @langchain/core ${versionOf("@langchain/core")} (sdk-tests/agents-js/node_modules) on Node ${process.versions.node}.
foo_bar: START -> node_a -> node_b -> END. stateless: POST /runs/wait (no thread); thread: POST /threads/{id}/runs/wait on a
fresh thread created before the clock starts. c1: one client back to back (latency p50); c${C}: ${C} clients at once (runs/s).
${A.duration} s per server, mode and phase, interleaved in slices (c1 0.5 s, c${C} 1 s, order alternating), after ${A.warmup} s of
warm-up per server and mode at c4. Chat: one echo_chat thread per server and round, ${A.turns} turns of POST /threads/{id}/runs/wait
with one human message of ${TEXT_CHARS} random characters each (the same text on both), turn by turn; p50 of the turns 1-${w30}${A.turns > w30 ? ` and 1-${A.turns}` : ""}.
Reads, on that chat when it holds ${msgs} messages (after turn ${w30}): history(10) = POST /threads/{id}/history {"limit": 10}, state =
GET /threads/{id}/state; ${A.duration} s per server at c1 and c${C}, interleaved. ${R} round(s); a cell is the median over rounds
(min-max in brackets when more than one). The client is this Node process (node:http, keep-alive).
CPU ms per run at c${C} (/proc, utime+stime with waited-for children) of each server's process tree: weft dev's server
process / its PostgreSQL (postmaster and backends) / the JS worker; LangGraph.js dev's CLI and the server it spawns.
`);
  const cols = ["server", "postgres", "worker", "client"];
  console.log(`${"round".padStart(5)}  ${"mode".padEnd(9)} ${"server".padEnd(17)} ${"c1 p50 ms".padStart(10)} ${"c1 p95 ms".padStart(10)} ${"c1 runs/s".padStart(10)} ${`c${C} runs/s`.padStart(11)} ${`c${C} p50 ms`.padStart(11)}  CPU ms/run at c${C}: ${cols.join(" / ")}`);
  rounds.forEach((res, i) => {
    for (const mode of A.modes) {
      for (const name of NAMES) {
        const c1 = res[mode].c1[name];
        const cn = res[mode].cn[name];
        const cpu = cols.map((k) => (cn.cpu[k] != null ? fx(cn.cpu[k]) : "-")).join(" / ");
        console.log(`${String(i + 1).padStart(5)}  ${mode.padEnd(9)} ${LABEL[name].padEnd(17)} ${fx(c1.p50).padStart(10)} ${fx(c1.p95).padStart(10)} ${fx(c1.perSec).padStart(10)} ${fx(cn.perSec).padStart(11)} ${fx(cn.p50).padStart(11)}  ${cpu}`);
      }
    }
    const ch = res.chat;
    for (const name of NAMES) {
      const lat = ch.lat[name];
      const w = `1-${w30} ${fx(window(lat, 1, w30))} ms` + (A.turns > w30 ? `, 1-${A.turns} ${fx(window(lat, 1, A.turns))} ms` : "");
      const reads = readKinds.flatMap((k) => [1, C].map((c) => {
        const x = ch.reads[`${k} c${c}`][name];
        return `${k} c${c} ${fx(x.perSec)}/s p50 ${fx(x.p50)} ms`;
      }));
      const sizes = readKinds.map((k) => `${k} ${(ch.reads[`${k} c1`][name].bytes ?? 0).toLocaleString("en")} B`).join(", ");
      console.log(`${String(i + 1).padStart(5)}  ${"chat".padEnd(9)} ${LABEL[name].padEnd(17)} turns p50 ${w}, p95 ${fx(pct(lat, 0.95))} ms, last ${fx(lat.at(-1))} ms`);
      console.log(`${String(i + 1).padStart(5)}  ${"reads".padEnd(9)} ${LABEL[name].padEnd(17)} ${reads.join("; ")} (answers: ${sizes})`);
    }
  });
  if (A.json) {
    writeFileSync(A.json, JSON.stringify({ args: A, date: now.toISOString(), load: [load0, load1], names: NAMES, rounds }));
    console.log(`\n(raw figures: ${A.json})`);
  }
  if (!R) return;

  const per = rounds.map((res) => metrics(setup, res));
  const get = (key, name) => per.map((m) => m[key]?.[name] ?? null);
  // [label, key(s), decimals, latency|throughput, target ratio (Weft / LangGraph.js) or null]
  const rows = [];
  for (const mode of A.modes) {
    const what = mode === "stateless" ? "stateless `runs/wait`" : "`runs/wait` on a fresh thread";
    rows.push([`${what}, c1 p50 (ms)`, `${mode} c1 p50`, 1, "lat", null]);
    rows.push([`${what}, c${C} runs/s`, `${mode} c${C} runs/s`, 1, "thr", 1.5]);
  }
  rows.push([`a chat turn on a thread, c1 p50 (ms), turns 1-${w30}`, "chat 30", 1, "lat", null]);
  if (A.turns > w30) rows.push([`a chat turn on a thread, c1 p50 (ms), turns 1-${A.turns}`, "chat all", 1, "lat", null]);
  for (const [kind, what] of [["history", "`history(10)`"], ["state", "`state`"]]) {
    for (const c of [1, C]) {
      rows.push([`${what} of a ${msgs}-message chat, c${c} req/s`, `${kind} c${c} req/s`, 1, "thr", 2]);
      rows.push([`${what} of a ${msgs}-message chat, c${c} p50 (ms)`, `${kind} c${c} p50`, 1, "lat", null]);
    }
  }
  console.log(`\nThe table (medians over ${R} round(s)${R > 1 ? ", min-max in brackets" : ""}):\n`);
  console.log(`| | ${NAMES.map((n) => LABEL[n]).join(" | ")} |`);
  console.log(`|---|${"---|".repeat(NAMES.length)}`);
  for (const [label, key, d] of rows) console.log(`| ${label} | ${NAMES.map((n) => cell(get(key, n), d, R)).join(" | ")} |`);

  console.log(`\nRatios: Weft, JS worker / LangGraph.js dev, each round's figures, median (${R > 1 ? "min-max" : "one round"}). Latency rows: below 1.00
Weft is faster; throughput rows: above 1.00 Weft is faster. Targets of issue 39: c${C} runs >= 1.5x (item 2), reads >= 2x at c1 and c${C} (item 4).\n`);
  console.log("| | Weft, JS worker / LangGraph.js dev | issue 39 target |");
  console.log("|---|---|---|");
  const verdicts = [];
  for (const [label, key, , kind, target] of rows) {
    const rs = get(key, "worker").map((w, i) => (w != null && get(key, "langgraphjs")[i] ? w / get(key, "langgraphjs")[i] : null));
    const m = median(rs);
    const lab = label.replace(" (ms)", "");
    let t = "";
    if (target != null) {
      const met = m != null && m >= target;
      t = `>= ${target}x: ${met ? "met" : "not met"}`;
      verdicts.push([lab, met]);
    }
    console.log(`| ${lab} (${kind === "lat" ? "latency" : "throughput"}) | ${m == null ? "n/a" : `${m.toFixed(2)}x${R > 1 ? ` (${spread(rs)})` : ""}`} | ${t} |`);
  }
  const met = verdicts.filter(([, v]) => v).length;
  console.log(`\nTargets met: ${met} of ${verdicts.length}${verdicts.some(([, v]) => !v) ? `; not met: ${verdicts.filter(([, v]) => !v).map(([l]) => l).join("; ")}` : ""}.`);

  console.log(`\nCPU ms per run at c${C} (median over rounds): server + its PostgreSQL + JS worker = total; and this client\n`);
  console.log("| mode | | server process | its PostgreSQL | JS worker | total | client (the bench) |");
  console.log("|---|---|---|---|---|---|---|");
  for (const mode of A.modes) {
    for (const name of NAMES) {
      const cpus_ = rounds.map((r) => r[mode].cn[name].cpu);
      const m = Object.fromEntries(cols.map((k) => [k, median(cpus_.map((c) => c[k] ?? 0))]));
      const total = m.server + m.postgres + m.worker;
      const pg = name === "worker" ? fx(m.postgres) : "- (in memory)";
      const wk = name === "worker" ? fx(m.worker) : "-";
      console.log(`| ${mode} | ${LABEL[name]} | ${fx(m.server)} | ${pg} | ${wk} | ${fx(total)} | ${fx(m.client)} |`);
    }
  }

  console.log(`\nWhere LangGraph.js dev's time goes (medians over rounds of each round's medians; its log's run_queue_ms, run_exec_ms
and run_ended_at, paired with the bench's runs by the run id of Content-Location):`);
  const weftP50 = { c1: (mode) => median(rounds.map((r) => r[mode].c1.worker.p50)) };
  const line = (what, xs, weft) => { // weft: Weft's p50 beside it (c1 only: at c16 a run's latency is mostly its turn for a CPU)
    const m = (k) => fx(median(xs.map((x) => x?.[k])));
    if (!xs.some((x) => x?.queueMs != null)) return;
    console.log(`  ${what}: p50 ${m("p50")} ms; waiting in its queue ${m("queueMs")} ms, running ${m("execMs")} ms, from the run's end to the`
      + `\n    answer ${m("afterMs")} ms; less both waits, p50 ${m("p50Own")} ms${weft == null ? "" : ` (Weft, JS worker: p50 ${fx(weft)} ms)`}`);
  };
  for (const mode of A.modes) {
    line(`${mode} c1`, rounds.map((r) => r[mode].c1.langgraphjs), weftP50.c1(mode));
    line(`${mode} c${C}`, rounds.map((r) => r[mode].cn.langgraphjs), null);
  }
  line(`chat turns 1-${A.turns}`, rounds.map((r) => ({ ...r.chat.lgWaits, p50: window(r.chat.lat.langgraphjs, 1, A.turns) })),
    median(rounds.map((r) => window(r.chat.lat.worker, 1, A.turns))));
  console.log(`  LangGraph.js dev waits twice on every run, whatever the graph (@langchain/langgraph-api's in-memory runtime):
  - its queue polls: each of its --n-jobs-per-worker (${A.jobs}) queue loops (queue.mjs) takes the pending runs created
    before it looked, runs them one after another, then sleeps a random 0-1 s ("very suboptimal", its source says)
    before looking again: a run waits for the next loop to wake, the less the more loops there are;
  - runs/wait reads the run's stream with a 500 ms timeout (ops.mjs, Runs.Stream.join) and nothing marks a run's
    end, so it answers only when a read after the run's last event times out: about 500 ms after every run.
  So its c1 latency is about 0.5 s and its c${C} throughput about ${C} clients / 0.5 s, and ratios to it measure these
  waits; its figures without them compare the servers' own work on a run. It keeps everything in its process's
  memory (written to .langgraph_api/ 3 s after the last change); Weft persists every step in PostgreSQL (the JS
  worker commits each run's checkpoints through the worker API).`);
}
