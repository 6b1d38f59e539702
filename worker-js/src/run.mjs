// One claimed run: its committer (the only way its writes reach Weft), its
// heartbeat, and its execution by LangGraph.js's own Pregel loop.

import { Command, Send } from "@langchain/langgraph";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { isFenced } from "./client.mjs";
import { startRunSpan } from "./trace.mjs";
import { graphForRun } from "./load.mjs";
import { startTransformers } from "./transformers.mjs";

/**
 * A callback handler that only asks chat models to stream (LangChain's
 * lc_prefer_streaming), as streamEvents' own handler does.
 */
class PreferStreaming extends BaseCallbackHandler {
  name = "weft_prefer_streaming";
  lc_prefer_streaming = true;
}

/** Why a run's AbortController fired. */
export class StopReason extends Error {
  constructor(kind, message) {
    super(message);
    this.name = "StopReason";
    this.kind = kind; // "cancel" | "lease" | "shutdown"
  }
}

/**
 * Committer batches a run's checkpoints, pending writes and events into
 * commits (POST /dispatch/{id}/commit), one at a time and in order: what
 * piles up while a commit is in flight goes in the next one. Every commit
 * presents the claim token (Weft refuses it with 409 once the lease is
 * lost) and carries a commit_id, so a retried request is applied once.
 */
export class Committer {
  constructor({ client, dispatchId, token, onCancel, onFail, sync = false, lingerMs = 0, traceparent = "" }) {
    this.client = client;
    // The run's trace context: every commit carries it as a traceparent
    // header, so Weft's spans of the commit join the run's trace.
    this.headers = traceparent ? { traceparent } : undefined;
    // lingerMs > 0 waits that long before sending what piled up (fewer,
    // larger commits; events reach streams that much later).
    this.lingerMs = lingerMs;
    // sync: every put/putWrites resolves only once committed (LangGraph's
    // "sync" durability); otherwise they resolve when queued, and the run
    // ends only after every commit succeeded (a failed one stops the run).
    this.sync = sync;
    this.dispatchId = dispatchId;
    this.token = token;
    this.onCancel = onCancel;
    this.onFail = onFail;
    this.checkpoints = [];
    this.writes = [];
    this.events = [];
    this.seq = 0;
    this.chain = Promise.resolve();
    this.failed = null;
    this.lastRoot = null;
    this.scheduled = false;
    this.lingerTimer = null;
    this.ended = false;
    // The run's thread has no checkpoint (Weft said so at the claim) and
    // this run has not written one: a checkpoint read would find nothing.
    this.threadEmpty = false;
  }

  /**
   * Queues a checkpoint put; complete (root checkpoints, with their id)
   * renders it with every channel's value. The end's commit carries the
   * run's last root checkpoint complete, with the writes under it, so that
   * Weft projects the thread from the commit instead of reading it back:
   * in place of its put when that is still unsent, else once more (the put
   * and the writes are idempotent).
   */
  addCheckpoint(json, complete = null, id = "") {
    this._check();
    this.threadEmpty = false;
    this.checkpoints.push(json);
    if (complete) this.lastRoot = { index: this.checkpoints.length - 1, complete, id, writes: [], sentWrites: 0, sent: false };
  }

  /** Queues pending writes under checkpoint (ns, checkpointId). */
  addWrites(json, ns = "", checkpointId = "") {
    this._check();
    this.threadEmpty = false;
    this.writes.push(json);
    if (ns === "" && this.lastRoot && checkpointId === this.lastRoot.id) this.lastRoot.writes.push(json);
  }

  /** Appends an event (data is JSON text) and sends it soon. */
  emit(event, dataJSON) {
    if (this.failed || this.ended) return;
    this.events.push(`{"event":${JSON.stringify(event)},"data":${dataJSON}}`);
    this.soon();
  }

  /**
   * Sends what is pending at the end of this turn of the event loop (after
   * any commit in flight), so a step's checkpoint, writes and events share
   * one commit. With sync durability the saver awaits flush() instead.
   */
  soon() {
    if (this.scheduled) return;
    this.scheduled = true;
    const go = () => {
      this.scheduled = false;
      this.lingerTimer = null;
      this.flush().catch(() => {});
    };
    if (this.lingerMs > 0) this.lingerTimer = setTimeout(go, this.lingerMs);
    else setImmediate(go);
  }

