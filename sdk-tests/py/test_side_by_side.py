"""Side by side with the official Python server (issue 29, part 5).

The same test functions, the server as a parameter: `weft dev` (the Python
worker, PostgreSQL) and `langgraph dev` (LangGraph's own server from
langgraph-cli[inmem], in memory, offline) serve the same project directory (a
copy of fixtures/pybench), and the official Python SDK checks both alike: wait,
stream values/updates, state, history, interrupt and resume, the store, a
stateless run, the sync client.

`langgraph dev` needs langgraph-cli[inmem] (pinned in requirements.txt); the
langgraph-dev half is skipped, saying so, when it is not installed.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from langgraph_sdk import get_client, get_sync_client

from pyservers import langgraph_cli, project_copy, start_langgraph_dev, start_weft_dev


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    return project_copy(tmp_path_factory.mktemp("side-by-side"))


@pytest.fixture(scope="module", params=["weft-dev", "langgraph-dev"])
def server(request, servers, project, tmp_path_factory):
    """The URL of a server serving the project: weft dev or langgraph dev."""
    if request.param == "weft-dev":
        w = start_weft_dev(servers, project, env={"WEFT_CACHE_DIR": str(tmp_path_factory.mktemp("cache"))})
        yield w.url
        return
    try:
        langgraph_cli()
    except RuntimeError as e:
        pytest.skip(str(e))
    srv = start_langgraph_dev(project, str(tmp_path_factory.mktemp("lgdev")))
    try:
        yield srv.url
    finally:
        srv.stop()


def contents(messages) -> list[tuple[str, str]]:
    return [(m["type"], m["content"]) for m in messages]


async def test_wait_state_and_history(server):
    client = get_client(url=server)
    tid = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(tid, "echo_chat", input={"messages": [{"role": "user", "content": "hi"}]})
    assert contents(out["messages"]) == [("human", "hi"), ("ai", "echo: hi")]
    out = await client.runs.wait(tid, "echo_chat", input={"messages": [{"role": "user", "content": "again"}]})
    assert contents(out["messages"]) == [("human", "hi"), ("ai", "echo: hi"), ("human", "again"), ("ai", "echo: again")]
    state = await client.threads.get_state(tid)
    assert state["values"]["messages"] == out["messages"]
    assert state["next"] == [] and state["tasks"] == []
    assert state["metadata"]["source"] == "loop" and state["metadata"]["step"] == 4
    assert state["metadata"]["graph_id"] == "echo_chat"
    history = await client.threads.get_history(tid)
    assert [h["metadata"]["source"] for h in history] == ["loop", "loop", "input"] * 2
    assert [h["metadata"]["step"] for h in history] == [4, 3, 2, 1, 0, -1]
    assert history[0]["checkpoint"]["checkpoint_id"] == state["checkpoint"]["checkpoint_id"]
    assert [len(h["values"].get("messages", [])) for h in history] == [4, 3, 2, 2, 1, 0]
    # a page of history, and the state of an older checkpoint
    page = await client.threads.get_history(tid, limit=2)
    assert [h["checkpoint"]["checkpoint_id"] for h in page] == [h["checkpoint"]["checkpoint_id"] for h in history[:2]]
    older = await client.threads.get_state(tid, checkpoint_id=history[3]["checkpoint"]["checkpoint_id"])
    assert contents(older["values"]["messages"]) == [("human", "hi"), ("ai", "echo: hi")]
    assert (await client.threads.get(tid))["status"] == "idle"


async def test_stream_values_and_updates(server):
    client = get_client(url=server)
    tid = (await client.threads.create())["thread_id"]
    seen: list[tuple[str, dict]] = []
    async for part in client.runs.stream(tid, "foo_bar_py", input={"bar": ["x"]}, stream_mode=["values", "updates"]):
        seen.append((part.event, part.data))
    assert seen[0][0] == "metadata" and seen[0][1]["run_id"]
    assert seen[1:] == [
        ("values", {"bar": ["x"]}),
        ("updates", {"node_a": {"foo": "a", "bar": ["a"]}}),
        ("values", {"foo": "a", "bar": ["x", "a"]}),
        ("updates", {"node_b": {"foo": "b", "bar": ["b"]}}),
        ("values", {"foo": "b", "bar": ["x", "a", "b"]}),
    ]
    assert (await client.threads.get_state(tid))["values"] == {"foo": "b", "bar": ["x", "a", "b"]}


async def test_stateless_wait(server):
    client = get_client(url=server)
    assert await client.runs.wait(None, "foo_bar_py", input={}) == {"foo": "b", "bar": ["a", "b"]}


async def test_interrupt_and_resume(server):
    client = get_client(url=server)
    tid = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(tid, "ask", input={"question": "name?"})
    assert out["log"] == ["prepared"]
    assert out["__interrupt__"][0]["value"] == {"question": "name?"}
    state = await client.threads.get_state(tid)
    assert state["next"] == ["ask_human"]
    assert state["tasks"][0]["name"] == "ask_human"
    assert state["tasks"][0]["interrupts"][0]["value"] == {"question": "name?"}
    assert (await client.threads.get(tid))["status"] == "interrupted"
    out = await client.runs.wait(tid, "ask", command={"resume": "Ada"})
    assert out == {"question": "name?", "answer": "Ada", "log": ["prepared", "answered Ada"]}
    assert (await client.threads.get(tid))["status"] == "idle"
    assert (await client.threads.get_state(tid))["next"] == []


async def test_store_inside_a_graph_and_from_the_client(server):
    client = get_client(url=server)
    user = f"u{time.time_ns()}"
    await client.runs.wait(None, "memory", input={"user": user, "note": "first"})
    out = await client.runs.wait(None, "memory", input={"user": user, "note": "second"})
    assert out["notes"] == ["first", "second"]
    items = await client.store.search_items(["notes", user])
    assert sorted(i["value"]["text"] for i in items["items"]) == ["first", "second"]
    await client.store.put_item(["notes", user], "n9", {"text": "from the client"})
    out = await client.runs.wait(None, "memory", input={"user": user, "note": "third"})
    assert out["notes"] == ["first", "from the client", "second", "third"]
    item = await client.store.get_item(["notes", user], "n9")
    assert item["value"] == {"text": "from the client"} and item["namespace"] == ["notes", user]


def test_sync_client(server):
    client = get_sync_client(url=server)
    tid = client.threads.create()["thread_id"]
    out = client.runs.wait(tid, "echo_chat", input={"messages": [{"role": "user", "content": "sync"}]})
    assert out["messages"][-1]["content"] == "echo: sync"
    [assistant] = client.assistants.search(graph_id="ask")
    drawing = client.assistants.get_graph(assistant["assistant_id"])
    assert {n["id"] for n in drawing["nodes"]} >= {"__start__", "prepare", "ask_human", "__end__"}
