// The requests the React useStream hook (@langchain/langgraph-sdk/react,
// reference §13.1) makes, made with the SDK Client exactly the way the hook
// makes them (dist/react/stream.lgp.js of both lines), with
// fetchStateHistory on, reconnectOnMount (resumable runs) and the
// messages / values the component reads:
//
//   mount       threads.getHistory(tid, {limit: 10})   POST /threads/{tid}/history {limit: 10}
//               (fetchStateHistory false: threads.getState(tid), used only if checkpoint != null)
//   submit      threads.create({threadId, metadata})   (no thread yet)
//               runs.stream(tid, assistantId, {input, command, config, context, metadata, …,
//                 onDisconnect: resumable ? "continue" : "cancel", checkpoint: history head
//                 (thread_id removed), streamMode: ["values", "messages-tuple"],
//                 streamResumable, onRunCreated})
//               then threads.getHistory(tid, {limit: 10}) again
//   reconnect   runs.joinStream(tid, runId, {lastEventId: "-1", streamMode})
//   stop()      aborts the stream; with reconnectOnMount also runs.cancel(tid, runId)
//               (POST …/cancel?wait=0&action=interrupt)
//
// Values come from `values` events; `messages` tuples are merged into
// values.messages by message id (chunks concatenated); an interrupt shows as
// values.__interrupt__ while streaming and as the history head's
// tasks[].interrupts afterwards.

import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { useServer } from "./harness.mjs";
import { recordingClient, newTaggedThread, waitForStatus, streamRequests } from "./helpers.mjs";

const server = useServer();
const sdk = () => recordingClient(server.url);

const HISTORY_LIMIT = 10;

/** What the hook keeps from a stream: the values, with messages-tuple chunks merged in by id. */
function applyEvent(view, chunk) {
  const { event, data } = chunk;
  if (event === "error") throw Object.assign(new Error(data?.message), { name: data?.error });
  if (event === "values") {
    view.values = data;
    view.messages = new Map((data.messages ?? []).map((m) => [m.id, { ...m }]));
  } else if (event === "messages") {
    const [msg] = data;
    const prev = view.messages.get(msg.id);
    const type = msg.type.replace(/MessageChunk$/, "").toLowerCase();
    view.messages.set(msg.id, prev && prev.type === type && prev.streamed
      ? { ...prev, content: prev.content + msg.content }
      : { ...msg, type, streamed: true });
  } else if (event === "metadata") {
    view.runId = data.run_id;
  }
}

/** The messages the component renders: merged stream messages, in order. */
const rendered = (view) => [...view.messages.values()].map((m) => [m.type, m.content]);

/**
 * A stand-in for one useStream({assistantId, fetchStateHistory: true,
 * reconnectOnMount}) instance: same calls, same arguments.
 */
class Hook {
  constructor(client, assistantId, { threadId = null, reconnectOnMount = true } = {}) {
    this.client = client;
    this.assistantId = assistantId;
    this.threadId = threadId;
    this.resumable = reconnectOnMount;
    this.history = undefined;
    this.runId = null;
  }

  async mount() {
    if (this.threadId) this.history = await this.client.threads.getHistory(this.threadId, { limit: HISTORY_LIMIT });
    return this.history;
  }

