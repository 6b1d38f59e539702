// A project's langgraph.json "http.app" (custom routes and middleware) and
// "ui" (generative UI components), served to the Weft server on a unix
// socket. The server sends this worker every request but its worker API and
// health probes (http.app), or the /ui/{graph} ones (ui alone):
//
// - the project's app (a Hono app, as LangGraph.js's server takes) sees each
//   request first: its routes answer theirs, its middleware runs around
//   everything; what no route of the app answers goes on to the Weft API,
//   through the app's middleware, which may change the request on the way
//   in and the answer on the way out;
// - the ui entries are bundled at start by @langchain/langgraph-ui (the
//   project's own, as with LangGraph's CLI) and served as LangGraph's server
//   serves them: POST /ui/{graph} answers the HTML that loads a component,
//   GET /ui/{graph}/{file} the bundle's files.
//
// The API is reached at the server's own URL with a pass header (WEFT_APP_PASS)
// that tells the server's front the request comes back from the app.
//
// With http.enable_custom_route_auth and an auth.path (WEFT_APP_ROUTE_AUTH=server),
// a request one of the app's routes answers is authenticated first, as
// LangGraph.js's server authenticates it: the server runs auth.path's
// authenticate handler (the same request back, with the pass and
// x-weft-app-authenticate) and answers the user, which the app's handlers
// and middleware read as c.get("auth") ({user, scopes}), or the API's answer
// to a request that failed authentication, which goes to the client as it is.

import { createServer } from "node:http";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, extname, join, resolve } from "node:path";
import { Readable } from "node:stream";
import { pathToFileURL } from "node:url";
import { appDocument, openapiAnswer } from "./app-openapi.mjs";
import { isJsPath, loadExport } from "./auth.mjs";

/** The header with which a request the app passes on reaches the API. */
export const PASS_HEADER = "x-weft-app-pass";
/** With the pass: authenticate this request (to one of the app's routes) rather than serve it. */
export const AUTHENTICATE_HEADER = "x-weft-app-authenticate";
/** With AUTHENTICATE_HEADER: the Host the client called (fetch cannot send Host). */
export const HOST_HEADER = "x-weft-app-host";

const HOP_HEADERS = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "host", "content-length"]);

const MIME = { ".js": "application/javascript", ".mjs": "application/javascript", ".css": "text/css", ".map": "application/json" };

/** Imports a package as the project at dir resolves it. */
async function importFromProject(dir, name) {
  const req = createRequire(join(dir, "package.json"));
  return import(pathToFileURL(req.resolve(name)).href);
}

/** request's headers for the API: without hop-by-hop ones, with the pass. */
function apiHeaders(request, pass) {
  const headers = new Headers();
  for (const [k, v] of request.headers) if (!HOP_HEADERS.has(k)) headers.append(k, v);
  headers.set(PASS_HEADER, pass);
  return headers;
}

/** The API's answer res as this server's answer. */
function relay(res) {
  const out = new Headers();
  for (const [k, v] of res.headers) if (!HOP_HEADERS.has(k) && k !== "content-encoding") out.append(k, v);
  return new Response(res.body, { status: res.status, headers: out });
}

/**
 * The handler of requests the app passes on: the same request (its body as
 * the app's middleware left it) to the API at apiUrl, with the pass header.
 */
function forwarder(apiUrl, pass) {
  return async (request) => {
    const url = new URL(request.url);
    const hasBody = request.method !== "GET" && request.method !== "HEAD";
    const res = await fetch(apiUrl + url.pathname + url.search, {
      method: request.method,
      headers: apiHeaders(request, pass),
      body: hasBody ? await request.arrayBuffer() : undefined,
      redirect: "manual",
    });
    return relay(res);
  };
}

/**
 * Asks the server at apiUrl to authenticate request (its method, URL and
 * headers; not its body) with auth.path's authenticate handler: {user,
 * scopes}, or the server's answer to a request that failed authentication
 * (a Response, for the client).
 */
function authenticator(apiUrl, pass) {
  return async (request) => {
    const url = new URL(request.url);
    const headers = apiHeaders(request, pass);
    headers.set(AUTHENTICATE_HEADER, "1");
    headers.set(HOST_HEADER, request.headers.get("host") ?? url.host);
    const res = await fetch(apiUrl + url.pathname + url.search, { method: request.method, headers, redirect: "manual" });
    if (res.status === 200) return res.json();
    return relay(res);
  };
}

