// Custom routes that show who called, as LangGraph.js's server hands the
// authenticated user to a Hono app: c.get("auth"), {user, scopes}.
import { Hono } from "hono";

export const app = new Hono()
  .use(async (c, next) => {
    // The app's middleware runs after authentication: it sees the user too.
    const who = c.get("auth")?.user?.identity;
    await next();
    c.header("x-middleware-user", who ?? "none");
  })
  .get("/custom/whoami", (c) => c.json(c.get("auth") ?? null))
  .post("/custom/echo", async (c) => c.json({ got: await c.req.json(), by: c.get("auth")?.user?.identity ?? null }));
