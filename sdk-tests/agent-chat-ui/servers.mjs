// The servers of agent-chat-ui.test.mjs, each stopped by the PID it was
// started with:
//
// - startAgentServer(): the API server on sdk-tests/py/fixtures/pyagents (its
//   `deep` graph: a deepagents agent on a scripted model), served from a copy
//   of the project in a temp dir on a free loopback port:
//     Weft (default): `weft dev --config <copy>/langgraph.json`, the binary
//       from WEFT_BIN or built from this checkout (go build ./cmd/server), a
//       fresh WEFT_DATA_DIR (its own managed PostgreSQL), the Python worker
//       run by WEFT_PYTHON (default sdk-tests/py/.venv/bin/python, which has
//       langgraph, langchain and deepagents: make sdk-tests/py/.venv/.installed).
//     LangGraph's own (AGENT_CHAT_UI_SERVER=langgraph): `langgraph dev` from
//       the same virtualenv, offline (no browser, reload, tracing, analytics).
//   Ready when POST /assistants/search lists graph `deep`. stop(): SIGTERM,
//   SIGKILL to its process group after a timeout, then (Weft) the managed
//   PostgreSQL's postmaster by the PID in its postmaster.pid if it is still
//   up; the temp dir is removed. A process 'exit' hook does the same,
//   synchronously, if the test process ends first.
// - startStaticServer(dir): the built app on 127.0.0.1:<its own port>, so the
//   page's origin differs from the API server's and every call is a real
//   cross-origin request, as in a deployment.

import { execFile, spawn } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, createWriteStream } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer as createNetServer } from "node:net";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, extname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = resolve(HERE, "..", "..");
const PROJECT = join(REPO_ROOT, "sdk-tests", "py", "fixtures", "pyagents");
const VENV_BIN = join(REPO_ROOT, "sdk-tests", "py", ".venv", "bin");

const GO_BUILD_TIMEOUT_MS = 180_000;
const READY_TIMEOUT_MS = 90_000;
const TERM_TIMEOUT_MS = 20_000;
const KILL_TIMEOUT_MS = 5_000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Resolves true if promise settles within ms, else false; leaves no timer behind. */
function within(promise, ms) {
  let timer;
  return Promise.race([
    promise.then(() => true),
    new Promise((r) => (timer = setTimeout(() => r(false), ms))),
  ]).finally(() => clearTimeout(timer));
}

export function freePort() {
  return new Promise((res, rej) => {
    const srv = createNetServer();
    srv.unref();
    srv.on("error", rej);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => res(port));
    });
  });
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === "EPERM";
  }
}

async function waitDead(pid, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await sleep(50);
  }
  return !isAlive(pid);
}

