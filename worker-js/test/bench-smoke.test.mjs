// The server bench (bench/servers.mjs: Weft's JS worker beside LangGraph.js's
// dev server) run with --quick, so that CI proves it still works: both
// servers start and stop, every answer it checks is right, and it prints
// its table and writes its JSON. Not a timed test: its figures are not
// looked at. About 30 s on 2 cores, after a `go build` of the server
// (WEFT_BIN, when set, is used instead).

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, "../..");
const CLI = join(REPO, "sdk-tests", "agents-js", "node_modules", ".bin", "langgraphjs");

function run(cmd, args, options) {
  return new Promise((res) => {
    execFile(cmd, args, { maxBuffer: 16 << 20, killSignal: "SIGTERM", ...options }, (err, stdout, stderr) => res({ err, stdout, stderr }));
  });
}

test("bench/servers.mjs --quick measures both servers", { timeout: 180_000 }, async () => {
  assert.ok(existsSync(CLI), `no ${CLI}: make sdk-tests/agents-js/node_modules (make test-worker-js does)`);
  const tmp = mkdtempSync(join(tmpdir(), "weft-bench-smoke-"));
  try {
    let bin = process.env.WEFT_BIN;
    if (!bin) {
      bin = join(tmp, "weft");
      const b = await run("go", ["build", "-o", bin, "./cmd/server"], { cwd: REPO, timeout: 120_000 });
      assert.ifError(b.err && new Error(`go build: ${b.err.message}\n${b.stderr}`));
    }
    const json = join(tmp, "out.json");
    // The bench stops what it started itself; SIGTERM on a timeout lets it.
    const r = await run(process.execPath, [join(REPO, "worker-js", "bench", "servers.mjs"), "--quick", "--json", json], {
      cwd: join(REPO, "worker-js"), timeout: 150_000, env: { ...process.env, WEFT_BIN: bin },
    });
    assert.ifError(r.err && new Error(`servers.mjs failed: ${r.err.message}\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`));
    for (const s of ["What is measured", "The table", "| `history(10)` of a 20-message chat, c16 req/s |", "Targets met:", "CPU ms per run at c16"]) {
      assert.ok(r.stdout.includes(s), `the report lacks ${JSON.stringify(s)}:\n${r.stdout}`);
    }
    const out = JSON.parse(readFileSync(json, "utf8"));
    assert.equal(out.rounds.length, 1);
    const [round] = out.rounds;
    for (const name of ["langgraphjs", "worker"]) {
      for (const mode of ["stateless", "thread"]) {
        assert.ok(round[mode].c1[name].n > 0, `${name} ${mode} c1: no runs`);
        assert.ok(round[mode].cn[name].n > 0, `${name} ${mode} c16: no runs`);
      }
      assert.equal(round.chat.lat[name].length, 10, `${name}: chat turns`);
      for (const k of ["history c1", "history c16", "state c1", "state c16"]) assert.ok(round.chat.reads[k][name].n > 0, `${name} ${k}: no reads`);
    }
    // Weft's process tree was found: its PostgreSQL and JS worker spent CPU at c16.
    assert.ok(round.thread.cn.worker.cpu.postgres > 0 && round.thread.cn.worker.cpu.worker > 0, JSON.stringify(round.thread.cn.worker.cpu));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
