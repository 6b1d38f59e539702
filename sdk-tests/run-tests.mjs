// `npm test`: runs the suite once per SDK line (see sdk.mjs), 2.0.0 first,
// then the newest 1.x, each under a banner naming the SDK version, and exits
// non-zero if either run failed.
//
//   node run-tests.mjs                      every *.test.mjs, both SDK lines
//   node run-tests.mjs state.test.mjs       only these files, both lines
//   WEFT_SDK=1 node run-tests.mjs           only the 1.x line (or 2)
//
// Every run is a separate `node --test` process; WEFT_URL / DATABASE_URL /
// WEFT_DATABASE_URL pass through to it (see harness.mjs).

import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const NODE_TEST_ARGS = ["--test", "--test-timeout=60000", "--test-reporter=spec"];

const files = process.argv.slice(2).length
  ? process.argv.slice(2)
  : readdirSync(HERE).filter((f) => f.endsWith(".test.mjs")).sort().map((f) => `./${f}`);

const only = process.env.WEFT_SDK?.trim();
const lines = only ? [only] : ["2", "1"];
if (only && only !== "1" && only !== "2") {
  console.error(`WEFT_SDK=${JSON.stringify(process.env.WEFT_SDK)}: expected 1 or 2 (unset: both)`);
  process.exit(2);
}
// Imported only now: sdk.mjs itself rejects a bad WEFT_SDK with a stack trace.
const { SDK_PACKAGES, sdkVersion } = await import("./sdk.mjs");

let child = null;
let aborted = false;
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, () => {
    // The child's harness stops its server on these signals.
    if (child && child.exitCode === null) {
      try { process.kill(child.pid, sig); } catch {}
    }
    process.exitCode = 128 + (sig === "SIGINT" ? 2 : sig === "SIGHUP" ? 1 : 15);
    aborted = true;
  });
}

function run(line) {
  return new Promise((res) => {
    child = spawn(process.execPath, [...NODE_TEST_ARGS, ...files], {
      cwd: HERE,
      env: { ...process.env, WEFT_SDK: line },
      stdio: "inherit",
    });
    child.once("error", (e) => res({ code: null, sig: null, err: e }));
    child.once("exit", (code, sig) => res({ code, sig }));
  });
}

const results = [];
for (const line of lines) {
  if (aborted) break;
  const label = `@langchain/langgraph-sdk ${sdkVersion(line)} (WEFT_SDK=${line}, package ${SDK_PACKAGES[line]})`;
  const bar = "=".repeat(Math.max(60, label.length + 14));
  console.log(`\n${bar}\n  SDK line ${line}.x: ${label}\n${bar}`);
  const t0 = Date.now();
  const r = await run(line);
  const secs = ((Date.now() - t0) / 1000).toFixed(1);
  const ok = r.code === 0;
  results.push({ line, label, ok, secs, r });
  console.log(`\n--- SDK line ${line}.x (${label}): ${ok ? "PASS" : "FAIL"} in ${secs}s` +
    (ok ? "" : ` (${r.err ? r.err.message : r.sig ? `signal ${r.sig}` : `exit code ${r.code}`})`));
}

console.log(`\n${"=".repeat(60)}\n  Summary`);
for (const { line, label, ok, secs } of results) console.log(`  ${ok ? "PASS" : "FAIL"}  ${line}.x  ${label}  ${secs}s`);
const failed = results.length < lines.length || results.some((x) => !x.ok);
if (results.length < lines.length) console.log("  (interrupted before every SDK line ran)");
console.log("=".repeat(60));
if (failed && !process.exitCode) process.exitCode = 1;
