// The real useStream React hook (@langchain/langgraph-sdk/react, of the SDK
// line WEFT_SDK picks) in headless Chromium against a running Weft.
//
// before: bundle browser/app.jsx with esbuild for this line, serve it from a
// tiny static server on 127.0.0.1 (its own port, so every API call is
// cross-origin and CORS is exercised), launch the system Chromium
// (/usr/bin/chromium, `chromium` on PATH, or WEFT_CHROMIUM) through
// playwright-core. The steps share one page and run in order: echo_chat
// (streamed reply, reload from history, a second turn), hitl (interrupt,
// resume), slow (stop → the server interrupts the run), and a control that
// loads the page from a non-loopback origin and must see CORS refuse it. Each
// step asserts on the DOM, takes screenshots into artifacts/<line>/ (also on
// failure) and ends by checking that the page has had no failed request, no
// HTTP error response and no console error. after: the browser and the static
// server are closed whatever happened, each within a bound.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { findChromium, bounded } from "./browser/chromium.mjs";
import { useServer } from "./harness.mjs";
import { SDK_LINE, SDK_LABEL, SDK_PACKAGE } from "./sdk.mjs";
import { bundleApp } from "./browser/bundle.mjs";
import { startPageServer } from "./browser/server.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const ARTIFACTS = join(HERE, "artifacts", SDK_LINE);
const STEP_TIMEOUT_MS = 15_000; // one DOM expectation
const LAUNCH_TIMEOUT_MS = 30_000;
const CLOSE_TIMEOUT_MS = 10_000;

const server = useServer();

let pageServer = null;
let browser = null;
let page = null;
let sdkInputs = [];
let shot = 0;

/** A host name Chromium resolves to 127.0.0.1 but Weft does not count as a loopback origin. */
const FOREIGN_HOST = "weft-foreign-origin.test";

/**
 * Runs in every page before its scripts (addInitScript): a Response's `body`
 * getter is wrapped so that a body the page reads as a stream (the SDK reads
 * SSE that way) is passed through unchanged while the page reports, through
 * the exposed __weftBodyRead, that it read the body to its end: {method, url,
 * bytes, text (event-stream bodies only)}. Nothing else changes: json() /
 * text() and every header are the original Response's.
 */
