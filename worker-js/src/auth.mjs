// A project's langgraph.json auth.path (an Auth of @langchain/langgraph-sdk/auth),
// served to the Weft server over a local HTTP channel (a unix socket): the
// server asks it to authenticate each API request and to authorize each
// resource:action, with the value the Agent Server passes to the handler.

import { createServer } from "node:http";
import { existsSync, unlinkSync } from "node:fs";
import { resolve, extname } from "node:path";
import { pathToFileURL } from "node:url";

const TS_EXTENSIONS = new Set([".ts", ".mts", ".cts", ".tsx"]);

/** The export that a langgraph.json path ("./auth.mts:auth") names, relative to dir. */
export async function loadExport(spec, dir) {
  const i = spec.lastIndexOf(":");
  const [file, name] = i > 1 ? [spec.slice(0, i), spec.slice(i + 1)] : [spec, "default"];
  const abs = resolve(dir, file);
  const url = pathToFileURL(abs).href;
  let mod;
  if (TS_EXTENSIONS.has(extname(abs))) {
    const { tsImport } = await import("tsx/esm/api");
    mod = await tsImport(url, import.meta.url);
  } else {
    mod = await import(url);
  }
  return { name, value: mod[name || "default"] ?? mod.default?.[name] };
}

/** Loads the Auth object that auth.path ("./auth.mts:auth") names, relative to dir. */
export async function loadAuth(spec, dir) {
  const { name, value: auth } = await loadExport(spec, dir);
  if (!auth || typeof auth !== "object" || !auth["~handlerCache"]) {
    throw new Error(`auth.path ${spec}: ${name || "default"} is not an Auth of @langchain/langgraph-sdk/auth`);
  }
  return auth;
}

/** The status, detail and headers of an error a handler threw (HTTPException or other). */
function failure(err) {
  const status = Number(err?.status);
  if (Number.isInteger(status) && status >= 400 && status < 600) {
    const headers = {};
    const h = err.headers;
    if (h && typeof h === "object") {
      const entries = typeof h.entries === "function" ? h.entries() : Object.entries(h);
      for (const [k, v] of entries) headers[k.toLowerCase()] = String(v);
    }
    return { status, detail: err.message || (status === 401 ? "Unauthorized" : "Forbidden"), headers };
  }
  return { status: 500, detail: `auth handler failed: ${err?.message ?? String(err)}` };
}

/** A user as the Agent Server normalizes authenticate's result, with its scopes. */
export function normalizeUser(res) {
  if (typeof res === "string") {
    return { scopes: [], user: { identity: res, display_name: res, permissions: [], is_authenticated: true } };
  }
  if (res && typeof res === "object" && typeof res.identity === "string") {
    const scopes = Array.isArray(res.permissions) ? res.permissions : [];
    return {
      scopes,
      user: { ...res, permissions: scopes, is_authenticated: res.is_authenticated ?? true, display_name: res.display_name ?? res.identity },
    };
  }
  throw new Error("authenticate must return a string or an object with an identity");
}

/**
 * Filters as PostgreSQL jsonb containment (what Weft applies): {k: v} and
 * {k: {$eq: v}} are k = v; {k: {$contains: x}} is an array k holding x (or
 * every element of x). null when the handler returned none.
 */
export function containment(filters) {
  if (filters == null) return null;
  const out = {};
  for (const [k, v] of Object.entries(filters)) {
    if (v && typeof v === "object" && !Array.isArray(v) && ("$eq" in v || "$contains" in v)) {
      if ("$eq" in v) out[k] = v.$eq;
      else out[k] = Array.isArray(v.$contains) ? v.$contains : [v.$contains];
    } else {
      out[k] = v;
    }
  }
  return out;
}

/** AuthHandlers runs an Auth's authenticate and on() handlers. */
export class AuthHandlers {
  constructor(auth) {
    this.cache = auth["~handlerCache"];
  }

  /** {user, scopes} or {status, detail, headers}. No authenticate handler: anonymous. */
  async authenticate({ method = "GET", url, headers = {} }) {
    const fn = this.cache.authenticate;
    if (!fn) return { user: null, scopes: [] };
    try {
      const req = new Request(url, { method, headers });
      return normalizeUser(await fn(req));
    } catch (err) {
      return failure(err);
    }
  }

  /**
   * authenticate, then authorize as that user: one call per API request.
   * {user, scopes, filters, value} or {status, detail}, with the user and
   * scopes when the on() handler refused (the server's auth.cache keeps
   * who the request came from).
   */
  async check({ request, resource, action, value }) {
    const who = await this.authenticate(request);
    if (who.status) return who;
    const out = await this.authorize({ user: who.user, scopes: who.scopes, resource, action, value });
    return { ...out, user: who.user, scopes: who.scopes };
  }

