// The two servers of the bench (servers.mjs) as processes: a copy of
// bench/project for each (its node_modules a symlink to
// sdk-tests/agents-js/node_modules), `langgraphjs dev` and `weft dev` started
// on free loopback ports with their output in a log, and their stopping
// (stopAll, or the exit hook if the bench dies first). When a server is up is
// the bench's to say: each start awaits ready(srv, what), servers.mjs's
// waitUp.

import { spawn } from "node:child_process";
import { closeSync, copyFileSync, existsSync, mkdirSync, openSync, readFileSync, symlinkSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, "../..");
const PROJECT = join(HERE, "project");
const PROJECT_FILES = ["langgraph.json", "package.json", "graphs.mjs"];
const MODULES = join(REPO, "sdk-tests", "agents-js", "node_modules"); // @langchain/langgraph-cli and the graphs' packages
const TERM_MS = 20_000;

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freePort() {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.on("error", rej);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => res(port));
    });
  });
}

// What keeps both servers offline, and the keys neither gets.
const OFFLINE_ENV = {
  LANGSMITH_TRACING: "false", LANGSMITH_TRACING_V2: "false", LANGCHAIN_TRACING: "false", LANGCHAIN_TRACING_V2: "false",
  LANGGRAPH_NO_VERSION_CHECK: "true", LANGGRAPH_CLI_NO_ANALYTICS: "1", BROWSER: "none", NO_COLOR: "1", FORCE_COLOR: "0",
};
const SECRET_ENV = ["LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "LANGGRAPH_CLOUD_LICENSE_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"];
function serverEnv(extra) {
  const env = { ...process.env, ...OFFLINE_ENV, ...extra };
  for (const k of SECRET_ENV) delete env[k];
  return env;
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === "EPERM";
  }
}

async function until(pred, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (pred()) return true;
    await sleep(50);
  }
  return pred();
}

// Every server this process started: stopped by stopAll, or killed by the
// exit hook if the bench dies first.
const started = [];
process.on("exit", () => {
  for (const s of started) s.kill();
});
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) process.once(sig, () => process.exit(130));

// Stops every server started here, the last first; a failure to stop one is
// reported and the others are still stopped.
export async function stopAll() {
  for (const s of [...started].reverse()) {
    try {
      await s.stop();
    } catch (e) {
      process.stderr.write(`stopping ${s.name}: ${e.message}\n`);
    }
  }
}

// Spawns cmd with its output in logPath; group: a process group of its own.
function launch(cmd, args, { cwd, env, logPath, group = false }) {
  const fd = openSync(logPath, "w");
  const child = spawn(cmd, args, { cwd, env, stdio: ["ignore", fd, fd], detached: group });
  closeSync(fd);
  const exited = new Promise((r) => child.once("exit", (code, sig) => r(code ?? sig)));
  child.once("error", () => {});
  return { child, exited, exitedNow: () => child.exitCode !== null || child.signalCode !== null };
}

