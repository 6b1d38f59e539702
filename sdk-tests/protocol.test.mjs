// Protocol v2 (thread-centric streaming, reference §12) through the 1.x SDK's
// own client.threads.stream(): run.start on echo_chat with the messages and
// values projections (text streamed per message, final state from
// thread.output), state.get and agent.getTree; hitl (lifecycle interrupted,
// thread.interrupts, input.respond resuming it, an interrupt that is not
// pending → ProtocolError no_such_interrupt); run.start on a thread waiting on
// an interrupt resuming it with its input (command.resume, as LangGraph.js's
// server 1.5 does; a thread waiting on none gets the input); a stream the network cuts
// mid-message (the SDK reconnects and its event-id dedup sees every event
// exactly once, the message whole); a thread with history (a second
// ThreadStream sees only the latest run); an unknown method → an error frame
// (unknown_command) and not-implemented methods → not_supported. On the
// 2.0.0 line it asserts that threads.stream does not exist.

import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { SDK_LINE, SDK_PACKAGE, Client } from "./sdk.mjs"; // @langchain/langgraph-sdk 2.0.0 or newest 1.x, by WEFT_SDK
import { useServer } from "./harness.mjs";

const server = useServer();
// The protocol classes of the 1.x line (2.0.0 has none).
const { ProtocolError, ProtocolSseTransportAdapter } = SDK_LINE === "1" ? await import(SDK_PACKAGE) : {};

const human = (content) => ({ messages: [{ type: "human", content }] });

/** Collects a projection's items (a StreamingMessage → {id, text}). */
async function collectMessages(iterable) {
  const out = [];
  for await (const m of iterable) out.push({ id: m.id, node: m.node, text: await m.text });
  return out;
}

