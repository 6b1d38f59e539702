"""echo_py and plain_py: the text back (START → echo → END)."""

from langgraph.graph import START, StateGraph
from typing_extensions import TypedDict


class S(TypedDict):
    text: str


def echo(state: S):
    return {"text": state["text"]}


graph = StateGraph(S).add_node("echo", echo).add_edge(START, "echo").compile()
