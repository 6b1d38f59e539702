// Weft's embedded UI in headless Chromium against a real server.
//
// before: build and start the server from this checkout (sdk-tests/harness.mjs:
// a free loopback port, its own managed data dir, WEFT_MAX_ATTEMPTS=1 so one
// nack dead-letters a run), build deterministic fixtures through the API
// (a thread with forks, interrupted hitl threads, a parent with a child, a
// chat, an external graph with subgraphs whose run an external "worker" in
// this file claims and nacks into the dead-letter queue, store items), then
// launch the system Chromium through playwright-core. One step serves a
// Python graph through the Python worker (WEFT_PYTHON, or the Python suites' virtualenv).
//
// The steps share one page and run in order; each drives a flow through the
// UI, asserts on the DOM (data-testid hooks) and through the API, saves
// screenshots of the views into artifacts/ and ends by checking that the
// page had no console error, no failed request, no HTTP error response it
// did not expect, and no request to another origin. The large-thread step
// builds 500 checkpoints / 1,000 messages through the API and states the
// render time it measured (artifacts/render-time.txt).

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { findChromium, bounded } from "../../sdk-tests/browser/chromium.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = join(HERE, "..", "..");
// The Python worker's interpreter: the Python suites' virtualenv (make test-py builds it), or WEFT_PYTHON.
const PYTHON = process.env.WEFT_PYTHON || join(REPO, "sdk-tests", "py", ".venv", "bin", "python");
const ARTIFACTS = join(HERE, "artifacts");
const STEP_TIMEOUT_MS = 15_000;

// The server: one nack dead-letters a run (the dead-letter step needs one).
process.env.WEFT_MAX_ATTEMPTS ??= "1";
const { useServer } = await import("../../sdk-tests/harness.mjs");
const server = useServer();

// ---- API helpers (the test's own calls, not the page's) ----

async function api(method, path, body, headers = {}) {
  const res = await fetch(server.url + path, {
    method,
    headers: body === undefined ? headers : { "Content-Type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const data = text.trim() ? JSON.parse(text) : null;
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return data;
}

/** Runs fn until it does not throw or ms pass; then throws its last error. */
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

async function runStatus(tid, rid, ...want) {
  return eventually(async () => {
    const r = await api("GET", `/threads/${tid}/runs/${rid}`);
    assert.ok(want.includes(r.status), `run ${rid} is ${r.status}, want ${want}`);
    return r;
  }, 30_000);
}

const history = (tid, limit = 100) => api("POST", `/threads/${tid}/history`, { limit });

/**
 * Runs fn while a Python worker serves graphs of a fixture project of
 * sdk-tests/py/fixtures to the server (the last one is registered when fn
 * starts), then stops it by its PID.
 */
async function withPythonWorker(fixture, graphs, fn, readyMs = 60_000) {
  assert.ok(existsSync(PYTHON), `no Python with langgraph at ${PYTHON}: make test-py builds it (or set WEFT_PYTHON)`);
  const project = join(REPO, "sdk-tests", "py", "fixtures", fixture);
  const worker = spawn(PYTHON, ["-m", "weft_worker", "--config", join(project, "langgraph.json"), "--url", server.url,
    "--graphs", graphs.join(","), "--worker-id", `ui-${fixture}`], {
    cwd: project, stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, PYTHONPATH: join(REPO, "worker-py"), PYTHONDONTWRITEBYTECODE: "1" },
  });
  let log = "";
  worker.stderr.on("data", (b) => (log += b));
  const exited = new Promise((r) => worker.once("exit", r));
  try {
    await eventually(async () => {
      assert.equal(worker.exitCode, null, `the Python worker exited: ${log}`);
      await api("GET", `/assistants/${graphs.at(-1)}`);
    }, readyMs);
    await fn();
  } finally {
    worker.kill("SIGTERM");
    await bounded(exited, 30_000, "the Python worker's exit").catch(() => worker.kill("SIGKILL"));
  }
}

// ---- fixtures ----

const fx = {};

async function fixtures() {
  // A thread with forks: the run, then update_state on step 1 (a second
  // branch), continued by a run from there.
  fx.fork = (await api("POST", "/threads", { metadata: { fixture: "fork", user: "ana" } })).thread_id;
  await api("POST", `/threads/${fx.fork}/runs/wait`, { assistant_id: "foo_bar", input: { foo: "" } });
  let h = await history(fx.fork);
  fx.forkRun = h[0].metadata.run_id;
  fx.step1 = h.find((s) => s.metadata.step === 1).checkpoint_id;
  fx.oldStep2 = h.find((s) => s.metadata.step === 2).checkpoint_id;
  fx.fork1 = (await api("POST", `/threads/${fx.fork}/state`, { values: { foo: "fork", bar: ["f"] }, as_node: "node_a", checkpoint_id: fx.step1 })).checkpoint_id;
  await api("POST", `/threads/${fx.fork}/runs/wait`, { assistant_id: "foo_bar", input: null });
  fx.forkHead = (await api("GET", `/threads/${fx.fork}/state`)).checkpoint_id;

  // Interrupted hitl threads: one resumed from its page, one from the inbox.
  for (const name of ["hitl", "hitlInbox"]) {
    fx[name] = (await api("POST", "/threads", { metadata: { fixture: name } })).thread_id;
    await api("POST", `/threads/${fx[name]}/runs/wait`, { assistant_id: "hitl", input: { input: name === "hitl" ? "x" : "y" } });
  }

  // A parent with a child (hierarchy), and a chat.
  fx.parent = (await api("POST", "/threads", { metadata: { fixture: "family" } })).thread_id;
  fx.child = (await api("POST", "/threads", { parent_thread_id: fx.parent, metadata: { fixture: "family-child" } })).thread_id;
  fx.chat = (await api("POST", "/threads", { metadata: { fixture: "chat" } })).thread_id;
  for (const text of ["hello", "how are you?"]) {
    await api("POST", `/threads/${fx.chat}/runs/wait`, { assistant_id: "echo_chat", input: { messages: [{ role: "user", content: text }] } });
  }

  // An external graph (with a subgraph in its xray drawing) whose run an
  // external worker claims and nacks: with WEFT_MAX_ATTEMPTS=1 it is
  // dead-lettered at once.
  const node = (id) => ({ id, type: "runnable", data: { name: id } });
  await api("POST", "/dispatch/graphs", {
    graph_id: "ext_graph", worker_id: "ui-test-worker",
    drawable: { nodes: [{ id: "__start__" }, node("plan"), node("research"), { id: "__end__" }],
      edges: [{ source: "__start__", target: "plan" }, { source: "plan", target: "research", conditional: true }, { source: "research", target: "__end__" }] },
    xray_drawables: [{ nodes: [{ id: "__start__" }, node("plan"), node("research:search"), node("research:summarize"), { id: "__end__" }],
      edges: [{ source: "__start__", target: "plan" }, { source: "plan", target: "research:search", conditional: true },
        { source: "research:search", target: "research:summarize" }, { source: "research:summarize", target: "__end__" }] }],
    state_schema: { type: "object", properties: { topic: { type: "string" } } },
  });
  fx.ext = (await api("POST", "/threads", { metadata: { fixture: "dead-letter" } })).thread_id;
  fx.extRun = (await api("POST", `/threads/${fx.ext}/runs`, { assistant_id: "ext_graph", input: { topic: "x" } })).run_id;
  const claim = await api("POST", "/dispatch/claim", { worker_id: "ext-1", graph_ids: ["ext_graph"], wait_ms: 5000 });
  assert.equal(claim.length, 1, "the external worker claimed the run");
  fx.extDispatch = claim[0].dispatch.dispatch_id;
  await api("POST", `/dispatch/${fx.extDispatch}/heartbeat`, { claim_token: claim[0].claim_token });
  const nack = await api("POST", `/dispatch/${fx.extDispatch}/nack`, { claim_token: claim[0].claim_token, error: "model timed out" });
  assert.equal(nack.state, "dead_letter");
  // The worker, unaware, commits a step with its lost claim: refused (409),
  // counted on its attempt as a fenced write.
  const late = await fetch(`${server.url}/dispatch/${fx.extDispatch}/commit`, { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ claim_token: claim[0].claim_token, events: [{ event: "custom", data: { late: true } }] }) });
  assert.equal(late.status, 409, "a commit with a lost claim is fenced");

  // The store.
  for (const [ns, key, value] of [[["users", "ana"], "prefs", { colour: "blue" }], [["users", "ana"], "facts", { likes: "tea" }], [["users", "bo"], "prefs", { colour: "green" }], [["docs"], "readme", { text: "hello store" }]]) {
    await api("PUT", "/store/items", { namespace: ns, key, value });
  }
}

