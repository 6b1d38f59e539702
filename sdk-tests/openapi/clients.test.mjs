// A TypeScript client generated from api/openapi.yaml, as a user makes one: openapi-typescript (default options)
// writes the types into a temp dir, next to a copy of flow.ts; tsc --strict type-checks and compiles the flow
// against them (a schema wrong for a client is a compile error: see flow.ts); then the flow runs with openapi-fetch
// against a server started by ../harness.mjs (or WEFT_URL; WEFT_API_KEY is sent as x-api-key when set).
// The generated code is never committed; the generators are pinned in package.json / package-lock.json.
//
//   cd sdk-tests/openapi && npm ci && npm test

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { startServer } from "../harness.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const SPEC = resolve(HERE, "..", "..", "api", "openapi.yaml");
const GENERATE_TIMEOUT_MS = 60_000;
const TSC_TIMEOUT_MS = 120_000;
const FLOW_TIMEOUT_MS = 120_000;

const work = mkdtempSync(join(tmpdir(), "weft-openapi-ts-"));
after(() => rmSync(work, { recursive: true, force: true }));

function run(cmd, args, timeout) {
  return new Promise((res) => {
    const start = Date.now();
    execFile(cmd, args, { cwd: work, timeout, killSignal: "SIGKILL", maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
      res({ code: err ? (err.code ?? err.signal ?? 1) : 0, out: `${stdout}${stderr}`, ms: Date.now() - start }),
    );
  });
}

let generated = false;
let compiled = false;

test("openapi-typescript generates the types of api/openapi.yaml", { timeout: GENERATE_TIMEOUT_MS + 5_000 }, async (t) => {
  symlinkSync(join(HERE, "node_modules"), join(work, "node_modules"), "dir");
  writeFileSync(join(work, "package.json"), JSON.stringify({ type: "module", private: true }));
  copyFileSync(join(HERE, "flow.ts"), join(work, "flow.ts"));
  const cli = join(HERE, "node_modules", "openapi-typescript", "bin", "cli.js");
  const r = await run(process.execPath, [cli, SPEC, "--output", join(work, "schema.d.ts")], GENERATE_TIMEOUT_MS);
  t.diagnostic(`openapi-typescript: ${r.ms} ms`);
  assert.equal(r.code, 0, r.out);
  generated = true;
});

test("flow.ts type-checks against them with tsc --strict", { timeout: TSC_TIMEOUT_MS + 5_000 }, async (t) => {
  assert.ok(generated, "no types generated");
  const tsc = join(HERE, "node_modules", "typescript", "bin", "tsc");
  const r = await run(
    process.execPath,
    [tsc, "--strict", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022",
      "--noEmitOnError", "--pretty", "false", "--outDir", join(work, "out"), join(work, "flow.ts")],
    TSC_TIMEOUT_MS,
  );
  t.diagnostic(`tsc --strict: ${r.ms} ms`);
  assert.equal(r.code, 0, `tsc --strict found what a client of this spec cannot compile:\n${r.out}`);
  compiled = true;
});

test("the flow runs against a server", { timeout: FLOW_TIMEOUT_MS + 90_000 }, async (t) => {
  assert.ok(compiled, "flow.ts did not compile");
  const server = await startServer();
  try {
    const { flow } = await import(pathToFileURL(join(work, "out", "flow.js")).href);
    const start = Date.now();
    await flow(server.url, process.env.WEFT_API_KEY, (m) => t.diagnostic(m));
    t.diagnostic(`flow: ${Date.now() - start} ms`);
  } finally {
    await server.stop();
  }
});