/** A handler Hono runs as middleware (it takes next), as Hono itself tells them apart. */
function isMiddleware(handler) {
  while (handler?.__COMPOSED_HANDLER) handler = handler.__COMPOSED_HANDLER; // a sub-app's, wrapped
  return handler.length > 1;
}

/** Whether one of the Hono app's routes (not only its middleware) answers request. */
export function isRoute(app, request) {
  const method = request.method === "HEAD" ? "GET" : request.method;
  const path = typeof app.getPath === "function" ? app.getPath(request) : new URL(request.url).pathname;
  const [handlers] = app.router.match(method, path);
  return handlers.some((h) => !isMiddleware(h[0][0]));
}

/**
 * The middleware that authenticates a request to one of the app's routes
 * before the app sees it, as LangGraph.js's server's auth middleware does
 * (which leaves /info and GET /ui… alone): a failure is the server's
 * answer; the user is c.get("auth"). route(request) tells whether the app
 * has a route for request.
 */
function routeAuth(authenticate, route) {
  return async (c, next) => {
    const request = c.req.raw;
    const path = new URL(request.url).pathname;
    if (path === "/info" || (request.method === "GET" && path.startsWith("/ui")) || !route(request)) return next();
    const who = await authenticate(request);
    if (who instanceof Response) return who;
    if (who.user) c.set("auth", { user: who.user, scopes: who.scopes ?? [] });
    await next();
  };
}

/**
 * The fetch handler of the project's app with the API behind it: a Hono app
 * is mounted in an outer Hono app whose last route passes every request on,
 * so the app's middleware wraps the API as on LangGraph's server; any other
 * fetch handler answers first, and its 404s are passed on. With
 * authenticate, requests to the app's routes are authenticated first (every
 * request, for a fetch handler: its routes are not known).
 */
async function appHandler(app, dir, forward, authenticate) {
  if (typeof app?.route === "function" && Array.isArray(app.routes)) {
    const { Hono } = await importFromProject(dir, "hono");
    const outer = new Hono();
    if (authenticate) outer.use(routeAuth(authenticate, (request) => isRoute(app, request)));
    outer.route("/", app);
    // A body the app's middleware read (Hono keeps it) goes on as read.
    outer.all("*", async (c) => forward(c.req.raw.bodyUsed ? await rebuild(c) : c.req.raw));
    return (request) => outer.fetch(request);
  }
  const fetchFn = typeof app === "function" ? app : app?.fetch?.bind(app);
  if (typeof fetchFn !== "function") throw new Error("http.app: the export is neither a Hono app nor a fetch handler");
  return async (request) => {
    if (authenticate) {
      const who = await authenticate(request);
      if (who instanceof Response) return who;
    }
    const res = await fetchFn(request.clone());
    return res.status === 404 ? forward(request) : res;
  };
}

/** A Request like the context's, with the body its middleware read (Hono caches it). */
async function rebuild(c) {
  const body = await c.req.arrayBuffer();
  return new Request(c.req.raw.url, { method: c.req.raw.method, headers: c.req.raw.headers, body });
}

