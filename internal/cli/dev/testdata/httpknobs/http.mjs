// The project's middleware marks every answer it sees (x-project-middleware),
// so a test tells whether a request went through it.
import { Hono } from "hono";

export const app = new Hono()
  .use(async (c, next) => {
    await next();
    c.header("x-project-middleware", "seen");
  })
  .get("/custom/hello", (c) => c.json({ hello: "world" }));
