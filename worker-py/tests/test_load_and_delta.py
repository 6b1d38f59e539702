"""How the worker calls graph factories and which delta channels it
registers and stores (weft_worker.load, weft_worker.delta)."""

from __future__ import annotations

import operator
from typing import Annotated

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph._internal._typing import MISSING
from langgraph.channels.delta import DeltaChannel
from langgraph.graph import START, StateGraph
from langgraph.pregel._messages import _messages_delta_reducer
from langgraph_sdk.runtime import ServerRuntime
from typing_extensions import TypedDict

from weft_worker import delta
from weft_worker.load import factory_params, server_runtime


def test_factory_params_as_the_official_server_classifies_them():
    def none():
        pass

    def config(config):
        pass

    def runtime(rt: ServerRuntime):
        pass

    def both(config: RunnableConfig, runtime: ServerRuntime):
        pass

    def both_reversed(runtime: "ServerRuntime", cfg):
        pass

    assert factory_params(none) == {}
    assert factory_params(config) == {"config": "config"}
    assert factory_params(runtime) == {"rt": "runtime"}
    assert factory_params(both) == {"config": "config", "runtime": "runtime"}
    assert factory_params(both_reversed) == {"runtime": "runtime", "cfg": "config"}


def test_factory_params_refused():
    def two_configs(a, b):
        pass

    def three(a, b, c):
        pass

    with pytest.raises(TypeError, match="ServerRuntime"):
        factory_params(two_configs)
    with pytest.raises(TypeError, match="0, 1 or 2"):
        factory_params(three)


def test_server_runtime_by_access_context():
    run = server_runtime("threads.create_run", "store", {"k": 1}, {"identity": "ada"})
    assert run.execution_runtime is run and run.context == {"k": 1} and run.user.identity == "ada"
    read = server_runtime("assistants.read", None, None, None)
    assert read.execution_runtime is None and read.user is None


def _files(left, writes):
    out = dict(left or {})
    for w in writes:
        out.update(w)
    return out


class State(TypedDict):
    messages: Annotated[list, DeltaChannel(_messages_delta_reducer)]
    files: Annotated[dict, DeltaChannel(_files)]
    plain: Annotated[list, operator.add]


def _graph():
    return (StateGraph(State).add_node("n", lambda s: {"files": {"a": 1}, "messages": [{"role": "user", "content": "x"}]})
            .add_edge(START, "n").compile())


def test_channel_kinds():
    assert delta.channel_kinds(_graph()) == {"messages": delta.DELTA_MESSAGES, "files": delta.DELTA_STORED}


def test_installed_delta_channels_store_their_values_unless_weft_replays_them():
    g = _graph()
    delta.install()
    files = g.channels["files"].from_checkpoint(None)
    files.update([{"a": 1}])
    assert files.checkpoint() == {"a": 1}  # stored: Weft cannot run _files
    messages = g.channels["messages"].from_checkpoint(None)
    messages.update([[{"role": "user", "content": "x", "id": "1"}]])
    assert messages.checkpoint() is MISSING  # LangGraph's own: only the writes are stored
