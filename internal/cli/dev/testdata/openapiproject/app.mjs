// An http.app whose routes weft dev lists in its OpenAPI document: a
// middleware (left out), a route with a parameter, a route every method
// serves, and a route that replaces one of the API's (GET /info).
import { Hono } from "hono";

export const app = new Hono()
  .use(async (c, next) => {
    await next();
    c.header("x-app", "1");
  })
  .get("/custom/items/:item_id", (c) => c.json({ item: c.req.param("item_id") }))
  .post("/custom/items", async (c) => c.json({ created: await c.req.json() }, 201))
  .all("/custom/any", (c) => c.json({ method: c.req.method }))
  .get("/info", (c) => c.json({ app: "mine" }));
