// What the browser tests (sdk-tests/browser.test.mjs, web/test/ui.test.mjs)
// share: finding the system Chromium and bounding a promise in time.

import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/** The Chromium binary: WEFT_CHROMIUM, /usr/bin/chromium, or chromium / chromium-browser on PATH; null when none. */
export function findChromium() {
  if (process.env.WEFT_CHROMIUM) return process.env.WEFT_CHROMIUM;
  const candidates = ["/usr/bin/chromium"];
  for (const dir of (process.env.PATH ?? "").split(delimiter).filter(Boolean)) {
    candidates.push(join(dir, "chromium"), join(dir, "chromium-browser"));
  }
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {}
  }
  return null;
}

/** Resolves to p's value, or rejects after ms (the timer never outlives p). */
export function bounded(p, ms, what) {
  let timer;
  return Promise.race([
    p,
    new Promise((_, rej) => (timer = setTimeout(() => rej(new Error(`${what}: no result within ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(timer));
}
