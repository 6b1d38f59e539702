// Bundles app.jsx with esbuild, in memory, for one SDK line:
//   "2" → @langchain/langgraph-sdk/react as imported,
//   "1" → the same import resolved to @langchain/langgraph-sdk-1/react (alias).
// No bundle is ever written to disk or committed.

import { build } from "esbuild";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));

const ALIASES = Object.freeze({
  2: {},
  1: { "@langchain/langgraph-sdk": "@langchain/langgraph-sdk-1" },
});

/**
 * Returns {js, sdkInputs}: the page script (an IIFE, React development build
 * so React's warnings reach the console) and the SDK source files that went
 * into it, relative to sdk-tests/ (node_modules/@langchain/langgraph-sdk…/…),
 * so a caller can check which line was bundled.
 */
export async function bundleApp(line) {
  const alias = ALIASES[line];
  if (!alias) throw new Error(`bundleApp: unknown SDK line ${JSON.stringify(line)}`);
  const res = await build({
    entryPoints: [join(HERE, "app.jsx")],
    absWorkingDir: join(HERE, ".."),
    bundle: true,
    write: false,
    metafile: true,
    format: "iife",
    platform: "browser",
    target: "es2022",
    jsx: "automatic",
    alias,
    define: { "process.env.NODE_ENV": '"development"' },
    logLevel: "silent",
  });
  const sdkInputs = Object.keys(res.metafile.inputs)
    .map((p) => p.split(sep).join("/"))
    .filter((p) => p.includes("node_modules/@langchain/langgraph-sdk"));
  return { js: res.outputFiles[0].text, sdkInputs, warnings: res.warnings };
}
