// A2A (issue 30) through the official A2A JS client, @a2a-js/sdk 1.3.0:
// the agent card of a chat assistant, SendMessage, SendStreamingMessage,
// GetTask, CancelTask, a two-turn conversation on one context, an interrupt
// answered as input-required then resumed; the v0.3 wire (the SDK's legacy
// compatibility transport); and, on a second server with WEFT_AUTH=keys,
// 401 without a key and tenant isolation. The LangGraph SDK line does not
// matter here (the file runs on both lines all the same).

import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { Role, TaskState } from "@a2a-js/sdk";
import { useServer } from "./harness.mjs";

const server = useServer();
const cardPath = (assistant) => `/.well-known/agent-card.json?assistant_id=${assistant}`;

/** An A2A client for an assistant, made from its agent card (fetch may add headers). */
async function a2a(base, assistant, { fetchImpl, legacy = false } = {}) {
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: legacy } })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  });
  const factory = new ClientFactory(options);
  if (!legacy) return factory.createFromUrl(base, cardPath(assistant));
  // A v0.3 client: the card's 0.3 interface only.
  const card = await new DefaultAgentCardResolver({ fetchImpl }).resolve(base, cardPath(assistant));
  card.supportedInterfaces = card.supportedInterfaces.filter((i) => i.protocolVersion.startsWith("0.3"));
  return factory.createFromAgentCard(card);
}

const userMessage = (text, contextId, taskId) => ({
  messageId: randomUUID(),
  role: Role.ROLE_USER,
  parts: [{ content: { $case: "text", value: text } }],
  ...(contextId ? { contextId } : {}),
  ...(taskId ? { taskId } : {}),
});

const text = (parts) => parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");
const answer = (task) => text(task.artifacts?.[0]?.parts ?? []);

/** Plain fetch of the REST API. */
async function rest(method, path, body, headers = {}) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const t = await res.text();
  return { status: res.status, body: t ? JSON.parse(t) : undefined };
}

