// Worker: registers graphs with Weft, claims their runs and executes them.

import { hostname } from "node:os";
import { randomUUID } from "node:crypto";
import { WeftClient, isFenced } from "./client.mjs";
import { WeftSaver } from "./saver.mjs";
import { WeftStore } from "./store.mjs";
import { executeRun } from "./run.mjs";
import { describeGraph, typeSchemas } from "./describe.mjs";

/** A log function writing one JSON line per record to stderr. */
export function jsonLogger(base = {}) {
  return (level, msg, attrs = {}) => {
    process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...base, ...attrs })}\n`);
  };
}

/**
 * The config and context each graph's default (system) assistant starts
 * with, from LANGGRAPH_CONFIG as LangGraph's server reads it: a JSON object
 * {graph id: {...config, context?}}; {} when unset or not such an object.
 */
export function assistantDefaults(text, log = () => {}) {
  if (!text) return {};
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    log("warn", "LANGGRAPH_CONFIG is not JSON; ignored", { error: err.message });
    return {};
  }
  const out = {};
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return out;
  for (const [id, v] of Object.entries(parsed)) {
    if (!v || typeof v !== "object" || Array.isArray(v)) continue;
    const { context, ...config } = v;
    out[id] = { config };
    if (context && typeof context === "object") out[id].context = context;
  }
  return out;
}

/**
 * Worker serves compiled LangGraph.js graphs on a Weft server:
 * start() registers them (POST /dispatch/graphs; the config's graphs that
 * did not load are reported to POST /dispatch/graphs/errors) and claims their runs
 * (POST /dispatch/claim, long poll, up to `concurrency` at once), each
 * executed by executeRun with this worker's WeftSaver as checkpointer;
 * stop() stops claiming, lets running runs finish for graceMs, then stops
 * the rest and gives them back (nack), so another worker retries them.
 */
export class Worker {
  constructor({ url, graphs, failures = [], workerId, concurrency = 8, waitMs = 10_000, lingerMs = 5, log = jsonLogger(), client, apiKey }) {
    this.lingerMs = lingerMs;
    this.ownClient = !client;
    // apiKey: a key with the worker scope, sent as x-api-key (a server with WEFT_AUTH on).
    this.client = client ?? new WeftClient(url, { headers: apiKey ? { "x-api-key": apiKey } : {} });
    this.graphs = graphs;
    this.failures = failures; // graphs of the config that did not load: [{graph_id, error}]
    this.workerId = workerId ?? `weft-worker-js-${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
    this.concurrency = concurrency;
    this.waitMs = waitMs;
    this.log = log;
    this.saver = new WeftSaver(this.client);
    this.store = new WeftStore(this.client);
    for (const g of graphs.values()) {
      g.checkpointer = this.saver;
      g.store = this.store; // getStore() in a node: Weft's store
    }
    this.active = new Map(); // dispatch id → promise
    this.cancellers = new Map(); // dispatch id → stops its run (cancellation)
    this.runStarted = null; // resolves when a run starts (wakes an idle cancellation watch)
    this.stopping = false;
    this.claimAbort = new AbortController();
    this.runsAbort = new AbortController();
    this.done = null;
  }

  async register() {
    const defaults = assistantDefaults(process.env.LANGGRAPH_CONFIG, this.log);
    const fromTypes = await typeSchemas(this.graphs, this.log);
    for (const [id, g] of this.graphs) {
      const info = await describeGraph(id, g, fromTypes.get(id));
      const res = await this.client.post("/dispatch/graphs", { ...info, ...(defaults[id] ?? {}), worker_id: this.workerId });
      this.log("info", "graph registered", { graph_id: id, assistant_id: res.assistant_id, nodes: res.nodes });
    }
    // The server lists them in /info until a worker registers them.
    for (const { graph_id, error } of this.failures) {
      await this.client.post("/dispatch/graphs/errors", { graph_id, error, worker_id: this.workerId });
    }
  }

  /** Registers the graphs and starts the claim loop (it runs until stop). */
  async start() {
    await this.register();
    this.done = this._loop();
    this.watching = this._watchCancellations();
    this.log("info", "worker started", { worker_id: this.workerId, graphs: [...this.graphs.keys()], concurrency: this.concurrency });
  }

  async _loop() {
    const graphIds = [...this.graphs.keys()];
    let backoff = 100;
    while (!this.stopping) {
      const free = this.concurrency - this.active.size;
      if (free <= 0) {
        await Promise.race(this.active.values());
        continue;
      }
      let got;
      try {
        got = await this.client.post(
          "/dispatch/claim",
          { worker_id: this.workerId, graph_ids: graphIds, limit: Math.min(free, 32), wait_ms: this.waitMs },
          { signal: this.claimAbort.signal, timeoutMs: this.waitMs + 30_000 },
        );
        backoff = 100;
      } catch (err) {
        if (this.stopping) break;
        this.log("warn", "claim failed", { error: err.message });
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, 5_000);
        continue;
      }
      for (const c of got) this._start(c);
      // The runs just started execute first (a graph whose nodes do not
      // wait on I/O runs in one go of microtasks); the next long poll is
      // sent after them, not on their critical path.
      if (got.length) await new Promise((r) => setImmediate(r));
    }
  }

  /**
   * Keeps one long-polling POST /dispatch/cancellations open while runs
   * execute: a cancellation (cancel, the interrupt and rollback strategies,
   * on_disconnect=cancel) stops its run within milliseconds, as in-process
   * runs stop, instead of at the next heartbeat (which stays the fallback).
   */
  async _watchCancellations() {
    const told = new Set();
    let backoff = 100;
    while (!this.stopping) {
      if (this.cancellers.size === 0) {
        told.clear();
        await new Promise((r) => (this.runStarted = r));
        continue;
      }
      for (const id of told) if (!this.cancellers.has(id)) told.delete(id);
      let got;
      try {
        got = await this.client.post(
          "/dispatch/cancellations",
          { worker_id: this.workerId, known: [...told], wait_ms: this.waitMs },
          { signal: this.claimAbort.signal, timeoutMs: this.waitMs + 30_000 },
        );
        backoff = 100;
      } catch (err) {
        if (this.stopping) break;
        this.log("warn", "watching cancellations failed", { error: err.message });
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, 5_000);
        continue;
      }
      for (const { dispatch_id: id, cancel } of got) {
        const stop = this.cancellers.get(id);
        // A run claimed a moment ago may not be registered yet: the next call answers it again.
        if (!stop) continue;
        told.add(id);
        stop(cancel);
      }
    }
  }

  _start(claimed) {
    const id = claimed.dispatch.dispatch_id;
    const p = this._execute(claimed).finally(() => this.active.delete(id));
    this.active.set(id, p);
  }

  async _execute(claimed) {
    const { dispatch, run } = claimed;
    const graph = this.graphs.get(dispatch.graph_id);
    const lease = Date.parse(dispatch.lease_expires_at) - Date.parse(dispatch.claimed_at);
    const heartbeatMs = Math.max(200, Math.floor((Number.isFinite(lease) && lease > 0 ? lease : 30_000) / 3));
    const attrs = { run_id: run.run_id, thread_id: run.thread_id, graph_id: dispatch.graph_id, attempt: dispatch.attempt };
    this.log("debug", "run claimed", attrs);
    let res;
    try {
      if (!graph) throw new Error(`graph ${dispatch.graph_id} is not served by this worker`);
      const watchCancel = (stop) => {
        this.cancellers.set(dispatch.dispatch_id, stop);
        this.runStarted?.();
        this.runStarted = null;
        return () => this.cancellers.delete(dispatch.dispatch_id);
      };
      res = await executeRun({ claimed, graph, saver: this.saver, client: this.client, log: this.log, heartbeatMs, lingerMs: this.lingerMs, signal: this.runsAbort.signal, watchCancel });
    } catch (err) {
      res = { outcome: "stopped", reason: err };
    }
    if (res.outcome === "ended") {
      this.log("debug", "run ended", { ...attrs, status: res.status });
      return;
    }
    const reason = res.reason;
    if (reason?.kind === "lease" || isFenced(reason)) {
      this.log("warn", "run stopped: lease lost", { ...attrs, error: reason?.message });
      return;
    }
    try {
      const headers = claimed.traceparent ? { traceparent: claimed.traceparent } : undefined;
      const n = await this.client.post(`/dispatch/${dispatch.dispatch_id}/nack`, { claim_token: claimed.claim_token, error: String(reason?.message ?? reason) }, { retries: 3, headers });
      this.log("warn", "run given back", { ...attrs, error: String(reason?.message ?? reason), dispatch_state: n?.state });
    } catch (err) {
      this.log("warn", "nack failed", { ...attrs, error: err.message });
    }
  }

  /** Stops claiming; runs get graceMs to finish, then are stopped and given back. */
  async stop(graceMs = 10_000) {
    if (this.stopping) return this.done;
    this.stopping = true;
    this.claimAbort.abort();
    this.runStarted?.();
    await this.done?.catch(() => {});
    await this.watching?.catch(() => {});
    const all = Promise.allSettled([...this.active.values()]);
    const timer = setTimeout(() => this.runsAbort.abort(), graceMs);
    await all;
    // Runs claimed by the last poll may have started after the snapshot.
    await Promise.allSettled([...this.active.values()]);
    clearTimeout(timer);
    if (this.ownClient) this.client.close();
    this.log("info", "worker stopped", { worker_id: this.workerId });
  }
}
