// Two steps of `ms` milliseconds each.
import { StateGraph, Annotation, START, END } from "@langchain/langgraph";

const State = Annotation.Root({
  ms: Annotation<number>({ reducer: (_, b) => b, default: () => 100 }),
  steps: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

const step = (name: string) => async (state: typeof State.State) => {
  await new Promise((r) => setTimeout(r, state.ms));
  return { steps: [name] };
};

export const graph = new StateGraph(State)
  .addNode("first", step("first"))
  .addNode("second", step("second"))
  .addEdge(START, "first")
  .addEdge("first", "second")
  .addEdge("second", END)
  .compile();