  _check() {
    if (this.failed) throw this.failed;
    if (this.ended) throw new Error("run already ended");
  }

  /** What the saver awaits after queueing a write (see sync). */
  persist() {
    if (this.sync) return this.flush();
    this._check();
    this.soon();
    return Promise.resolve();
  }

  /** Sends what is pending (after any commit in flight). */
  flush() {
    this.chain = this.chain.then(() => this._send(null));
    return this.chain;
  }

  /** Sends what is pending with the run's end ({status, result?, error?}). */
  end(end) {
    // The end's commit takes everything pending: a lingering send would find nothing.
    if (this.lingerTimer) clearTimeout(this.lingerTimer);
    this.chain = this.chain.then(() => {
      this.ended = true;
      this.events.push(`{"event":"end","data":${JSON.stringify({ status: end.status })}}`);
      return this._send(end);
    });
    return this.chain;
  }

  async _send(end) {
    if (this.failed) throw this.failed;
    if (!end && !this.checkpoints.length && !this.writes.length && !this.events.length) return null;
    const last = this.lastRoot;
    if (end && last && !last.sent) this.checkpoints[last.index] = await last.complete();
    else if (end && last) {
      this.checkpoints.push(await last.complete());
      this.writes.push(...last.writes.slice(0, last.sentWrites));
    }
    if (last) {
      last.sent = true;
      last.sentWrites = last.writes.length;
    }
    const parts = [`"claim_token":${JSON.stringify(this.token)}`];
    parts.push(`"commit_id":${JSON.stringify(end ? `end:${this.token}` : `${this.token}:${++this.seq}`)}`);
    parts.push(`"checkpoints":[${this.checkpoints.join(",")}]`);
    parts.push(`"writes":[${this.writes.join(",")}]`);
    parts.push(`"events":[${this.events.join(",")}]`);
    if (end) parts.push(`"end":${end.json}`);
    this.checkpoints = [];
    this.writes = [];
    this.events = [];
    try {
      const res = await this.client.request("POST", `/dispatch/${this.dispatchId}/commit`, undefined, {
        rawBody: `{${parts.join(",")}}`,
        headers: this.headers,
      });
      if (res?.cancel) this.onCancel(res.cancel);
      return res;
    } catch (err) {
      this.failed = err;
      this.onFail(err);
      throw err;
    }
  }
}

/**
 * The stream modes whose events carry state values: their data is written
 * in the checkpoints' format (LangGraph's serializer; Weft normalises it
 * as it normalises the checkpoints), so that Weft stores the values an
 * event repeats from a checkpoint as a reference to it. The other modes'
 * data is written as LangGraph.js's server writes it (serverJSON).
 */
const REFERENCED_MODES = new Set(["values", "updates", "debug", "checkpoints"]);

/**
 * JSON text of a stream event's data as LangGraph.js's server writes it
 * (its serialiseAsDict): JSON.stringify, a message as its toDict()
 * ({...data, type}: "ai" for an AIMessageChunk), undefined left out. A
 * value JSON cannot hold (a BigInt, a cycle) is written "null".
 */
export function serverJSON(value) {
  try {
    return (
      JSON.stringify(value, function (key, v) {
        const raw = this[key];
        if (raw != null && typeof raw === "object" && typeof raw.toDict === "function") {
          const { type, data } = raw.toDict();
          return { ...data, type };
        }
        return v;
      }) ?? "null"
    );
  } catch {
    return "null";
  }
}

/** LangGraph.js's lightweight checkpoint envelope ({id, parent_id?, step, source}) of a checkpoints chunk. */
function isCheckpointEnvelope(p) {
  return p != null && typeof p === "object" && typeof p.id === "string" && ("source" in p || typeof p.step === "number") && !("values" in p) && !("config" in p);
}