describe("A2A v1.0 with @a2a-js/sdk", () => {
  test("agent card: name, description, skills, modes, endpoint, streaming", async () => {
    const card = await new DefaultAgentCardResolver().resolve(server.url, cardPath("echo_chat"));
    assert.equal(card.name, "echo_chat");
    assert.ok(card.description);
    assert.equal(card.capabilities.streaming, true);
    assert.ok(card.skills.length >= 1 && card.skills[0].id);
    assert.ok(card.defaultInputModes.includes("text/plain") && card.defaultOutputModes.includes("text/plain"));
    const v1 = card.supportedInterfaces.find((i) => i.protocolVersion === "1.0");
    assert.equal(v1.protocolBinding, "JSONRPC");
    assert.match(v1.url, new RegExp(`^${server.url}/a2a/[0-9a-f-]{36}$`));
    const client = await a2a(server.url, "echo_chat");
    assert.equal(client.protocolVersion, "1.0");
    // A graph without a messages channel has no card.
    const r = await fetch(`${server.url}${cardPath("foo_bar")}`);
    assert.equal(r.status, 400);
  });

  test("send, then a second turn on the same context; get; the tasks are the thread's runs", async () => {
    const client = await a2a(server.url, "echo_chat");
    const first = await client.sendMessage({ message: userMessage("hello") });
    assert.equal(first.status.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(answer(first), "echo: hello");
    assert.ok(first.contextId);
    const second = await client.sendMessage({ message: userMessage("again", first.contextId) });
    assert.equal(second.contextId, first.contextId);
    assert.notEqual(second.id, first.id);
    assert.equal(answer(second), "echo: again");

    const got = await client.getTask({ id: first.id });
    assert.equal(got.status.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(answer(got), "echo: hello");
    assert.equal(got.history[0].role, Role.ROLE_USER);
    assert.equal(text(got.history[0].parts), "hello");

    // The REST API shows the conversation.
    const state = await rest("GET", `/threads/${first.contextId}/state`);
    assert.deepEqual(state.body.values.messages.map((m) => m.content), ["hello", "echo: hello", "again", "echo: again"]);
    const runs = await rest("GET", `/threads/${first.contextId}/runs`);
    assert.deepEqual(runs.body.map((r) => r.run_id), [second.id, first.id]);
  });

  test("stream: the task, working, the answer's chunks appended, the whole answer, completed", async () => {
    const client = await a2a(server.url, "echo_chat");
    const events = [];
    for await (const e of client.sendMessageStream({ message: userMessage("one two three") })) events.push(e.payload);
    assert.equal(events[0].$case, "task");
    assert.equal(events[0].value.status.state, TaskState.TASK_STATE_SUBMITTED);
    assert.equal(events[1].$case, "statusUpdate");
    assert.equal(events[1].value.status.state, TaskState.TASK_STATE_WORKING);
    const chunks = events.filter((e) => e.$case === "artifactUpdate" && !e.value.lastChunk);
    assert.ok(chunks.length >= 2, `chunks: ${chunks.length}`);
    assert.equal(chunks[0].value.append, false);
    assert.ok(chunks.slice(1).every((c) => c.value.append));
    assert.equal(chunks.map((c) => text(c.value.artifact.parts)).join(""), "echo: one two three");
    const whole = events.find((e) => e.$case === "artifactUpdate" && e.value.lastChunk);
    assert.equal(text(whole.value.artifact.parts), "echo: one two three");
    const last = events.at(-1);
    assert.equal(last.$case, "statusUpdate");
    assert.equal(last.value.status.state, TaskState.TASK_STATE_COMPLETED);
    const got = await client.getTask({ id: events[0].value.id });
    assert.equal(answer(got), "echo: one two three");
  });

  test("an interrupt is input-required; the next message resumes it", async () => {
    const client = await a2a(server.url, "hitl_chat");
    const asked = await client.sendMessage({ message: userMessage("hi") });
    assert.equal(asked.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(asked.status.message.role, Role.ROLE_AGENT);
    assert.match(text(asked.status.message.parts), /Send the reply "echo: hi"\?/);
    assert.equal((await rest("GET", `/threads/${asked.contextId}`)).body.status, "interrupted");
    const done = await client.sendMessage({ message: userMessage("yes", asked.contextId, asked.id) });
    assert.equal(done.status.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(done.contextId, asked.contextId);
    assert.equal(answer(done), "echo: hi");
    assert.equal((await rest("GET", `/threads/${asked.contextId}`)).body.status, "idle");
  });

  test("cancel: a task queued behind a busy thread is canceled, its run interrupted", async () => {
    const client = await a2a(server.url, "echo_chat");
    const thread = (await rest("POST", "/threads", {})).body.thread_id;
    assert.equal((await rest("POST", `/threads/${thread}/runs`, { assistant_id: "slow", input: { ms: 3000 } })).status, 200);
    const queued = await client.sendMessage({ message: userMessage("later", thread), configuration: { returnImmediately: true } });
    assert.equal(queued.status.state, TaskState.TASK_STATE_SUBMITTED);
    const canceled = await client.cancelTask({ id: queued.id });
    assert.equal(canceled.status.state, TaskState.TASK_STATE_CANCELED);
    assert.equal((await client.getTask({ id: queued.id })).status.state, TaskState.TASK_STATE_CANCELED);
    assert.equal((await rest("GET", `/threads/${thread}/runs/${queued.id}`)).body.status, "interrupted");
    // A canceled task is not cancelable again; an unknown one is not found.
    await assert.rejects(client.cancelTask({ id: queued.id }), (e) => /cannot be canceled/.test(e.message));
    await assert.rejects(client.getTask({ id: randomUUID() }), (e) => /not found/i.test(e.message));
  });
});

describe("A2A v0.3 with the SDK's legacy transport", () => {
  test("message/send, message/stream, tasks/get on one context", async () => {
    const client = await a2a(server.url, "echo_chat", { legacy: true });
    assert.match(client.protocolVersion, /^0\.3/);
    const first = await client.sendMessage({ message: userMessage("old") });
    assert.equal(first.status.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(answer(first), "echo: old");
    const events = [];
    for await (const e of client.sendMessageStream({ message: userMessage("older", first.contextId) })) events.push(e.payload);
    const last = events.at(-1);
    assert.equal(last.$case, "statusUpdate");
    assert.equal(last.value.status.state, TaskState.TASK_STATE_COMPLETED);
    const got = await client.getTask({ id: events[0].value.id });
    assert.equal(got.contextId, first.contextId);
    assert.equal(answer(got), "echo: older");
  });

  test("interrupt and resume", async () => {
    const client = await a2a(server.url, "hitl_chat", { legacy: true });
    const asked = await client.sendMessage({ message: userMessage("x") });
    assert.equal(asked.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const done = await client.sendMessage({ message: userMessage("no", asked.contextId) });
    assert.equal(answer(done), "Reply not sent.");
  });
});

describe("A2A behind API keys", () => {
  const keyed = useServer({ env: { WEFT_AUTH: "keys" } });
  let pool;
  const keys = {};
  before(async () => {
    if (!keyed.db) return;
    pool = new pg.Pool({ ...keyed.db, max: 2 });
    pool.on("error", () => {});
    for (const tenant of ["a", "b"]) {
      // What `weft keys create --tenant …` writes: the key's SHA-256.
      const key = "weft_" + randomBytes(32).toString("base64url");
      await pool.query("INSERT INTO api_keys (key_id, key_hash, tenant, scopes, name) VALUES ($1, $2, $3, $4, $5)", [
        randomUUID(), createHash("sha256").update(key).digest(), tenant, ["tenant"], "a2a test"]);
      keys[tenant] = key;
    }
  });
  after(async () => {
    await pool?.end();
  });
  const withKey = (key) => (url, init = {}) => fetch(url, { ...init, headers: { ...(init.headers ?? {}), "x-api-key": key } });

  test("401 without a key; a second tenant cannot read the first's tasks or use its contexts", async (t) => {
    if (!keyed.db) return t.skip("no database for this server");
    assert.equal((await fetch(`${keyed.url}${cardPath("echo_chat")}`)).status, 401);
    const noKey = await fetch(`${keyed.url}/a2a/echo_chat`, { method: "POST", body: "{}" });
    assert.equal(noKey.status, 401);

    const a = await a2a(keyed.url, "echo_chat", { fetchImpl: withKey(keys.a) });
    const b = await a2a(keyed.url, "echo_chat", { fetchImpl: withKey(keys.b) });
    const task = await a.sendMessage({ message: userMessage("secret") });
    assert.equal(answer(task), "echo: secret");
    await assert.rejects(b.getTask({ id: task.id }), (e) => /not found/i.test(e.message));
    await assert.rejects(b.cancelTask({ id: task.id }), (e) => /not found/i.test(e.message));
    await assert.rejects(b.sendMessage({ message: userMessage("intrude", task.contextId) }), (e) => !/secret/.test(e.message));
    // A's assistant is invisible to B.
    const created = await fetch(`${keyed.url}/assistants`, {
      method: "POST", headers: { "content-type": "application/json", "x-api-key": keys.a },
      body: JSON.stringify({ graph_id: "echo_chat", name: "a-only" }),
    }).then((r) => r.json());
    const own = await a2a(keyed.url, created.assistant_id, { fetchImpl: withKey(keys.a) });
    assert.equal(answer(await own.sendMessage({ message: userMessage("mine") })), "echo: mine");
    const hidden = await fetch(`${keyed.url}${cardPath(created.assistant_id)}`, { headers: { "x-api-key": keys.b } });
    assert.equal(hidden.status, 404);
    // A's task is intact.
    assert.equal(answer(await a.getTask({ id: task.id })), "echo: secret");
  });
});
