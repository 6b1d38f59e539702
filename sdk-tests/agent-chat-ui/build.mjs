// Builds agent-chat-ui from the npm package create-agent-chat-app (pinned in
// package.json): its `templates/vite` app, copied from node_modules to
// .build/app (gitignored) and built there with Vite and the template's own
// vite.config.ts (React, Tailwind, the "@" alias) into .build/dist. Nothing is
// installed and nothing is fetched: every import resolves from this
// directory's node_modules (.build/app has none of its own). The template's
// `build` script is `tsc -b && vite build`; the type check is skipped (it
// builds nothing), so TypeScript is not a dependency.
//
//   node build.mjs            builds, prints the bundle summary as JSON
//   buildAgentChatUi()        the same from a test: runs this file as a child
//                             process (bounded in time) and resolves to the summary
//
// The child's environment has no VITE_* variable, so the app gets no default
// apiUrl / assistantId / API key baked in: it reads them from the query string
// (?apiUrl=…&assistantId=…&threadId=…) as a deployed agent-chat-ui does.

import { execFile } from "node:child_process";
import { cpSync, existsSync, readFileSync, rmSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
export const TEMPLATE_PACKAGE = "create-agent-chat-app";
export const TEMPLATE_VERSION = "0.1.6";
const TEMPLATE = join(HERE, "node_modules", TEMPLATE_PACKAGE, "templates", "vite");
const BUILD = join(HERE, ".build");
export const APP_DIR = join(BUILD, "app");
export const DIST_DIR = join(BUILD, "dist");
const SUMMARY = join(BUILD, "bundle.json");
const BUILD_TIMEOUT_MS = 150_000;

/** name@version of the package a bundled module file belongs to (null for the app's own files). */
function packageOf(file) {
  const parts = file.split(sep);
  const i = parts.lastIndexOf("node_modules");
  if (i < 0) return null;
  const n = parts[i + 1]?.startsWith("@") ? 2 : 1;
  const name = parts.slice(i + 1, i + 1 + n).join("/");
  const pkgJson = join(...parts.slice(0, i + 1 + n), "package.json");
  try {
    return `${name}@${JSON.parse(readFileSync(sep + pkgJson, "utf8")).version}`;
  } catch {
    return name;
  }
}

async function buildHere() {
  const pkg = JSON.parse(readFileSync(join(HERE, "node_modules", TEMPLATE_PACKAGE, "package.json"), "utf8"));
  if (pkg.version !== TEMPLATE_VERSION) {
    throw new Error(`${TEMPLATE_PACKAGE} ${pkg.version} in node_modules, expected ${TEMPLATE_VERSION}: run npm ci in ${HERE}`);
  }
  rmSync(BUILD, { recursive: true, force: true });
  mkdirSync(BUILD, { recursive: true });
  cpSync(TEMPLATE, APP_DIR, { recursive: true });

  const { build } = await import("vite");
  const started = Date.now();
  const out = await build({
    root: APP_DIR,
    configFile: join(APP_DIR, "vite.config.ts"),
    mode: "production",
    logLevel: "warn",
    envDir: APP_DIR, // the template ships no .env file
    build: { outDir: DIST_DIR, emptyOutDir: true, chunkSizeWarningLimit: 4096, reportCompressedSize: false },
  });
  const outputs = (Array.isArray(out) ? out : [out]).flatMap((o) => o.output);
  const packages = new Set();
  for (const o of outputs) for (const id of o.moduleIds ?? []) {
    const p = id.startsWith(sep) ? packageOf(id) : null;
    if (p) packages.add(p);
  }
  const summary = {
    template: `${TEMPLATE_PACKAGE}@${pkg.version} templates/vite`,
    ms: Date.now() - started,
    files: outputs.length,
    html: outputs.filter((o) => o.fileName.endsWith(".html")).map((o) => o.fileName),
    packages: [...packages].sort(),
    appFiles: [...new Set(outputs.flatMap((o) => o.moduleIds ?? []).filter((id) => id.startsWith(APP_DIR + sep)).map((id) => relative(APP_DIR, id)))].sort(),
  };
  writeFileSync(SUMMARY, JSON.stringify(summary, null, 2));
  return summary;
}

/** Builds in a child process (no VITE_* in its environment); resolves to the summary. */
export function buildAgentChatUi() {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("VITE_")));
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [fileURLToPath(import.meta.url)], {
      cwd: HERE, env, timeout: BUILD_TIMEOUT_MS, killSignal: "SIGKILL", maxBuffer: 32 << 20,
    }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`building agent-chat-ui failed: ${err.message}\n${stdout}${stderr}`));
      if (!existsSync(join(DIST_DIR, "index.html"))) return reject(new Error(`no ${DIST_DIR}/index.html after the build\n${stdout}${stderr}`));
      resolve({ ...JSON.parse(readFileSync(SUMMARY, "utf8")), log: stderr.trim() });
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const summary = await buildHere();
  console.log(JSON.stringify({ ...summary, appFiles: summary.appFiles.length }, null, 2));
}
