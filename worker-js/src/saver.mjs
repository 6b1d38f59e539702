// WeftSaver: LangGraph.js's checkpointer, backed by Weft.
//
// Reads go to POST /dispatch/checkpoints/get|list, which return the rows as
// stored (blobs undecoded, with their serializer type), and are decoded by
// this saver's serializer exactly as LangGraph's PostgresSaver decodes its
// own rows. Writes (put, putWrites) never touch the database directly: they
// go to the claimed run's committer, which sends them through the fenced
// commit endpoint (POST /dispatch/{id}/commit), so a worker that lost its
// lease cannot write a single checkpoint. A thread may be written only
// while this worker holds a claimed run on it (attach/detach).

import { BaseCheckpointSaver, WRITES_IDX_MAP } from "@langchain/langgraph-checkpoint";
import { isFenced } from "./client.mjs";

const decoder = new TextDecoder();

/**
 * Weft's channel versions, in the Python saver's format
 * "{counter:032d}.0.{16 digits}": the counter orders them (as text too, the
 * way LangGraph.js compares string versions), the random suffix keeps two
 * branches forked from one checkpoint from ever minting the same version
 * (the stock JS saver's integers collide there).
 */
export function nextVersion(current) {
  let counter = 0;
  if (typeof current === "number") counter = current;
  else if (typeof current === "string") counter = Number.parseInt(current, 10) || 0;
  const suffix = String(Math.floor(Math.random() * 1e16)).padStart(16, "0");
  return `${String(counter + 1).padStart(32, "0")}.0.${suffix}`;
}

const versionText = (v) => (typeof v === "number" ? String(v) : v);

function versionsText(m) {
  const out = {};
  for (const [k, v] of Object.entries(m ?? {})) out[k] = versionText(v);
  return out;
}

const objectProto = Object.prototype;

/**
 * True when v is plain JSON data: null, booleans, finite numbers, strings,
 * and arrays and plain objects of them, none undefined (LangGraph's
 * serializer writes undefined, array holes included, as an envelope), at
 * most 32 deep (deeper, or a cycle, takes the serializer's way).
 */
function isPlainJSON(v, depth) {
  switch (typeof v) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(v);
    case "object":
      break;
    default:
      return false;
  }
  if (v === null) return true;
  if (depth >= 32) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!isPlainJSON(v[i], depth + 1)) return false;
    return true;
  }
  if (Object.getPrototypeOf(v) !== objectProto && Object.getPrototypeOf(v) !== null) return false;
  if ("toJSON" in v) return false;
  for (const k in v) if (!isPlainJSON(v[k], depth + 1)) return false;
  return true;
}

/**
 * value with each LangChain message in it (at any depth of its arrays and
 * plain objects) replaced by the envelope LangGraph's serializer writes for
 * it ({lc: 1, type: "constructor", id, kwargs}), as LangGraph.js's server
 * shows the message (its toDict()), which a message made from the envelope
 * reads the same as before:
 *
 * - without the kwargs that are undefined (the serializer would write each
 *   as an envelope of its own, {"lc": 2, "type": "undefined"}, which reads
 *   as null): no "usage_metadata" on a streamed AIMessageChunk, no
 *   "artifact" on a ToolMessage;
 * - a chunk's kwargs with its message type ("ai" for an AIMessageChunk),
 *   which readers show as the message's type (the class name otherwise).
 *
 * Other values are left as they are; value itself when it holds no message.
 */
export function storedMessages(value, depth = 0) {
  if (value === null || typeof value !== "object" || depth > 64) return value;
  if (Array.isArray(value)) {
    let out = null;
    for (let i = 0; i < value.length; i++) {
      const v = storedMessages(value[i], depth + 1);
      if (v !== value[i]) (out ??= value.slice())[i] = v;
    }
    return out ?? value;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto === objectProto || proto === null) {
    let out = null;
    for (const k of Object.keys(value)) {
      const v = storedMessages(value[k], depth + 1);
      if (v !== value[k]) (out ??= { ...value })[k] = v;
    }
    return out ?? value;
  }
  if (value.lc_serializable !== true || typeof value.toJSON !== "function" || !Array.isArray(value.lc_namespace) || !value.lc_namespace.includes("messages")) return value;
  const env = value.toJSON();
  if (env?.lc !== 1 || env.type !== "constructor" || !env.kwargs || typeof env.kwargs !== "object" || !Array.isArray(env.id)) return value;
  const kwargs = {};
  for (const [k, v] of Object.entries(env.kwargs)) if (v !== undefined) kwargs[k] = storedMessages(v, depth + 1);
  if (String(env.id.at(-1)).endsWith("Chunk") && kwargs.type === undefined && typeof value.getType === "function") kwargs.type = value.getType();
  return { ...env, kwargs };
}

/** The configurable keys LangGraph.js's server's saver leaves out of a checkpoint's metadata. */
const METADATA_EXCLUDED = new Set(["checkpoint_ns", "checkpoint_id", "run_id", "thread_id"]);

