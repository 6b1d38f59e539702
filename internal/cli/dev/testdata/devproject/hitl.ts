// Asks a human before it answers.
import { StateGraph, Annotation, START, END, interrupt } from "@langchain/langgraph";

const State = Annotation.Root({ answer: Annotation<string>() });

export const graph = new StateGraph(State)
  .addNode("ask", () => ({ answer: String(interrupt({ question: "approve?" })) }))
  .addEdge(START, "ask")
  .addEdge("ask", END)
  .compile();
