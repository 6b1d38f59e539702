// Long-thread baseline for `weft-load -suite long`: LangGraph.js's own
// PostgresSaver writing an echo chat, one thread, one turn at a time, so
// that weft-load can report the rows and relation sizes the stock saver
// leaves for the same conversation Weft stored.
//
// The graph: MessagesAnnotation, START → echo → END, echo answering the last
// human message with an AIMessage "echo: <text>" (as Weft's built-in
// echo_chat does). Each turn is graph.invoke({messages: [human]}) on the
// same thread_id, the saver created with fromConnString(dsn, {schema}) and
// setup() (its own tables in that schema, which must not exist yet).
//
// Input on stdin: {"texts": ["…", …]}, one human message per turn.
// Output on stdout: one JSON line {"thread_id", "turns", "messages",
// "ms_per_turn": {"p50", "p95", "mean"}, "total_ms"}.
//
//   node bench/long-saver.mjs --dsn postgres:///weft?host=/tmp/x --schema bench_saver_100 < texts.json

import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";

const { values: args } = parseArgs({
  options: {
    dsn: { type: "string" },
    schema: { type: "string" },
  },
});
if (!args.dsn || !args.schema || !/^[a-z_][a-z0-9_]*$/.test(args.schema)) {
  console.error("usage: long-saver.mjs --dsn <postgres url> --schema <lowercase identifier> < {\"texts\": [...]}");
  process.exit(2);
}

let input = "";
for await (const chunk of process.stdin) input += chunk;
const { texts } = JSON.parse(input);
if (!Array.isArray(texts) || texts.length === 0 || texts.some((t) => typeof t !== "string")) {
  console.error("long-saver.mjs: stdin must be {\"texts\": [non-empty list of strings]}");
  process.exit(2);
}

function echo(state) {
  let text = "";
  for (let i = state.messages.length - 1; i >= 0; i--) {
    const m = state.messages[i];
    if (m._getType() === "human") {
      text = typeof m.content === "string" ? m.content : "";
      break;
    }
  }
  return { messages: [new AIMessage({ content: "echo: " + text, id: randomUUID() })] };
}

const saver = PostgresSaver.fromConnString(args.dsn, { schema: args.schema });
try {
  await saver.setup();
  const graph = new StateGraph(MessagesAnnotation).addNode("echo", echo).addEdge(START, "echo").addEdge("echo", END).compile({ checkpointer: saver });
  const threadId = randomUUID();
  const config = { configurable: { thread_id: threadId } };
  const lat = [];
  const start = performance.now();
  let out;
  for (const [i, text] of texts.entries()) {
    const t0 = performance.now();
    out = await graph.invoke({ messages: [new HumanMessage({ content: text, id: randomUUID() })] }, config);
    lat.push(performance.now() - t0);
    const last = out.messages.at(-1);
    if (out.messages.length !== 2 * (i + 1) || last.content !== "echo: " + text) {
      throw new Error(`turn ${i + 1}: unexpected state (${out.messages.length} messages, last ${JSON.stringify(last.content)})`);
    }
  }
  const total = performance.now() - start;
  const sorted = [...lat].sort((a, b) => a - b);
  const pct = (p) => sorted[Math.min(Math.floor(p * sorted.length), sorted.length - 1)];
  console.log(
    JSON.stringify({
      thread_id: threadId,
      turns: texts.length,
      messages: out.messages.length,
      ms_per_turn: { p50: pct(0.5), p95: pct(0.95), mean: total / texts.length },
      total_ms: total,
    }),
  );
} finally {
  await saver.end();
}