/**
 * A checkpoint's metadata as LangGraph.js's server's saver writes it: the
 * config's configurable keys (but LangGraph's internal "__" ones and
 * checkpoint_ns, checkpoint_id, run_id, thread_id), then the config's
 * metadata (the run's: its metadata, thread's and assistant's, run_id,
 * thread_id, graph_id, assistant_id, run_attempt), then LangGraph's own
 * (source, step, parents), later ones winning. Rollback, retries and
 * history filters (user_id, a thread's metadata) find a run's checkpoints
 * by it, as they do there.
 */
export function checkpointMetadata(config, metadata) {
  const out = {};
  for (const [k, v] of Object.entries(config?.configurable ?? {})) {
    if (!k.startsWith("__") && !METADATA_EXCLUDED.has(k)) out[k] = v;
  }
  Object.assign(out, config?.metadata, metadata);
  // A key whose value is undefined reads as absent there (JSON has no
  // undefined; LangGraph's serializer would write an envelope for it).
  for (const [k, v] of Object.entries(out)) if (v === undefined) delete out[k];
  return out;
}

export class WeftSaver extends BaseCheckpointSaver {
  /**
   * @param {import("./client.mjs").WeftClient} client
   * @param {object} [serde] LangGraph serializer (default: JsonPlusSerializer)
   */
  constructor(client, serde) {
    super(serde);
    this.client = client;
    /** thread id → the committer of the run this worker executes on it */
    this.committers = new Map();
    // Only LangGraph's default serializer is known to write plain JSON data
    // as JSON.stringify does.
    this.plainJSON = serde === undefined;
  }

  /** Routes writes to threadId to committer while its run executes here. */
  attach(threadId, committer) {
    this.committers.set(threadId, committer);
  }

  detach(threadId, committer) {
    if (this.committers.get(threadId) === committer) this.committers.delete(threadId);
  }

  _committer(threadId) {
    const c = this.committers.get(threadId);
    if (!c) throw new Error(`WeftSaver: no run of thread ${threadId} is claimed by this worker; checkpoints are written only through a claimed run`);
    return c;
  }

  /**
   * JSON text of a value as LangGraph's serializer writes it. Plain JSON
   * data (what most channel values, writes and events are) is the same
   * text through JSON.stringify, without the serializer's replacer pass
   * and its encoding to bytes and back.
   */
  async dumpJSON(value) {
    if (this.plainJSON && isPlainJSON(value, 0)) return JSON.stringify(value);
    if (this.plainJSON) value = storedMessages(value);
    const [type, bytes] = await this.serde.dumpsTyped(value);
    if (type !== "json") throw new Error(`WeftSaver: values of serializer type ${type} are not supported (only json)`);
    return typeof bytes === "string" ? bytes : decoder.decode(bytes);
  }

  async _load(raw) {
    const values = {};
    for (const [channel, type, b64] of raw.channel_values) {
      if (type === "empty" || b64 == null) continue;
      values[channel] = await this._loadValue(type, b64);
    }
    const writes = [];
    for (const [taskId, channel, type, b64] of raw.pending_writes) {
      writes.push([taskId, channel, await this._loadValue(type, b64)]);
    }
    const { thread_id, checkpoint_ns, checkpoint_id } = raw.config;
    return {
      config: { configurable: { thread_id, checkpoint_ns, checkpoint_id } },
      checkpoint: {
        ...raw.checkpoint,
        channel_versions: raw.checkpoint.channel_versions ?? {},
        versions_seen: raw.checkpoint.versions_seen ?? {},
        channel_values: values,
      },
      metadata: await this.serde.loadsTyped("json", JSON.stringify(raw.metadata ?? {})),
      parentConfig: raw.parent_checkpoint_id
        ? { configurable: { thread_id, checkpoint_ns, checkpoint_id: raw.parent_checkpoint_id } }
        : undefined,
      pendingWrites: writes,
    };
  }

  async _loadValue(type, b64) {
    const buf = Buffer.from(b64 ?? "", "base64");
    if (type === "json") return this.serde.loadsTyped("json", buf.toString("utf8"));
    return this.serde.loadsTyped(type ?? "json", new Uint8Array(buf));
  }

  async getTuple(config) {
    const { thread_id, checkpoint_ns = "", checkpoint_id } = config.configurable ?? {};
    // A new thread (Weft's claim said it has no checkpoint, and its run
    // has written none yet): nothing to read.
    if (this.committers.get(thread_id)?.threadEmpty) return undefined;
    // The list form of POST /dispatch/checkpoints/get: a thread without
    // checkpoints (every new thread) is an empty list, not a 404 to log.
    const [raw] = await this.client.post("/dispatch/checkpoints/list", {
      thread_id,
      checkpoint_ns,
      checkpoint_id: checkpoint_id ?? "",
      limit: 1,
    });
    return raw ? this._load(raw) : undefined;
  }

