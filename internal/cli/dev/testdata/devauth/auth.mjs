// A project's auth.path for the worker's auth tests: a bearer token names the
// user; threads are stamped with and filtered by their owner; deleting is
// denied; the store is guarded by namespace.
import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";

const USERS = { "token-alice": "alice", "token-bob": "bob" };

export const auth = new Auth()
  .authenticate(async (request) => {
    const h = request.headers.get("authorization") ?? "";
    const user = USERS[h.replace(/^Bearer /i, "")];
    if (!user) throw new HTTPException(401, { message: "Invalid token", headers: { "WWW-Authenticate": "Bearer" } });
    return { identity: user, permissions: ["read", "write"] };
  })
  .on("threads:delete", () => false)
  .on("threads", ({ action, value, user }) => {
    if (action === "create" || action === "update") {
      value.metadata ??= {};
      value.metadata.owner = user.identity;
    }
    return { owner: { $eq: user.identity } };
  })
  .on("store", ({ value, user }) => {
    if (value.namespace?.length && !value.namespace.includes(user.identity)) {
      throw new HTTPException(403, { message: "Not authorized" });
    }
    return { namespace: { $contains: user.identity } };
  });
