// Test helpers: a Weft server per test file (sdk-tests/harness.mjs builds
// ./cmd/server and runs it with its own managed PostgreSQL) and workers as
// real child processes (bin/weft-worker.mjs).

import { spawn } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { before, after } from "node:test";
import { startServer } from "../../sdk-tests/harness.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
export const BIN = resolve(HERE, "../bin/weft-worker.mjs");
export const FIXTURES = join(HERE, "fixtures", "langgraph.json");
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts one server for the file (env: extra server environment, e.g.
 * WEFT_LEASE) and stops it, and every worker started, at the end.
 */
export function useWeft(env = {}) {
  const h = { url: null, db: null, workers: new Set() };
  let server;
  before(async () => {
    const saved = {};
    for (const [k, v] of Object.entries(env)) {
      saved[k] = process.env[k];
      process.env[k] = v;
    }
    try {
      server = await startServer();
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
    h.url = server.url;
    h.db = server.db;
    h.logLines = server.logLines;
  }, { timeout: 120_000 });
  after(async () => {
    await Promise.all([...h.workers].map((w) => w.stop()));
    await server?.stop();
  }, { timeout: 60_000 });
  h.startWorker = async (args = [], env) => {
    const w = await startWorker(h.url, args, env);
    h.workers.add(w);
    return w;
  };
  return h;
}

/**
 * Starts `weft-worker --config fixtures/langgraph.json --url url ...args`
 * and resolves once it logged "worker started" (env: extra environment,
 * e.g. WEFT_API_KEY). Returns {pid, lines(), stop(): SIGTERM and wait,
 * kill(): SIGKILL and wait, exited}.
 */
export async function startWorker(url, args = [], env = {}) {
  const child = spawn(process.execPath, [...(process.env.WEFT_WORKER_NODE_ARGS ? process.env.WEFT_WORKER_NODE_ARGS.split(" ") : []), BIN, "--config", FIXTURES, "--url", url, "--log-level", "debug", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  const lines = [];
  const exited = new Promise((r) => child.once("exit", (code, signal) => r({ code, signal })));
  let started;
  const ready = new Promise((res, rej) => {
    started = res;
    exited.then((e) => rej(new Error(`worker exited (${e.code ?? e.signal}):\n${lines.join("\n")}`)));
  });
  for (const s of [child.stdout, child.stderr]) {
    let buf = "";
    s.setEncoding("utf8");
    s.on("data", (d) => {
      buf += d;
      const parts = buf.split("\n");
      buf = parts.pop();
      for (const l of parts) {
        lines.push(l);
        if (l.includes('"worker started"')) started();
      }
    });
  }
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  const w = {
    pid: child.pid,
    lines: () => lines.slice(),
    logs: () => lines.map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        return { msg: l };
      }
    }),
    exited,
    async stop() {
      if (!gone()) child.kill("SIGTERM");
      const t = setTimeout(() => !gone() && child.kill("SIGKILL"), 20_000);
      await exited;
      clearTimeout(t);
    },
    async kill() {
      if (!gone()) child.kill("SIGKILL");
      await exited;
    },
  };
  const t = setTimeout(() => child.kill("SIGKILL"), 30_000);
  try {
    await ready;
  } finally {
    clearTimeout(t);
  }
  return w;
}

/** POSTs JSON to the server; resolves {status, body}. */
export async function post(url, path, body) {
  const res = await fetch(url + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

export async function get(url, path) {
  const res = await fetch(url + path);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** Waits until fn() is truthy (polling), or fails after ms. */
export async function until(fn, ms = 20_000, what = "condition") {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}
