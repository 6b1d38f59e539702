// MCP at /mcp through the official MCP TypeScript SDK (@modelcontextprotocol/sdk):
// connect over Streamable HTTP, list the assistants as tools, call one (its
// output as structured content and text), a failing run as a tool error
// (isError, not a protocol error), an unknown tool as a protocol error; and,
// on a second server with WEFT_AUTH=keys, no key → 401 and two tenants'
// keys: the second lists none of the first's tools and cannot call them.
// The LangGraph SDK line (WEFT_SDK) does not matter here: the file runs the
// same under both.

import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { useServer, startServer } from "./harness.mjs";
import { rawRequest } from "./helpers.mjs";

const server = useServer();

async function connect(url, headers = {}) {
  const client = new McpClient({ name: "weft-sdk-tests", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } });
  await client.connect(transport);
  return client;
}

async function allTools(client) {
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

const textOf = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("");

describe("MCP (official TypeScript client)", () => {
  let client;
  before(async () => {
    client = await connect(server.url);
  });
  after(async () => {
    await client?.close();
  });

  test("initialize: server info and the tools capability", () => {
    assert.equal(client.getServerVersion()?.name, "weft");
    assert.ok(client.getServerCapabilities()?.tools, "tools capability");
  });

  test("tools/list: one tool per assistant, object input schemas", async () => {
    const name = `mcp ts ${randomBytes(3).toString("hex")}`;
    const res = await fetch(`${server.url}/assistants`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ graph_id: "foo_bar", name, description: "A foo_bar for MCP." }),
    });
    assert.equal(res.status, 200);
    const created = await res.json();
    const tools = await allTools(client);
    for (const n of ["echo_chat", "foo_bar", "hitl", "slow"]) {
      const t = tools.find((x) => x.name === n);
      assert.ok(t, `tool ${n} in ${tools.map((x) => x.name)}`);
      assert.equal(t.inputSchema.type, "object");
    }
    const mine = tools.find((x) => x.name === name.replaceAll(" ", "_"));
    assert.ok(mine, `tool for ${name}`);
    assert.equal(mine.title, name);
    assert.equal(mine.description, "A foo_bar for MCP.");
    assert.equal(mine._meta["weft.dev/assistant_id"], created.assistant_id);
    assert.equal(tools.find((x) => x.name === "echo_chat").inputSchema.properties.messages.type, "string");
  });

  test("tools/call: the run's output as structured content and text", async () => {
    const res = await client.callTool({ name: "echo_chat", arguments: { messages: "hi from ts" } });
    assert.ok(!res.isError, textOf(res));
    const msgs = res.structuredContent.messages;
    assert.equal(msgs.length, 2);
    assert.equal(msgs[1].content, "echo: hi from ts");
    assert.deepEqual(JSON.parse(textOf(res)), res.structuredContent);

    const fb = await client.callTool({ name: "foo_bar", arguments: { foo: "x" } });
    assert.deepEqual(fb.structuredContent, { foo: "b", bar: ["a", "b"] });
  });

  test("tools/call: a failing run is a tool error", async () => {
    const res = await client.callTool({ name: "slow", arguments: { ms: "not a number" } });
    assert.equal(res.isError, true);
    assert.match(textOf(res), /ms must be a number/);
  });

  test("tools/call: an unknown tool is a protocol error", async () => {
    await assert.rejects(client.callTool({ name: "no_such_tool", arguments: {} }), /Unknown tool/);
  });

  test("GET and DELETE /mcp: 405 (stateless)", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await rawRequest(server.url, method, "/mcp", undefined, { accept: "text/event-stream" });
      assert.equal(res.status, 405, `${method}`);
    }
    const info = await (await fetch(`${server.url}/info`)).json();
    assert.equal(info.flags.mcp, true);
  });
});

describe("MCP with API keys: 401 and tenant isolation", () => {
  let srv;
  let keyA;
  let keyB;
  before(async () => {
    srv = await startServer({ env: { WEFT_AUTH: "keys" } });
    if (srv.external || !srv.db) return;
    // Keys straight into the server's database (what `weft keys create` does).
    const db = new pg.Client(srv.db);
    await db.connect();
    try {
      const mk = async (tenant) => {
        const key = `weft_${randomBytes(24).toString("base64url")}`;
        await db.query(
          `INSERT INTO api_keys (key_id, key_hash, tenant, scopes, name)
           VALUES (gen_random_uuid(), sha256(convert_to($1, 'UTF8')), $2, ARRAY['tenant'], 'mcp test')`,
          [key, tenant],
        );
        return key;
      };
      keyA = await mk("acme");
      keyB = await mk("globex");
    } finally {
      await db.end();
    }
  }, { timeout: 120_000 });
  after(async () => {
    await srv?.stop();
  }, { timeout: 60_000 });

  test("no key: 401; a second tenant sees none of the first's tools", async (t) => {
    if (!keyA) return t.skip("needs a server this suite starts");
    const res = await rawRequest(srv.url, "POST", "/mcp", {
      jsonrpc: "2.0", id: 1, method: "tools/list",
    }, { accept: "application/json, text/event-stream" });
    assert.equal(res.status, 401);
    await assert.rejects(connect(srv.url));

    const created = await fetch(`${srv.url}/assistants`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": keyA },
      body: JSON.stringify({ graph_id: "echo_chat", name: "acme_helper" }),
    });
    assert.equal(created.status, 200);

    const a = await connect(srv.url, { "x-api-key": keyA });
    const b = await connect(srv.url, { authorization: `Bearer ${keyB}` });
    try {
      const toolsA = (await allTools(a)).map((x) => x.name);
      const toolsB = (await allTools(b)).map((x) => x.name);
      assert.ok(toolsA.includes("acme_helper"), `${toolsA}`);
      assert.ok(!toolsB.includes("acme_helper"), `${toolsB}`);
      // B sees the built-in graphs' system assistants, as its own search lists them.
      const system = await (await fetch(`${srv.url}/assistants/search`, {
        method: "POST",
        headers: { "x-api-key": keyB, "content-type": "application/json" },
        body: JSON.stringify({ metadata: { created_by: "system" }, limit: 100 }),
      })).json();
      assert.ok(toolsB.includes("echo_chat"), `${toolsB}`);
      assert.deepEqual(toolsB.sort(), system.map((x) => x.name).sort());
      const res = await a.callTool({ name: "acme_helper", arguments: { messages: "ping" } });
      assert.ok(!res.isError, textOf(res));
      assert.match(textOf(res), /echo: ping/);
      await assert.rejects(b.callTool({ name: "acme_helper", arguments: { messages: "ping" } }), /Unknown tool/);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
