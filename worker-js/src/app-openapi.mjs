// The OpenAPI description of a project's http.app, which weft dev merges
// into the document it serves (GET /openapi.json): the server asks for it
// on the app's socket, at OPENAPI_PATH with the app's pass.
//
// A Hono app is described by its routes: each path (":id" parameters as
// "{id}") with its methods (a route for every method, app.all, as get,
// post, put, patch and delete), the app's middleware left out; the paths
// are all a Hono app tells. Any other fetch handler has no route table:
// nothing is described.

/** Where the server asks for the app's description. */
export const OPENAPI_PATH = "/__weft/openapi.json";

const METHODS = ["get", "post", "put", "patch", "delete"];

/** A handler Hono runs as middleware (it takes next), as Hono itself tells them apart (as http-app.mjs does). */
function isMiddleware(handler) {
  while (handler?.__COMPOSED_HANDLER) handler = handler.__COMPOSED_HANDLER; // a sub-app's, wrapped
  return handler.length > 1;
}

/** A Hono path as an OpenAPI path and its parameters' names; null for a wildcard path. */
function openapiPath(path) {
  if (path.includes("*")) return null;
  const params = [];
  const out = path.replace(/:([A-Za-z0-9_]+)(\{[^}]*\})?\??/g, (_, name) => {
    params.push(name);
    return `{${name}}`;
  });
  return { path: out, params };
}

/** The OpenAPI document describing app's routes. */
export function appDocument(app) {
  const paths = {};
  if (Array.isArray(app?.routes)) {
    for (const route of app.routes) {
      if (typeof route?.path !== "string" || isMiddleware(route.handler)) continue;
      const p = openapiPath(route.path);
      if (!p) continue;
      const methods = route.method === "ALL" ? METHODS : [String(route.method).toLowerCase()];
      for (const method of methods) {
        if (!METHODS.includes(method)) continue;
        const item = (paths[p.path] ??= {});
        item[method] ??= {
          summary: `${method.toUpperCase()} ${p.path}`,
          description: "A route of the project's http.app.",
          tags: ["http.app"],
          ...(p.params.length
            ? { parameters: p.params.map((name) => ({ name, in: "path", required: true, schema: { type: "string" } })) }
            : {}),
          responses: { default: { description: "The app's answer" } },
        };
      }
    }
  }
  return { openapi: "3.0.3", info: { title: "http.app", version: "0" }, paths };
}

/** The answer to the server's request for the description, or null for any other request. */
export function openapiAnswer(request, pass, doc) {
  if (request.method !== "GET" || new URL(request.url).pathname !== OPENAPI_PATH) return null;
  if (!pass || request.headers.get("x-weft-app-pass") !== pass) return null; // the app's, then
  return new Response(JSON.stringify(doc ?? appDocument(null)), { headers: { "content-type": "application/json" } });
}