  async *list(config, options = {}) {
    const { filter, before, limit } = options;
    const c = config?.configurable ?? {};
    const body = {
      thread_id: c.thread_id,
      checkpoint_ns: c.checkpoint_ns ?? null,
      checkpoint_id: c.checkpoint_id ?? "",
      before: before?.configurable?.checkpoint_id ?? "",
      limit: limit ?? 1000,
    };
    if (filter && Object.keys(filter).length > 0) body.filter = filter;
    const rows = await this.client.post("/dispatch/checkpoints/list", body);
    for (const raw of rows) yield await this._load(raw);
  }

  /**
   * LangGraph's getDeltaChannelHistory (DeltaChannel reads) in one request:
   * Weft walks the parent chain in SQL (POST /dispatch/checkpoints/delta-history)
   * instead of the base class's getTuple per ancestor.
   */
  async getDeltaChannelHistory({ config, channels }) {
    if (!channels || channels.length === 0) return {};
    const { thread_id, checkpoint_ns = "", checkpoint_id = "" } = config.configurable ?? {};
    const raw = await this.client.post("/dispatch/checkpoints/delta-history", {
      thread_id,
      checkpoint_ns,
      checkpoint_id: checkpoint_id ?? "",
      channels,
    });
    const out = {};
    for (const ch of channels) {
      const h = raw[ch] ?? { writes: [] };
      const writes = [];
      for (const [taskId, channel, type, b64] of h.writes) writes.push([taskId, channel, await this._loadValue(type, b64)]);
      const entry = { writes };
      if (h.seed) entry.seed = await this._loadValue(h.seed[0], h.seed[1]);
      out[ch] = entry;
    }
    return out;
  }

  async put(config, checkpoint, metadata, newVersions) {
    const { thread_id, checkpoint_ns = "", checkpoint_id } = config.configurable ?? {};
    const committer = this._committer(thread_id);
    const md = checkpointMetadata(config, metadata);
    const render = (all) => this._renderPut(checkpoint, md, newVersions, checkpoint_id, checkpoint_ns, all);
    // A root checkpoint can be sent complete (every channel's value) if it
    // turns out to be the run's last: the end's commit then lets Weft
    // project the thread without reading it back.
    committer.addCheckpoint(await render(false), checkpoint_ns === "" ? () => render(true) : null, checkpoint.id);
    await committer.persist();
    return { configurable: { thread_id, checkpoint_ns, checkpoint_id: checkpoint.id } };
  }

  /** The JSON of a commit's checkpoint put (all: every channel's value, "complete"). */
  async _renderPut(checkpoint, metadata, newVersions, checkpoint_id, checkpoint_ns, all) {
    const values = [];
    for (const channel of all ? Object.keys(checkpoint.channel_values) : Object.keys(newVersions)) {
      if (channel in checkpoint.channel_values) {
        values.push(`${JSON.stringify(channel)}:${await this.dumpJSON(checkpoint.channel_values[channel])}`);
      }
    }
    const { channel_values: _, channel_versions, versions_seen, ...rest } = checkpoint;
    const seen = {};
    for (const [node, m] of Object.entries(versions_seen ?? {})) seen[node] = versionsText(m);
    const head = JSON.stringify({ ...rest, channel_versions: versionsText(channel_versions), versions_seen: seen });
    const cp = `${head.slice(0, -1)}${head.length > 2 ? "," : ""}"channel_values":{${values.join(",")}}}`;
    const md = (await this.dumpJSON(metadata)).replace(/\\u0000/g, "");
    return (
      `{"parent_checkpoint_id":${JSON.stringify(checkpoint_id ?? "")},"checkpoint_ns":${JSON.stringify(checkpoint_ns)},` +
      `"checkpoint":${cp},"metadata":${md},"new_versions":${JSON.stringify(versionsText(newVersions))}${all ? ',"complete":true' : ""}}`
    );
  }

  async putWrites(config, writes, taskId, taskPath = "") {
    const { thread_id, checkpoint_ns = "", checkpoint_id } = config.configurable ?? {};
    const committer = this._committer(thread_id);
    const list = [];
    for (let i = 0; i < writes.length; i++) {
      const [channel, value] = writes[i];
      list.push(
        `{"task_id":${JSON.stringify(taskId)},"channel":${JSON.stringify(channel)},"idx":${WRITES_IDX_MAP[channel] ?? i},` +
          `"task_path":${JSON.stringify(taskPath ?? "")},"value":${await this.dumpJSON(value)}}`,
      );
    }
    committer.addWrites(
      `{"checkpoint_ns":${JSON.stringify(checkpoint_ns)},"checkpoint_id":${JSON.stringify(checkpoint_id)},"writes":[${list.join(",")}]}`,
      checkpoint_ns,
      checkpoint_id,
    );
    await committer.persist();
  }

  async deleteThread(threadId) {
    throw new Error(`WeftSaver.deleteThread(${threadId}): delete threads through Weft's API (DELETE /threads/{thread_id})`);
  }

  getNextVersion(current) {
    return nextVersion(current);
  }
}

export { isFenced };
