// auth.cache's test project: a bearer token "token-<name>" is user <name>;
// the authenticate handler counts its calls and the identity it returns
// carries the count, which threads:create stamps on the thread's metadata
// (auth_calls), so a test sees when the handler was asked.
import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";

let calls = 0;

export const auth = new Auth()
  .authenticate(async (request) => {
    const token = (request.headers.get("authorization") ?? "").replace(/^Bearer /i, "");
    if (!token.startsWith("token-")) throw new HTTPException(401, { message: "Invalid token" });
    calls += 1;
    return { identity: token.slice("token-".length), permissions: [], calls };
  })
  .on("threads:create", ({ value, user }) => {
    value.metadata ??= {};
    value.metadata.owner = user.identity;
    value.metadata.auth_calls = user.calls;
  });
