// Test harness: gives every test file one Weft server to talk to.
//
// With WEFT_URL set, the suite uses that server and starts nothing.
// Otherwise it builds ./cmd/server (repo root = the parent of this
// directory) into a temp dir, starts it on a free loopback port with a fresh
// WEFT_DATA_DIR (the server initdb's and runs its own PostgreSQL there),
// waits for GET /ok, and at the end stops it by PID: SIGTERM, wait, SIGKILL
// after a timeout; then, if the managed PostgreSQL is still up (only after
// a SIGKILL), it stops the postmaster by the PID in postmaster.pid, and
// removes the temp dir. Every step is bounded in time, and a process 'exit'
// / signal hook kills what is left if the test process dies early.
//
// A started server also tells how to reach its database (`db`, node-postgres
// client config): the managed cluster listens only on a unix socket, in the
// directory its log line "local PostgreSQL cluster started ... socket_dir=…"
// names (the data dir itself when its absolute path is <= 80 chars), user
// "weft", database "weft", trust auth. With DATABASE_URL set, the server uses
// that database and so does `db`. With WEFT_URL, `db` comes from
// WEFT_DATABASE_URL, or is null (tests that need the database then skip).

import { spawn, execFile } from "node:child_process";
import { mkdtempSync, chmodSync, readFileSync, rmSync, existsSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { before, after } from "node:test";

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

const BUILD_TIMEOUT_MS = 60_000;
const READY_TIMEOUT_MS = 30_000;
const TERM_TIMEOUT_MS = 20_000; // server drains requests, then pg_ctl stop -m fast
const KILL_TIMEOUT_MS = 5_000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Resolves to a port that was free on 127.0.0.1 a moment ago. */
function freePort() {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", rej);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => res(port));
    });
  });
}

function goBuild(outPath) {
  return new Promise((res, rej) => {
    execFile(
      "go",
      ["build", "-o", outPath, "./cmd/server"],
      { cwd: REPO_ROOT, timeout: BUILD_TIMEOUT_MS, killSignal: "SIGKILL", maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        if (err) rej(new Error(`go build ./cmd/server failed in ${REPO_ROOT}: ${err.message}\n${stdout}${stderr}`));
        else res();
      },
    );
  });
}

/** Resolves true if promise settles within ms, else false; leaves no timer behind. */
function within(promise, ms) {
  let timer;
  return Promise.race([
    promise.then(() => true),
    new Promise((r) => (timer = setTimeout(() => r(false), ms))),
  ]).finally(() => clearTimeout(timer));
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === "EPERM";
  }
}

