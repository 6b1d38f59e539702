// The server's own PostgreSQL, for tests that run LangGraph's real
// PostgresSaver against it (interop.test.mjs, subgraph.test.mjs).

import { after } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { Client } from "./sdk.mjs";

/**
 * Returns a session whose pool, saver and SDK client are created on first
 * use (server.url / server.db are known only once the harness's before hook
 * has started the server) and closed after the file's tests.
 * session.ready(t) skips t when there is no database and returns false;
 * only an external server (WEFT_URL) can lack one — a server the harness
 * started always has one, so there these tests never skip.
 */
export function databaseSession(server) {
  const session = { pool: null, saver: null, client: null };
  session.ready = (t) => {
    if (!server.db) {
      assert.ok(process.env.WEFT_URL, "the harness started a server but found no database for it");
      t.skip("no database for this server (set WEFT_DATABASE_URL with WEFT_URL)");
      return false;
    }
    session.client ??= new Client({ apiUrl: server.url });
    if (!session.pool) {
      session.pool = new pg.Pool({ ...server.db, max: 4 });
      // The server stops its PostgreSQL at the end; an idle pooled
      // connection being terminated must not crash the test process.
      session.pool.on("error", () => {});
      session.saver = new PostgresSaver(session.pool);
    }
    return true;
  };
  after(async () => {
    await session.pool?.end();
  });
  return session;
}
