"""echo_py: the text back, with the identity the run's config carries."""

from langgraph.graph import START, StateGraph
from langgraph.types import RunnableConfig
from typing_extensions import TypedDict


class S(TypedDict):
    text: str


def echo(state: S, config: RunnableConfig):
    return {"text": f"{state['text']} ({config['configurable'].get('langgraph_auth_user_id', 'anonymous')})"}


graph = StateGraph(S).add_node("echo", echo).add_edge(START, "echo").compile()
