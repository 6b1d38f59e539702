// echo: the text back (START → echo → END).
import { StateGraph, Annotation, START, END } from "@langchain/langgraph";

const State = Annotation.Root({ text: Annotation() });

export const graph = new StateGraph(State)
  .addNode("echo", (s) => ({ text: s.text }))
  .addEdge(START, "echo")
  .addEdge("echo", END)
  .compile();