function postmasterPid(dataDir) {
  try {
    const pid = Number.parseInt(readFileSync(join(dataDir, "pgdata", "postmaster.pid"), "utf8").split("\n")[0], 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** The Weft binary: WEFT_BIN, or go build ./cmd/server of this checkout into dir. */
function weftBinary(dir) {
  if (process.env.WEFT_BIN) return Promise.resolve(resolve(process.env.WEFT_BIN));
  const out = join(dir, "weft");
  return new Promise((res, rej) => {
    execFile("go", ["build", "-o", out, "./cmd/server"], {
      cwd: REPO_ROOT, timeout: GO_BUILD_TIMEOUT_MS, killSignal: "SIGKILL", maxBuffer: 16 << 20,
    }, (err, stdout, stderr) => (err ? rej(new Error(`go build ./cmd/server failed in ${REPO_ROOT}: ${err.message}\n${stdout}${stderr}`)) : res(out)));
  });
}

async function post(url, body) {
  const r = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(5_000),
  });
  if (!r.ok) throw new Error(`POST ${url}: HTTP ${r.status}`);
  return r.json();
}

/**
 * Starts the API server (see the file's comment) with graph `deep`. kind:
 * "weft" or "langgraph". Resolves to {kind, url, pid, logPath, log(), stop()}.
 */
export async function startAgentServer(kind = "weft") {
  const tmp = mkdtempSync(join(tmpdir(), `acui-${kind}-`));
  chmodSync(tmp, 0o755); // as root, the managed PostgreSQL runs as another user, which must reach the data dir
  const project = join(tmp, "pyagents");
  cpSync(PROJECT, project, { recursive: true, filter: (src) => !/(__pycache__|\.langgraph_api)$/.test(src) });
  const dataDir = join(tmp, "data");
  const logPath = join(tmp, "server.log");
  let child = null;
  let exited = null;
  let cleaned = false;

  const emergency = () => {
    if (cleaned) return;
    cleaned = true;
    if (child && child.exitCode === null && child.signalCode === null) {
      try { process.kill(-child.pid, "SIGKILL"); } catch {}
    }
    const pm = postmasterPid(dataDir);
    if (pm && isAlive(pm)) {
      try { process.kill(pm, "SIGQUIT"); } catch {}
    }
    try { rmSync(tmp, { recursive: true, force: true }); } catch {}
  };
  const onSignal = (sig) => {
    emergency();
    process.exit(128 + (sig === "SIGINT" ? 2 : sig === "SIGHUP" ? 1 : 15));
  };
  process.on("exit", emergency);
  for (const s of ["SIGINT", "SIGTERM", "SIGHUP"]) process.once(s, onSignal);

  const log = () => {
    try {
      return readFileSync(logPath, "utf8");
    } catch {
      return "";
    }
  };

  const stop = async () => {
    if (cleaned) return;
    try {
      if (child && child.exitCode === null && child.signalCode === null) {
        process.kill(child.pid, "SIGTERM");
        const done = await within(exited, TERM_TIMEOUT_MS);
        if (!done) {
          process.stderr.write(`[agent-chat-ui] ${kind} ${child.pid} did not exit within ${TERM_TIMEOUT_MS} ms of SIGTERM; SIGKILL\n`);
          // Its own process group (detached): the server and the worker it started.
          try { process.kill(-child.pid, "SIGKILL"); } catch {}
          await within(exited, KILL_TIMEOUT_MS);
        }
      }
      const pm = postmasterPid(dataDir);
      if (pm && isAlive(pm)) {
        try { process.kill(pm, "SIGQUIT"); } catch {}
        if (!(await waitDead(pm, KILL_TIMEOUT_MS))) {
          try { process.kill(pm, "SIGKILL"); } catch {}
          await waitDead(pm, KILL_TIMEOUT_MS);
        }
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true, maxRetries: 3, retryDelay: 100 });
      cleaned = true;
      process.off("exit", emergency);
      for (const s of ["SIGINT", "SIGTERM", "SIGHUP"]) process.off(s, onSignal);
    }
  };

  try {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    let cmd, args, env;
    if (kind === "weft") {
      const python = process.env.WEFT_PYTHON || join(VENV_BIN, "python");
      if (!existsSync(python)) {
        throw new Error(`no Python for weft dev's worker at ${python}: make sdk-tests/py/.venv/.installed (or set WEFT_PYTHON)`);
      }
      cmd = await weftBinary(tmp);
      args = ["dev", "--config", join(project, "langgraph.json")];
      env = { ...process.env, WEFT_ADDR: `127.0.0.1:${port}`, WEFT_DATA_DIR: dataDir, WEFT_PYTHON: python, PYTHONDONTWRITEBYTECODE: "1" };
    } else if (kind === "langgraph") {
      cmd = join(VENV_BIN, "langgraph");
      if (!existsSync(cmd)) throw new Error(`no ${cmd}: make sdk-tests/py/.venv/.installed`);
      args = ["dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", String(port), "--config", join(project, "langgraph.json")];
      env = { ...process.env, LANGSMITH_TRACING: "false", LANGSMITH_TRACING_V2: "false", LANGCHAIN_TRACING_V2: "false",
        LANGGRAPH_NO_VERSION_CHECK: "true", LANGGRAPH_CLI_NO_ANALYTICS: "1", PYTHONDONTWRITEBYTECODE: "1" };
      for (const k of ["LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"]) delete env[k];
    } else {
      throw new Error(`unknown server kind ${JSON.stringify(kind)}: weft or langgraph`);
    }
    const out = createWriteStream(logPath);
    await new Promise((r) => out.once("open", r));
    child = spawn(cmd, args, { cwd: project, env, stdio: ["ignore", out, out], detached: true });
    exited = new Promise((r) => child.once("exit", (code, sig) => r({ code, sig })));
    let gone = null;
    exited.then((e) => (gone = e));

    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      if (gone) throw new Error(`${kind} exited (code ${gone.code}, signal ${gone.sig}) before serving graph deep\n${log().slice(-4000)}`);
      try {
        const found = (await post(`${url}/assistants/search`, { limit: 100 })).map((a) => a.graph_id);
        if (found.includes("deep")) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`${kind} did not list graph deep within ${READY_TIMEOUT_MS} ms\n${log().slice(-4000)}`);
      await sleep(200);
    }
    return { kind, url, pid: child.pid, logPath, log, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

const TYPES = {
  ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml", ".woff2": "font/woff2", ".woff": "font/woff", ".ttf": "font/ttf", ".json": "application/json",
};

/** Serves dir (GET / is index.html; anything not in dir is 404). Resolves to {url, close()}. */
export function startStaticServer(dir) {
  const root = resolve(dir);
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    const file = resolve(root, "." + (path === "/" ? "/index.html" : path));
    const send = (status, type, body) => {
      res.writeHead(status, { "Content-Type": type, "Cache-Control": "no-store" });
      res.end(body);
    };
    if (req.method !== "GET" && req.method !== "HEAD") return send(405, "text/plain", "method not allowed\n");
    if (!file.startsWith(root + sep)) return send(404, "text/plain", "not found\n");
    try {
      send(200, TYPES[extname(file)] ?? "application/octet-stream", await readFile(file));
    } catch {
      send(404, "text/plain", "not found\n");
    }
  });
  return new Promise((res, rej) => {
    server.once("error", rej);
    server.listen(0, "127.0.0.1", () => {
      res({
        url: `http://127.0.0.1:${server.address().port}`,
        close: () => new Promise((r) => {
          server.closeAllConnections();
          server.close(() => r());
        }),
      });
    });
  });
}