function recordBodyReads() {
  const bodyOf = Object.getOwnPropertyDescriptor(Response.prototype, "body").get;
  const fetch0 = window.fetch;
  window.fetch = async function fetch(input, init) {
    const method = (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
    const res = await fetch0.call(this, input, init);
    let wrapped;
    Object.defineProperty(res, "body", {
      configurable: true,
      get() {
        const body = bodyOf.call(res);
        if (wrapped !== undefined || body === null) return wrapped ?? body;
        const isSSE = (res.headers.get("content-type") ?? "").includes("text/event-stream");
        const decoder = new TextDecoder();
        const rec = { method, url: res.url, bytes: 0, text: "" };
        wrapped = body.pipeThrough(new TransformStream({
          transform(chunk, controller) {
            rec.bytes += chunk.byteLength;
            if (isSSE) rec.text += decoder.decode(chunk, { stream: true });
            controller.enqueue(chunk);
          },
          flush() {
            if (isSSE) rec.text += decoder.decode();
            window.__weftBodyRead(rec);
          },
        }));
        return wrapped;
      },
    });
    return res;
  };
}

/**
 * What pages did wrong, and the bodies they read to the end. Every failed
 * request is a problem: a stream read to its end is not reported failed
 * (Chromium reports net::ERR_ABORTED for a fetch body read as a stream when
 * the response says Cache-Control: no-store, which Weft's streams no longer
 * send), so only a stream the page aborted itself is expected.
 */
const watched = { problems: [], failures: [], bodiesRead: [] };

/** The problems seen since the last call. */
async function takeProblems() {
  await new Promise((r) => setTimeout(r, 100)); // a failure is reported by the browser, a little later
  return [...watched.problems.splice(0), ...watched.failures.splice(0).map((f) => `request failed: ${f.method} ${f.url}: ${f.errorText}`)];
}

/** The SSE text of the streams the page read to the end from this URL, oldest first. */
const sseRead = (url) => watched.bodiesRead.filter((b) => b.method === "POST" && b.url === url).map((b) => b.text);

/**
 * Records what p does wrong (console errors, uncaught exceptions, failed
 * requests, HTTP errors) into w and every request it sends to Weft into
 * requests: {method, path, url, body, response: Promise<{status, headers} | null>}.
 */
function watch(p, w, requests) {
  const weft = new URL(server.url).origin;
  p.on("console", (m) => {
    if (m.type() === "error") w.problems.push(`console error: ${m.text()} (${m.location()?.url ?? "?"})`);
  });
  p.on("pageerror", (e) => w.problems.push(`uncaught exception in the page: ${e.message}`));
  p.on("requestfailed", (r) => w.failures.push({ method: r.method(), url: r.url(), errorText: r.failure()?.errorText }));
  p.on("response", (r) => {
    if (r.status() >= 400) w.problems.push(`HTTP ${r.status()} for ${r.request().method()} ${r.url()}`);
  });
  p.on("request", (r) => {
    const u = new URL(r.url());
    if (u.origin !== weft) return;
    let body;
    try {
      body = r.postDataJSON() ?? undefined;
    } catch {
      body = r.postData();
    }
    const response = r.response().then(async (res) => (res ? { status: res.status(), headers: await res.allHeaders() } : null));
    response.catch(() => {}); // awaited only by the steps that need it
    requests.push({ method: r.method(), path: u.pathname, url: r.url(), body, response });
  });
}

/** Every request the test page sent to Weft (see watch). */
const apiRequests = [];

/** Registers the suite's before/after hooks (in a describe, so they run after the harness started Weft). */
function useBrowser() {
  before(async () => {
    const bin = findChromium();
    assert.ok(bin, "no Chromium: install it (apt-get install chromium) or set WEFT_CHROMIUM to its path; " +
      "playwright-core cannot download a browser here");
    const bundle = await bundleApp(SDK_LINE);
    sdkInputs = bundle.sdkInputs;
    pageServer = await startPageServer(bundle.js);
    rmSync(ARTIFACTS, { recursive: true, force: true });
    mkdirSync(ARTIFACTS, { recursive: true });
    console.log(`[browser] ${SDK_LABEL}; page ${pageServer.url}, Weft ${server.url}, Chromium ${bin}`);
    console.log(`[browser] screenshots: ${ARTIFACTS}`);

    browser = await chromium.launch({
      executablePath: bin,
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", `--host-resolver-rules=MAP ${FOREIGN_HOST} 127.0.0.1`],
      timeout: LAUNCH_TIMEOUT_MS,
    });
    const context = await browser.newContext({ viewport: { width: 900, height: 700 } });
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    context.setDefaultNavigationTimeout(STEP_TIMEOUT_MS);
    await context.exposeFunction("__weftBodyRead", (rec) => watched.bodiesRead.push(rec));
    await context.addInitScript(recordBodyReads);
    page = await context.newPage();
    watch(page, watched, apiRequests);
  }, { timeout: 120_000 });

  after(async () => {
    // Each close is bounded and runs even if an earlier one failed.
    try {
      if (browser) await bounded(browser.close(), CLOSE_TIMEOUT_MS, "browser.close");
    } catch (e) {
      // playwright-core kills the browsers it launched when this process exits.
      console.error(`[browser] ${e.message}; Chromium goes when the test process exits`);
    } finally {
      if (pageServer) {
        await bounded(pageServer.close(), CLOSE_TIMEOUT_MS, "page server close").catch((e) => console.error(`[browser] ${e.message}`));
      }
    }
  }, { timeout: 3 * CLOSE_TIMEOUT_MS });
}

/** The test page (served from origin) with these query parameters (see browser/app.jsx). */
function pageUrl(params, origin = pageServer.url) {
  const q = new URLSearchParams({ apiUrl: server.url, ...params });
  return `${origin}/?${q}`;
}

/**
 * Runs fn until it does not throw (an assertion on the DOM, say) or
 * STEP_TIMEOUT_MS pass; then throws its last error.
 */
async function eventually(fn, ms = STEP_TIMEOUT_MS) {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (Date.now() > deadline) throw e;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** [[type, text], …] of the rendered messages. */
const renderedMessages = () =>
  page.$$eval("[data-testid=message]", (els) =>
    els.map((e) => [e.dataset.type, e.querySelector("[data-testid=message-text]").textContent]));
const text = (id) => page.getByTestId(id).textContent();
const status = () => text("status");

async function screenshot(t, name, p = page) {
  shot += 1;
  const file = join(ARTIFACTS, `${String(shot).padStart(2, "0")}-${name}.png`);
  await p.screenshot({ path: file, fullPage: true });
  t.diagnostic(`screenshot ${file}`);
}

/** A test step: on failure a screenshot "<n>-<name>-FAILED.png" is taken before the error propagates. */
function step(name, fn) {
  test(name, { timeout: 60_000 }, async (t) => {
    assert.ok(page, "the browser did not start (see the before hook's error)");
    try {
      await fn(t);
      assert.deepEqual(await takeProblems(), [], "the page had failed requests, HTTP errors or console errors");
    } catch (e) {
      await screenshot(t, `${name.replace(/[^a-z0-9]+/gi, "-").slice(0, 40)}-FAILED`).catch(() => {});
      throw e;
    }
  });
}

/** Parses an SSE body into [{event, data}] (one data line per event, as Weft sends). */
function parseSSE(body) {
  return body.split(/\r?\n\r?\n/).filter((b) => b.trim()).map((block) => {
    const ev = {};
    for (const line of block.split(/\r?\n/)) {
      const i = line.indexOf(":");
      if (i <= 0) continue;
      const k = line.slice(0, i);
      const v = line.slice(i + 1).replace(/^ /, "");
      if (k === "event") ev.event = v;
      if (k === "data") ev.data = JSON.parse(v);
    }
    return ev;
  });
}

describe(`useStream in Chromium, ${SDK_LABEL}`, () => {
  useBrowser();

  let threadId = null;

  step("the bundle is the SDK line under test", async () => {
    assert.ok(sdkInputs.length > 0, "no @langchain/langgraph-sdk file in the bundle");
    const pkgs = new Set(sdkInputs.map((p) => p.match(/node_modules\/(@langchain\/langgraph-sdk[^/]*)\//)[1]));
    assert.deepEqual([...pkgs], [SDK_PACKAGE], "the bundle must hold exactly the SDK package of this line");
  });

  step("echo_chat: send \"hello\" → the human message and the streamed reply render", async (t) => {
    await page.goto(pageUrl({ assistantId: "echo_chat" }));
    assert.equal(await status(), "idle");
    assert.deepEqual(await renderedMessages(), []);
    await screenshot(t, "echo-empty");

    await page.getByTestId("input").fill("hello");
    await page.getByTestId("send").click();
    await eventually(async () => {
      assert.deepEqual(await renderedMessages(), [["human", "hello"], ["ai", "echo: hello"]]);
      assert.equal(await status(), "idle");
    });
    await screenshot(t, "echo-hello");

    // The hook created a thread and put it in the URL (onThreadId).
    threadId = new URL(page.url()).searchParams.get("threadId");
    assert.match(threadId ?? "", /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.equal(await text("thread-id"), threadId);
    const create = apiRequests.find((r) => r.method === "POST" && r.path === "/threads");
    assert.ok(create, "POST /threads was not sent");
    assert.equal((await create.response).status, 200);

    // The run was streamed with the modes the hook asks for, and the reply
    // arrived as message chunks before the run ended.
    const runs = apiRequests.filter((r) => r.method === "POST" && r.path === `/threads/${threadId}/runs/stream`);
    assert.equal(runs.length, 1, "one POST /threads/{id}/runs/stream");
    assert.equal(runs[0].body.assistant_id, "echo_chat");
    assert.ok(runs[0].body.stream_mode.includes("values"), `stream_mode ${JSON.stringify(runs[0].body.stream_mode)}`);
    assert.ok(runs[0].body.stream_mode.includes("messages-tuple"), `stream_mode ${JSON.stringify(runs[0].body.stream_mode)}`);
    const res = await runs[0].response;
    assert.equal(res.status, 200);
    assert.match(res.headers["content-type"], /^text\/event-stream/);
    assert.match(res.headers["content-location"] ?? "", new RegExp(`/threads/${threadId}/runs/[0-9a-f-]{36}$`));
    const bodies = sseRead(runs[0].url);
    assert.equal(bodies.length, 1, "the page read the stream to its end");
    // Read to its end, the stream is not reported failed (net::ERR_ABORTED,
    // as Chromium reports every such read of a no-store response).
    assert.equal(res.headers["cache-control"], "private, no-cache");
    const events = parseSSE(bodies[0]);
    const chunks = events.filter((e) => e.event === "messages").map((e) => e.data[0]);
    assert.deepEqual(chunks.map((c) => c.content), ["echo: ", "hello"], "the reply streamed as two message chunks");

    // What the page showed while the run was in flight includes the reply.
    const renders = await page.evaluate(() => window.__weftRenders);
    assert.ok(renders.some((r) => r.isLoading && r.messages.includes("ai:echo: hello")),
      "the reply never rendered while the stream was open");
    assert.ok(renders.some((r) => r.isLoading && r.messages.includes("human:hello")),
      "the human message never rendered while the stream was open");
  });

  step("reload (same URL with threadId) → the history renders again from the server", async (t) => {
    assert.ok(threadId, "no thread from the previous step");
    const seen = apiRequests.length;
    await page.reload();
    assert.equal(new URL(page.url()).searchParams.get("threadId"), threadId);
    await eventually(async () => {
      assert.deepEqual(await renderedMessages(), [["human", "hello"], ["ai", "echo: hello"]]);
      assert.equal(await status(), "idle");
    });
    await screenshot(t, "echo-reloaded");
    const after = apiRequests.slice(seen);
    const hist = after.find((r) => r.method === "POST" && r.path === `/threads/${threadId}/history`);
    assert.ok(hist, `POST /threads/${threadId}/history after the reload; saw ${after.map((r) => `${r.method} ${r.path}`).join(", ")}`);
    assert.equal((await hist.response).status, 200);
    assert.ok(!after.some((r) => r.path.endsWith("/runs/stream")), "a reload must not start a run");
  });

  step("a second message → both turns render", async (t) => {
    await page.getByTestId("input").fill("again");
    await page.getByTestId("send").click();
    await eventually(async () => {
      assert.deepEqual(await renderedMessages(), [
        ["human", "hello"], ["ai", "echo: hello"], ["human", "again"], ["ai", "echo: again"],
      ]);
      assert.equal(await status(), "idle");
    });
    await screenshot(t, "echo-two-turns");
    assert.equal(new URL(page.url()).searchParams.get("threadId"), threadId, "the same thread");
    const runs = apiRequests.filter((r) => r.method === "POST" && r.path === `/threads/${threadId}/runs/stream`);
    assert.equal(runs.length, 2);
    assert.equal((await runs[1].response).status, 200);
  });

  step("hitl: submit {input: \"x\"} → the interrupt renders → resume → the final state renders", async (t) => {
    const seen = apiRequests.length;
    await page.goto(pageUrl({ assistantId: "hitl", inputKey: "input" }));
    assert.equal(await status(), "idle");
    await page.getByTestId("input").fill("x");
    await page.getByTestId("send").click();
    await eventually(async () => {
      assert.deepEqual(JSON.parse(await text("interrupt-value")), { question: "approve?", input: "x" });
      assert.equal(await text("value-input"), "x");
      assert.equal(await status(), "idle");
    });
    assert.equal(await page.getByTestId("value-result").count(), 0, "no result before the resume");
    await screenshot(t, "hitl-interrupted");
    const hitlThread = new URL(page.url()).searchParams.get("threadId");
    assert.ok(hitlThread && hitlThread !== threadId, "a new thread for hitl");

    await page.getByTestId("resume").click();
    await eventually(async () => {
      assert.equal(await text("value-result"), "x:yes");
      assert.equal(await text("value-answer"), "yes");
      assert.equal(await page.getByTestId("interrupt").count(), 0, "the interrupt is gone");
      assert.equal(await status(), "idle");
    });
    await screenshot(t, "hitl-resumed");

    const runs = apiRequests.slice(seen).filter((r) => r.method === "POST" && r.path === `/threads/${hitlThread}/runs/stream`);
    assert.equal(runs.length, 2, "the first run and the resume");
    assert.deepEqual(runs[0].body.input, { input: "x" });
    assert.deepEqual(runs[1].body.command, { resume: "yes" });
    assert.equal(runs[1].body.input ?? null, null, "the resume sends no input");
    for (const r of runs) assert.equal((await r.response).status, 200);
  });

  step("slow: stop while the run streams → the page goes idle and the server interrupts the run", async (t) => {
    const seen = apiRequests.length;
    await page.goto(pageUrl({ assistantId: "slow", input: "json" }));
    await page.getByTestId("input").fill('{"ms": 4000, "tag": "stop"}');
    await page.getByTestId("send").click();
    await eventually(async () => {
      assert.equal(await text("value-tag"), "stop", "the first values event rendered");
      assert.equal(await status(), "loading");
    });
    await screenshot(t, "slow-running");
    const slowThread = new URL(page.url()).searchParams.get("threadId");
    assert.ok(slowThread, "the hook created a thread");

    assert.deepEqual(await takeProblems(), [], "problems before the stop");
    const t0 = Date.now();
    await page.getByTestId("stop").click();
    await eventually(async () => assert.equal(await status(), "idle"));
    assert.ok(Date.now() - t0 < 3_000, `idle ${Date.now() - t0} ms after stop; the run alone takes 8 s`);
    await screenshot(t, "slow-stopped");

    const run = apiRequests.slice(seen).find((r) => r.method === "POST" && r.path === `/threads/${slowThread}/runs/stream`);
    assert.ok(run, "POST /threads/{id}/runs/stream");
    assert.equal(run.body.on_disconnect, "cancel", "useStream without reconnectOnMount relies on on_disconnect=cancel");
    const res = await run.response;
    const runId = /\/runs\/([0-9a-f-]{36})$/.exec(res.headers["content-location"] ?? "")?.[1];
    assert.ok(runId, `Content-Location ${res.headers["content-location"]}`);
    // The aborted stream made the server cancel the run before its second node.
    await eventually(async () => {
      const got = await (await fetch(`${server.url}/threads/${slowThread}/runs/${runId}`)).json();
      assert.equal(got.status, "interrupted");
    });
    const state = await (await fetch(`${server.url}/threads/${slowThread}/state`)).json();
    assert.ok(!(state.values.log ?? []).includes("second:stop"), `log ${JSON.stringify(state.values.log)}`);

    // The aborted request is the one failure the page may show here.
    assert.deepEqual(await takeProblems(), [`request failed: POST ${server.url}/threads/${slowThread}/runs/stream: net::ERR_ABORTED`]);
  });

  step("control: from a non-loopback origin the page is refused by CORS, and this test sees it", async (t) => {
    if (server.external) return t.skip("WEFT_URL: the server's CORS settings are not known");
    const other = await page.context().newPage();
    const w = { problems: [], failures: [], bodiesRead: watched.bodiesRead };
    watch(other, w, []);
    const otherProblems = () => [...w.problems, ...w.failures.map((f) => `request failed: ${f.method} ${f.url}: ${f.errorText}`)];
    try {
      const origin = pageServer.url.replace("127.0.0.1", FOREIGN_HOST);
      await other.goto(pageUrl({ assistantId: "echo_chat" }, origin));
      await other.getByTestId("input").fill("hello");
      await other.getByTestId("send").click();
      await eventually(async () => {
        const got = otherProblems();
        assert.ok(got.some((p) => p.startsWith("console error:") && p.includes("CORS")), got.join("\n"));
        assert.ok(got.some((p) => p.startsWith(`request failed: POST ${server.url}/threads`)), got.join("\n"));
        assert.equal(await other.getByTestId("status").textContent(), "idle");
      });
      assert.match(await other.getByTestId("error").textContent(), /fetch/i, "the hook shows the failure");
      await screenshot(t, "foreign-origin-refused", other);
      assert.equal(await other.locator("[data-testid=message][data-type=ai]").count(), 0, "no reply rendered");
    } finally {
      await other.close();
    }
  });
});
