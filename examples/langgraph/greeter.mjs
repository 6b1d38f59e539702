// A LangGraph.js graph for the JS worker: it answers each human message with a greeting.
// No model is called, so the example runs without a provider key; replace `reply` with your own nodes.
import { AIMessage } from "@langchain/core/messages";
import { MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";

const reply = (state) => {
  const last = state.messages[state.messages.length - 1];
  return { messages: [new AIMessage(`Hello from JavaScript, ${last.content}!`)] };
};

export const graph = new StateGraph(MessagesAnnotation).addNode("reply", reply).addEdge(START, "reply").compile();
