// Custom routes and middleware of a langgraph.json http.app (a Hono app).
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { streamText } from "hono/streaming";

export const app = new Hono()
  .use(async (c, next) => {
    if (c.req.query("blocked") != null) return c.json({ blocked: true }, 403);
    await next();
    c.header("x-project-middleware", "seen");
  })
  // A middleware may add a header the API then sees (here: the caller a run's config gets).
  .use(async (c, next) => {
    const who = c.req.query("as");
    if (who) c.req.raw.headers.set("x-caller", who);
    await next();
  })
  .get("/custom/hello", (c) => c.json({ hello: c.req.query("name") ?? "world" }, { headers: { "x-echo": c.req.header("x-in") ?? "" } }))
  .post("/custom/echo", async (c) => c.json({ got: await c.req.json() }))
  .get("/custom/fail", () => {
    throw new HTTPException(400, { message: "Bad request" });
  })
  .get("/custom/stream", (c) =>
    streamText(c, async (stream) => {
      for (let i = 0; i < 3; i++) {
        await stream.writeln(`line ${i}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    }),
  );