/** Stream modes the SSE layer knows, and what LangGraph calls them. */
const MODE_MAP = {
  values: "values",
  updates: "updates",
  custom: "custom",
  debug: "debug",
  checkpoints: "checkpoints",
  tasks: "tasks",
  tools: "tools",
  "messages-tuple": "messages",
  messages: "messages",
};

/**
 * executeRun runs one claimed run to its end with graph (a compiled
 * LangGraph.js graph whose checkpointer is the worker's WeftSaver).
 * It returns {outcome: "ended" | "stopped", reason?}; "stopped" means the
 * run was not ended here (lease lost, shutdown): the caller gives it back.
 */
export async function executeRun({ claimed, graph, saver, client, log, heartbeatMs, lingerMs = 0, signal: workerSignal, watchCancel }) {
  const { dispatch, run, claim_token: token } = claimed;
  const kwargs = run.kwargs ?? {};
  const controller = new AbortController();
  const stop = (kind, message) => {
    if (!controller.signal.aborted) controller.abort(new StopReason(kind, message));
  };
  const onWorkerStop = () => stop("shutdown", "worker shutting down");
  workerSignal?.addEventListener("abort", onWorkerStop, { once: true });
  let cancelAction = "";
  const configIn = kwargs.config ?? {};
  // The run config's metadata, as LangGraph's server hands it to the graph
  // (and its saver to every checkpoint, see WeftSaver.put): the run's
  // metadata (its assistant's and thread's merged in when the run was
  // created), the config's, the attempt, and the run's ids (which
  // LangGraph.js copies from configurable into metadata too).
  const runMetadata = {
    ...(run.metadata ?? {}),
    ...(configIn.metadata ?? {}),
    run_attempt: dispatch.attempt ?? 1,
    run_id: run.run_id,
    thread_id: run.thread_id,
    graph_id: dispatch.graph_id,
    assistant_id: run.assistant_id,
  };
  // An update_state Weft hands to the worker (see applyUpdate).
  const update = run.metadata?.[UPDATE_STATE_KEY];
  delete runMetadata[UPDATE_STATE_KEY];
  // The run continues the trace of the request that created it.
  const span = startRunSpan(claimed.traceparent, {
    "weft.run_id": run.run_id,
    "weft.thread_id": run.thread_id,
    "weft.graph_id": dispatch.graph_id,
    "weft.attempt": dispatch.attempt,
  });
  const headers = span.traceparent ? { traceparent: span.traceparent } : undefined;
  const committer = new Committer({
    traceparent: span.traceparent,
    // An update reads back what it just wrote (bulkUpdateState chains its
    // supersteps): each of its puts is committed before it resolves.
    sync: kwargs.durability === "sync" || !!update,
    lingerMs,
    client,
    dispatchId: dispatch.dispatch_id,
    token,
    onCancel: (action) => {
      cancelAction = action;
      stop("cancel", `run cancelled (${action})`);
    },
    onFail: (err) => stop(isFenced(err) ? "lease" : "commit", `commit failed: ${err.message}`),
  });
  committer.threadEmpty = claimed.thread_empty === true;
  // The worker's cancellation watch stops the run as soon as it is cancelled.
  const unwatch = watchCancel?.((action) => {
    cancelAction = action;
    stop("cancel", `run cancelled (${action})`);
  });
  saver.attach(run.thread_id, committer);

  // The heartbeat's sleep is cut short when the run ends: no timer (and
  // the run's memory it holds) outlives the run by up to a lease third.
  let beating = true;
  let beatTimer;
  let wakeBeat;
  const beat = async () => {
    while (beating) {
      await new Promise((r) => {
        wakeBeat = r;
        beatTimer = setTimeout(r, heartbeatMs);
      });
      if (!beating) return;
      try {
        const res = await client.post(`/dispatch/${dispatch.dispatch_id}/heartbeat`, { claim_token: token }, { retries: 2, headers });
        if (res?.cancel) {
          cancelAction = res.cancel;
          stop("cancel", `run cancelled (${res.cancel})`);
        }
      } catch (err) {
        if (isFenced(err)) {
          log("warn", "lease lost", { run_id: run.run_id, error: err.message });
          stop("lease", "lease lost");
          return;
        }
        log("warn", "heartbeat failed", { run_id: run.run_id, error: err.message });
      }
    }
  };
  const beatDone = beat();

  const dataJSON = async (v) => saver.dumpJSON(v);
  let spanErr;
  try {
    if (update) return await applyUpdate({ update, run, graph, graphId: dispatch.graph_id, committer, controller });
    const rawModes = new Set(kwargs.stream_mode ?? []);
    const requested = new Set((kwargs.stream_mode ?? ["values"]).map((m) => MODE_MAP[m]).filter(Boolean));
    // values and updates are always recorded (the result, interrupts, and
    // the thread stream need them); custom too, as the in-process pool does.
    const modes = new Set(["values", "updates", "custom", ...requested]);
    const configurable = {
      ...(configIn.configurable ?? {}),
      thread_id: run.thread_id,
      run_id: run.run_id,
      graph_id: dispatch.graph_id,
      assistant_id: run.assistant_id,
    };
    delete configurable.checkpoint_id;
    let input = kwargs.command ? commandOf(kwargs.command) : kwargs.input;
    let checkpointId = kwargs.checkpoint_id || undefined;
    if (dispatch.attempt > 1) {
      // A retry: continue from the last checkpoint this run committed, if
      // any (its input was applied there already); LangGraph then reuses
      // the pending writes of tasks that completed.
      for await (const t of saver.list({ configurable: { thread_id: run.thread_id, checkpoint_ns: "" } }, { filter: { run_id: run.run_id }, limit: 1 })) {
        input = null;
        checkpointId = t.config.configurable.checkpoint_id;
      }
    }
    if (checkpointId) configurable.checkpoint_id = checkpointId;

    committer.emit("metadata", JSON.stringify({ run_id: run.run_id, attempt: dispatch.attempt }));
    const options = {
      configurable,
      metadata: runMetadata,
      tags: configIn.tags,
      context: kwargs.context,
      streamMode: [...modes],
      subgraphs: !!kwargs.subgraphs,
      signal: controller.signal,
    };
    // A run without a recursion limit runs with the graph's own (bound with
    // withConfig, as deepagents' 10000), else LangGraph's default (25): as
    // LangGraph.js's server, which leaves the option out rather than
    // override the graph's.
    if (configIn.recursion_limit != null) options.recursionLimit = configIn.recursion_limit;
    if (kwargs.interrupt_before?.length) options.interruptBefore = kwargs.interrupt_before;
    if (kwargs.interrupt_after?.length) options.interruptAfter = kwargs.interrupt_after;
    if (kwargs.durability) options.durability = kwargs.durability;
    // The run's store acts for the run's tenant (the claim proves the run
    // is this worker's), not for the tenant of the worker's credentials.
    if (typeof graph.store?.forRun === "function") options.store = graph.store.forRun(dispatch.dispatch_id, token);

    // The run's result: its last values chunk (as its event sent it), which
    // for a run that stopped at an interrupt holds only __interrupt__, as
    // LangGraph.js's server answers runs.wait.
    let lastValuesJSON = "null";
    let failure = null;
    let transformers = null;
    try {
      // A graph factory's graph is made anew for the run, from its config.
      const runGraph = await graphForRun(graph, { ...configIn, configurable, metadata: runMetadata }, dispatch.graph_id, { context: kwargs.context });
      // Its stream transformers see every chunk, of the modes they need too
      // but "messages": that mode's callback handler gives the messages it
      // sees an id (a tool's message "run-<id>-tool-<call id>"), which
      // then goes into the state, where LangGraph.js's server (which runs
      // no transformers for these runs) leaves it to the messages reducer.
      transformers = startTransformers(runGraph);
      if (transformers) options.streamMode = [...new Set([...options.streamMode, ...transformers.modes.filter((m) => m !== "messages")])];
      const onChunk = async (chunk) => {
        let ns = [];
        let mode;
        let data;
        if (options.subgraphs) [ns, mode, data] = chunk;
        else [mode, data] = chunk;
        const root = ns.length === 0;
        transformers?.process(ns, mode, data);
        const event = root ? mode : `${mode}|${ns.join("|")}`;
        if (mode === "checkpoints" && isCheckpointEnvelope(data)) {
          // LangGraph.js streams a checkpoint's envelope ({id, parent_id,
          // step, source}) before each values chunk of a run streaming
          // subgraphs with the values mode; LangGraph.js's server sends it
          // as a checkpoints event when the run asked for values (or
          // messages, which adds them) and not for checkpoints (whose
          // events are the checkpoints themselves). This worker streams
          // values always: it records the envelope as the server would
          // send it, and Weft streams the stored "checkpoint_envelope" so.
          if ((rawModes.has("values") || rawModes.has("messages")) && !rawModes.has("checkpoints")) {
            committer.emit(root ? "checkpoint_envelope" : `checkpoint_envelope|${ns.join("|")}`, serverJSON(data));
          }
          return;
        }
        if (!modes.has(mode)) return;
        const json = REFERENCED_MODES.has(mode) ? await dataJSON(serverShape(mode, data)) : serverJSON(serverShape(mode, data));
        committer.emit(event, json);
        if (root && mode === "values") lastValuesJSON = json; // the result's text: a long chat is not serialized again
        if (root && mode === "values" && messageEvents) await messageEvents.values(data);
      };
      // LangGraph.js's server runs every run through LangGraph's
      // streamEvents (v2), whose callback handler makes chat models stream:
      // a model's message is then its chunks concatenated (their id,
      // response metadata and tool call chunks), whatever modes the run
      // asked for. The worker does too when the run needs the events
      // themselves: the events mode, the messages mode (messages/partial,
      // /complete, /metadata from the chat models' callbacks), and subgraph
      // streams (LangGraph streams the checkpoint envelopes only there).
      // Other runs go through stream() (cheaper: no event for every
      // runnable) with a callback handler that makes chat models stream
      // all the same.
      const messageEvents = rawModes.has("messages") ? new MessageEvents((event, data) => committer.emit(event, data), serverJSON) : null;
      if (rawModes.has("events") || messageEvents || options.subgraphs) {
        const events = runGraph.streamEvents(input, { ...options, version: "v2", runId: run.run_id });
        for await (const ev of events) {
          if (ev.tags?.includes("langsmith:hidden")) continue;
          if (ev.event === "on_chain_stream" && ev.run_id === run.run_id) {
            await onChunk(ev.data.chunk);
            continue;
          }
          if (rawModes.has("events")) committer.emit("events", serverJSON(ev));
          if (ev.event === "on_chat_model_stream" && !ev.tags?.includes("nostream")) await messageEvents?.token(ev);
        }
      } else {
        const stream = await runGraph.stream(input, { ...options, runId: run.run_id, callbacks: [new PreferStreaming()] });
        for await (const chunk of stream) await onChunk(chunk);
      }
    } catch (err) {
      failure = err;
    }
    const reason = controller.signal.aborted ? controller.signal.reason : null;
    if (reason instanceof StopReason && reason.kind !== "cancel") {
      return { outcome: "stopped", reason };
    }
    if (reason instanceof StopReason && reason.kind === "cancel") {
      await committer.end({ status: "interrupted", json: `{"status":"interrupted","result":${lastValuesJSON}}` });
      log("info", "run cancelled", { run_id: run.run_id, action: cancelAction });
      return { outcome: "ended", status: "interrupted" };
    }
    if (failure) {
      await transformers?.finish(failure);
      const e = { error: failure?.name || failure?.constructor?.name || "Error", message: String(failure?.message ?? failure) };
      committer.emit("error", JSON.stringify(e));
      await committer.end({ status: "error", json: JSON.stringify({ status: "error", error: e }) });
      log("info", "run failed", { run_id: run.run_id, error: e.message });
      return { outcome: "ended", status: "error" };
    }
    // The transformers' final values, as LangGraph's server sends them when
    // a run's stream closes (see transformers.mjs).
    for (const { name, payload } of (await transformers?.finish()) ?? []) {
      committer.emit(`custom:${name}`, serverJSON(payload));
    }
    await committer.end({ status: "success", json: `{"status":"success","result":${lastValuesJSON}}` });
    return { outcome: "ended", status: "success" };
  } catch (err) {
    spanErr = err;
    const reason = controller.signal.aborted ? controller.signal.reason : null;
    if (reason instanceof StopReason) return { outcome: "stopped", reason };
    return { outcome: "stopped", reason: err };
  } finally {
    span.end(spanErr);
    beating = false;
    clearTimeout(beatTimer);
    wakeBeat?.();
    workerSignal?.removeEventListener("abort", onWorkerStop);
    unwatch?.();
    saver.detach(run.thread_id, committer);
    void beatDone;
  }
}