// ---- the browser ----

let browser = null;
let context = null;
let page = null;
let shot = 0;
const problems = [];
let expected = []; // [predicate(problem string)] allowed in the current step

function watch(p) {
  const origin = () => new URL(server.url).origin;
  p.on("console", (m) => m.type() === "error" && problems.push(`console error: ${m.text()}`));
  p.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  p.on("request", (r) => {
    const u = new URL(r.url());
    if (u.protocol.startsWith("http") && u.origin !== origin()) problems.push(`request to another origin: ${r.url()}`);
  });
  p.on("requestfailed", (r) => {
    // net::ERR_ABORTED is the page cancelling its own request: a view it left
    // aborts its fetches and closes its EventSource, a navigation drops what
    // the old document had in flight. A failure on the server's side is
    // another error (connection reset, empty response, …) and is reported.
    if (r.failure()?.errorText === "net::ERR_ABORTED") return;
    problems.push(`request failed: ${r.method()} ${r.url()}: ${r.failure()?.errorText}`);
  });
  p.on("response", (r) => r.status() >= 400 && problems.push(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`));
}

function takeProblems() {
  const got = problems.splice(0).filter((p) => !expected.some((ok) => ok(p)));
  expected = [];
  return got;
}

// WEFT_UI_DOCS_IMG=<dir> also writes the views docs/ui.md shows there, as
// <docs>.png (the viewport only); docs/img holds them, made smaller with pngquant.
const DOCS_IMG = process.env.WEFT_UI_DOCS_IMG;

async function screenshot(t, name, opts = {}) {
  shot += 1;
  const file = join(ARTIFACTS, `${String(shot).padStart(2, "0")}-${name}.png`);
  await page.screenshot({ path: file, fullPage: opts.fullPage ?? false });
  t.diagnostic(`screenshot ${file}`);
  if (DOCS_IMG && opts.docs) await page.screenshot({ path: join(DOCS_IMG, `${opts.docs}.png`) });
}

/** A test step: screenshots on failure, then no unexpected problem. */
function step(name, fn, timeout = 60_000) {
  test(name, { timeout }, async (t) => {
    assert.ok(page, "the browser did not start (see the before hook's error)");
    try {
      await fn(t);
      await page.waitForTimeout(150); // let late responses of the step arrive
      assert.deepEqual(takeProblems(), [], "console errors, failed requests, HTTP errors or other origins");
    } catch (e) {
      await screenshot(t, `${name.replace(/[^a-z0-9]+/gi, "-").slice(0, 40)}-FAILED`).catch(() => {});
      throw e;
    }
  });
}

const ui = (hash) => `${server.url}/${hash}`;
const tid = (id) => page.getByTestId(id);
const count = (sel) => page.locator(sel).count();
const nodeRow = (cid) => page.locator(`[data-testid=checkpoint-node][data-checkpoint-id="${cid}"]`);

describe("the time-travel UI", () => {
  before(async () => {
    rmSync(ARTIFACTS, { recursive: true, force: true });
    mkdirSync(ARTIFACTS, { recursive: true });
    await fixtures();
    const exe = findChromium();
    assert.ok(exe, "no Chromium: apt-get install chromium (or set WEFT_CHROMIUM)");
    // playwright-core gives the browser a fresh temporary profile (user data dir).
    browser = await chromium.launch({
      executablePath: exe,
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"],
      timeout: 30_000,
    });
    context = await browser.newContext({ viewport: { width: 1360, height: 860 } });
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    page = await context.newPage();
    watch(page);
  }, { timeout: 180_000 });

  after(async () => {
    try {
      if (browser) await bounded(browser.close(), 10_000, "browser.close");
    } catch (e) {
      console.error(`[ui] ${e.message}; Chromium goes when the test process exits`);
    }
  }, { timeout: 20_000 });

  step("serving: CSP without inline scripts, content-hashed immutable assets, config.json, favicon", async () => {
    const res = await fetch(server.url + "/");
    const csp = res.headers.get("content-security-policy");
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.match(csp, /connect-src 'self'/);
    assert.equal(res.headers.get("cache-control"), "no-cache");
    const body = await res.text();
    assert.doesNotMatch(body, /<script>(?!<)/, "no inline script in index.html");
    assert.doesNotMatch(body, /\sstyle=|<style/, "no inline style in index.html");
    const config = await (await fetch(server.url + "/ui/config.json")).json();
    assert.match(config.assets, /^\/ui\/v\/[0-9a-f]{16}\/$/);
    const app = await fetch(server.url + config.assets + "app.js");
    assert.equal(app.status, 200);
    assert.match(app.headers.get("cache-control"), /immutable/);
    assert.match(app.headers.get("content-type"), /javascript/);
    assert.equal((await fetch(server.url + "/ui/v/0000000000000000/app.js")).status, 404, "another build's prefix is a 404");
    assert.equal((await fetch(server.url + "/ui/favicon.svg")).status, 200);
    const vendor = await (await fetch(server.url + config.assets + "vendor/preact-htm.js")).text();
    assert.match(vendor.slice(0, 600), /htm 3\.1\.1/);
    assert.match(vendor.slice(0, 1200), /MIT License/);
  });

  step("under a mount prefix (WEFT_MOUNT_PREFIX=/api): the page, its assets, its API calls and a run's stream under /api", async (t) => {
    // A second server on the same database, every route under /api.
    const { startServer } = await import("../../sdk-tests/harness.mjs");
    const db = server.db;
    const dbURL = db.connectionString ?? `postgres://${db.user}@/${db.database}?host=${encodeURIComponent(db.host)}&sslmode=disable`;
    const prefixed = await startServer({ env: { WEFT_MOUNT_PREFIX: "/api", DATABASE_URL: dbURL, WEFT_WORKERS: "0" } });
    const ctx = await browser.newContext({ viewport: { width: 1360, height: 860 } });
    ctx.setDefaultTimeout(STEP_TIMEOUT_MS);
    const seen = [];
    const bad = [];
    try {
      const p = await ctx.newPage();
      p.on("console", (m) => m.type() === "error" && bad.push(`console error: ${m.text()}`));
      p.on("pageerror", (e) => bad.push(`page error: ${e.message}`));
      p.on("request", (r) => r.url().startsWith("http") && seen.push(new URL(r.url())));
      p.on("requestfailed", (r) => r.failure()?.errorText !== "net::ERR_ABORTED" && bad.push(`request failed: ${r.url()}`));
      p.on("response", (r) => r.status() >= 400 && bad.push(`HTTP ${r.status()}: ${r.url()}`));
      await p.goto(`${prefixed.url}/api/#/threads`);
      const total = (await api("POST", "/threads/count", {})).toString();
      await eventually(async () => assert.equal(await p.getByTestId("count-all").textContent(), total));
      await p.goto(`${prefixed.url}/api/#/threads/${fx.fork}/runs/${fx.forkRun}`);
      await eventually(async () => assert.equal(await p.getByTestId("run-status").textContent(), "success"));
      await eventually(async () => assert.ok(seen.some((u) => u.pathname === `/api/threads/${fx.fork}/runs/${fx.forkRun}/stream`), "the run's stream"));
      await p.waitForTimeout(150);
      assert.deepEqual(bad, [], "console errors, failed requests or HTTP errors under the prefix");
      const outside = seen.filter((u) => u.origin !== new URL(prefixed.url).origin || !u.pathname.startsWith("/api/"));
      assert.deepEqual(outside.map(String), [], "every request of the page is under /api/");
      assert.ok(seen.some((u) => u.pathname.startsWith("/api/ui/v/")), "the content-hashed assets under /api/ui/v/");
      t.diagnostic(`${seen.length} requests, all under ${prefixed.url}/api/`);
    } finally {
      await ctx.close();
      await prefixed.stop();
    }
  }, 120_000);

  step("threads: counts per status, filters by status, graph and metadata, the hierarchy tree, storage", async (t) => {
    await page.goto(ui("#/threads"));
    await eventually(async () => assert.equal(await tid("count-all").textContent(), "7"));
    const all = Number(await tid("count-all").textContent());
    const byStatus = await Promise.all(["idle", "busy", "interrupted", "error"].map(async (s) => Number(await tid("count-" + s).textContent())));
    assert.equal(byStatus.reduce((a, b) => a + b, 0), all, "the status counts add up");
    assert.equal(byStatus[2], 2, "two interrupted hitl threads");
    assert.equal(await tid("inbox-count").textContent(), "2");
    // Storage of the fork thread, as the inspect endpoint measures it.
    const [st] = await api("GET", `/inspect/threads/storage?thread_id=${fx.fork}`);
    const row = page.locator(`[data-testid=thread-row][data-thread-id="${fx.fork}"]`);
    await eventually(async () => assert.notEqual(await row.getByTestId("thread-storage").textContent(), ""));
    assert.match(await row.getByTestId("thread-storage").textContent(), /KiB|B$/);
    assert.ok(st.total_bytes > 0 && st.checkpoints.rows === 6, JSON.stringify(st));
    await screenshot(t, "threads", { docs: "ui-threads" });

    await tid("status-interrupted").click();
    await eventually(async () => {
      const statuses = await page.$$eval("[data-testid=thread-row]", (rs) => rs.map((r) => r.dataset.status));
      assert.deepEqual(statuses, ["interrupted", "interrupted"]);
    });
    await tid("status-all").click();
    await tid("metadata-filter").fill('{"fixture":"fork"}');
    await tid("metadata-apply").click();
    await eventually(async () => {
      const ids = await page.$$eval("[data-testid=thread-row]", (rs) => rs.map((r) => r.dataset.threadId));
      assert.deepEqual(ids, [fx.fork]);
      assert.equal(await tid("count-all").textContent(), "1");
    });
    assert.match(page.url(), /metadata=/, "the filter is in the URL");
    await tid("metadata-filter").fill("");
    await tid("metadata-apply").click();
    await tid("graph-filter").selectOption("hitl");
    await eventually(async () => {
      const ids = await page.$$eval("[data-testid=thread-row]", (rs) => rs.map((r) => r.dataset.threadId).sort());
      assert.deepEqual(ids, [fx.hitl, fx.hitlInbox].sort());
    });
    await tid("graph-filter").selectOption("");
    // Hierarchy: roots only; the parent expands to its child.
    await tid("tree-toggle").check();
    await eventually(async () => assert.equal(await count(`[data-testid=thread-row][data-thread-id="${fx.child}"]`), 0, "the child is not a root"));
    const parentRow = page.locator(`[data-testid=thread-row][data-thread-id="${fx.parent}"]`);
    await eventually(async () => assert.equal(await parentRow.getByTestId("thread-children").textContent(), "1"));
    await parentRow.getByTestId("expand-children").click();
    await eventually(async () => assert.equal(await count(`[data-testid=thread-row][data-thread-id="${fx.child}"]`), 1));
    await screenshot(t, "threads-hierarchy");
    await tid("tree-toggle").uncheck();
  });

  step("threads are paged: a filter matching 27 threads shows 25, then the next page", async () => {
    const bulk = [];
    for (let i = 0; i < 27; i++) bulk.push((await api("POST", "/threads", { metadata: { fixture: "bulk", n: i } })).thread_id);
    await page.goto(ui(`#/threads?metadata=${encodeURIComponent('{"fixture":"bulk"}')}`));
    await eventually(async () => {
      assert.equal(await tid("count-all").textContent(), "27");
      assert.equal(await count("[data-testid=thread-row]"), 25, "one page of 25");
    });
    const first = await page.$$eval("[data-testid=thread-row]", (rs) => rs.map((r) => r.dataset.threadId));
    await tid("pager-next").click();
    await eventually(async () => assert.equal(await count("[data-testid=thread-row]"), 2));
    assert.match(page.url(), /offset=25/, "the page is in the URL");
    const second = await page.$$eval("[data-testid=thread-row]", (rs) => rs.map((r) => r.dataset.threadId));
    assert.deepEqual([...first, ...second].sort(), [...bulk].sort(), "the two pages hold every thread once");
    await page.reload();
    await eventually(async () => assert.deepEqual(await page.$$eval("[data-testid=thread-row]", (rs) => rs.map((r) => r.dataset.threadId)), second));
    for (const id of bulk) await api("DELETE", `/threads/${id}`);
  });

  step("a thread with forks: the checkpoint tree, every branch, the head, labels, the run that wrote each", async (t) => {
    await page.goto(ui(`#/threads/${fx.fork}`));
    await eventually(async () => assert.equal(await count("[data-testid=checkpoint-node]"), 6));
    const nodes = await page.$$eval("[data-testid=checkpoint-node]", (rs) => rs.map((r) => ({ id: r.dataset.checkpointId, source: r.dataset.source, step: r.dataset.step, head: r.dataset.head, parent: r.dataset.parent })));
    const api_ = await api("GET", `/inspect/threads/${fx.fork}/checkpoints`);
    assert.deepEqual(nodes.map((n) => n.id), api_.checkpoints.map((c) => c.checkpoint_id), "the tree lists every checkpoint, newest first");
    assert.deepEqual(nodes.filter((n) => n.head === "true").map((n) => n.id), [fx.forkHead], "one head, the latest");
    assert.equal(nodes.find((n) => n.id === fx.fork1).source, "update");
    assert.equal(nodes.find((n) => n.id === fx.fork1).parent, fx.step1);
    assert.deepEqual(nodes.filter((n) => n.parent === fx.step1).map((n) => n.id).sort(), [fx.oldStep2, fx.fork1].sort(), "two branches from step 1");
    assert.deepEqual([...new Set(nodes.map((n) => n.source))].sort(), ["input", "loop", "update"]);
    await eventually(async () => assert.equal(await tid("checkpoint-detail").getAttribute("data-checkpoint-id"), fx.forkHead));
    await screenshot(t, "thread-forks", { docs: "ui-thread" });

    // The fork point: two children, a run link.
    await nodeRow(fx.step1).locator("a.cp-main").click();
    await eventually(async () => {
      assert.equal(await tid("checkpoint-detail").getAttribute("data-checkpoint-id"), fx.step1);
      assert.match(await tid("checkpoint-detail").textContent(), /fork: 2 branches/);
      assert.equal(await tid("checkpoint-run").textContent(), fx.forkRun);
      assert.equal(await tid("checkpoint-next").textContent(), "node_b");
    });
    assert.match(page.url(), new RegExp(`#/threads/${fx.fork}/checkpoints/${fx.step1}$`), "a URL for the checkpoint");
    // Deep link: a reload shows the same checkpoint.
    await page.reload();
    await eventually(async () => assert.equal(await tid("checkpoint-detail").getAttribute("data-checkpoint-id"), fx.step1));
  });

  step("the per-node audit view: tasks and their writes, versions, versions_seen and why the next task runs", async (t) => {
    await page.goto(ui(`#/threads/${fx.fork}/checkpoints/${fx.step1}?tab=writes`));
    await eventually(async () => assert.equal(await count("[data-testid=task]"), 1));
    const task = page.locator("[data-testid=task]");
    assert.equal(await task.getAttribute("data-task-name"), "node_b");
    const channels = await task.locator("[data-testid=write]").evaluateAll((rs) => rs.map((r) => r.dataset.channel));
    assert.deepEqual(channels, ["bar", "foo"], "node_b wrote bar and foo under the checkpoint it started from");
    await screenshot(t, "checkpoint-writes", { docs: "ui-writes" });

    await tid("tab-versions").click();
    await eventually(async () => assert.match(await page.locator("[data-testid=trigger][data-node=node_b]").textContent(), /branch:to:node_b/));
    const changed = await page.$$eval("[data-testid=channel-version][data-changed=true]", (rs) => rs.map((r) => r.dataset.channel));
    const raw = await api("GET", `/inspect/threads/${fx.fork}/checkpoints/${fx.step1}`);
    assert.deepEqual(changed, raw.changes.filter((c) => c.to).map((c) => c.channel).sort());
    assert.ok(await count("[data-testid=seen-row][data-node=node_a]"), "versions_seen has node_a's row");
    await screenshot(t, "checkpoint-versions", { fullPage: true, docs: "ui-versions" });

    // An interrupt and its resume write, and the state tab of an interrupted checkpoint.
    await page.goto(ui(`#/threads/${fx.hitl}`));
    await eventually(async () => assert.equal(await count("[data-testid=interrupt]"), 1));
    const iv = await tid("interrupt-value").textContent();
    assert.ok(iv.includes('"approve?"') && iv.includes('"x"'), iv);
    await tid("tab-writes").click();
    await eventually(async () => assert.equal(await count("[data-testid=write][data-channel=__interrupt__]"), 1));
    await screenshot(t, "checkpoint-interrupt");
  });

  step("a failed task: the error marked in the tree, its __error__ write with the message the node raised", async (t) => {
    const failing = (await api("POST", "/threads", { metadata: { fixture: "failing" } })).thread_id;
    const run = await api("POST", `/threads/${failing}/runs`, { assistant_id: "slow", input: { ms: "soon", tag: "f" } });
    await runStatus(failing, run.run_id, "error");
    await page.goto(ui(`#/threads/${failing}`));
    const errRow = page.locator("[data-testid=checkpoint-node]", { has: page.getByTestId("mark-error") });
    await eventually(async () => assert.equal(await errRow.count(), 1, "one checkpoint has an error write"));
    await errRow.locator("a.cp-main").click();
    await tid("tab-writes").click();
    await eventually(async () => assert.equal(await count("[data-testid=write][data-channel=__error__]"), 1));
    const task = page.locator("[data-testid=task]", { has: page.locator("[data-testid=write][data-channel=__error__]") });
    assert.equal(await task.getAttribute("data-task-name"), "first");
    assert.match(await task.textContent(), /slow: ms/, "the error the node raised");
    await screenshot(t, "checkpoint-error-write");
    // The run's page shows the error, and the runs tab lists it with its status and timings.
    await page.goto(ui(`#/threads/${failing}/runs`));
    await eventually(async () => assert.equal(await page.locator(`[data-testid=run-row][data-run-id="${run.run_id}"]`).getAttribute("data-status"), "error"));
  });

  step("a thread's runs: status, strategy, timings, attempts, events, where each started", async (t) => {
    await page.goto(ui(`#/threads/${fx.fork}/runs`));
    await eventually(async () => assert.equal(await count("[data-testid=run-row]"), 2));
    const listed = await page.$$eval("[data-testid=run-row]", (rs) => rs.map((r) => [r.dataset.runId, r.dataset.status]));
    const runs = await api("GET", `/threads/${fx.fork}/runs`);
    assert.deepEqual(listed, runs.map((r) => [r.run_id, r.status]), "newest first, as GET /threads/{id}/runs");
    const row = page.locator(`[data-testid=run-row][data-run-id="${fx.forkRun}"]`);
    const cells = await row.locator("td").allTextContents();
    assert.equal(cells[3], "enqueue", "the multitask strategy");
    assert.match(cells[5], /\d+ (ms|s)$/, "how long it waited");
    assert.match(cells[6], /\d+ (ms|s)$/, "how long it ran");
    await screenshot(t, "thread-runs");
    await row.getByTestId("run-link").click();
    await eventually(async () => assert.equal(await tid("run-view").getAttribute("data-run-id"), fx.forkRun));
  });

  step("diff two checkpoints: values, channel_versions, versions_seen, why each side's tasks run", async (t) => {
    await page.goto(ui(`#/threads/${fx.fork}`));
    await eventually(async () => assert.equal(await count("[data-testid=checkpoint-node]"), 6));
    await nodeRow(fx.oldStep2).getByTestId("compare-pick").click();
    await nodeRow(fx.fork1).getByTestId("compare-pick").click();
    const [a, b] = [fx.oldStep2, fx.fork1].sort();
    await eventually(async () => assert.match(page.url(), new RegExp(`#/threads/${fx.fork}/diff/${a}/${b}`)));
    await eventually(async () => assert.equal(await tid("diff-relation").textContent(), "siblings: two branches from one parent"));
    const status = Object.fromEntries(await page.$$eval("[data-testid=value-diff]", (rs) => rs.map((r) => [r.dataset.channel, r.dataset.status])));
    assert.deepEqual(status, { bar: "changed", foo: "changed" });
    const changedVersions = await page.$$eval("[data-testid=version-diff][data-changed=true]", (rs) => rs.map((r) => r.dataset.channel));
    assert.ok(changedVersions.includes("foo") && changedVersions.includes("bar"), changedVersions.join());
    await screenshot(t, "diff-forks", { fullPage: true, docs: "ui-diff" });

    // Messages are matched by id: the chat's first and last checkpoints.
    const h = await history(fx.chat);
    const first = h.find((s) => (s.values.messages || []).length === 2).checkpoint_id;
    const last = h[0].checkpoint_id;
    await page.goto(ui(`#/threads/${fx.chat}/diff/${first}/${last}`));
    await eventually(async () => {
      assert.equal(await tid("msg-count-added").textContent(), "2 added");
      assert.equal(await tid("msg-count-same").textContent(), "2 same");
    });
    await screenshot(t, "diff-messages");
  });

  step("edit state and fork from an older checkpoint: update_state with as_node, shown as curl", async (t) => {
    await page.goto(ui(`#/threads/${fx.fork}/checkpoints/${fx.step1}?tab=travel`));
    await eventually(async () => assert.ok(await count("[data-testid=edit-fork]")));
    await eventually(async () => assert.ok((await tid("edit-as-node").locator("option").allTextContents()).includes("node_a")));
    await tid("edit-values").fill('{"foo": "ui", "bar": ["u"]}');
    await tid("edit-as-node").selectOption("node_a");
    const curl = await tid("edit-curl-text").textContent();
    assert.match(curl, new RegExp(`^curl -s -X POST '${server.url}/threads/${fx.fork}/state' -H 'Content-Type: application/json' -d `));
    assert.deepEqual(JSON.parse(curl.replace(/^.* -d '(.*)'$/, "$1")), { values: { foo: "ui", bar: ["u"] }, checkpoint_id: fx.step1, as_node: "node_a" });
    await screenshot(t, "edit-and-fork", { docs: "ui-time-travel" });
    await tid("edit-submit").click();
    await eventually(async () => assert.match(page.url(), /\/checkpoints\/[0-9a-f-]{36}$/));
    const created = page.url().split("/").pop();
    assert.notEqual(created, fx.step1);
    await eventually(async () => {
      assert.equal(await nodeRow(created).getAttribute("data-source"), "update");
      assert.equal(await nodeRow(created).getAttribute("data-parent"), fx.step1);
      assert.equal(await nodeRow(created).getAttribute("data-head"), "true");
    });
    const state = await api("GET", `/threads/${fx.fork}/state`);
    assert.equal(state.checkpoint_id, created);
    assert.deepEqual(state.values, { foo: "ui", bar: ["a", "u"] }, "bar went through its append reducer");
    assert.deepEqual(state.next, ["node_b"]);
    await eventually(async () => assert.equal(await count("[data-testid=checkpoint-node]"), 7));
    await screenshot(t, "after-fork");
  });

  step("run again from an older checkpoint: a new branch, its run followed to its end", async (t) => {
    const rerun = (await api("POST", "/threads", { metadata: { fixture: "rerun" } })).thread_id;
    await api("POST", `/threads/${rerun}/runs/wait`, { assistant_id: "foo_bar", input: { foo: "" } });
    const h = await history(rerun);
    const step1 = h.find((s) => s.metadata.step === 1).checkpoint_id;
    await page.goto(ui(`#/threads/${rerun}/checkpoints/${step1}?tab=travel`));
    await eventually(async () => assert.ok(await count("[data-testid=run-from]")));
    await eventually(async () => assert.equal(await tid("run-submit").isDisabled(), false));
    const body = JSON.parse((await tid("run-curl-text").textContent()).replace(/^.* -d '(.*)'$/, "$1"));
    assert.deepEqual({ ...body, stream_mode: undefined }, { assistant_id: "foo_bar", multitask_strategy: "enqueue", checkpoint_id: step1, input: null, stream_mode: undefined });
    await screenshot(t, "run-from-checkpoint");
    await tid("run-submit").click();
    await eventually(async () => assert.match(page.url(), new RegExp(`#/threads/${rerun}/runs/[0-9a-f-]{36}$`)));
    const runId = page.url().split("/").pop();
    await runStatus(rerun, runId, "success");
    await eventually(async () => {
      assert.equal(await tid("run-status").textContent(), "success");
      assert.equal(await tid("stream-state").textContent(), "ended");
    });
    // The run forked: its first checkpoint's parent is step 1, beside the old step 2.
    const tree = await api("GET", `/inspect/threads/${rerun}/checkpoints`);
    const children = tree.checkpoints.filter((c) => c.parent_checkpoint_id === step1);
    assert.equal(children.length, 2, "two branches from step 1");
    assert.ok(children.some((c) => c.run_id === runId), "one written by the new run");
    await page.goto(ui(`#/threads/${rerun}`));
    await eventually(async () => assert.equal(await count("[data-testid=checkpoint-node]"), tree.total));
    assert.equal(await nodeRow(children.find((c) => c.run_id === runId).checkpoint_id).getAttribute("data-head"), "true", "the new branch is the head");
    await screenshot(t, "run-from-branch");
  });

  step("resume an interrupt from the UI: the run page follows the resumed run to its end", async (t) => {
    await page.goto(ui(`#/threads/${fx.hitl}`));
    await eventually(async () => assert.ok(await count("[data-testid=interrupt]")));
    await tid("tab-travel").click();
    await tid("resume-value").fill('"ok"');
    assert.deepEqual(JSON.parse((await tid("resume-curl-text").textContent()).replace(/^.* -d '(.*)'$/, "$1")).command, { resume: "ok" });
    await screenshot(t, "resume-form");
    await tid("resume-submit").click();
    await eventually(async () => assert.match(page.url(), new RegExp(`#/threads/${fx.hitl}/runs/[0-9a-f-]{36}$`)));
    const runId = page.url().split("/").pop();
    await runStatus(fx.hitl, runId, "success");
    await eventually(async () => {
      assert.equal(await tid("run-status").textContent(), "success");
      assert.equal(await tid("stream-state").textContent(), "ended");
      assert.ok(await count("[data-testid=event][data-event=updates]") >= 2);
    });
    const state = await api("GET", `/threads/${fx.hitl}/state`);
    assert.deepEqual(state.values, { input: "x", answer: "ok", result: "x:ok" });
    await screenshot(t, "run-resumed");
    await page.goto(ui(`#/threads/${fx.hitl}`));
    await eventually(async () => assert.equal(await tid("thread-status").textContent(), "idle"));
    await eventually(async () => assert.equal(await count("[data-testid=mark-resume]"), 1, "the resumed checkpoint is marked in the tree"));
  });

  step("the inbox lists interrupted threads and resumes one", async (t) => {
    await page.goto(ui("#/inbox"));
    // The hitl thread waits on its question; the fork made above stopped before node_b (no question).
    await eventually(async () => assert.deepEqual(await page.$$eval("[data-testid=inbox-item]", (rs) => rs.map((r) => r.dataset.threadId)).then((l) => l.sort()), [fx.hitlInbox, fx.fork].sort()));
    const item = page.locator(`[data-testid=inbox-item][data-thread-id="${fx.hitlInbox}"]`);
    assert.match(await item.getByTestId("inbox-question").textContent(), /approve\?/);
    assert.match(await page.locator(`[data-testid=inbox-item][data-thread-id="${fx.fork}"]`).textContent(), /Stopped before a node/);
    await screenshot(t, "inbox", { docs: "ui-inbox" });
    await item.getByTestId("inbox-resume-value").fill('"fine"');
    await item.getByTestId("inbox-resume").click();
    await eventually(async () => assert.ok(await item.getByTestId("inbox-resumed").count()));
    const runId = (await item.getByTestId("inbox-run-link").getAttribute("href")).split("/").pop();
    await runStatus(fx.hitlInbox, runId, "success");
    assert.equal((await api("GET", `/threads/${fx.hitlInbox}/state`)).values.result, "y:fine");
  });

  step("a live run: the timeline follows the EventSource to the end, survives a drop (Last-Event-ID), raw frames", async (t) => {
    const slow = (await api("POST", "/threads", { metadata: { fixture: "live" } })).thread_id;
    const run = await api("POST", `/threads/${slow}/runs`, { assistant_id: "slow", input: { ms: 3000, tag: "live" }, stream_mode: ["values", "updates", "debug"] });
    const streamRequests = [];
    const onReq = (r) => r.url().includes(`/runs/${run.run_id}/stream`) && streamRequests.push({ url: r.url(), headers: r.headers() });
    page.on("request", onReq);
    try {
      await page.goto(ui(`#/threads/${slow}/runs/${run.run_id}`));
      await eventually(async () => assert.equal(await tid("stream-state").textContent(), "live"));
      await eventually(async () => assert.ok(await count("[data-testid=event][data-event=updates]") >= 1), 10_000);
      await screenshot(t, "run-live");
      // A dropped connection resumes after the last event it received.
      await tid("stream-drop").click();
      await eventually(async () => assert.equal(await tid("stream-state").textContent(), "ended"), 20_000);
      await eventually(async () => assert.equal(await tid("run-status").textContent(), "success", "the run's record refreshes when its stream ends"));
      const resumed = streamRequests.slice(1);
      assert.ok(resumed.length >= 1, "the stream was opened again");
      const after = Number(new URL(resumed[0].url).searchParams.get("last_event_id") ?? resumed[0].headers["last-event-id"]);
      assert.ok(after >= 1, `resumed with last_event_id ${after}`);
      assert.equal((await api("GET", `/threads/${slow}/runs/${run.run_id}`)).status, "success");
      // Every event of the log arrived once, in order.
      const ids = await page.$$eval("[data-testid=event]", (rs) => rs.map((r) => Number(r.dataset.id)));
      assert.deepEqual(ids, [...ids].sort((x, y) => x - y), "in order");
      assert.equal(new Set(ids).size, ids.length, "no duplicates");
      const log = await (await fetch(`${server.url}/threads/${slow}/runs/${run.run_id}/stream?stream_mode=values,updates,messages-tuple,custom,debug,tasks,checkpoints`, { headers: { "Last-Event-ID": "-1" } })).text();
      const logIds = [...log.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
      assert.deepEqual(ids, logIds, "the timeline holds exactly the replayed log");
      assert.ok(await count("[data-testid=step-divider]") >= 2, "steps are marked");
      await screenshot(t, "run-timeline", { fullPage: true, docs: "ui-run" });
      await tid("view-raw").click();
      const raw = await tid("raw-frames").textContent();
      assert.ok(raw.startsWith("event: metadata\ndata: {"), raw.slice(0, 60));
      assert.match(raw, /event: updates\ndata: \{"first":\{"log":\["first:live"\]\}\}\nid: \d+/);
      await screenshot(t, "run-raw-frames");
      await tid("view-timeline").click();
      // Modes are selectable: updates only.
      for (const m of ["values", "messages-tuple", "custom", "debug", "tasks", "checkpoints"]) await tid("mode-" + m).uncheck();
      await eventually(async () => {
        const names = [...new Set(await page.$$eval("[data-testid=event]", (rs) => rs.map((r) => r.dataset.event)))].sort();
        assert.deepEqual(names, ["metadata", "updates"]);
        assert.equal(await tid("stream-state").textContent(), "ended");
      });
    } finally {
      page.off("request", onReq);
    }
  });

  step("cancel a running run (interrupt) from its page", async (t) => {
    const slow = (await api("POST", "/threads", { metadata: { fixture: "cancel" } })).thread_id;
    const run = await api("POST", `/threads/${slow}/runs`, { assistant_id: "slow", input: { ms: 4000, tag: "c" } });
    await runStatus(slow, run.run_id, "running");
    await page.goto(ui(`#/threads/${slow}/runs/${run.run_id}`));
    await eventually(async () => assert.ok(await count("[data-testid=cancel]")));
    assert.equal(await tid("cancel-curl-text").textContent(), `curl -s -X POST '${server.url}/threads/${slow}/runs/${run.run_id}/cancel?action=interrupt'`);
    await screenshot(t, "run-cancel");
    await tid("cancel-submit").click();
    await runStatus(slow, run.run_id, "interrupted");
    await eventually(async () => {
      assert.equal(await tid("run-status").textContent(), "interrupted");
      assert.equal(await count("[data-testid=cancel]"), 0, "no cancel form on a finished run");
      assert.equal(await tid("stream-state").textContent(), "ended");
    });
    assert.ok(!((await api("GET", `/threads/${slow}/state`)).values.log || []).includes("second:c"), "stopped before the second node");
  });

  step("the dispatch queue: a dead letter with its attempts, retried", async (t) => {
    await page.goto(ui(`#/threads/${fx.ext}/runs/${fx.extRun}`));
    await eventually(async () => {
      assert.equal(await tid("run-status").textContent(), "error");
      assert.equal(await page.locator("[data-testid=dispatch]").getAttribute("data-state"), "dead_letter");
      assert.equal(await page.locator("[data-testid=attempt]").getAttribute("data-outcome"), "nacked");
    });
    assert.match(await tid("attempts").textContent(), /ext-1/);
    assert.match(await tid("attempts").textContent(), /model timed out/);
    // The attempt's audit: its heartbeat, its lease, the commit the fence refused after the nack.
    const attempt = page.locator("[data-testid=attempt]");
    assert.equal(await attempt.getAttribute("data-heartbeats"), "1");
    assert.equal(await attempt.getAttribute("data-fenced"), "1");
    assert.match(await attempt.getByTestId("attempt-heartbeats").textContent(), /^1 · last \+\d/);
    assert.match(await attempt.getByTestId("attempt-lease").textContent(), /^\+\d/);
    assert.equal(await attempt.getByTestId("attempt-fenced").textContent(), "1 refused");
    // No worker ran a step: the event log is empty, and the page says so.
    await eventually(async () => {
      assert.equal(await tid("stream-state").textContent(), "ended");
      assert.match(await tid("no-events").textContent(), /empty/);
    });
    await screenshot(t, "run-attempts", { docs: "ui-attempts" });

    await page.goto(ui("#/queue?state=dead_letter"));
    await tid("live-toggle").click(); // pause the live refresh for a stable view
    const row = page.locator(`[data-testid=dispatch-row][data-dispatch-id="${fx.extDispatch}"]`);
    await eventually(async () => assert.equal(await row.getByTestId("dispatch-error").textContent(), "model timed out"));
    await screenshot(t, "queue-dead-letter", { docs: "ui-queue" });
    await row.getByTestId("retry").click();
    assert.equal(await tid("retry-curl-text").textContent(), `curl -s -X POST '${server.url}/dispatches/${fx.extDispatch}/retry'`);
    await tid("retry-submit").click();
    await eventually(async () => assert.equal(await row.count(), 0, "gone from the dead letters"));
    const d = await api("GET", `/threads/${fx.ext}/runs/${fx.extRun}/dispatches`);
    assert.equal(d[0].state, "queued");
    assert.equal((await api("GET", `/threads/${fx.ext}/runs/${fx.extRun}`)).status, "pending");
    await page.goto(ui("#/queue?state=queued"));
    await eventually(async () => assert.equal(await page.locator(`[data-testid=dispatch-row][data-dispatch-id="${fx.extDispatch}"]`).count(), 1));
    // The external worker takes it and finishes it.
    const claim = await api("POST", "/dispatch/claim", { worker_id: "ext-2", graph_ids: ["ext_graph"], wait_ms: 5000 });
    await api("POST", `/dispatch/${claim[0].dispatch.dispatch_id}/ack`, { claim_token: claim[0].claim_token, status: "success" });
    await runStatus(fx.ext, fx.extRun, "success");
  });

  step("copy a thread, then delete with a strategy (reject refuses, cascade removes the subtree)", async (t) => {
    await page.goto(ui(`#/threads/${fx.fork}`));
    await tid("action-copy-thread").click();
    assert.equal(await page.locator("[data-testid=copy-thread-panel] [data-testid=curl-text]").textContent(), `curl -s -X POST '${server.url}/threads/${fx.fork}/copy'`);
    await tid("copy-thread-submit").click();
    await eventually(async () => assert.notEqual(await tid("thread-id").textContent(), fx.fork));
    const copy = await tid("thread-id").textContent();
    await eventually(async () => assert.equal(await tid("checkpoint-total").textContent(), "7 checkpoints"));

    await page.goto(ui(`#/threads/${fx.parent}`));
    await tid("action-delete-thread").click();
    await tid("strategy-reject").check();
    assert.match(await page.locator("[data-testid=delete-thread-panel] [data-testid=curl-text]").textContent(), /-X DELETE '.*\?strategy=reject'$/);
    expected.push((p) => p === `HTTP 409: DELETE ${server.url}/threads/${fx.parent}?strategy=reject`, (p) => p.startsWith("console error: Failed to load resource: the server responded with a status of 409"));
    await tid("delete-thread-submit").click();
    await eventually(async () => assert.match(await tid("delete-error").textContent(), /^409: .*child/));
    await screenshot(t, "delete-reject");
    await tid("strategy-cascade").check();
    await tid("delete-thread-submit").click();
    await eventually(async () => assert.ok(await count("[data-testid=threads-view]")));
    for (const id of [fx.parent, fx.child]) {
      assert.equal((await fetch(`${server.url}/threads/${id}`)).status, 404, `${id} deleted with its subtree`);
    }
    await fetch(`${server.url}/threads/${copy}`, { method: "DELETE" });
  });

  step("assistants: versions, config, the graph drawn with its subgraph, schemas", async (t) => {
    await page.goto(ui("#/assistants"));
    await eventually(async () => assert.ok(await count("[data-testid=assistant-row][data-graph-id=foo_bar]")));
    await page.locator("[data-testid=assistant-row][data-graph-id=foo_bar] [data-testid=assistant-link]").click();
    await eventually(async () => {
      assert.deepEqual(await page.$$eval("[data-testid=graph-node]", (rs) => rs.map((r) => r.dataset.node)), ["__start__", "node_a", "node_b", "__end__"]);
      assert.equal(await count("[data-testid=graph-edge]"), 3);
    });
    await screenshot(t, "assistant-graph");
    await tid("tab-versions").click();
    await eventually(async () => assert.equal(await count("[data-testid=version]"), 1));
    await tid("tab-schemas").click();
    await eventually(async () => assert.match(await tid("schemas").textContent(), /state_schema/));
    // The external graph's xray drawing boxes its subgraph.
    const ext = (await api("POST", "/assistants/search", { graph_id: "ext_graph" }))[0];
    await page.goto(ui(`#/assistants/${ext.assistant_id}`));
    await eventually(async () => {
      assert.equal(await count("[data-testid=subgraph]"), 1);
      assert.ok(await count("[data-testid=graph-node][data-node='research:search']"));
      assert.equal(await tid("subgraph-names").textContent(), "research");
    });
    await screenshot(t, "assistant-subgraph", { docs: "ui-assistant" });
  });

  step("the store: namespaces as a tree, items, search", async (t) => {
    await page.goto(ui("#/store"));
    await eventually(async () => assert.deepEqual(await page.$$eval("[data-testid=ns-node]", (rs) => rs.map((r) => r.dataset.ns)), ["docs", "users"]));
    await page.locator("[data-testid=ns-node][data-ns=users]").click();
    await eventually(async () => assert.deepEqual(await page.$$eval("[data-testid=ns-node]", (rs) => rs.map((r) => r.dataset.ns)), ["docs", "users", "users.ana", "users.bo"]));
    await page.locator("[data-testid=ns-node][data-ns='users.ana']").click();
    await eventually(async () => assert.deepEqual(await page.$$eval("[data-testid=store-item]", (rs) => rs.map((r) => r.dataset.key).sort()), ["facts", "prefs"]));
    await screenshot(t, "store", { docs: "ui-store" });
    await page.goto(ui("#/store"));
    await tid("store-query").fill("green");
    await tid("store-search").click();
    await eventually(async () => assert.deepEqual(await page.$$eval("[data-testid=store-item]", (rs) => rs.map((r) => r.dataset.key)), ["prefs"]));
  });

  step("a large thread (1,000 messages, 500 checkpoints, built through the API) renders within 1 s", async (t) => {
    const steps = [];
    for (let i = 0; i < 500; i++) {
      steps.push({ updates: [{ as_node: "echo", values: { messages: [
        { type: "human", id: `h${String(i).padStart(4, "0")}`, content: `Question ${i}: what does step ${i} of the plan involve, in a sentence or two?` },
        { type: "ai", id: `a${String(i).padStart(4, "0")}`, content: `Answer ${i}: step ${i} checks the previous result, writes a short note and hands over to the next step.` },
      ] } }] });
    }
    const t0 = Date.now();
    const large = (await api("POST", "/threads", { metadata: { graph_id: "echo_chat", fixture: "large" }, supersteps: steps })).thread_id;
    const built = Date.now() - t0;
    const state = await api("GET", `/threads/${large}/state`);
    assert.equal(state.values.messages.length, 1000);
    const page0 = await api("GET", `/inspect/threads/${large}/checkpoints?limit=1`);
    assert.equal(page0.total, 500);

    // Cold: a new browser context (nothing cached); warm: a reload.
    const measure = async (p, url) => {
      await p.goto("about:blank"); // a new document: performance.now() counts from this navigation
      await p.goto(url);
      return p.waitForFunction(() => {
        const rows = document.querySelectorAll("[data-testid=checkpoint-node]").length;
        const msgs = document.querySelectorAll("[data-testid=conversation] [data-testid=message]").length;
        return rows === 100 && msgs === 50 ? Math.round(performance.now()) : null;
      }, null, { polling: "raf", timeout: 10_000 }).then((h) => h.jsonValue());
    };
    const url = ui(`#/threads/${large}`);
    const cold = await browser.newContext({ viewport: { width: 1360, height: 860 } });
    const coldPage = await cold.newPage();
    watch(coldPage);
    let coldMs;
    try {
      coldMs = await measure(coldPage, url);
    } finally {
      await cold.close();
    }
    await page.goto(url); // the assets are now cached
    const warm = [];
    for (let i = 0; i < 5; i++) warm.push(await measure(page, url));
    const warmMs = Math.min(...warm);
    const load = (await import("node:os")).loadavg()[0].toFixed(1);
    const report = `Thread page of a thread with 500 checkpoints and 1,000 messages (built through POST /threads supersteps in ${built} ms):\n` +
      `time from navigation start (performance.now()) to the first render with the checkpoint tree's first page (100 rows) and the last 50 messages of the state drawn,\n` +
      `headless Chromium on ${new URL(server.url).host}, machine load average ${load}: cold cache (a new browser context: every asset fetched) ${coldMs} ms;\n` +
      `warm (assets cached, as on any later visit; five loads) ${warm.join(" / ")} ms, best ${warmMs} ms. The test requires the best warm load under 1,000 ms.\n`;
    writeFileSync(join(ARTIFACTS, "render-time.txt"), report);
    t.diagnostic(report);
    assert.ok(warmMs < 1000, `first render took ${warmMs} ms at best (${warm.join(", ")})`);

    await eventually(async () => assert.equal(await count("[data-testid=checkpoint-node]"), 100));
    await screenshot(t, "large-thread");
    // Everything is paged: older checkpoints and earlier messages on demand.
    await tid("load-older").click();
    await eventually(async () => assert.equal(await count("[data-testid=checkpoint-node]"), 200));
    await tid("show-earlier").click();
    await eventually(async () => assert.equal(await count("[data-testid=conversation] [data-testid=message]"), 100));
  }, 240_000);

  step("a Python graph's threads (the Python worker): the conversation and its checkpoints, an interrupt inside a subgraph resumed from the UI", async (t) => {
    await withPythonWorker("pyproject", ["chat", "deep_ask"], async () => {
      const chat = (await api("POST", "/threads", { metadata: { fixture: "python" } })).thread_id;
      for (const text of ["hi", "and again"]) {
        await api("POST", `/threads/${chat}/runs/wait`, { assistant_id: "chat", input: { messages: [{ role: "user", content: text }] } });
      }
      const messages = (await api("GET", `/threads/${chat}/state`)).values.messages;
      assert.deepEqual(messages.map((m) => m.type), ["human", "ai", "human", "ai"]);
      await page.goto(ui(`#/threads/${chat}`));
      await eventually(async () => {
        assert.equal(await count("[data-testid=conversation] [data-testid=message]"), 4);
        assert.equal(await count("[data-testid=checkpoint-node]"), (await history(chat)).length);
      });
      assert.match(await tid("conversation").textContent(), /Hello from env: and again/);
      await screenshot(t, "python-chat");

      // An interrupt raised inside a subgraph: the thread waits on it, and the
      // UI resumes it as it resumes a Go or JS graph's.
      const ask = (await api("POST", "/threads", { metadata: { fixture: "python-ask" } })).thread_id;
      await api("POST", `/threads/${ask}/runs/wait`, { assistant_id: "deep_ask", input: { question: "ship it?" } });
      await page.goto(ui(`#/threads/${ask}`));
      await eventually(async () => {
        assert.equal(await tid("thread-status").textContent(), "interrupted");
        assert.match(await tid("interrupt").first().textContent(), /ship it\?/);
      });
      await screenshot(t, "python-interrupt");
      await tid("tab-travel").click();
      await tid("resume-value").fill('"yes"');
      await tid("resume-submit").click();
      await eventually(async () => assert.match(page.url(), new RegExp(`#/threads/${ask}/runs/[0-9a-f-]{36}$`)));
      await runStatus(ask, page.url().split("/").pop(), "success");
      const state = await api("GET", `/threads/${ask}/state`);
      assert.deepEqual(state.values.log, ["prepared", "answered yes"]);
      await page.goto(ui(`#/threads/${ask}`));
      await eventually(async () => assert.equal(await tid("thread-status").textContent(), "idle"));
    });
  }, 120_000);

  step("a deep agent's thread (deepagents through the Python worker): its conversation, todos and files", async (t) => {
    await withPythonWorker("pyagents", ["deep"], async () => {
      // The scripted model plans (todos), writes a file, asks the researcher
      // subagent, whose lookup waits for a human; approved, it answers.
      const deep = (await api("POST", "/threads", { metadata: { fixture: "deep-agent" } })).thread_id;
      const input = { messages: [{ role: "user", content: "plan cats" }] };
      await api("POST", `/threads/${deep}/runs/wait`, { assistant_id: "deep", input });
      await api("POST", `/threads/${deep}/runs/wait`, { assistant_id: "deep", command: { resume: { decisions: [{ type: "approve" }] } } });
      const values = (await api("GET", `/threads/${deep}/state`)).values;
      assert.equal(values.messages.at(-1).content, "Finished cats: research result: facts on find facts about cats");
      await page.goto(ui(`#/threads/${deep}`));
      const channel = (name) => page.locator(`[data-testid=channel][data-channel="${name}"]`);
      await eventually(async () => {
        assert.equal(await count("[data-testid=conversation] [data-testid=message]"), values.messages.length);
        assert.match(await tid("conversation").textContent(), /Finished cats: research result/);
        assert.match(await channel("todos").textContent(), /todos \[2\]/);
        assert.match(await channel("files").textContent(), /\/notes\.md/);
      });
      // Each todo and the file open to what the agent wrote.
      for (const name of ["todos", "files"]) {
        const closed = channel(name).locator(".j-toggle[aria-expanded=false]");
        while (await closed.count()) await closed.first().click();
      }
      assert.match(await channel("todos").textContent(), /"research cats".*"in_progress".*"write notes".*"pending"/);
      assert.match(await channel("files").textContent(), /"# cats\\nstarted\\n"/);
      assert.doesNotMatch(await tid("checkpoint-detail").textContent(), /__weft_unresolved__|delta_channel/);
      await screenshot(t, "deep-agent");
    }, 90_000);
  }, 150_000);

  step("deep links: a run and a checkpoint tab reload to the same view; an unknown thread is an error, not a crash", async () => {
    await page.goto(ui(`#/threads/${fx.fork}/runs/${fx.forkRun}`));
    await eventually(async () => assert.equal(await tid("run-view").getAttribute("data-run-id"), fx.forkRun));
    await page.reload();
    await eventually(async () => assert.equal(await tid("run-status").textContent(), "success"));
    await page.goto(ui(`#/threads/${fx.fork}/checkpoints/${fx.step1}?tab=versions`));
    await page.reload();
    await eventually(async () => assert.ok(await count("[data-testid=versions-tab]")));
    expected.push((p) => p.startsWith("HTTP 404: GET ") && p.includes("/threads/00000000-0000-4000-8000-000000000000/"),
      (p) => p.startsWith("console error: Failed to load resource: the server responded with a status of 404"));
    await page.goto(ui("#/threads/00000000-0000-4000-8000-000000000000"));
    await eventually(async () => assert.match(await tid("error").textContent(), /^404: /));
  });
});