export function logTail(path, n = 40) {
  try {
    return readFileSync(path, "utf8").replace(/\x1b\[[0-9;]*m/g, "").split("\n").slice(-n).join("\n");
  } catch {
    return "";
  }
}

// `weft dev --config project/langgraph.json` (bin) on a free port, its managed
// PostgreSQL under tmp/weft-data, its JS worker running jobs runs at once.
export async function startWeftDev(tmp, project, { bin, jobs, ready }) {
  if (!existsSync(bin)) throw new Error(`no weft binary at ${bin}: make build, or set WEFT_BIN`);
  const port = await freePort();
  const dataDir = join(tmp, "weft-data");
  const logPath = join(tmp, "weft-dev.log");
  const p = launch(bin, ["dev", "--config", join(project, "langgraph.json")], {
    cwd: tmp, logPath,
    env: serverEnv({ WEFT_ADDR: `127.0.0.1:${port}`, WEFT_DATA_DIR: dataDir, WEFT_WORKER_CONCURRENCY: String(jobs) }),
  });
  const postmaster = () => {
    try {
      const pid = Number.parseInt(readFileSync(join(dataDir, "pgdata", "postmaster.pid"), "utf8"), 10);
      return pid > 0 ? pid : null;
    } catch {
      return null;
    }
  };
  const srv = {
    name: "worker", url: `http://127.0.0.1:${port}`, logPath, pid: p.child.pid, exitedNow: p.exitedNow,
    pg: null, // the postmaster's PID, once up
    roots: () => [p.child.pid, srv.pg].filter(Boolean),
    split: true,
    kill() {
      if (!p.exitedNow()) try { process.kill(p.child.pid, "SIGKILL"); } catch {}
      const pm = postmaster();
      if (pm && alive(pm)) try { process.kill(pm, "SIGQUIT"); } catch {}
    },
    async stop() {
      if (!p.exitedNow()) {
        try { process.kill(p.child.pid, "SIGTERM"); } catch {} // it stops its worker, then PostgreSQL
        if (!(await until(p.exitedNow, TERM_MS))) {
          try { process.kill(p.child.pid, "SIGKILL"); } catch {}
          await until(p.exitedNow, 5000);
        }
      }
      const pm = postmaster(); // only after a SIGKILL or a crash
      if (pm && alive(pm)) {
        try { process.kill(pm, "SIGQUIT"); } catch {}
        if (!(await until(() => !alive(pm), 5000))) try { process.kill(pm, "SIGKILL"); } catch {}
      }
    },
  };
  started.push(srv);
  await ready(srv, "weft dev");
  srv.pg = postmaster();
  return srv;
}

// LangGraph.js's in-memory dev server (`langgraphjs dev`) on a free port,
// offline: no browser, no reload, the Studio URL given so nothing derives
// it. Its CLI runs the server as a child: both in a process group led by the
// CLI, stopped through that group (SIGTERM, then SIGKILL).
export async function startLangGraphJS(tmp, project, { jobs, ready }) {
  const cli = join(project, "node_modules", ".bin", "langgraphjs");
  const port = await freePort();
  const logPath = join(tmp, "langgraphjs-dev.log");
  const p = launch(cli, ["dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", String(port),
    "--config", join(project, "langgraph.json"), "--studio-url", "http://127.0.0.1", "--n-jobs-per-worker", String(jobs)],
  { cwd: project, logPath, group: true, env: serverEnv({}) });
  const pgid = p.child.pid;
  const groupAlive = () => alive(-pgid);
  const srv = {
    name: "langgraphjs", url: `http://127.0.0.1:${port}`, logPath, pid: pgid, exitedNow: p.exitedNow,
    roots: () => [pgid], split: false,
    kill() {
      if (groupAlive()) try { process.kill(-pgid, "SIGKILL"); } catch {}
    },
    async stop() {
      if (!groupAlive()) return;
      try { process.kill(-pgid, "SIGTERM"); } catch {}
      if (!(await until(() => !groupAlive(), TERM_MS))) {
        try { process.kill(-pgid, "SIGKILL"); } catch {}
        await until(() => !groupAlive(), 5000);
      }
    },
  };
  started.push(srv);
  await ready(srv, "langgraphjs dev");
  return srv;
}

// A copy of bench/project in dest (both servers write into the project they
// serve: .langgraph_api/, .gitignore), node_modules a symlink to MODULES.
export function projectCopy(dest) {
  if (!existsSync(join(MODULES, ".bin", "langgraphjs"))) {
    throw new Error(`no ${join(MODULES, ".bin", "langgraphjs")}: make sdk-tests/agents-js/node_modules (npm ci there)`);
  }
  mkdirSync(dest, { recursive: true });
  for (const f of PROJECT_FILES) copyFileSync(join(PROJECT, f), join(dest, f));
  symlinkSync(MODULES, join(dest, "node_modules"));
  return dest;
}

export function versionOf(pkg) {
  try {
    return JSON.parse(readFileSync(join(MODULES, pkg, "package.json"), "utf8")).version;
  } catch {
    return "?";
  }
}
