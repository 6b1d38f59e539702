// The one place the tests get the official JS SDK from. Two lines are
// installed, and WEFT_SDK picks one:
//
//   WEFT_SDK unset or "2"  @langchain/langgraph-sdk    (2.0.0, npm `latest`;
//                          a one-off bump equal to the 1.6.3 feature set)
//   WEFT_SDK="1"           @langchain/langgraph-sdk-1  (npm alias for the newest
//                          1.x, the maintained line that `^1.x` ranges such as
//                          agent-chat-ui's resolve to)
//
// Exports the chosen Client plus SDK_LINE ("1" | "2"), SDK_PACKAGE (what was
// imported), SDK_VERSION (the installed package's own version) and SDK_LABEL
// ("@langchain/langgraph-sdk 1.15.0 (WEFT_SDK=1)") for output.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

export const SDK_PACKAGES = Object.freeze({
  2: "@langchain/langgraph-sdk",
  1: "@langchain/langgraph-sdk-1",
});

/** Installed version of the SDK package for a line ("1" | "2"). */
export function sdkVersion(line) {
  const pkg = SDK_PACKAGES[line];
  if (!pkg) throw new Error(`unknown SDK line ${JSON.stringify(line)}; expected one of ${Object.keys(SDK_PACKAGES).join(", ")}`);
  // The packages' export maps hide package.json: walk up from the entry point.
  let dir = dirname(createRequire(import.meta.url).resolve(pkg));
  for (;;) {
    try {
      const meta = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      if (meta.name === "@langchain/langgraph-sdk" && meta.version) return meta.version;
    } catch {}
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json for ${pkg}`);
    dir = up;
  }
}

export const SDK_LINE = process.env.WEFT_SDK?.trim() || "2";
export const SDK_PACKAGE = SDK_PACKAGES[SDK_LINE];
if (!SDK_PACKAGE) {
  throw new Error(`WEFT_SDK=${JSON.stringify(process.env.WEFT_SDK)}: expected one of ${Object.keys(SDK_PACKAGES).join(", ")} (unset = 2)`);
}
export const SDK_VERSION = sdkVersion(SDK_LINE);
if (!SDK_VERSION.startsWith(`${SDK_LINE}.`)) {
  throw new Error(`${SDK_PACKAGE} is ${SDK_VERSION}, not a ${SDK_LINE}.x release (WEFT_SDK=${SDK_LINE})`);
}
export const SDK_LABEL = `@langchain/langgraph-sdk ${SDK_VERSION} (WEFT_SDK=${SDK_LINE})`;

export const { Client } = await import(SDK_PACKAGE);
