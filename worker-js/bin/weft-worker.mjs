#!/usr/bin/env node
// weft-worker --config langgraph.json --url http://127.0.0.1:8123
import { parseArgs } from "node:util";
import { loadConfig } from "../src/load.mjs";
import { Worker, jsonLogger } from "../src/worker.mjs";
import { registerRuntime } from "../src/runtime.mjs";
import { startProjectAuth } from "../src/auth.mjs";
import { startHttpApp } from "../src/http-app.mjs";

const USAGE = `Usage: weft-worker [options]

Serves the graphs of a langgraph.json on a Weft server: registers them,
claims their runs over the worker API and executes them with LangGraph.js.

Options:
  --config <file>        langgraph.json (default: ./langgraph.json)
  --url <url>            Weft server (default: $WEFT_URL or http://127.0.0.1:8123)
  --api-key <key>        a key with the worker scope, sent as x-api-key, for a server
                         with WEFT_AUTH on (default: $WEFT_API_KEY; prefer the variable:
                         arguments are visible to other users of the machine)
  --graphs <a,b>         serve only these graph ids (default: all of the config)
  --concurrency <n>      runs executed at once (default: $WEFT_WORKER_CONCURRENCY or 8)
  --worker-id <name>     name in dispatch audits (default: generated)
  --wait-ms <ms>         claim long-poll (default 10000)
  --linger-ms <ms>       wait this long before committing what piled up (default 5:
                         a short run commits once, with its end; 0: at once; more
                         means fewer, larger commits; sync durability never waits)
  --grace-ms <ms>        on SIGTERM/SIGINT, how long running runs may finish before
                         they are stopped and given back (default 10000)
  --log-level <level>    debug, info (default), warn
  --auth-socket <path>   serve the config's JS auth.path (authenticate and on() handlers) and JS store.index.embed
                         to the server on this unix socket (weft dev passes it)
  --http-socket <path>   serve the config's http.app (custom routes, middleware around the API) and ui
                         (generative UI) on this unix socket; requests the app passes on go to --url
                         with the pass of WEFT_APP_PASS (weft dev passes both); with
                         WEFT_APP_ROUTE_AUTH=server the server authenticates the app's routes first
  -h, --help`;

let args;
try {
  args = parseArgs({
    options: {
      config: { type: "string", default: "langgraph.json" },
      url: { type: "string", default: process.env.WEFT_URL ?? "http://127.0.0.1:8123" },
      "api-key": { type: "string", default: process.env.WEFT_API_KEY ?? "" },
      graphs: { type: "string" },
      concurrency: { type: "string", default: process.env.WEFT_WORKER_CONCURRENCY ?? "8" },
      "worker-id": { type: "string" },
      "wait-ms": { type: "string", default: "10000" },
      "grace-ms": { type: "string", default: "10000" },
      "linger-ms": { type: "string", default: "5" },
      "log-level": { type: "string", default: "info" },
      "auth-socket": { type: "string" },
      "http-socket": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  }).values;
} catch (err) {
  process.stderr.write(`${err.message}\n\n${USAGE}\n`);
  process.exit(2);
}
if (args.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const int = (name, v, min) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) {
    process.stderr.write(`--${name} must be an integer >= ${min}, got ${v}\n`);
    process.exit(2);
  }
  return n;
};
// Started by weft dev: stop as on SIGTERM once it is gone (even killed, with
// no chance to stop this process), instead of running on as an orphan.
const parent = Number(process.env.WEFT_PARENT_PID);
if (parent) {
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    process.kill(process.pid, "SIGTERM");
  }, 1000);
  watch.unref();
}
const levels = { debug: 0, info: 1, warn: 2, error: 3 };
const minLevel = levels[args["log-level"]] ?? 1;
const base = jsonLogger();
const log = (level, msg, attrs) => {
  if ((levels[level] ?? 1) >= minLevel) base(level, msg, attrs);
};

try {
  const only = args.graphs ? args.graphs.split(",").map((s) => s.trim()).filter(Boolean) : undefined;
  // Before any graph module is imported: a module may call getLogger() at import.
  registerRuntime({ log, url: args.url });
  const onFailure = ({ graph_id, error }) => log("error", "graph failed to load; serving the others", { graph_id, error });
  const { graphs, failures } = await loadConfig(args.config, { only, onFailure });
  if (args["auth-socket"]) await startProjectAuth(args.config, args["auth-socket"], log);
  if (args["http-socket"]) {
    await startHttpApp(args.config, args["http-socket"], {
      apiUrl: args.url,
      pass: process.env.WEFT_APP_PASS ?? "",
      routeAuth: process.env.WEFT_APP_ROUTE_AUTH ?? "",
      log,
    });
  }
  const worker = new Worker({
    url: args.url,
    apiKey: args["api-key"] || undefined,
    graphs,
    failures,
    workerId: args["worker-id"],
    concurrency: int("concurrency", args.concurrency, 1),
    waitMs: Math.min(int("wait-ms", args["wait-ms"], 0), 30_000),
    lingerMs: int("linger-ms", args["linger-ms"], 0),
    log,
  });
  if (graphs.size === 0) {
    // Nothing to serve: report the failures, then stay up (a restart would
    // fail the same way) until stopped.
    log("error", "no graph of the config loaded; fix the modules and restart", { failed: failures.map((f) => f.graph_id) });
    await worker.register();
    for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => process.exit(0));
    setInterval(() => {}, 1 << 30);
    await new Promise(() => {});
  }
  await worker.start();
  let stopping = false;
  for (const sig of ["SIGTERM", "SIGINT"]) {
    process.on(sig, async () => {
      if (stopping) process.exit(1);
      stopping = true;
      log("info", "stopping", { signal: sig });
      await worker.stop(int("grace-ms", args["grace-ms"], 0));
      process.exit(0);
    });
  }
} catch (err) {
  log("error", "weft-worker failed to start", { error: err?.stack ?? String(err) });
  process.exit(1);
}
