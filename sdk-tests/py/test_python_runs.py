"""Runs of Python graphs through `weft dev`, as the official Python SDK drives
them: joins, the messages and events stream modes, cancel with both actions,
the four multitask strategies and crons. The project is fixtures/pyproject
(served by the Python worker); the server's cron clock runs 60 times faster
(WEFT_TEST_CRON_SPEED), so a cron due every minute fires about every second.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest
from langgraph_sdk import get_client
from langgraph_sdk.errors import ConflictError, NotFoundError

from test_python_graphs import GRAPHS, wait_registered

PROJECT = Path(__file__).resolve().parent / "fixtures" / "pyproject"
CHAT = {"messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture(scope="module")
def dev(servers, tmp_path_factory):
    env = {"WEFT_PYTHON": sys.executable, "PYTHONDONTWRITEBYTECODE": "1", "WEFT_TEST_CRON_SPEED": "60",
           "WEFT_CACHE_DIR": str(tmp_path_factory.mktemp("cache"))}
    w = servers.start(["dev", "--config", str(PROJECT / "langgraph.json")], env=env)
    wait_registered(w.url, GRAPHS)
    return w


async def _until(pred, what: str, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while not (got := await pred()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)
    return got


async def _started(client, tid: str, wait: float) -> dict:
    """A sleeper run on tid that has done its first step and now waits `wait` seconds."""
    run = await client.runs.create(tid, "sleeper", input={"block": 0, "wait": wait})

    async def blocked():
        return (await client.threads.get_state(tid))["values"].get("steps") == ["blocked"]

    await _until(blocked, "the sleeper's first step")
    return run


async def test_join_and_join_stream(dev):
    client = get_client(url=dev.url)
    tid = (await client.threads.create())["thread_id"]
    run = await _started(client, tid, 1)
    parts = [p async for p in client.runs.join_stream(tid, run["run_id"], stream_mode="values")]
    assert parts and parts[-1].event == "values"
    assert parts[-1].data["steps"] == ["blocked", "waited"]
    assert await client.runs.join(tid, run["run_id"]) == {"block": 0, "wait": 1, "steps": ["blocked", "waited"]}
    # joined after the end: the stored events, replayed from the start
    replay = [p async for p in client.runs.join_stream(tid, run["run_id"], last_event_id="-1")]
    assert replay[0].event == "metadata" and replay[-1].data["steps"] == ["blocked", "waited"]


async def test_messages_and_events_modes(dev):
    """As LangGraph's Python server streams them (checked against `langgraph
    dev` serving the same graph): messages/metadata once, then the message so
    far for each token; LangChain's events of the run but the root's own
    on_chain_stream."""
    client = get_client(url=dev.url)
    parts = [p async for p in client.runs.stream(None, "chat", input=CHAT, stream_mode=["messages", "events"])]
    msgs = [p for p in parts if p.event.startswith("messages")]
    assert [p.event for p in msgs] == ["messages/metadata"] + ["messages/partial"] * 7
    [(msg_id, meta)] = msgs[0].data.items()
    assert meta["metadata"]["langgraph_node"] == "respond"
    partial = [p.data[0] for p in msgs[1:]]
    assert {m["id"] for m in partial} == {msg_id}
    assert [m["content"] for m in partial][::3] == ["Hello", "Hello from ", "Hello from env: hi"]
    kinds = [p.data["event"] for p in parts if p.event == "events"]
    assert kinds == ["on_chain_start", "on_chain_start", "on_chat_model_start", *["on_chat_model_stream"] * 7,
                     "on_chat_model_end", "on_chain_stream", "on_chain_end", "on_chain_end"]
    # messages-tuple: LangGraph's (message chunk, metadata) pairs
    pairs = [p.data async for p in client.runs.stream(None, "chat", input=CHAT, stream_mode="messages-tuple")
             if p.event == "messages"]
    assert len(pairs) == 7 and all(m["type"] == "AIMessageChunk" and md["langgraph_node"] == "respond" for m, md in pairs)


async def test_cancel_interrupt_keeps_what_was_done(dev):
    client = get_client(url=dev.url)
    tid = (await client.threads.create())["thread_id"]
    run = await _started(client, tid, 30)
    await client.runs.cancel(tid, run["run_id"], wait=True, action="interrupt")
    assert (await client.runs.get(tid, run["run_id"]))["status"] == "interrupted"
    state = await client.threads.get_state(tid)
    assert state["values"]["steps"] == ["blocked"] and state["next"] == ["wait"]
    # a thread with a task left to run reads interrupted, as on LangGraph's server
    assert (await client.threads.get(tid))["status"] == "interrupted"
    # and a run without input continues it (after an edit: no 30 s wait this time)
    await client.threads.update_state(tid, {"wait": 0})
    assert (await client.threads.get_state(tid))["next"] == ["wait"]
    assert (await client.runs.wait(tid, "sleeper", input=None))["steps"] == ["blocked", "waited"]


async def test_cancel_rollback_removes_the_run_and_its_checkpoints(dev):
    client = get_client(url=dev.url)
    tid = (await client.threads.create())["thread_id"]
    run = await _started(client, tid, 30)
    await client.runs.cancel(tid, run["run_id"], wait=True, action="rollback")

    async def gone():
        try:
            await client.runs.get(tid, run["run_id"])
            return False
        except NotFoundError:
            return True

    await _until(gone, "the rolled-back run to be deleted")
    assert await client.threads.get_history(tid) == []
    assert (await client.threads.get(tid))["status"] == "idle"


async def test_multitask_reject_enqueue_and_rollback(dev):
    client = get_client(url=dev.url)
    # reject: the second run is refused while the first runs
    tid = (await client.threads.create())["thread_id"]
    first = await _started(client, tid, 1)
    with pytest.raises(ConflictError):
        await client.runs.create(tid, "sleeper", input={"block": 0, "wait": 0}, multitask_strategy="reject")
    await client.runs.join(tid, first["run_id"])

    # enqueue: the second waits for the first, then runs on its state
    tid = (await client.threads.create())["thread_id"]
    first = await _started(client, tid, 1)
    second = await client.runs.create(tid, "sleeper", input={"block": 0, "wait": 0}, multitask_strategy="enqueue")
    assert second["status"] == "pending"
    out = await client.runs.join(tid, second["run_id"])
    assert out["steps"] == ["blocked", "waited", "blocked", "waited"]
    assert (await client.runs.get(tid, first["run_id"]))["status"] == "success"

    # rollback: the first is cancelled and deleted with its checkpoints, the second runs alone
    tid = (await client.threads.create())["thread_id"]
    first = await _started(client, tid, 30)
    second = await client.runs.create(tid, "sleeper", input={"block": 0, "wait": 0}, multitask_strategy="rollback")
    assert (await client.runs.join(tid, second["run_id"]))["steps"] == ["blocked", "waited"]
    with pytest.raises(NotFoundError):
        await client.runs.get(tid, first["run_id"])
    assert [r["run_id"] for r in await client.runs.list(tid)] == [second["run_id"]]


async def test_crons_on_a_thread_and_stateless(dev):
    client = get_client(url=dev.url)
    tid = (await client.threads.create())["thread_id"]
    cron = await client.crons.create_for_thread(tid, "chat", schedule="* * * * *", input=CHAT)
    stateless = await client.crons.create("sleeper", schedule="* * * * *", input={"block": 0, "wait": 0},
                                          on_run_completed="keep")
    try:
        async def two_turns():
            runs = await client.runs.list(tid)
            done = [r for r in runs if r["status"] == "success"]
            return len(done) >= 2 and done

        await _until(two_turns, "two cron runs on the thread", timeout=60)
        messages = (await client.threads.get_state(tid))["values"]["messages"]
        assert [m["content"] for m in messages[:4]] == ["hi", "Hello from env: hi", "hi", "Hello from env: hi"]
        assert any(c["cron_id"] == cron["cron_id"] for c in await client.crons.search(thread_id=tid))

        # a stateless cron: each firing a run on a thread of its own, kept (on_run_completed keep)
        async def fired():
            return await client.threads.search(metadata={"cron_id": stateless["cron_id"]}, limit=10)

        [thread, *_] = await _until(fired, "the stateless cron to fire", timeout=60)
        [run] = await client.runs.list(thread["thread_id"])
        assert await client.runs.join(thread["thread_id"], run["run_id"]) == {"block": 0, "wait": 0,
                                                                              "steps": ["blocked", "waited"]}
    finally:
        await client.crons.delete(cron["cron_id"])
        await client.crons.delete(stateless["cron_id"])
    assert await client.crons.search(thread_id=tid) == []