  /** Starts a submit; returns {stream, view, created} (the stream is not consumed). */
  async start(values, opts = {}) {
    if (!this.threadId) {
      this.threadId = (await this.client.threads.create({ threadId: opts.threadId, metadata: opts.metadata, signal: opts.signal })).thread_id;
    }
    let checkpoint = opts.checkpoint ?? this.history?.[0]?.checkpoint ?? undefined;
    if (opts.checkpoint === null) checkpoint = undefined;
    if (checkpoint != null) {
      checkpoint = { ...checkpoint };
      delete checkpoint.thread_id;
    }
    const streamResumable = opts.streamResumable ?? this.resumable;
    const created = [];
    const view = { values: {}, messages: new Map(), runId: null };
    const stream = this.client.runs.stream(this.threadId, this.assistantId, {
      input: values,
      config: opts.config,
      context: opts.context,
      command: opts.command,
      interruptBefore: opts.interruptBefore,
      interruptAfter: opts.interruptAfter,
      metadata: opts.metadata,
      multitaskStrategy: opts.multitaskStrategy,
      onCompletion: opts.onCompletion,
      onDisconnect: opts.onDisconnect ?? (streamResumable ? "continue" : "cancel"),
      signal: opts.signal,
      checkpoint,
      streamMode: ["values", "messages-tuple"],
      streamSubgraphs: opts.streamSubgraphs,
      streamResumable,
      durability: opts.durability,
      onRunCreated: (params) => {
        created.push(params);
        this.runId = params.run_id;
      },
    });
    return { stream, view, created };
  }

  /** A whole submit: stream to the end, then refetch history (fetchStateHistory on). */
  async submit(values, opts = {}) {
    const { stream, view, created } = await this.start(values, opts);
    const chunks = [];
    for await (const c of stream) {
      chunks.push(c);
      applyEvent(view, c);
    }
    this.history = await this.client.threads.getHistory(this.threadId, { limit: opts.historyLimit ?? HISTORY_LIMIT });
    return { view, chunks, created };
  }

  /** joinStream(runId, lastEventId = "-1"): rebuilds the view from the replay. */
  async join(runId, lastEventId = "-1", joinOptions = {}) {
    const view = { values: {}, messages: new Map(), runId: null };
    const chunks = [];
    for await (const c of this.client.runs.joinStream(this.threadId, runId, { lastEventId, streamMode: joinOptions.streamMode, signal: joinOptions.signal })) {
      chunks.push(c);
      applyEvent(view, c);
    }
    this.history = await this.client.threads.getHistory(this.threadId, { limit: HISTORY_LIMIT });
    return { view, chunks };
  }
}

/** The request log as "METHOD /path", without the 1.x SDK's run status check after a stream (GET …/runs/{id}). */
const calls = (requests) => requests
  .map((r) => `${r.method} ${new URL(r.url).pathname}`)
  .filter((c) => !/^GET \/threads\/[^/]+\/runs\/[^/]+$/.test(c));

const human = (content) => ({ messages: [{ type: "human", content }] });

