// Named like Weft's demo foo_bar, but the project's own: its answer differs.
import { StateGraph, Annotation, START, END } from "@langchain/langgraph";

const State = Annotation.Root({
  foo: Annotation<string>(),
  bar: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

export const graph = new StateGraph(State)
  .addNode("node_a", () => ({ foo: "project-a", bar: ["project-a"] }))
  .addNode("node_b", () => ({ foo: "project-b", bar: ["project-b"] }))
  .addEdge(START, "node_a")
  .addEdge("node_a", "node_b")
  .addEdge("node_b", END)
  .compile();