/** Resolves when pred(thread) holds (polled), failing after ms. */
async function until(pred, what, ms = 10_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await pred();
    if (v) return v;
    assert.ok(Date.now() < deadline, `${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

if (SDK_LINE === "2") {
  test("SDK 2.0.0 line: no threads.stream (protocol v2 is 1.x only)", () => {
    const client = new Client({ apiUrl: server.url });
    assert.equal(client.threads.stream, undefined);
  });
}

if (SDK_LINE === "1") describe("SDK 1.x: client.threads.stream (protocol v2)", () => {
  test("run.start on echo_chat: messages streamed token by token, values, output; state.get, agent.getTree", async () => {
    const client = new Client({ apiUrl: server.url });
    const thread = client.threads.stream({ assistantId: "echo_chat" });
    try {
      const started = thread.run.start({ input: human("hello protocol") });
      const messages = collectMessages(thread.messages);
      const snapshots = [];
      const values = (async () => { for await (const v of thread.values) snapshots.push(v); })();
      const { run_id } = await started;
      assert.match(run_id, /^[0-9a-f-]{36}$/);
      const output = await thread.output;
      await values;
      const got = await messages;
      assert.deepEqual(got.map((m) => [m.text, m.node]), [["echo: hello protocol", "echo"]]);
      // thread.output is the run's final state; messages are LangChain message instances.
      assert.equal(output.messages.length, 2);
      assert.equal(output.messages[1].content, "echo: hello protocol");
      assert.equal(output.messages[1].id, got[0].id);
      assert.equal(typeof output.messages[1].getType, "function");
      assert.ok(snapshots.length >= 2, `values snapshots: ${snapshots.length}`);
      assert.equal(thread.interrupted, false);

      // The thread row exists now (run.start created it lazily).
      const t = await client.threads.get(thread.threadId);
      assert.equal(t.thread_id, thread.threadId);
      const state = await thread.state.get({});
      assert.equal(state.values.messages.length, 2);
      assert.match(state.checkpoint.id, /^[0-9a-f-]{36}$/);
      const only = await thread.state.get({ keys: ["nothing"] });
      assert.deepEqual(only.values, {});
      const { tree } = await thread.agent.getTree();
      assert.deepEqual([tree.graph_name, tree.status, tree.namespace], ["echo_chat", "completed", []]);
    } finally {
      await thread.close();
    }
  });

  test("hitl: interrupted lifecycle and thread.interrupts, input.respond resumes; a stale interrupt id → no_such_interrupt", async () => {
    const client = new Client({ apiUrl: server.url });
    const thread = client.threads.stream(randomUUID(), { assistantId: "hitl" });
    try {
      await thread.run.start({ input: { input: "x" } });
      const before = await thread.output;
      assert.deepEqual(before, { input: "x" });
      await until(() => thread.interrupted, "thread.interrupted");
      assert.equal(thread.interrupts.length, 1);
      const [intr] = thread.interrupts;
      assert.deepEqual(intr.payload, { question: "approve?", input: "x" });
      assert.deepEqual(intr.namespace, []);

      await assert.rejects(thread.input.respond({ interrupt_id: "not-pending", response: "no" }),
        (e) => e instanceof ProtocolError && e.code === "no_such_interrupt");

      await thread.input.respond({ interrupt_id: intr.interruptId, response: "yes" });
      assert.equal(thread.interrupted, false);
      assert.deepEqual(thread.interrupts, []);
      // A new subscription replays the resumed run from its first event.
      const sub = await thread.subscribe(["lifecycle", "values"]);
      let last;
      for await (const e of sub) {
        if (e.method === "values") last = e.params.data;
        if (e.method === "lifecycle" && e.params.namespace.length === 0 && e.params.data.event === "completed") break;
      }
      assert.equal(last.result, "x:yes");
      const state = await thread.state.get({});
      assert.deepEqual(state.values, { input: "x", answer: "yes", result: "x:yes" });
    } finally {
      await thread.close();
    }
  });

  test("run.start on a thread waiting on an interrupt resumes it with the input (command.resume), as LangGraph.js's server 1.5", async () => {
    const client = new Client({ apiUrl: server.url });
    const thread = client.threads.stream(randomUUID(), { assistantId: "hitl" });
    try {
      await thread.run.start({ input: { input: "x" } });
      await thread.output;
      await until(() => thread.interrupted, "thread.interrupted");

      // Any input but null is the resume value, whole: a string here (a
      // fresh run of hitl would refuse it: input must be an object).
      const { run_id } = await thread.run.start({ input: "yes" });
      await client.runs.join(thread.threadId, run_id);
      const run = await client.runs.get(thread.threadId, run_id);
      assert.deepEqual([run.status, run.kwargs.input, run.kwargs.command], ["success", null, { resume: "yes" }]);
      const state = await thread.state.get({});
      assert.deepEqual(state.values, { input: "x", answer: "yes", result: "x:yes" });

      // The thread waits on nothing now: the input starts a run with it.
      const again = await thread.run.start({ input: { input: "z" } });
      await client.runs.join(thread.threadId, again.run_id);
      const second = await client.runs.get(thread.threadId, again.run_id);
      assert.deepEqual([second.kwargs.input, second.kwargs.command], [{ input: "z" }, null]);
      assert.equal((await client.threads.get(thread.threadId)).status, "interrupted");
      // An object resumes as a whole too.
      const third = await thread.run.start({ input: { input: "not an input" } });
      await client.runs.join(thread.threadId, third.run_id);
      assert.deepEqual((await client.runs.get(thread.threadId, third.run_id)).kwargs.command, { resume: { input: "not an input" } });
      assert.equal((await thread.state.get({})).values.answer, JSON.stringify({ input: "not an input" }));
    } finally {
      await thread.close();
    }
  });

  test("a stream cut mid-message reconnects: every event once, in order, the message whole", async () => {
    let cuts = 0;
    const reconnects = [];
    // The network drops the first event stream right after its first text delta.
    const cuttingFetch = async (url, init) => {
      const res = await fetch(url, init);
      if (!String(url).endsWith("/stream/events") || cuts > 0 || !res.ok) return res;
      cuts++;
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let seen = "";
      const body = new ReadableStream({
        async pull(ctrl) {
          const { done, value } = await reader.read();
          if (done) return ctrl.close();
          ctrl.enqueue(value);
          seen += decoder.decode(value, { stream: true });
          if (seen.includes("content-block-delta")) {
            await reader.cancel();
            ctrl.error(new TypeError("network connection lost"));
          }
        },
      });
      return new Response(body, { status: res.status, headers: res.headers });
    };
    const client = new Client({ apiUrl: server.url });
    const thread = client.threads.stream({
      assistantId: "echo_chat",
      fetch: cuttingFetch,
      reconnectDelayMs: () => 10,
      onReconnect: (info) => reconnects.push(info.attempt),
    });
    const seqs = [];
    thread.onEvent((e) => seqs.push(e.seq));
    try {
      const started = thread.run.start({ input: human("cut me off please") });
      const messages = collectMessages(thread.messages);
      await started;
      const output = await thread.output;
      const got = await messages;
      assert.equal(cuts, 1);
      assert.ok(reconnects.length >= 1, "the SDK did not reconnect");
      assert.deepEqual(got.map((m) => m.text), ["echo: cut me off please"]);
      assert.equal(output.messages[1].content, "echo: cut me off please");
      assert.ok(seqs.length > 5);
      for (let i = 1; i < seqs.length; i++) assert.ok(seqs[i] > seqs[i - 1], `seq ${seqs[i]} after ${seqs[i - 1]}: ${seqs}`);
    } finally {
      await thread.close();
    }
  });

  test("a second ThreadStream on a thread with history: run.start sees only its own run; since replays the thread", async () => {
    const client = new Client({ apiUrl: server.url });
    const first = client.threads.stream({ assistantId: "echo_chat" });
    await first.run.start({ input: human("one") });
    await first.output;
    await first.close();

    const second = client.threads.stream(first.threadId, { assistantId: "echo_chat" });
    try {
      const started = second.run.start({ input: human("two") });
      const messages = collectMessages(second.messages);
      await started;
      const output = await second.output;
      assert.deepEqual((await messages).map((m) => m.text), ["echo: two"]);
      assert.deepEqual(output.messages.map((m) => m.content), ["one", "echo: one", "two", "echo: two"]);
    } finally {
      await second.close();
    }

    // The transport's since replays the whole thread: both runs' lifecycles.
    const transport = new ProtocolSseTransportAdapter({ apiUrl: server.url, threadId: first.threadId });
    const handle = transport.openEventStream({ channels: ["lifecycle"], since: 0 });
    await handle.ready;
    const events = [];
    for await (const e of handle.events) {
      events.push(`${e.params.data.event}`);
      if (events.length === 4) break;
    }
    handle.close();
    await transport.close();
    assert.deepEqual(events, ["running", "completed", "running", "completed"]);
  });

  test("an unknown method is an error frame (unknown_command); unimplemented ones are not_supported", async () => {
    const tid = randomUUID();
    const transport = new ProtocolSseTransportAdapter({ apiUrl: server.url, threadId: tid });
    const res = await transport.send({ id: 7, method: "no.such.method", params: {} });
    assert.equal(res.type, "error");
    assert.equal(res.id, 7);
    assert.equal(res.error, "unknown_command");
    assert.match(res.message, /no\.such\.method/);
    await transport.close();

    const client = new Client({ apiUrl: server.url });
    const thread = client.threads.stream(tid, { assistantId: "echo_chat" });
    try {
      await assert.rejects(thread.input.inject({ content: "x" }), (e) => e instanceof ProtocolError && e.code === "not_supported");
      await assert.rejects(thread.agent.getTree(), (e) => e instanceof ProtocolError && e.code === "no_such_run");
      await assert.rejects(thread.run.start({ input: human("x"), config: "not an object" }),
        (e) => e instanceof ProtocolError && e.code === "invalid_argument");
    } finally {
      await thread.close();
    }
  });
});
