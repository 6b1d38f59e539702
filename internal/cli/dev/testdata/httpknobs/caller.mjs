// Answers with the identity the run's config carries (none: "anonymous").
import { StateGraph, Annotation, START } from "@langchain/langgraph";

const State = Annotation.Root({ caller: Annotation() });

export const graph = new StateGraph(State)
  .addNode("who", (_, config) => ({ caller: String(config.configurable?.langgraph_auth_user_id ?? "anonymous") }))
  .addEdge(START, "who")
  .compile();