/**
 * MessageEvents makes the events of the Agent Server's "messages" stream
 * mode: messages/metadata when a chat model starts a message (with the
 * callback's metadata), messages/partial with the message so far at each
 * token, and messages/complete for each message (by id) that first
 * appears in the graph's state.
 */
export class MessageEvents {
  constructor(emit, toJSON) {
    this.emit = emit;
    this.toJSON = toJSON;
    this.partial = new Map(); // message id → the chunks so far, concatenated
    this.complete = new Set(); // message ids sent as complete
  }

  async token(ev) {
    const chunk = ev.data?.chunk;
    if (!chunk?.id) return;
    const sofar = this.partial.get(chunk.id);
    if (!sofar) {
      this.partial.set(chunk.id, chunk);
      this.emit("messages/metadata", await this.toJSON({ [chunk.id]: { metadata: ev.metadata ?? {} } }));
    } else {
      this.partial.set(chunk.id, sofar.concat(chunk));
    }
    this.emit("messages/partial", await this.toJSON([this.partial.get(chunk.id)]));
  }

  async values(state) {
    let list = state && typeof state === "object" && !Array.isArray(state) && "messages" in state ? state.messages : [];
    if (!Array.isArray(list)) list = [list];
    const fresh = [];
    for (const m of list) {
      if (!m?.id || this.complete.has(m.id)) continue;
      this.complete.add(m.id);
      fresh.push(m);
    }
    if (fresh.length) this.emit("messages/complete", await this.toJSON(fresh));
  }
}

