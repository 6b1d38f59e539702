"""LangGraph's own PostgresSaver and Weft share threads, both ways (issue 29).

PostgresSaver (langgraph-checkpoint-postgres, unmodified, schema langgraph:
the views of Weft's tables) writes a thread of fixtures/pybench's echo_chat
the way LangGraph's Python server would: values as JsonPlusSerializer's
msgpack (type "msgpack", LangGraph's ext types for the messages). Weft then
shows that thread through the REST API as the Python server does (messages
as LangChain message dicts), the Python worker continues it, and
PostgresSaver reads the checkpoint the worker wrote (JSON with LangChain
envelopes, which JsonPlusSerializer revives) as LangChain messages again.
PostgresSaver writes into schema public (Weft's tables, LangGraph's
layout): its upserts' ON CONFLICT cannot target the views of schema
langgraph, which it reads through.
"""

from __future__ import annotations

import importlib.util
import sys

import pytest
from langgraph_sdk import get_client

from pyservers import conninfo, project_copy, start_weft_dev


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return project_copy(tmp_path_factory.mktemp("pgsaver"))


@pytest.fixture(scope="module")
def dev(servers, project, tmp_path_factory):
    return start_weft_dev(servers, project, env={"WEFT_CACHE_DIR": str(tmp_path_factory.mktemp("cache"))})


def load_echo_chat(project):
    """The project's echo_chat, compiled here (the same code the worker runs)."""
    spec = importlib.util.spec_from_file_location("pgsaver_pybench_graphs", project / "graphs.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod.echo_chat


async def test_weft_and_postgres_saver_continue_each_others_threads(dev, project):
    import psycopg
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row

    client = get_client(url=dev.url)
    thread = await client.threads.create(metadata={"graph_id": "echo_chat"})
    tid = thread["thread_id"]
    config = {"configurable": {"thread_id": tid}}
    graph = load_echo_chat(project)
    # PostgresSaver writes into Weft's own tables (schema public: its upserts'
    # ON CONFLICT cannot go through the views of schema langgraph).
    with psycopg.connect(conninfo(dev, "public"), autocommit=True, row_factory=dict_row) as conn:
        saver = PostgresSaver(conn)
        local = graph.copy(update={"checkpointer": saver})
        for text in ("one", "two"):
            local.invoke({"messages": [HumanMessage(content=text)]}, config)
        written = list(saver.list(config))
        types = {r["type"] for r in conn.execute(
            "SELECT DISTINCT type FROM public.checkpoint_blobs WHERE thread_id = %s", (tid,)).fetchall()}
    assert "msgpack" in types, f"PostgresSaver wrote blob types {types}"

    # Weft reads PostgresSaver's msgpack: the state and the history as the
    # Python server shows them.
    state = await client.threads.get_state(tid)
    got = [(m["type"], m["content"]) for m in state["values"]["messages"]]
    assert got == [("human", "one"), ("ai", "echo: one"), ("human", "two"), ("ai", "echo: two")]
    assert all(isinstance(m["id"], str) and m["id"] for m in state["values"]["messages"])
    assert state["checkpoint"]["checkpoint_id"] == written[0].checkpoint["id"]
    assert state["next"] == [] and state["tasks"] == []
    history = await client.threads.get_history(tid, limit=100)
    assert [h["checkpoint"]["checkpoint_id"] for h in history] == [t.checkpoint["id"] for t in written]
    first_input = history[-1]
    assert first_input["metadata"]["source"] == "input" and first_input["next"] == ["__start__"]

    # The Python worker continues the thread PostgresSaver wrote.
    out = await client.runs.wait(tid, "echo_chat", input={"messages": [{"type": "human", "content": "three"}]})
    assert [(m["type"], m["content"]) for m in out["messages"]] == got + [("human", "three"), ("ai", "echo: three")]

    # And PostgresSaver (reading through schema langgraph) reads what the
    # worker wrote as LangChain messages, every checkpoint of the thread.
    with psycopg.connect(conninfo(dev, "langgraph,public"), autocommit=True, row_factory=dict_row) as conn:
        saver = PostgresSaver(conn)
        latest = saver.get_tuple(config)
        messages = latest.checkpoint["channel_values"]["messages"]
        assert [type(m) for m in messages] == [HumanMessage, AIMessage] * 3
        assert [m.content for m in messages] == [c for _, c in got] + ["three", "echo: three"]
        assert latest.checkpoint["id"] == (await client.threads.get_state(tid))["checkpoint"]["checkpoint_id"]
        assert len(list(saver.list(config))) == len(written) + 3