/** Bundles the config's ui entries with @langchain/langgraph-ui: {graph: [{basename, contents}]}. */
async function buildUI(defs, dir, uiConfig, log) {
  let api;
  try {
    api = await importFromProject(dir, "@langchain/langgraph-ui");
  } catch {
    throw new Error("langgraph.json's ui needs @langchain/langgraph-ui in the project (npm install -D @langchain/langgraph-ui)");
  }
  const out = mkdtempSync(join(tmpdir(), "weft-ui-"));
  const started = Date.now();
  try {
    await api.build({ cwd: dir, defs, config: uiConfig ?? {}, output: out });
    const files = {};
    for (const graph of Object.keys(defs)) {
      const folder = join(out, "public", graph);
      files[graph] = existsSync(folder)
        ? readdirSync(folder).map((basename) => ({ basename, contents: readFileSync(join(folder, basename)) }))
        : [];
    }
    log("info", "generative UI built", { graphs: Object.keys(defs), ms: Date.now() - started });
    return files;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** Answers a /ui/ request from the built files, or null when it is not one. */
async function uiAnswer(request, files) {
  const url = new URL(request.url);
  const parts = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] !== "ui") return null;
  if (request.method === "POST" && parts.length === 2) {
    const agent = parts[1];
    const list = files[agent];
    if (!list?.length) return new Response(`UI not found for agent "${agent}"`, { status: 404 });
    let name;
    try {
      name = (await request.json())?.name;
    } catch {
      name = undefined;
    }
    if (typeof name !== "string") return new Response("Invalid body: name must be a string", { status: 422 });
    const host = request.headers.get("host") ?? "";
    const local = /^(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/.test(host);
    const base = `${local ? "http:" : ""}//${host}/ui/${agent}`;
    const global = `__LGUI_${agent.replace(/[^a-zA-Z0-9]/g, "_")}`;
    const html = [];
    for (const f of list.filter((f) => extname(f.basename) === ".css")) html.push(`<link rel="stylesheet" href="${base}/${f.basename}" />`);
    const js = list.find((f) => extname(f.basename) === ".js");
    if (js) html.push(`<script src="${base}/${js.basename}" onload='${global}.render(${JSON.stringify(name)}, "{{shadowRootId}}")'></script>`);
    return new Response(html.join("\n"), { headers: { "content-type": "text/html" } });
  }
  if ((request.method === "GET" || request.method === "HEAD") && parts.length === 3 && files[parts[1]]) {
    const file = files[parts[1]].find((f) => f.basename === parts[2]);
    if (!file) return new Response("File not found", { status: 404 });
    return new Response(request.method === "HEAD" ? null : file.contents, {
      headers: { "content-type": MIME[extname(file.basename)] ?? "application/octet-stream" },
    });
  }
  return null;
}

/** Serves fetch(Request) → Response on a unix socket, streaming both bodies. */
function serveFetch(socket, handle, log) {
  if (existsSync(socket)) unlinkSync(socket);
  const server = createServer(async (req, res) => {
    try {
      const headers = new Headers();
      for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
      const hasBody = req.method !== "GET" && req.method !== "HEAD";
      const request = new Request(new URL(req.url, `http://${req.headers.host ?? "app"}`), {
        method: req.method,
        headers,
        body: hasBody ? Readable.toWeb(req) : undefined,
        duplex: "half",
      });
      const response = await handle(request);
      const out = {};
      for (const [k, v] of response.headers) if (k !== "set-cookie") out[k] = v;
      const cookies = response.headers.getSetCookie?.() ?? [];
      if (cookies.length) out["set-cookie"] = cookies;
      res.writeHead(response.status, out);
      if (response.body && req.method !== "HEAD") {
        for await (const chunk of response.body) res.write(chunk);
      }
      res.end();
    } catch (err) {
      log("error", "http.app request failed", { method: req.method, url: req.url, error: err?.stack ?? String(err) });
      if (!res.headersSent) {
        res.writeHead(500, { "content-type": "text/plain" });
        res.end("Internal Server Error");
      } else {
        res.destroy();
      }
    }
  });
  return new Promise((ok, fail) => {
    server.once("error", fail);
    server.listen(socket, () => ok(server));
  });
}

/**
 * Loads the http.app (a JS one: a Python http.app is the Python worker's)
 * and builds the ui of the langgraph.json at config, and serves them on
 * socket; requests passed on go to apiUrl with pass. routeAuth "server":
 * the app's routes are authenticated by the server first.
 */
export async function startHttpApp(config, socket, { apiUrl, pass, routeAuth = "", log = () => {} }) {
  const abs = resolve(config);
  const dir = dirname(abs);
  const cfg = JSON.parse(readFileSync(abs, "utf8"));
  const base = apiUrl.replace(/\/+$/, "");
  const forward = forwarder(base, pass);
  const spec = cfg.http?.app && isJsPath(cfg.http.app) ? cfg.http.app : null;
  let app = forward;
  let described = null; // the app's routes, for the server's OpenAPI document (app-openapi.mjs)
  if (spec) {
    const { value } = await loadExport(spec, dir);
    described = appDocument(value);
    app = await appHandler(value, dir, forward, routeAuth === "server" ? authenticator(base, pass) : null);
  }
  // http.disable_ui: no ui served (the server answers 404 for /ui/).
  const files = cfg.ui && !cfg.http?.disable_ui ? await buildUI(cfg.ui, dir, cfg.ui_config, log) : {};
  const server = await serveFetch(socket, async (request) => openapiAnswer(request, pass, described) ?? (await uiAnswer(request, files)) ?? app(request), log);
  log("info", "serving the project's http.app and ui", { app: spec, ui: Object.keys(files), socket, route_auth: routeAuth === "server" });
  return server;
}
