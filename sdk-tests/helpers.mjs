// Helpers shared by the SDK test files.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { Client } from "./sdk.mjs";

/**
 * A Client whose every HTTP attempt (SDK retries included) is recorded —
 * method, URL, headers and JSON body — so a test can see what one SDK call
 * sent and how many requests it made.
 */
export function recordingClient(apiUrl) {
  const requests = [];
  const recordingFetch = (input, init) => {
    requests.push({
      url: String(input),
      method: init?.method ?? "GET",
      headers: new Headers(init?.headers),
      body: typeof init?.body === "string" ? JSON.parse(init.body) : undefined,
    });
    return fetch(input, init);
  };
  const client = new Client({ apiUrl, callerOptions: { fetch: recordingFetch } });
  return { client, requests };
}

/** Awaits an SDK call that must fail with HTTP `status` and a {"detail"} body; returns the error. */
export async function rejectsWith(promise, status) {
  let err;
  try {
    await promise;
  } catch (e) {
    err = e;
  }
  assert.ok(err, `expected HTTP ${status}, but the call succeeded`);
  assert.equal(err.constructor.name, "HTTPError", `expected the SDK's HTTPError, got ${err}`);
  assert.equal(err.status, status, `expected HTTP ${status}, got ${err.message}`);
  assert.match(err.message, new RegExp(`^HTTP ${status}: `));
  // Official servers answer errors with {"detail": "..."}; the SDK keeps the raw body in .text.
  const body = JSON.parse(err.text);
  assert.equal(typeof body.detail, "string");
  assert.ok(body.detail.length > 0);
  return err;
}

/**
 * Polls threads.get until the thread is gone (404; at most ms): a stateless
 * run's temporary thread is deleted right after its result is delivered,
 * not before the answer.
 */
export async function threadGone(client, threadId, ms = 10_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      await client.threads.get(threadId);
    } catch (err) {
      if (err.status === 404) return rejectsWith(client.threads.get(threadId), 404);
      throw err;
    }
    if (Date.now() > deadline) assert.fail(`thread ${threadId} still exists ${ms} ms after its stateless run's result`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Polls runs.get until the run has `status` (at most ms); returns the run. */
export async function waitForStatus(client, threadId, runId, status, ms = 10_000) {
  const deadline = Date.now() + ms;
  let run;
  while (Date.now() < deadline) {
    run = await client.runs.get(threadId, runId);
    if (run.status === status) return run;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`run ${runId} did not reach status ${status} within ${ms} ms; last: ${JSON.stringify(run)}`);
}

/** A fresh thread bound to nothing, tagged with its suite and a random tag so a shared server's other threads do not matter. */
export async function newTaggedThread(client, suite) {
  const t = await client.threads.create({ metadata: { suite, tag: randomUUID() } });
  return t.thread_id;
}

/** Drains an SDK stream into an array of its chunks. */
export async function collect(gen) {
  const out = [];
  for await (const chunk of gen) out.push(chunk);
  return out;
}

/** Requests made to a stream endpoint (POST …/runs/stream or GET …/stream). */
export const streamRequests = (requests) => requests.filter((r) => new URL(r.url).pathname.endsWith("/stream"));

/**
 * Plain fetch for what the SDK cannot express (or pre-validates away);
 * returns { status, headers, body (parsed JSON or undefined), text }.
 */
export async function rawRequest(baseUrl, method, path, body, headers = {}) {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, body: json, text };
}

/** Asserts a raw response is a 4xx `status` with a {"detail": string} body. */
export function assertDetail(res, status) {
  assert.equal(res.status, status, `expected HTTP ${status}, got ${res.status}: ${res.text}`);
  assert.equal(typeof res.body?.detail, "string", `no {"detail"} in ${res.text}`);
  assert.ok(res.body.detail.length > 0);
}
