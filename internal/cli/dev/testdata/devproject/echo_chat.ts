// Answers every message with the greeting of langgraph.json's env.
import { StateGraph, MessagesAnnotation, START, END } from "@langchain/langgraph";

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("reply", (state: typeof MessagesAnnotation.State) => {
    const last = state.messages[state.messages.length - 1];
    return { messages: [{ role: "assistant", content: `${process.env.DEV_GREETING}: ${String(last?.content ?? "")}` }] };
  })
  .addEdge(START, "reply")
  .addEdge("reply", END)
  .compile();
