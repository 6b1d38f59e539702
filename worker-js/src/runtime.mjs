// What LangGraph's own server gives graph modules at run time, given here
// too, before any graph module is imported (a module may use it at import):
//
// - the SDK logger behind getLogger() of @langchain/langgraph-sdk/logging
//   (globalThis[Symbol.for("langgraph.api.sdk-logger")]): leveled methods
//   (error, warn, help, data, info, debug, prompt, http, verbose, input,
//   silly) that write JSON lines to the worker's log, with the node they
//   were called from (langgraph_node) when called inside a run;
// - the server's URL for the SDK's Client constructed without apiUrl
//   (globalThis[Symbol.for("langgraph_api:url")]), so `new Client()` in a
//   graph talks to the Weft server that runs it.

import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";

const LOGGER = Symbol.for("langgraph.api.sdk-logger");
const API_URL = Symbol.for("langgraph_api:url");

/** The levels of winston's npm and cli sets, which the SDK's Logger type lists. */
export const LOG_LEVELS = ["error", "warn", "help", "data", "info", "debug", "prompt", "http", "verbose", "input", "silly"];

/** The node of the run the caller is in (LangGraph's config metadata), if any. */
function currentNode() {
  try {
    const config = AsyncLocalStorageProviderSingleton.getRunnableConfig();
    return config?.metadata?.langgraph_node;
  } catch {
    return undefined;
  }
}

function plain(v) {
  if (v instanceof Error) return { error: v.name, message: v.message, stack: v.stack };
  return v;
}

/**
 * sdkLogger returns a logger with the SDK Logger's leveled methods; each
 * call writes one record through write(level, msg, attrs): a string
 * message with its meta objects merged into attrs, or an object (winston's
 * info object form: its message field is the message).
 */
export function sdkLogger(write) {
  const logger = {};
  for (const level of LOG_LEVELS) {
    logger[level] = (message, ...meta) => {
      let msg = message;
      const attrs = {};
      if (message && typeof message === "object" && !(message instanceof Error)) {
        const { message: m, ...rest } = message;
        msg = m ?? "";
        Object.assign(attrs, rest);
      } else if (message instanceof Error) {
        msg = message.message;
        attrs.stack = message.stack;
      }
      for (const m of meta) {
        const v = plain(m);
        if (v && typeof v === "object" && !Array.isArray(v)) Object.assign(attrs, v);
        else if (v !== undefined) (attrs.meta ??= []).push(v);
      }
      const node = currentNode();
      if (node != null) attrs.langgraph_node = node;
      write(level, typeof msg === "string" ? msg : JSON.stringify(msg), attrs);
      return logger;
    };
  }
  logger.log = (level, message, ...meta) => (logger[level] ?? logger.info)(message, ...meta);
  return logger;
}

/**
 * registerRuntime installs the globals above: the SDK logger writing
 * through log (the worker's JSON-line log, with source "graph") and, when
 * given, the server's URL for the SDK's default Client.
 */
export function registerRuntime({ log, url } = {}) {
  const write = log ?? ((level, msg, attrs) => process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...attrs })}\n`));
  globalThis[LOGGER] = sdkLogger((level, msg, attrs) => write(level, msg, { source: "graph", ...attrs }));
  if (url) globalThis[API_URL] = url.replace(/\/$/, "");
}