describe("submit", () => {
  test("a new thread: POST /threads {metadata: {}}, POST …/runs/stream as the hook sends it, POST …/history {limit: 10}; the view is the final state", async () => {
    const { client, requests } = sdk();
    const hook = new Hook(client, "echo_chat");
    assert.equal(await hook.mount(), undefined, "no thread: no request on mount");
    const { view, chunks, created } = await hook.submit(human("hi"));
    const tid = hook.threadId;

    assert.deepEqual(calls(requests), [
      "POST /threads",
      `POST /threads/${tid}/runs/stream`,
      `POST /threads/${tid}/history`,
    ]);
    assert.deepEqual(requests[0].body, { metadata: {} });
    const body = streamRequests(requests)[0].body;
    assert.deepEqual(body, {
      input: human("hi"),
      assistant_id: "echo_chat",
      stream_mode: ["values", "messages-tuple"],
      stream_resumable: true,
      on_disconnect: "continue",
    }, "no checkpoint: there was no history yet");
    assert.equal(streamRequests(requests).length, 1, "no reconnect");
    assert.deepEqual(requests.at(-1).body, { limit: 10 });

    // onRunCreated (Content-Location) names the run of the metadata event.
    assert.deepEqual(created, [{ run_id: chunks[0].data.run_id, thread_id: tid }]);
    assert.equal(view.runId, created[0].run_id);
    assert.deepEqual(rendered(view), [["human", "hi"], ["ai", "echo: hi"]]);
    assert.ok(chunks.some((c) => c.event === "messages"), "tokens were streamed");

    // The refetched history head is what the stream ended with.
    const [head] = hook.history;
    assert.deepEqual(head.values, view.values);
    assert.deepEqual(head.next, []);
    assert.deepEqual(head.values.messages.map((m) => m.id), [...view.messages.keys()]);
    assert.equal((await client.runs.get(tid, created[0].run_id)).status, "success");
    const t = await client.threads.get(tid);
    assert.equal(t.status, "idle");
    assert.equal(t.metadata.graph_id, "echo_chat", "the run makes the thread findable by graph_id");
  });

  test("a second submit sends the history head as checkpoint (thread_id removed) and continues from it; a remount reads the same history", async () => {
    const { client, requests } = sdk();
    const hook = new Hook(client, "echo_chat");
    await hook.submit(human("one"));
    const head1 = hook.history[0];
    requests.length = 0;
    const { view } = await hook.submit(human("two"));
    const sent = streamRequests(requests)[0].body.checkpoint;
    assert.deepEqual(sent, (({ thread_id, ...rest }) => rest)(head1.checkpoint));
    assert.equal(sent.checkpoint_id, head1.checkpoint.checkpoint_id);
    assert.equal(sent.thread_id, undefined);
    assert.deepEqual(rendered(view), [["human", "one"], ["ai", "echo: one"], ["human", "two"], ["ai", "echo: two"]]);

    // The new checkpoints descend from head1.
    const h = hook.history;
    const chain = [];
    for (let s = h[0]; s; s = h.find((x) => x.checkpoint.checkpoint_id === s.parent_checkpoint?.checkpoint_id)) chain.push(s.checkpoint.checkpoint_id);
    assert.ok(chain.includes(head1.checkpoint.checkpoint_id), "head1 is an ancestor of the new head");

    // Remount with the thread id: POST /history {limit: 10} gives the same list.
    requests.length = 0;
    const again = new Hook(client, "echo_chat", { threadId: hook.threadId });
    assert.deepEqual(await again.mount(), hook.history);
    assert.deepEqual(calls(requests), [`POST /threads/${hook.threadId}/history`]);
    assert.deepEqual(requests[0].body, { limit: 10 });
  });

  test("fetchStateHistory false: mount reads GET /state (checkpoint null on a fresh thread, so no messages)", async () => {
    const { client, requests } = sdk();
    const tid = await newTaggedThread(client, "usestream");
    requests.length = 0;
    const s = await client.threads.getState(tid);
    assert.deepEqual(calls(requests), [`GET /threads/${tid}/state`]);
    assert.equal(s.checkpoint, null);
    const hook = new Hook(client, "echo_chat", { threadId: tid });
    await hook.submit(human("x"));
    const after = await client.threads.getState(tid);
    assert.notEqual(after.checkpoint, null);
    assert.deepEqual(after.values, hook.history[0].values);
  });
});

describe("branching", () => {
  test("submitting from an older history checkpoint forks: two children of that checkpoint, the head on the new branch", async () => {
    const { client, requests } = sdk();
    const hook = new Hook(client, "echo_chat");
    await hook.submit(human("one"));
    const fork = hook.history[0]; // the state after turn one
    await hook.submit(human("two"));
    const oldHead = hook.history[0];

    // Edit turn two: submit from the state after turn one.
    requests.length = 0;
    const { view } = await hook.submit(human("TWO"), { checkpoint: fork.checkpoint });
    assert.equal(streamRequests(requests)[0].body.checkpoint.checkpoint_id, fork.checkpoint.checkpoint_id);
    assert.deepEqual(rendered(view), [["human", "one"], ["ai", "echo: one"], ["human", "TWO"], ["ai", "echo: TWO"]]);

    const all = await client.threads.getHistory(hook.threadId, { limit: 100 });
    const children = all.filter((s) => s.parent_checkpoint?.checkpoint_id === fork.checkpoint.checkpoint_id);
    assert.equal(children.length, 2, `children of the fork point: ${JSON.stringify(children.map((c) => c.checkpoint.checkpoint_id))}`);
    const branchOf = (state) => {
      for (let s = state; s; s = all.find((x) => x.checkpoint.checkpoint_id === s.parent_checkpoint?.checkpoint_id)) {
        const c = children.find((x) => x.checkpoint.checkpoint_id === s.checkpoint.checkpoint_id);
        if (c) return c.checkpoint.checkpoint_id;
      }
      return null;
    };
    const newBranch = branchOf(all[0]);
    const oldBranch = branchOf(all.find((s) => s.checkpoint.checkpoint_id === oldHead.checkpoint.checkpoint_id));
    assert.ok(newBranch && oldBranch && newBranch !== oldBranch, "the new head and the old head are on different branches");
    assert.deepEqual(all[0].values.messages.map((m) => m.content), ["one", "echo: one", "TWO", "echo: TWO"]);
    // The old branch is intact.
    const old = await client.threads.getState(hook.threadId, oldHead.checkpoint.checkpoint_id);
    assert.deepEqual(old.values.messages.map((m) => m.content), ["one", "echo: one", "two", "echo: two"]);
  });
});

