// GET /docs, the API reference page, in headless Chromium against a real
// server: swagger-ui (embedded in the binary) renders the server's
// /openapi.json, every operation listed; no request leaves the server (each
// request to another origin is aborted and fails the test), and the page
// logs no error (a Content-Security-Policy violation among them).
// Screenshot: artifacts/docs.png.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { findChromium, bounded } from "../../sdk-tests/browser/chromium.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const ARTIFACTS = join(HERE, "artifacts");
const { useServer } = await import("../../sdk-tests/harness.mjs");
const server = useServer();

describe("the API reference page (/docs)", () => {
  let browser;
  before(async () => {
    const exe = findChromium();
    assert.ok(exe, "no Chromium: apt-get install chromium (or set WEFT_CHROMIUM)");
    browser = await chromium.launch({
      executablePath: exe,
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"],
      timeout: 30_000,
    });
  }, { timeout: 60_000 });

  after(async () => {
    try {
      if (browser) await bounded(browser.close(), 10_000, "browser.close");
    } catch (e) {
      console.error(`[docs] ${e.message}; Chromium goes when the test process exits`);
    }
  }, { timeout: 20_000 });

  test("lists every operation of /openapi.json, offline", { timeout: 90_000 }, async (t) => {
    const spec = await (await fetch(server.url + "/openapi.json")).json();
    const operations = Object.values(spec.paths).reduce(
      (n, item) => n + Object.keys(item).filter((k) => ["get", "post", "put", "patch", "delete"].includes(k)).length, 0);
    const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
    context.setDefaultTimeout(30_000);
    const outside = [];
    const problems = [];
    const origin = new URL(server.url).origin;
    await context.route("**/*", (route) => {
      const url = route.request().url();
      if (new URL(url).origin !== origin && !url.startsWith("data:")) {
        outside.push(url);
        return route.abort();
      }
      return route.continue();
    });
    const page = await context.newPage();
    page.on("console", (m) => m.type() === "error" && problems.push(`console error: ${m.text()}`));
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
    page.on("response", (r) => r.status() >= 400 && problems.push(`HTTP ${r.status()}: ${r.url()}`));

    const res = await page.goto(server.url + "/docs");
    assert.equal(res.status(), 200);
    await page.waitForFunction((n) => document.querySelectorAll(".opblock").length >= n, operations);
    assert.equal(await page.locator(".opblock").count(), operations, "one block per operation of the document");
    assert.equal(await page.getByTestId("docs-status").textContent(), "", "the status line cleared once the document loaded");
    // An operation opens with its parameters and responses.
    const storage = page.locator('.opblock-get:has([data-path="/threads/{thread_id}/storage"])');
    await storage.locator(".opblock-summary").click();
    await storage.locator(".opblock-body .responses-wrapper").waitFor();
    assert.match(await storage.locator(".opblock-body").textContent(), /thread_id/);
    await storage.locator(".opblock-summary").click(); // closed again for the screenshot, from the top
    await page.evaluate(() => { document.activeElement?.blur(); window.scrollTo(0, 0); });
    mkdirSync(ARTIFACTS, { recursive: true });
    const file = join(ARTIFACTS, "docs.png");
    await page.screenshot({ path: file });
    t.diagnostic(`screenshot ${file}`);
    await page.waitForTimeout(150); // late responses
    await context.close();
    assert.deepEqual(outside, [], "requests to another origin");
    assert.deepEqual(problems, [], "console errors, failed requests or HTTP errors");
  });
});
