// Answers with the x-caller header the run's config carries (none: "anonymous").
import { StateGraph, Annotation, START } from "@langchain/langgraph";

const State = Annotation.Root({ caller: Annotation<string>() });

export const graph = new StateGraph(State)
  .addNode("who", (_: unknown, config: { configurable?: Record<string, unknown> }) => ({
    caller: String(config.configurable?.["x-caller"] ?? "anonymous"),
  }))
  .addEdge(START, "who")
  .compile();