  /** {filters, value} (filters null: none; value as the handler left it) or {status, detail}. */
  async authorize({ user, scopes = [], resource, action, value = {} }) {
    const callbacks = this.cache.callbacks ?? {};
    const key = [`${resource}:${action}`, resource, `*:${action}`, "*"].find((k) => callbacks[k]);
    if (!key || !user) return { filters: null, value };
    try {
      const res = await callbacks[key]({ event: `${resource}:${action}`, resource, action, value, permissions: scopes, user });
      if (res == null || res === true) return { filters: null, value };
      if (res === false) return { status: 403, detail: "Forbidden" };
      if (typeof res !== "object") return { status: 500, detail: `auth handler for ${resource}:${action} returned ${typeof res}` };
      return { filters: containment(res), raw: res, value };
    } catch (err) {
      return failure(err);
    }
  }
}

const JS_PATH = /\.(m|c)?(j|t)sx?$/;

/** Whether a langgraph.json path ("./app.mts:app") names JS code (not Python's "./app.py:app"). */
export function isJsPath(spec) {
  const i = spec.lastIndexOf(":");
  return JS_PATH.test(i > 0 ? spec.slice(0, i) : spec);
}

/**
 * Loads store.index.embed when it names a JS function (texts => vectors,
 * sync or async) or an object with embedDocuments (LangChain's Embeddings);
 * null when it is not JS code. Returns async (texts) => vectors.
 */
export async function loadEmbed(spec, dir) {
  const i = typeof spec === "string" ? spec.lastIndexOf(":") : -1;
  if (i <= 0 || !JS_PATH.test(spec.slice(0, i))) return null;
  const { value } = await loadExport(spec, dir);
  if (typeof value?.embedDocuments === "function") return (texts) => value.embedDocuments(texts);
  if (typeof value === "function") return async (texts) => value(texts);
  throw new Error(`store.index.embed ${spec}: not a function and not an Embeddings object`);
}

/** POST /embed: {texts} -> {vectors} or {status, detail}. */
async function embedAnswer(embed, body) {
  const texts = body?.texts;
  if (!Array.isArray(texts) || !texts.every((t) => typeof t === "string")) return { status: 400, detail: "texts must be a list of strings" };
  try {
    const vecs = await embed(texts);
    return { vectors: vecs.map((v) => Array.from(v, Number)) };
  } catch (err) {
    return { status: 500, detail: `embed failed: ${err?.message ?? String(err)}` };
  }
}

/**
 * Serves handlers on a unix socket: POST /authenticate, /authorize and /check (both),
 * and /embed when the project's store.index.embed is JS (embed), JSON in and
 * out (always 200; a refusal is {status, detail}). handlers may be null (no
 * JS auth.path). Resolves to the http.Server once listening.
 */
export function serveAuth(handlers, socket, log = () => {}, embed = null) {
  if (existsSync(socket)) unlinkSync(socket);
  const server = createServer({ keepAlive: true }, (req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", async () => {
      let out;
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
        if (req.url === "/embed" && embed) out = await embedAnswer(embed, body);
        else if (!handlers) out = { status: 404, detail: `no ${req.url}: the project has no JS auth.path` };
        else if (req.url === "/authenticate") out = await handlers.authenticate(body);
        else if (req.url === "/authorize") out = await handlers.authorize(body);
        else if (req.url === "/check") out = await handlers.check(body);
        else out = { status: 404, detail: `no ${req.url}` };
      } catch (err) {
        log("error", "auth request failed", { error: err?.stack ?? String(err) });
        out = { status: 500, detail: String(err?.message ?? err) };
      }
      const text = JSON.stringify(out);
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
      res.end(text);
    });
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((ok, fail) => {
    server.once("error", fail);
    server.listen(socket, () => ok(server));
  });
}

/** Loads the auth.path of the langgraph.json at config and serves it on socket. */
export async function startProjectAuth(config, socket, log = () => {}) {
  const { readFileSync } = await import("node:fs");
  const { dirname } = await import("node:path");
  const abs = resolve(config);
  const cfg = JSON.parse(readFileSync(abs, "utf8"));
  let spec = cfg.auth?.path;
  if (spec && !JS_PATH.test(spec.slice(0, Math.max(spec.lastIndexOf(":"), 0)) || spec)) spec = null; // Python's
  const embed = await loadEmbed(cfg.store?.index?.embed, dirname(abs));
  if (!spec && !embed) throw new Error(`--auth-socket: ${abs} has no JS auth.path nor JS store.index.embed`);
  const handlers = spec ? new AuthHandlers(await loadAuth(spec, dirname(abs))) : null;
  const server = await serveAuth(handlers, socket, log, embed);
  log("info", "serving the project's socket", { auth: spec ?? null, embed: embed ? cfg.store.index.embed : null, socket });
  return server;
}