/** A checkpoint's reference {thread_id, checkpoint_ns, checkpoint_id, checkpoint_map} from a RunnableConfig, or null. */
export function checkpointRef(config, { needId = true } = {}) {
  const c = config?.configurable;
  if (!c || typeof c !== "object" || typeof c.thread_id !== "string" || !c.thread_id) return null;
  if (needId && typeof c.checkpoint_id !== "string") return null;
  return {
    thread_id: c.thread_id,
    checkpoint_ns: c.checkpoint_ns || "",
    checkpoint_id: c.checkpoint_id || null,
    checkpoint_map: c.checkpoint_map || null,
  };
}

/** config without LangGraph's internal configurable keys (__pregel_*) and callbacks. */
function publicConfig(config) {
  if (!config?.configurable || typeof config.configurable !== "object") return config;
  const out = { ...config, configurable: {} };
  for (const [k, v] of Object.entries(config.configurable)) if (!k.startsWith("__")) out.configurable[k] = v;
  delete out.callbacks;
  return out;
}

/**
 * o without its keys whose value is undefined, as the JSON LangGraph.js's
 * server sends has them (LangGraph's serializer would write each as an
 * envelope, which reads as null).
 */
function defined(o) {
  const out = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out;
}

/** A task of a debug / tasks payload: its state config as a checkpoint reference. */
function serverTask(task) {
  if (!task || typeof task !== "object") return task;
  const ref = checkpointRef(task.state, { needId: false });
  if (!ref) return defined(task);
  const { state, ...rest } = task;
  return defined({ ...rest, checkpoint: ref });
}