describe("reconnect (reconnectOnMount)", () => {
  test("joinStream(runId, \"-1\") replays the whole run; the rebuilt view equals the original one", async () => {
    const { client, requests } = sdk();
    const hook = new Hook(client, "echo_chat");
    const first = await hook.submit(human("hello there"));
    const runId = first.created[0].run_id;
    requests.length = 0;
    const { view, chunks } = await hook.join(runId);
    const req = streamRequests(requests);
    assert.equal(req.length, 1);
    assert.equal(req[0].method, "GET");
    assert.equal(new URL(req[0].url).pathname, `/threads/${hook.threadId}/runs/${runId}/stream`);
    assert.equal(req[0].headers.get("last-event-id"), "-1");
    assert.equal(new URL(req[0].url).searchParams.get("cancel_on_disconnect"), "0");
    assert.deepEqual(chunks, first.chunks);
    assert.deepEqual(view.values, first.view.values);
    assert.deepEqual(rendered(view), rendered(first.view));
    assert.deepEqual(rendered(view), [["human", "hello there"], ["ai", "echo: hello there"]]);
  });

  test("the page goes away mid-run (on_disconnect continue): the run finishes; a join from -1 rebuilds its final state", async () => {
    const { client } = sdk();
    const hook = new Hook(client, "slow");
    const ac = new AbortController();
    const { stream, view, created } = await hook.start({ ms: 250, tag: "r" }, { signal: ac.signal });
    try {
      for await (const c of stream) {
        applyEvent(view, c);
        if (c.event === "values") ac.abort(); // "reload" after the first values
      }
    } catch (e) {
      assert.equal(e.name, "AbortError", `unexpected ${e}`);
    }
    assert.deepEqual(view.values, { ms: 250, tag: "r", log: [] });
    const runId = created[0].run_id;
    assert.equal(hook.runId, runId);

    // A remount joins the run while it still runs (or after it ended).
    const { view: rebuilt, chunks } = await hook.join(runId);
    assert.equal(chunks[0].event, "metadata");
    assert.equal(chunks[0].data.run_id, runId);
    assert.deepEqual(chunks.filter((c) => c.event === "values").map((c) => c.data.log), [[], ["first:r"], ["first:r", "second:r"]]);
    assert.deepEqual(rebuilt.values, { ms: 250, tag: "r", log: ["first:r", "second:r"] });
    assert.equal((await client.runs.get(hook.threadId, runId)).status, "success");
    assert.deepEqual((await client.threads.getState(hook.threadId)).values, rebuilt.values);
    assert.deepEqual(hook.history[0].values, rebuilt.values);
  });
});

