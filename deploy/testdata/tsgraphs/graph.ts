// A TypeScript graph for deploy/dockerfile_test.go: the JS worker image loads it with tsx, from the
// project's own packages (tsx a devDependency, as in most LangGraph.js projects). It answers with the
// config's env (GREETING) and the last message.
import { AIMessage } from "@langchain/core/messages";
import { MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";

const reply = (state: typeof MessagesAnnotation.State): { messages: AIMessage[] } => {
  const last = state.messages[state.messages.length - 1];
  return { messages: [new AIMessage(`${process.env.GREETING ?? "unset"}: ${String(last.content)}`)] };
};

export const graph = new StateGraph(MessagesAnnotation).addNode("reply", reply).addEdge(START, "reply").compile();
