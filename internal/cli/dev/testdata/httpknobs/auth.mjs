// A bearer token names the user (with a field of its own and permissions).
import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";

const USERS = {
  "token-alice": { identity: "alice", team: "red", permissions: ["read", "write"] },
  "token-bob": { identity: "bob", permissions: [] },
};

export const auth = new Auth().authenticate(async (request) => {
  const user = USERS[(request.headers.get("authorization") ?? "").replace(/^Bearer /i, "")];
  if (!user) throw new HTTPException(401, { message: "Invalid token" });
  return user;
});