/** PID of the managed postmaster under dataDir, or null. */
function postmasterPid(dataDir) {
  try {
    const pid = Number.parseInt(readFileSync(join(dataDir, "pgdata", "postmaster.pid"), "utf8").split("\n")[0], 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
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

/** The `socket_dir` attribute of the cluster-start log line (text or JSON slog), or null. */
export function socketDirFromLog(lines) {
  for (const line of lines) {
    if (!line.includes("local PostgreSQL cluster started")) continue;
    if (line.trimStart().startsWith("{")) {
      try {
        const rec = JSON.parse(line);
        if (typeof rec.socket_dir === "string" && rec.socket_dir) return rec.socket_dir;
      } catch {}
    }
    // slog text: key=value, value quoted (Go syntax) when it has spaces etc.
    const m = /(?:^|\s)socket_dir=("(?:[^"\\]|\\.)*"|\S+)/.exec(line);
    if (m) return m[1].startsWith('"') ? JSON.parse(m[1]) : m[1];
  }
  return null;
}

/**
 * The socket directory the server derives from an absolute data dir when it
 * did not log one: the dir itself, or $TMPDIR/weft-<sha256(dir)[:6] hex> for
 * paths over 80 chars (internal/postgres/cluster.go NewCluster).
 */
function socketDirFromDataDir(dataDir) {
  if (dataDir.length <= 80) return dataDir;
  const sum = createHash("sha256").update(dataDir).digest("hex").slice(0, 12);
  return join(process.env.TMPDIR || "/tmp", `weft-${sum}`);
}

/**
 * Starts a server (or adopts WEFT_URL). options.env: extra environment for
 * the server process (an object, or a function returning one, called when
 * the server starts; ignored with WEFT_URL). Returns
 * { url, external, db, logLines(): string[] | null, stop(): Promise<void> },
 * db being a node-postgres client config ({host, user, database} or
 * {connectionString}) for the server's database, or null if unknown.
 */
export async function startServer(options = {}) {
  if (process.env.WEFT_URL) {
    return {
      url: process.env.WEFT_URL.replace(/\/$/, ""),
      external: true,
      db: process.env.WEFT_DATABASE_URL ? { connectionString: process.env.WEFT_DATABASE_URL } : null,
      logLines: () => null,
      stop: async () => {},
    };
  }

  const tmp = mkdtempSync(join(tmpdir(), "weft-sdk-"));
  // When run as root the server runs PostgreSQL as an unprivileged user; it
  // must be able to reach the data dir, or the cluster goes elsewhere.
  chmodSync(tmp, 0o755);
  const dataDir = join(tmp, "data");
  const bin = join(tmp, "weft");
  const lines = [];
  let child = null;
  let exited = null; // Promise resolved on child exit
  let stopping = false; // stop() has begun
  let cleaned = false; // stop() or emergency() has finished its work

  // Last-resort cleanup if the test process exits or is signalled before
  // stop() ran. Synchronous: only kill(2) and rmSync are allowed here.
  const emergency = () => {
    if (cleaned) return;
    cleaned = true;
    if (child && child.exitCode === null && child.signalCode === null) {
      try { process.kill(child.pid, "SIGKILL"); } catch {}
    }
    const pm = postmasterPid(dataDir);
    if (pm && isAlive(pm)) {
      try { process.kill(pm, "SIGQUIT"); } catch {} // immediate shutdown
    }
    try { rmSync(tmp, { recursive: true, force: true }); } catch {}
  };
  const onSignal = (sig) => {
    emergency();
    process.exit(128 + (sig === "SIGINT" ? 2 : sig === "SIGHUP" ? 1 : 15));
  };
  process.on("exit", emergency);
  for (const s of ["SIGINT", "SIGTERM", "SIGHUP"]) process.once(s, onSignal);

  const stop = async () => {
    if (stopping || cleaned) return;
    stopping = true;
    try {
      if (child && child.exitCode === null && child.signalCode === null) {
        process.kill(child.pid, "SIGTERM");
        const done = await within(exited, TERM_TIMEOUT_MS);
        if (!done) {
          const msg = `[harness] server ${child.pid} did not exit within ${TERM_TIMEOUT_MS} ms of SIGTERM; SIGKILL`;
          lines.push(msg);
          process.stderr.write(`${msg}\n--- server log (tail) ---\n${lines.slice(-30).join("\n")}\n`);
          try { process.kill(child.pid, "SIGKILL"); } catch {}
          await within(exited, KILL_TIMEOUT_MS);
        }
      }
      // A clean shutdown stops PostgreSQL; after a SIGKILL (or a crash) the
      // postmaster may still be running. Stop it by its PID.
      const pm = postmasterPid(dataDir);
      if (pm && isAlive(pm)) {
        lines.push(`[harness] PostgreSQL ${pm} still running; SIGQUIT`);
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
    const extraEnv = typeof options.env === "function" ? await options.env() : options.env ?? {};
    await goBuild(bin);
    let url;
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      url = `http://127.0.0.1:${port}`;
      child = spawn(bin, [], {
        cwd: tmp,
        // WEFT_EVENT_REF_MIN_BYTES=1: every event repeating a checkpoint's
        // values is stored as a reference, however small, so every stream
        // the suites read (the JS worker's too) is rendered from one.
        env: { WEFT_EVENT_REF_MIN_BYTES: "1", ...process.env, ...extraEnv, WEFT_ADDR: `127.0.0.1:${port}`, WEFT_DATA_DIR: dataDir },
        stdio: ["ignore", "pipe", "pipe"],
      });
      exited = new Promise((r) => child.once("exit", (code, sig) => r({ code, sig })));
      for (const stream of [child.stdout, child.stderr]) {
        let buf = "";
        stream.setEncoding("utf8");
        stream.on("data", (d) => {
          buf += d;
          const parts = buf.split("\n");
          buf = parts.pop();
          lines.push(...parts);
        });
      }
      const ready = await waitReady(url, exited);
      if (ready === true) break;
      const portTaken = lines.some((l) => l.includes("address already in use"));
      if (ready.exited && portTaken && attempt < 3) continue; // lost the port race; try another
      throw new Error(`Weft did not become ready at ${url}: ${ready.reason}\n--- server log ---\n${lines.join("\n")}`);
    }
    const db = process.env.DATABASE_URL
      ? { connectionString: process.env.DATABASE_URL }
      : { host: socketDirFromLog(lines) ?? socketDirFromDataDir(dataDir), user: "weft", database: "weft" };
    return { url, external: false, db, logLines: () => lines.slice(), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function waitReady(url, exited) {
  let gone = null;
  exited.then((e) => (gone = e));
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (gone) return { exited: true, reason: `server exited (code ${gone.code}, signal ${gone.sig})` };
    try {
      const res = await fetch(`${url}/ok`, { signal: AbortSignal.timeout(2_000) });
      if (res.ok) return true;
      await res.body?.cancel();
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  return { exited: false, reason: `GET /ok not 200 within ${READY_TIMEOUT_MS} ms` };
}

/**
 * Registers before/after hooks on the current test file (or suite) and
 * returns a handle whose url / db / logLines() are usable inside tests.
 * options: as startServer's (env).
 */
export function useServer(options = {}) {
  const handle = { url: null, external: false, db: null, logLines: () => null };
  let server = null;
  before(async () => {
    server = await startServer(options);
    handle.url = server.url;
    handle.external = server.external;
    handle.db = server.db;
    handle.logLines = server.logLines;
  }, { timeout: BUILD_TIMEOUT_MS + READY_TIMEOUT_MS + 10_000 });
  after(async () => {
    await server?.stop();
  }, { timeout: TERM_TIMEOUT_MS + 3 * KILL_TIMEOUT_MS + 5_000 });
  return handle;
}
