// HTTP client of Weft's worker API.

import https from "node:https";
import { HTTP1Pool } from "./http1.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** An HTTP error answer of the server: status and its {"detail"}. */
export class WeftHTTPError extends Error {
  constructor(status, detail, path) {
    super(`${path}: ${status} ${detail}`);
    this.name = "WeftHTTPError";
    this.status = status;
    this.detail = detail;
  }
}

/** True for an answer that means "this claim is gone" (409 fenced, 404). */
export const isFenced = (err) => err instanceof WeftHTTPError && (err.status === 409 || err.status === 404);

/**
 * send makes one request with node:https over a keep-alive agent (cheaper
 * per request than fetch, which matters at a few requests per run) and
 * resolves to {status, retryAfter, text}. It fails when the answer is not
 * complete within timeoutMs (one timer, not a signal per request).
 */
function send(base, agent, method, path, headers, payload, signal, timeoutMs) {
  return new Promise((resolve, reject) => {
    const opts = { protocol: base.protocol, hostname: base.hostname, port: base.port, path: base.pathname + path, method, agent, headers };
    if (signal) opts.signal = signal;
    const req = https.request(opts, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode, retryAfter: res.headers["retry-after"], text: Buffer.concat(chunks).toString("utf8") });
      });
      res.on("error", (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    const timer = setTimeout(() => req.destroy(Object.assign(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`), { name: "TimeoutError" })), timeoutMs);
    req.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end(payload);
  });
}

/**
 * WeftClient sends JSON requests to one server. Connection failures, 502,
 * 503 and 504 are retried with backoff (the worker API calls it makes are
 * idempotent: commits carry a commit_id); any other non-2xx is a
 * WeftHTTPError.
 */
export class WeftClient {
  constructor(url, { retries = 8, timeoutMs = 60_000, headers = {} } = {}) {
    this.url = url.replace(/\/$/, "");
    this.retries = retries;
    this.timeoutMs = timeoutMs;
    this.headers = headers;
    const base = new URL(this.url);
    // Requests name the parts, not a URL to parse again each time.
    this.base = { protocol: base.protocol, hostname: base.hostname.replace(/^\[|\]$/g, ""), port: base.port, pathname: base.pathname.replace(/\/$/, "") };
    // Plain http: (a worker next to its server) goes through the lean
    // keep-alive client; https: through node:https.
    if (base.protocol === "http:") this.pool = new HTTP1Pool(this.base.hostname, base.port || 80);
    else this.agent = new https.Agent({ keepAlive: true, scheduling: "lifo" });
  }

  /** Closes the keep-alive connections. */
  close() {
    this.pool?.close();
    this.agent?.destroy();
  }

  async post(path, body, { signal, retries = this.retries, timeoutMs = this.timeoutMs, headers } = {}) {
    return this.request("POST", path, body, { signal, retries, timeoutMs, headers });
  }

  /** Sends one request; opts.headers are added to this request's headers (a run's traceparent). */
  async request(method, path, body, { signal, retries = this.retries, timeoutMs = this.timeoutMs, rawBody, headers: extra } = {}) {
    const payload = rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
    const headers = { "content-type": "application/json", accept: "application/json", ...this.headers, ...extra };
    if (payload !== undefined) headers["content-length"] = Buffer.byteLength(payload);
    let delay = 100;
    for (let attempt = 0; ; attempt++) {
      let res;
      try {
        res = this.pool
          ? await this.pool.request(method, this.base.pathname + path, headers, payload, signal, timeoutMs)
          : await send(this.base, this.agent, method, path, headers, payload, signal, timeoutMs);
      } catch (err) {
        if (signal?.aborted || attempt >= retries) throw err;
        await sleep(delay);
        delay = Math.min(delay * 2, 2_000);
        continue;
      }
      if ([502, 503, 504].includes(res.status) && attempt < retries) {
        const after = Number(res.retryAfter);
        await sleep(after > 0 ? Math.min(after * 1000, 5_000) : delay);
        delay = Math.min(delay * 2, 2_000);
        continue;
      }
      const text = res.text;
      if (res.status < 200 || res.status > 299) {
        let detail = text;
        try {
          detail = JSON.parse(text).detail ?? text;
        } catch {}
        throw new WeftHTTPError(res.status, detail, path);
      }
      return text ? JSON.parse(text) : null;
    }
  }
}
