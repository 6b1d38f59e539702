// Which requests are to one of a Hono http.app's routes (src/http-app.mjs):
// those http.enable_custom_route_auth authenticates before the app runs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Hono } from "hono";
import { isRoute } from "../src/http-app.mjs";

test("isRoute: a route answers, middleware alone does not", () => {
  const sub = new Hono().onError((err, c) => c.text("sub failed", 500)).get("/b", (c) => c.text("b"));
  const validate = async (c, next) => next();
  const app = new Hono()
    .use(async (c, next) => next())
    .use("/api/*", async (c, next) => next())
    .get("/a", (c) => c.text("a"))
    .post("/v", validate, (c) => c.text("v"))
    .all("/any", (c) => c.text("any"))
    .route("/sub", sub);
  const req = (method, path) => new Request(`http://x${path}`, { method });
  assert.equal(isRoute(app, req("GET", "/a")), true);
  assert.equal(isRoute(app, req("HEAD", "/a")), true);
  assert.equal(isRoute(app, req("POST", "/a")), false);
  assert.equal(isRoute(app, req("POST", "/v")), true);
  assert.equal(isRoute(app, req("DELETE", "/any")), true);
  assert.equal(isRoute(app, req("GET", "/sub/b")), true); // a sub-app's, wrapped in its error handler
  assert.equal(isRoute(app, req("GET", "/threads")), false); // the API's, through the middleware
  assert.equal(isRoute(app, req("GET", "/api/threads")), false);
});
