"""A Python graph for the Python worker: it answers each human message with a greeting.

No model is called, so the example runs without a provider key; replace `reply` with your own nodes.
"""

from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph


def reply(state: MessagesState) -> dict:
    last = state["messages"][-1]
    return {"messages": [AIMessage(content=f"Hello from Python, {last.content}!")]}


graph = StateGraph(MessagesState).add_node("reply", reply).add_edge(START, "reply").compile()
