// The description of a project's Hono http.app that weft dev merges into
// its OpenAPI document (src/app-openapi.mjs): each route's path and methods
// (":id" as "{id}", with a path parameter), every method for app.all, the
// middleware and wildcard paths left out; answered only to the server (the
// app's pass), any other request going on to the app.

import { test } from "node:test";
import assert from "node:assert/strict";
import { Hono } from "hono";
import { appDocument, openapiAnswer, OPENAPI_PATH } from "../src/app-openapi.mjs";

test("a Hono app's routes as OpenAPI paths", async () => {
  const sub = new Hono().get("/:report_id{[0-9]+}", (c) => c.text("r"));
  const app = new Hono()
    .use(async (_c, next) => next())
    .use("/custom/*", async (_c, next) => next())
    .get("/custom/items/:item_id", (c) => c.json({}))
    .post("/custom/items", (c) => c.json({}))
    .all("/custom/any", (c) => c.json({}))
    .get("/custom/files/*", (c) => c.text(""))
    .route("/custom/reports", sub);
  const doc = appDocument(app);
  assert.deepEqual(Object.keys(doc.paths).sort(),
    ["/custom/any", "/custom/items", "/custom/items/{item_id}", "/custom/reports/{report_id}"]);
  assert.deepEqual(Object.keys(doc.paths["/custom/any"]).sort(), ["delete", "get", "patch", "post", "put"]);
  assert.deepEqual(Object.keys(doc.paths["/custom/items"]), ["post"]);
  assert.deepEqual(doc.paths["/custom/items/{item_id}"].get.parameters,
    [{ name: "item_id", in: "path", required: true, schema: { type: "string" } }]);
  assert.ok(doc.paths["/custom/items/{item_id}"].get.responses.default);
  assert.deepEqual(appDocument((req) => new Response("")).paths, {}, "a fetch handler tells no routes");

  const ask = (headers) => openapiAnswer(new Request("http://app" + OPENAPI_PATH, { headers }), "secret", doc);
  const res = ask({ "x-weft-app-pass": "secret" });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), doc);
  assert.equal(ask({ "x-weft-app-pass": "guess" }), null, "without the pass the request is the app's");
  assert.equal(ask({}), null);
  assert.equal(openapiAnswer(new Request("http://app/custom/items"), "secret", doc), null);
});