/** A debug "checkpoint" payload in the Agent Server's shape. */
function serverCheckpoint(p) {
  if (!p || typeof p !== "object") return p;
  const { parentConfig, ...rest } = p;
  return defined({
    ...rest,
    config: publicConfig(p.config),
    parent_config: publicConfig(parentConfig ?? p.parent_config),
    checkpoint: checkpointRef(p.config),
    parent_checkpoint: checkpointRef(parentConfig ?? p.parent_config),
    tasks: Array.isArray(p.tasks) ? p.tasks.map(serverTask) : p.tasks,
  });
}

/**
 * A stream chunk as LangGraph.js's server sends it: its debug "checkpoint"
 * payloads carry checkpoint / parent_checkpoint references and
 * parent_config instead of the library's parentConfig; tasks carry a
 * checkpoint reference instead of their state config; the checkpoints
 * mode sends a checkpoint's values, metadata and next.
 */
export function serverShape(mode, data) {
  if (mode === "debug" && data && typeof data === "object") {
    if (data.type === "checkpoint") return { ...data, payload: serverCheckpoint(data.payload) };
    if (data.type === "task_result" || data.type === "task") return { ...data, payload: serverTask(data.payload) };
    return data;
  }
  if (mode === "checkpoints" && data && typeof data === "object") return { values: data.values, metadata: data.metadata, next: data.next };
  if (mode === "tasks") return serverTask(data);
  return data;
}