describe("stop()", () => {
  test("without reconnectOnMount: the stream is sent with on_disconnect cancel; aborting it mid-run cancels the run", async () => {
    const { client, requests } = sdk();
    const hook = new Hook(client, "slow", { reconnectOnMount: false });
    const ac = new AbortController();
    const { stream, view, created } = await hook.start({ ms: 5000, tag: "s" }, { signal: ac.signal });
    try {
      for await (const c of stream) {
        applyEvent(view, c);
        if (c.event === "values") ac.abort();
      }
    } catch (e) {
      assert.equal(e.name, "AbortError", `unexpected ${e}`);
    }
    const body = streamRequests(requests)[0].body;
    assert.equal(body.on_disconnect, "cancel");
    assert.equal(body.stream_resumable, false);
    const run = await waitForStatus(client, hook.threadId, created[0].run_id, "interrupted", 4_000);
    assert.equal(run.run_id, created[0].run_id);
    const t = await client.threads.get(hook.threadId);
    assert.notEqual(t.status, "busy");
    assert.deepEqual(t.values?.log ?? [], [], "the sleeping first node never finished");
  });

  test("with reconnectOnMount: abort plus runs.cancel(tid, runId) → POST …/cancel?wait=0&action=interrupt (202); the run is interrupted", async () => {
    const { client, requests } = sdk();
    const hook = new Hook(client, "slow");
    const ac = new AbortController();
    const { stream, view, created } = await hook.start({ ms: 5000, tag: "s" }, { signal: ac.signal });
    try {
      for await (const c of stream) {
        applyEvent(view, c);
        if (c.event === "values") ac.abort();
      }
    } catch (e) {
      assert.equal(e.name, "AbortError", `unexpected ${e}`);
    }
    assert.equal(streamRequests(requests)[0].body.on_disconnect, "continue");
    const runId = created[0].run_id;
    // The run goes on without its stream …
    assert.equal((await client.runs.get(hook.threadId, runId)).status, "running");
    // … until stop() cancels it the way the hook does.
    assert.equal(await client.runs.cancel(hook.threadId, runId), undefined);
    const q = new URL(requests.at(-1).url).searchParams;
    assert.equal(requests.at(-1).method, "POST");
    assert.equal(new URL(requests.at(-1).url).pathname, `/threads/${hook.threadId}/runs/${runId}/cancel`);
    assert.equal(q.get("wait"), "0");
    assert.equal(q.get("action"), "interrupt");
    await waitForStatus(client, hook.threadId, runId, "interrupted", 4_000);
    // A join afterwards replays what the run did and ends.
    const { view: rebuilt } = await hook.join(runId);
    assert.deepEqual(rebuilt.values, { ms: 5000, tag: "s", log: [] });
  });
});

describe("human in the loop", () => {
  test("the interrupt in values.__interrupt__ and in the history head's tasks[].interrupts; resume with command {resume} reaches the end", async () => {
    const { client, requests } = sdk();
    const hook = new Hook(client, "hitl");
    const { view } = await hook.submit({ input: "x" });
    const intr = view.values.__interrupt__;
    assert.equal(intr?.length, 1, JSON.stringify(view.values));
    assert.deepEqual(intr[0].value, { question: "approve?", input: "x" });
    assert.equal(typeof intr[0].id, "string");

    // Not streaming any more: the hook reads interrupts from the history head.
    const [head] = hook.history;
    assert.deepEqual(head.next, ["ask"]);
    const interrupts = head.tasks.flatMap((t) => t.interrupts);
    assert.deepEqual(interrupts.map((i) => [i.id, i.value]), [[intr[0].id, intr[0].value]]);
    assert.equal((await client.threads.get(hook.threadId)).status, "interrupted");

    // submit(undefined, {command: {resume}}): no input, the head as checkpoint.
    requests.length = 0;
    const { view: done } = await hook.submit(undefined, { command: { resume: "ok" } });
    const body = streamRequests(requests)[0].body;
    assert.equal("input" in body, false);
    assert.deepEqual(body.command, { resume: "ok" });
    assert.equal(body.checkpoint.checkpoint_id, head.checkpoint.checkpoint_id);
    assert.deepEqual(done.values, { input: "x", answer: "ok", result: "x:ok" });
    assert.deepEqual(hook.history[0].next, []);
    assert.deepEqual(hook.history[0].tasks, []);
    assert.equal((await client.threads.get(hook.threadId)).status, "idle");
  });
});
