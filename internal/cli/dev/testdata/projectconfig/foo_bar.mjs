// The shape of Weft's built-in foo_bar: foo (last value), bar (appended
// list); START → node_a → node_b → END, each writing a constant.
import { StateGraph, Annotation, START, END } from "@langchain/langgraph";

const State = Annotation.Root({
  foo: Annotation(),
  bar: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

export const graph = new StateGraph(State)
  .addNode("node_a", () => ({ foo: "a", bar: ["a"] }))
  .addNode("node_b", () => ({ foo: "b", bar: ["b"] }))
  .addEdge(START, "node_a")
  .addEdge("node_a", "node_b")
  .addEdge("node_b", END)
  .compile();
