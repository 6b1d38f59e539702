// Helpers shared by the SDK test files.

import assert from "node:assert/strict";
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