/** The run metadata key with which Weft hands an update_state to a worker. */
export const UPDATE_STATE_KEY = "__weft_update_state__";

/**
 * Applies an update_state ({values, as_node, checkpoint_id, checkpoint_ns}, or
 * {supersteps} for LangGraph's bulkUpdateState) with
 * LangGraph's own updateState (its reducers, as_node's writers and edges;
 * an older checkpoint_id forks) and ends the run with the new checkpoint's
 * config as {"__update_state__": …}, or LangGraph's refusal as
 * {"__update_error__": {error, message}} (Weft answers 400 with it). A list
 * of values is applied as successive updates.
 */
async function applyUpdate({ update, run, graph, graphId, committer, controller }) {
  // checkpoint_ns names a subgraph's namespace: LangGraph's updateState
  // hands the update to that subgraph (its reducers and edges, its
  // checkpoints); the parent's checkpoint is left as it is. The graph id
  // goes with it, as LangGraph.js's server sends it (and its saver writes
  // it to the new checkpoint's metadata).
  let config = { configurable: { thread_id: run.thread_id, checkpoint_ns: update.checkpoint_ns || "", graph_id: graphId } };
  if (update.checkpoint_id) config.configurable.checkpoint_id = update.checkpoint_id;
  let result;
  try {
    const runGraph = await graphForRun(graph, { ...(run.kwargs?.config ?? {}), configurable: { ...(run.kwargs?.config?.configurable ?? {}), thread_id: run.thread_id } }, graphId, { accessContext: "threads.update" });
    if (Array.isArray(update.supersteps)) {
      // POST /threads with supersteps: LangGraph's bulk update, each superstep one step.
      const steps = update.supersteps.map((st) => ({
        updates: (st.updates ?? []).map((u) => ({ values: u.values, asNode: u.as_node || undefined })),
      }));
      config = await runGraph.bulkUpdateState(config, steps);
    } else {
      const list = Array.isArray(update.values) ? update.values : [update.values];
      for (const values of list) config = await runGraph.updateState(config, values, update.as_node || undefined);
    }
    result = { __update_state__: config.configurable };
  } catch (err) {
    if (controller.signal.aborted) throw err;
    result = { __update_error__: { error: err?.name || "Error", message: String(err?.message ?? err) } };
  }
  await committer.end({ status: "success", json: JSON.stringify({ status: "success", result }) });
  return { outcome: "ended", status: "success" };
}

/** A run's command ({resume, update, goto}) as LangGraph's Command. */
export function commandOf(c) {
  const params = {};
  if (c.resume !== undefined && c.resume !== null) params.resume = c.resume;
  if (c.update !== undefined && c.update !== null) params.update = c.update;
  if (c.goto !== undefined && c.goto !== null) {
    const gotos = Array.isArray(c.goto) ? c.goto : [c.goto];
    params.goto = gotos.map((g) => (typeof g === "string" ? g : new Send(g.node, g.input)));
  }
  return new Command(params);
}
