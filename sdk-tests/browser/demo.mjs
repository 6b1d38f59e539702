// `npm run demo` (in sdk-tests/): serves the useStream test page for a person
// to use. It bundles app.jsx (the line WEFT_SDK picks, 2 by default), serves it
// on 127.0.0.1 and prints a link per built-in graph, pointed at WEFT_URL
// (default http://127.0.0.1:8123, what `make run` listens on). Ctrl-C stops it.

import { bundleApp } from "./bundle.mjs";
import { startPageServer } from "./server.mjs";

const weft = (process.env.WEFT_URL || "http://127.0.0.1:8123").replace(/\/+$/, "");
const line = process.env.WEFT_SDK?.trim() || "2";

const ok = await fetch(`${weft}/ok`).then((r) => r.ok, () => false);
if (!ok) console.warn(`warning: no Weft answers at ${weft}/ok yet (start it with \`make run\`)`);

const page = await startPageServer((await bundleApp(line)).js);
const link = (assistantId, extra = "") =>
  `${page.url}/?apiUrl=${encodeURIComponent(weft)}&assistantId=${assistantId}${extra}`;
console.log(`useStream demo (SDK line ${line}) against ${weft}:`);
console.log(`  chat:               ${link("echo_chat")}`);
console.log(`  human in the loop:  ${link("hitl", "&inputKey=input")}`);
console.log("Ctrl-C stops it.");
for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, async () => {
    await page.close();
    process.exit(0);
  });
}
