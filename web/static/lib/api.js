// The one way the UI talks to Weft: same-origin fetches of the public HTTP
// API. Every call is recorded (method, path, body, status, duration) so the
// "API calls" drawer can show it, and curl() renders any call as a command a
// person can repeat.

export class ApiError extends Error {
  constructor(status, detail, method, path) {
    super(`${method} ${path}: ${status} ${detail}`);
    this.status = status;
    this.detail = detail;
  }
}

// With auth on (WEFT_AUTH=keys or jwt) every API call carries the key or
// token the user pasted, as x-api-key. It lives in sessionStorage: gone
// when the tab closes, never sent to another origin, never in a URL.
const KEY_ITEM = "weft.apiKey";

/** The API key (or token) the UI sends, "" when none. */
export function apiKey() {
  try {
    return sessionStorage.getItem(KEY_ITEM) || "";
  } catch {
    return "";
  }
}

/** Stores the key for this tab ("" forgets it). */
export function setApiKey(key) {
  if (key) sessionStorage.setItem(KEY_ITEM, key);
  else sessionStorage.removeItem(KEY_ITEM);
}

/** The headers that authenticate a request ({} without a key). */
export function authHeaders() {
  const k = apiKey();
  return k ? { "x-api-key": k } : {};
}

const authListeners = new Set();

/** Subscribes fn to "the server wants a (valid) key" (a 401); returns the unsubscribe function. */
export function onAuthRequired(fn) {
  authListeners.add(fn);
  return () => authListeners.delete(fn);
}

const log = [];
const listeners = new Set();
let seq = 0;

/** Subscribes fn to the call log; returns the unsubscribe function. */
export function onCalls(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/** The recorded calls, newest last (at most 200). */
export const calls = () => log.slice();

function record(entry) {
  log.push(entry);
  if (log.length > 200) log.shift();
  for (const fn of listeners) fn(log);
}

/**
 * The API's base path: the directory the page is served from ("" at the
 * server's root, "/api" under the mount prefix /api). Every call's path is
 * an API path ("/threads/…") and goes to base + path.
 */
export const base = new URL(".", document.baseURI).pathname.replace(/\/$/, "");

/** The URL of an API path (for an EventSource). */
export const apiURL = (path) => base + path;

/** path with the query object appended (undefined, null and "" values are left out). */
export function withQuery(path, query) {
  if (!query) return path;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null || v === "") continue;
    for (const item of Array.isArray(v) ? v : [v]) q.append(k, String(item));
  }
  const s = q.toString();
  return s ? `${path}${path.includes("?") ? "&" : "?"}${s}` : path;
}

/**
 * Sends a request and resolves to {status, headers, data}: data is the
 * parsed JSON body (null for an empty one). A status >= 400 rejects with an
 * ApiError carrying the server's detail.
 */
export async function request(method, path, { body, query, headers = {}, signal } = {}) {
  const url = withQuery(path, query);
  // Accept: JSON error bodies even from a server answering errors as text.
  const init = { method, headers: { Accept: "application/json", ...authHeaders(), ...headers }, signal };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers["Content-Type"] = "application/json";
  }
  const entry = { id: ++seq, method, path: url, body, status: null, ms: null, at: new Date() };
  const t0 = performance.now();
  let res;
  try {
    res = await fetch(base + url, init);
  } catch (e) {
    entry.status = "failed";
    record(entry);
    throw e;
  }
  const text = await res.text();
  entry.status = res.status;
  entry.ms = Math.round(performance.now() - t0);
  record(entry);
  let data = null;
  if (text.trim()) {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  }
  if (res.status === 401) for (const fn of authListeners) fn(data && data.detail);
  if (res.status >= 400) {
    throw new ApiError(res.status, (data && data.detail) || res.statusText, method, url);
  }
  announce(method, url);
  return { status: res.status, headers: res.headers, data };
}

export const get = (path, query, opts) => request("GET", path, { ...opts, query }).then((r) => r.data);
export const post = (path, body, opts) => request("POST", path, { ...opts, body }).then((r) => r.data);

// Writes the UI makes are announced, so views showing the data reload.
const changeListeners = new Set();
const READS = [/\/search$/, /\/count$/, /\/history$/, /\/state\/checkpoint$/, /\/namespaces$/, /\/versions$/];

/** Subscribes fn to "the UI changed something"; returns the unsubscribe function. */
export function onChanged(fn) {
  changeListeners.add(fn);
  return () => changeListeners.delete(fn);
}

function announce(method, path) {
  if (method === "GET" || READS.some((r) => r.test(path.split("?")[0]))) return;
  for (const fn of changeListeners) fn();
}

/** Records a call the UI made another way (an EventSource), for the drawer. */
export function recordStream(path) {
  record({ id: ++seq, method: "GET", path, body: undefined, status: "stream", ms: null, at: new Date() });
}

function shellQuote(s) {
  return `'${String(s).replace(/'/g, `'\\''`)}'`;
}

/** The call as a curl command against this server (the key as $WEFT_API_KEY, never its value). */
export function curl(method, path, body, headers = {}) {
  const parts = ["curl -s"];
  if (method !== "GET") parts.push(`-X ${method}`);
  parts.push(shellQuote(location.origin + base + path));
  if (apiKey()) parts.push(`-H "x-api-key: $WEFT_API_KEY"`);
  for (const [k, v] of Object.entries(headers)) parts.push(`-H ${shellQuote(`${k}: ${v}`)}`);
  if (body !== undefined) {
    parts.push(`-H 'Content-Type: application/json'`);
    parts.push(`-d ${shellQuote(JSON.stringify(body))}`);
  }
  return parts.join(" ");
}
