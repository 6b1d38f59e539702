// The JavaScript graphs of the server bench (servers.mjs), served alike by
// `weft dev` (Weft's JS worker) and LangGraph.js's own dev server: no
// network, no model, deterministic. The twins of the Python fixture
// sdk-tests/py/fixtures/pybench.
//
// - foo_bar: START -> node_a -> node_b -> END; foo keeps the last value,
//   bar appends (the shape of Weft's built-in foo_bar). Answer:
//   {"foo": "b", "bar": ["a", "b"]}.
// - echo_chat: a MessagesAnnotation chat answering the last message with an
//   AI message "echo: <its text>" (the twin of the built-in echo_chat).
import { AIMessage } from "@langchain/core/messages";
import { Annotation, END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";

const FooBar = Annotation.Root({
  foo: Annotation(),
  bar: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

export const foo_bar = new StateGraph(FooBar)
  .addNode("node_a", () => ({ foo: "a", bar: ["a"] }))
  .addNode("node_b", () => ({ foo: "b", bar: ["b"] }))
  .addEdge(START, "node_a")
  .addEdge("node_a", "node_b")
  .addEdge("node_b", END)
  .compile();

export const echo_chat = new StateGraph(MessagesAnnotation)
  .addNode("echo", (state) => ({ messages: [new AIMessage(`echo: ${state.messages.at(-1).content}`)] }))
  .addEdge(START, "echo")
  .addEdge("echo", END)
  .compile();
