// A long thread Weft stores compactly (list channels of 1 KB or more kept
// once per element, blobs of type weft_list), read by LangGraph's own
// PostgresSaver, unmodified, through the views of schema "langgraph" that
// present standard rows: every checkpoint's messages and the whole history
// must equal what Weft's API returns.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { useServer } from "./harness.mjs";
import { databaseSession } from "./database.mjs";

const server = useServer();
const db = databaseSession(server);

/** A JSON round-trip: class instances (LangChain messages) become plain data. */
const plain = (v) => JSON.parse(JSON.stringify(v));

describe("a long thread Weft stores compactly, read by the stock PostgresSaver through schema langgraph", () => {
  test("every checkpoint's messages and the whole history equal Weft's", async (t) => {
    if (!db.ready(t)) return;
    const { pool, client } = db;
    const { thread_id: tid } = await client.threads.create({ graphId: "echo_chat" });
    const turns = 12;
    for (let i = 0; i < turns; i++) {
      const content = `turn ${i} ` + "lorem ipsum dolor sit amet ".repeat(8);
      await client.runs.wait(tid, "echo_chat", { input: { messages: [{ type: "human", content }] } });
    }
    // The thread's long message lists are stored by reference, not as JSON.
    const { rows } = await pool.query(
      `SELECT count(*) FILTER (WHERE type = 'weft_list')::int AS compact, count(*) FILTER (WHERE type = 'json' AND length(blob) >= 1024)::int AS whole
         FROM checkpoint_blobs WHERE thread_id = $1`, [tid]);
    assert.ok(rows[0].compact >= turns, `only ${rows[0].compact} compact list blobs`);
    assert.equal(rows[0].whole, 0);

    const stock = new PostgresSaver(pool, undefined, { schema: "langgraph" });
    const history = await client.threads.getHistory(tid, { limit: 1000 });
    const state = await client.threads.getState(tid);
    assert.equal(state.values.messages.length, 2 * turns);
    assert.deepEqual(history[0].values, state.values);
    const latest = await stock.getTuple({ configurable: { thread_id: tid, checkpoint_ns: "" } });
    assert.equal(latest.config.configurable.checkpoint_id, state.checkpoint.checkpoint_id);
    assert.deepEqual(plain(latest.checkpoint.channel_values.messages), state.values.messages);
    const listed = [];
    for await (const tup of stock.list({ configurable: { thread_id: tid, checkpoint_ns: "" } })) listed.push(tup);
    assert.deepEqual(listed.map((x) => x.config.configurable.checkpoint_id), history.map((s) => s.checkpoint.checkpoint_id));
    for (const [i, s] of history.entries()) {
      assert.deepEqual(plain(listed[i].checkpoint.channel_values.messages ?? []), s.values.messages ?? [],
        `checkpoint ${s.checkpoint.checkpoint_id} (step ${s.metadata.step})`);
    }
  });
});
