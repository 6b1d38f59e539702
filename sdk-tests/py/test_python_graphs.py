"""Python graphs through `weft dev`: the official Python SDK against a
LangGraph (Python) project served by the Python worker (worker-py).

The project (fixtures/pyproject) has a MessagesState chat with a fake
streaming model, an interrupting graph, a subgraph with a dataclass state, a
sleeper (a blocking sync node, then an async one), a graph using the store
and a factory graph. One `weft dev` serves them for the module, with a short
lease so that the crash tests at the end run in seconds.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from langgraph.pregel.remote import RemoteGraph
from langgraph_sdk import get_client, get_sync_client

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "fixtures" / "pyproject"
WORKER_PY = HERE.parents[1] / "worker-py"
GRAPHS = ["chat", "ask", "nested", "sleeper", "memory", "made", "fanout", "functional", "deep_ask", "hog", "in_context"]
LEASE_S = 4


def _get(url: str):
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read())


def _post(url: str, body: dict):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def wait_registered(url: str, graphs=GRAPHS, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = {a["graph_id"] for a in _post(url + "/assistants/search", {"limit": 100})}
        if set(graphs) <= found:
            return
        time.sleep(0.2)
    raise RuntimeError(f"graphs {graphs} not registered within {timeout}s")


def worker_pids(log: str) -> list[int]:
    return [int(m) for m in re.findall(r'msg="Python worker started" pid=(\d+)', log)]


@pytest.fixture(scope="module")
def dev(servers, tmp_path_factory):
    env = {"WEFT_PYTHON": sys.executable, "PYTHONDONTWRITEBYTECODE": "1",
           "WEFT_CACHE_DIR": str(tmp_path_factory.mktemp("cache"))}
    w = servers.start(["dev", "--config", str(PROJECT / "langgraph.json"), "-lease", f"{LEASE_S}s"], env=env)
    wait_registered(w.url)
    return w


async def test_wait_state_and_history(dev):
    client = get_client(url=dev.url)
    thread = await client.threads.create()
    tid = thread["thread_id"]
    out = await client.runs.wait(tid, "chat", input={"messages": [{"role": "user", "content": "hi"}]})
    assert [(m["type"], m["content"]) for m in out["messages"]] == [("human", "hi"), ("ai", "Hello from env: hi")]
    state = await client.threads.get_state(tid)
    assert [m["content"] for m in state["values"]["messages"]] == ["hi", "Hello from env: hi"]
    assert state["next"] == []
    assert state["metadata"]["graph_id"] == "chat" and state["metadata"]["source"] == "loop"
    # a second turn sees the first (the checkpointer reads what it wrote)
    out = await client.runs.wait(tid, "chat", input={"messages": [{"role": "user", "content": "again"}]})
    assert [m["content"] for m in out["messages"]][-2:] == ["again", "Hello from env: again"]
    assert len(out["messages"]) == 4
    history = await client.threads.get_history(tid)
    assert [h["metadata"]["source"] for h in history][-1] == "input"
    assert len(history) == 6  # per turn: input, loop (the input applied), loop (respond)
    assert [h["metadata"]["step"] for h in history] == [4, 3, 2, 1, 0, -1]
    t = await client.threads.get(tid)
    assert t["status"] == "idle"


async def test_stream_modes(dev):
    client = get_client(url=dev.url)
    thread = await client.threads.create()
    seen: dict[str, list] = {}
    async for part in client.runs.stream(thread["thread_id"], "chat",
                                         input={"messages": [{"role": "user", "content": "tokens please"}]},
                                         stream_mode=["values", "updates", "messages-tuple", "custom", "debug"]):
        seen.setdefault(part.event, []).append(part.data)
    assert seen["metadata"][0]["run_id"]
    tokens = "".join(chunk["content"] for chunk, _meta in seen["messages"])
    assert tokens == "Hello from env: tokens please"
    assert seen["messages"][0][1]["langgraph_node"] == "respond"
    assert seen["custom"] == [{"progress": "thinking"}]
    assert seen["updates"][-1]["respond"]["messages"][0]["content"] == "Hello from env: tokens please"
    assert seen["values"][-1]["messages"][-1]["type"] == "ai"
    assert {d["type"] for d in seen["debug"]} >= {"checkpoint", "task", "task_result"}


async def test_interrupt_and_resume(dev):
    client = get_client(url=dev.url)
    thread = await client.threads.create()
    tid = thread["thread_id"]
    out = await client.runs.wait(tid, "ask", input={"question": "name?"})
    assert out["log"] == ["prepared"]
    assert out["__interrupt__"][0]["value"] == {"question": "name?"}
    state = await client.threads.get_state(tid)
    assert state["next"] == ["ask_human"]
    assert state["tasks"][0]["interrupts"][0]["value"] == {"question": "name?"}
    assert (await client.threads.get(tid))["status"] == "interrupted"
    out = await client.runs.wait(tid, "ask", command={"resume": "Ada"})
    assert out == {"question": "name?", "answer": "Ada", "log": ["prepared", "answered Ada"]}
    assert (await client.threads.get(tid))["status"] == "idle"


async def test_subgraph_namespaces_and_dataclass_state(dev):
    client = get_client(url=dev.url)
    thread = await client.threads.create()
    events = []
    async for part in client.runs.stream(thread["thread_id"], "nested", input={"items": []},
                                         stream_mode="updates", stream_subgraphs=True):
        events.append((part.event, part.data))
    names = [e for e, _ in events if e != "metadata"]
    assert names[0] == "updates" and names[-1] == "updates"
    sub = [(e, d) for e, d in events if e.startswith("updates|inner:")]
    assert sub and sub[0][1] == {"inner_step": {"items": ["inner"]}}
    state = await client.threads.get_state(thread["thread_id"])
    # the subgraph returns its whole list, which the parent's reducer adds (LangGraph's semantics)
    assert state["values"]["items"] == ["outer", "outer", "inner"]


async def test_update_state_fork_and_copy(dev):
    client = get_client(url=dev.url)
    thread = await client.threads.create()
    tid = thread["thread_id"]
    await client.runs.wait(tid, "ask", input={"question": "q"})
    # update_state as a node: LangGraph's reducer (operator.add) applies
    await client.threads.update_state(tid, {"log": ["edited"]}, as_node="prepare")
    state = await client.threads.get_state(tid)
    assert state["values"]["log"] == ["prepared", "edited"]
    assert state["metadata"]["source"] == "update"
    # fork: update an older checkpoint; the thread's head moves to the fork
    history = await client.threads.get_history(tid)
    first_loop = next(h for h in history if h["metadata"]["source"] == "loop" and h["metadata"]["step"] == 1)
    forked = await client.threads.update_state(tid, {"question": "forked?"},
                                               checkpoint_id=first_loop["checkpoint"]["checkpoint_id"])
    state = await client.threads.get_state(tid)
    assert state["checkpoint"]["checkpoint_id"] == forked["checkpoint"]["checkpoint_id"]
    assert state["values"]["question"] == "forked?" and state["values"]["log"] == ["prepared"]
    out = await client.runs.wait(tid, "ask", command={"resume": "fork answer"})
    assert out["answer"] == "fork answer" and out["question"] == "forked?"
    copy = await client.threads.copy(tid)
    assert (await client.threads.get_state(copy["thread_id"]))["values"]["answer"] == "fork answer"


async def test_store_inside_graph(dev):
    client = get_client(url=dev.url)
    user = f"u{time.time_ns()}"
    await client.runs.wait(None, "memory", input={"user": user, "note": "first"})
    out = await client.runs.wait(None, "memory", input={"user": user, "note": "second"})
    assert out["notes"] == ["first", "second"]
    items = await client.store.search_items(["notes", user])
    assert sorted(i["value"]["text"] for i in items["items"]) == ["first", "second"]


async def test_factory_graph_gets_the_runs_config(dev):
    client = get_client(url=dev.url)
    out = await client.runs.wait(None, "made", input={"text": "hey"}, config={"configurable": {"suffix": "?!"}})
    assert out == {"text": "HEY?!"}


async def test_context_manager_factory(dev):
    client = get_client(url=dev.url)
    # registration entered and left the context; each run enters it again, and leaves it after
    assert await client.runs.wait(None, "in_context", input={"text": "a"}) == {"text": "a (1 open)"}
    assert await client.runs.wait(None, "in_context", input={"text": "b"}) == {"text": "b (1 open)"}


async def test_registration_drawing_and_schemas(dev):
    client = get_client(url=dev.url)
    [assistant] = await client.assistants.search(graph_id="ask")
    drawing = await client.assistants.get_graph(assistant["assistant_id"])
    assert {n["id"] for n in drawing["nodes"]} >= {"__start__", "prepare", "ask_human"}
    schemas = await client.assistants.get_schemas(assistant["assistant_id"])
    assert set(schemas["input_schema"]["properties"]) == {"question", "answer", "log"}
    [nested] = await client.assistants.search(graph_id="nested")
    subgraphs = await client.assistants.get_subgraphs(nested["assistant_id"])
    assert "inner" in subgraphs


async def test_cancel_stops_an_async_node_at_once(dev):
    client = get_client(url=dev.url)
    thread = await client.threads.create()
    tid = thread["thread_id"]
    run = await client.runs.create(tid, "sleeper", input={"block": 0, "wait": 60})
    deadline = time.monotonic() + 20
    while (await client.threads.get_state(tid))["values"].get("steps") != ["blocked"]:
        assert time.monotonic() < deadline, "the sleeper never reached its async node"
        await asyncio.sleep(0.1)
    began = time.monotonic()
    await client.runs.cancel(tid, run["run_id"], wait=True)
    assert time.monotonic() - began < 5
    assert (await client.runs.get(tid, run["run_id"]))["status"] == "interrupted"
    # the thread is free again: a new run goes through
    out = await client.runs.wait(tid, "sleeper", input={"block": 0, "wait": 0})
    assert out["steps"][-2:] == ["blocked", "waited"]


async def test_multitask_interrupt_strategy(dev):
    client = get_client(url=dev.url)
    thread = await client.threads.create()
    tid = thread["thread_id"]
    first = await client.runs.create(tid, "sleeper", input={"block": 0, "wait": 60})
    await asyncio.sleep(0.5)
    second = await client.runs.create(tid, "sleeper", input={"block": 0, "wait": 0}, multitask_strategy="interrupt")
    await client.runs.join(tid, second["run_id"])
    assert (await client.runs.get(tid, first["run_id"]))["status"] == "interrupted"
    assert (await client.runs.get(tid, second["run_id"]))["status"] == "success"


def test_sync_client_and_remote_graph(dev):
    client = get_sync_client(url=dev.url)
    thread = client.threads.create()
    out = client.runs.wait(thread["thread_id"], "chat", input={"messages": [{"role": "user", "content": "sync"}]})
    assert out["messages"][-1]["content"] == "Hello from env: sync"
    remote = RemoteGraph("made", url=dev.url)
    assert remote.invoke({"text": "remote"}, config={"configurable": {"suffix": "."}}) == {"text": "REMOTE."}
    chunks = list(remote.stream({"text": "s"}, stream_mode="updates"))
    assert chunks == [{"shout": {"text": "S!"}}]


async def test_send_command_and_pydantic_state(dev):
    client = get_client(url=dev.url)
    thread = await client.threads.create()
    out = await client.runs.wait(thread["thread_id"], "fanout", input={"topics": ["cats", "dogs", "owls"]})
    assert sorted(out["jokes"]) == ["a joke about cats", "a joke about dogs", "a joke about owls"]
    assert out["verdict"] == "3 jokes"


async def test_functional_api_with_interrupt(dev):
    client = get_client(url=dev.url)
    thread = await client.threads.create()
    tid = thread["thread_id"]
    out = await client.runs.wait(tid, "functional", input={"numbers": [1, 2, 3]})
    assert out["__interrupt__"][0]["value"] == {"doubled": [2, 4, 6]}
    # the resumed run reuses the tasks' results (their pending writes) and resumes the interrupt
    out = await client.runs.wait(tid, "functional", command={"resume": "yes"})
    assert out == {"doubled": [2, 4, 6], "approved": "yes"}


async def test_client_command_goto_and_update(dev):
    client = get_client(url=dev.url)
    thread = await client.threads.create()
    tid = thread["thread_id"]
    await client.runs.wait(tid, "ask", input={"question": "first"})
    # update and goto from the client: the question changes, prepare runs again, then the interrupt
    out = await client.runs.wait(tid, "ask", command={"update": {"question": "second"}, "goto": "prepare"})
    assert out["question"] == "second"
    assert out["log"] == ["prepared", "prepared"]
    assert out["__interrupt__"][0]["value"] == {"question": "second"}


@pytest.mark.parametrize("durability", ["exit", "async", "sync"])
async def test_durability_modes(dev, durability):
    client = get_client(url=dev.url)
    thread = await client.threads.create()
    tid = thread["thread_id"]
    out = await client.runs.wait(tid, "ask", input={"question": "d"}, durability=durability)
    assert out["log"] == ["prepared"]
    history = await client.threads.get_history(tid)
    if durability == "exit":
        # only the run's last checkpoint is written, when the run ends
        assert len(history) == 1 and history[0]["next"] == ["ask_human"]
    else:
        assert [h["metadata"]["step"] for h in history] == [1, 0, -1]
    out = await client.runs.wait(tid, "ask", command={"resume": "ok"}, durability=durability)
    assert out["answer"] == "ok"


async def test_tasks_and_checkpoints_stream_modes(dev):
    client = get_client(url=dev.url)
    thread = await client.threads.create()
    seen: dict[str, list] = {}
    async for part in client.runs.stream(thread["thread_id"], "fanout", input={"topics": ["a", "b"]},
                                         stream_mode=["tasks", "checkpoints"]):
        seen.setdefault(part.event, []).append(part.data)
    names = [t["name"] for t in seen["tasks"] if "input" in t]
    assert names.count("joke") == 2 and "judge" in names
    assert seen["checkpoints"][-1]["values"]["verdict"] == "2 jokes"


def _socket_dir(log: str) -> str:
    m = re.search(r'msg="local PostgreSQL cluster started".* socket_dir=("(?:[^"\\]|\\.)*"|\S+)', log)
    assert m, "the server's log names no socket_dir"
    return json.loads(m.group(1)) if m.group(1).startswith('"') else m.group(1)


async def test_langgraphs_postgres_saver_reads_the_workers_threads(dev):
    """LangGraph's own PostgresSaver (Python), unmodified, reads what the
    Python worker wrote through the views of schema langgraph: messages come
    back as LangChain messages, an interrupt as LangGraph's Interrupt."""
    import psycopg
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.types import Interrupt
    from psycopg.rows import dict_row

    client = get_client(url=dev.url)
    chat = await client.threads.create()
    await client.runs.wait(chat["thread_id"], "chat", input={"messages": [{"role": "user", "content": "stored?"}]})
    ask = await client.threads.create()
    await client.runs.wait(ask["thread_id"], "ask", input={"question": "pg?"})
    conninfo = f"host={_socket_dir(dev.log())} user=weft dbname=weft options='-c search_path=langgraph,public'"
    with psycopg.connect(conninfo, autocommit=True, row_factory=dict_row) as conn:
        saver = PostgresSaver(conn)
        t = saver.get_tuple({"configurable": {"thread_id": chat["thread_id"], "checkpoint_ns": ""}})
        messages = t.checkpoint["channel_values"]["messages"]
        assert [type(m) for m in messages] == [HumanMessage, AIMessage]
        assert messages[1].content == "Hello from env: stored?"
        assert t.metadata["graph_id"] == "chat" and t.metadata["source"] == "loop"
        assert len(list(saver.list({"configurable": {"thread_id": chat["thread_id"]}}))) == 3
        t = saver.get_tuple({"configurable": {"thread_id": ask["thread_id"], "checkpoint_ns": ""}})
        [interrupt] = [v for _, ch, v in t.pending_writes if ch == "__interrupt__"]
        assert isinstance(interrupt[0], Interrupt) and interrupt[0].value == {"question": "pg?"}


async def test_interrupt_inside_a_subgraph(dev):
    client = get_client(url=dev.url)
    thread = await client.threads.create()
    tid = thread["thread_id"]
    out = await client.runs.wait(tid, "deep_ask", input={"question": "deep?"})
    assert out["__interrupt__"][0]["value"] == {"question": "deep?"}
    state = await client.threads.get_state(tid, subgraphs=True)
    assert state["next"] == ["ask"]
    [task] = state["tasks"]
    assert task["interrupts"][0]["value"] == {"question": "deep?"}
    out = await client.runs.wait(tid, "deep_ask", command={"resume": "deep answer"})
    assert out["answer"] == "deep answer" and out["log"] == ["prepared", "answered deep answer"]


async def test_subgraph_state_of_a_python_task(dev):
    client = get_client(url=dev.url)
    thread = await client.threads.create()
    await client.runs.wait(thread["thread_id"], "deep_ask", input={"question": "deep?"})
    state = await client.threads.get_state(thread["thread_id"], subgraphs=True)
    assert state["tasks"][0]["state"]["values"]["log"] == ["prepared"]


async def test_a_failing_node_ends_the_run_in_error(dev):
    client = get_client(url=dev.url)
    thread = await client.threads.create()
    run = await client.runs.create(thread["thread_id"], "hog", input={"block": 0, "wait": -1})
    out = await client.runs.join(thread["thread_id"], run["run_id"])
    assert out["__error__"]["error"] == "ValueError" and out["__error__"]["message"] == "negative wait"
    assert (await client.runs.get(thread["thread_id"], run["run_id"]))["status"] == "error"
    assert (await client.threads.get(thread["thread_id"]))["status"] == "error"


async def test_concurrent_runs(dev):
    client = get_client(url=dev.url)
    threads = [await client.threads.create() for _ in range(6)]
    began = time.monotonic()
    outs = await asyncio.gather(*(client.runs.wait(t["thread_id"], "sleeper", input={"block": 0, "wait": 1})
                                  for t in threads))
    assert all(o["steps"] == ["blocked", "waited"] for o in outs)
    assert time.monotonic() - began < 5  # run side by side, not one after another


# --- crashes and leases (the lease is LEASE_S seconds)


async def test_a_sync_sleeper_keeps_its_lease(dev):
    """A sync node blocking for twice the lease: the heartbeat thread renews it,
    so the run ends on its first attempt."""
    client = get_client(url=dev.url)
    thread = await client.threads.create()
    tid = thread["thread_id"]
    run = await client.runs.create(tid, "sleeper", input={"block": 2 * LEASE_S, "wait": 0})
    out = await client.runs.join(tid, run["run_id"])
    assert out["steps"] == ["blocked", "waited"]
    dispatches = _get(f"{dev.url}/threads/{tid}/runs/{run['run_id']}/dispatches")
    assert dispatches[0]["attempt"] == 1 and dispatches[0]["state"] == "acked"


async def test_a_node_holding_the_event_loop_keeps_its_lease(dev):
    """An async node that blocks the worker's event loop past the lease: the
    heartbeat thread still renews it."""
    client = get_client(url=dev.url)
    thread = await client.threads.create()
    tid = thread["thread_id"]
    run = await client.runs.create(tid, "hog", input={"block": 2 * LEASE_S, "wait": 0})
    out = await client.runs.join(tid, run["run_id"])
    assert out["steps"] == ["hogged"]
    dispatches = _get(f"{dev.url}/threads/{tid}/runs/{run['run_id']}/dispatches")
    assert dispatches[0]["attempt"] == 1 and dispatches[0]["state"] == "acked"


async def test_kill_9_the_worker_mid_run_another_resumes(dev):
    """The worker dies (kill -9) in the run's second step: weft dev starts a new
    one, which claims the run once the lease expired and resumes it from the
    last checkpoint (the first step is not run again)."""
    client = get_client(url=dev.url)
    thread = await client.threads.create()
    tid = thread["thread_id"]
    run = await client.runs.create(tid, "sleeper", input={"block": 0, "wait": 3})
    deadline = time.monotonic() + 20
    while (await client.threads.get_state(tid))["values"].get("steps") != ["blocked"]:
        assert time.monotonic() < deadline, "the sleeper never reached its async node"
        await asyncio.sleep(0.05)
    pid = worker_pids(dev.log())[-1]
    os.kill(pid, signal.SIGKILL)
    out = await asyncio.wait_for(client.runs.join(tid, run["run_id"]), 60)
    assert out["steps"] == ["blocked", "waited"]
    dispatches = _get(f"{dev.url}/threads/{tid}/runs/{run['run_id']}/dispatches")
    assert dispatches[0]["attempt"] == 2 and dispatches[0]["state"] == "acked"
    history = await client.threads.get_history(tid)
    assert [h["metadata"]["source"] for h in history].count("input") == 1
    assert len(worker_pids(dev.log())) >= 2 and worker_pids(dev.log())[-1] != pid
    wait_registered(dev.url)


async def test_a_stale_workers_commit_is_refused(dev):
    """The worker is frozen (SIGSTOP) past its lease while a second worker
    takes the run over and finishes it; thawed, the first one's commit gets
    409 and it drops the run: the run ends once, by the second."""
    client = get_client(url=dev.url)
    thread = await client.threads.create()
    tid = thread["thread_id"]
    run = await client.runs.create(tid, "sleeper", input={"block": 0, "wait": 1})
    deadline = time.monotonic() + 20
    while (await client.threads.get_state(tid))["values"].get("steps") != ["blocked"]:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    pid = worker_pids(dev.log())[-1]
    os.kill(pid, signal.SIGSTOP)
    second_log = dev.tmp + "/second-worker.log"
    try:
        with open(second_log, "wb") as f:
            env = {**os.environ, "PYTHONPATH": str(WORKER_PY), "PYTHONDONTWRITEBYTECODE": "1"}
            second = subprocess.Popen([sys.executable, "-m", "weft_worker", "--config", str(PROJECT / "langgraph.json"),
                                       "--url", dev.url, "--graphs", "sleeper", "--worker-id", "second"],
                                      cwd=PROJECT, env=env, stdout=f, stderr=subprocess.STDOUT)
        try:
            out = await asyncio.wait_for(client.runs.join(tid, run["run_id"]), 60)
            assert out["steps"] == ["blocked", "waited"]
            dispatches = _get(f"{dev.url}/threads/{tid}/runs/{run['run_id']}/dispatches")
            assert dispatches[0]["attempts"][-1]["worker"] == "second"
        finally:
            os.kill(pid, signal.SIGCONT)
            pid = 0
        # the thawed worker learns it lost the lease (heartbeat or commit: 409) and drops the run
        deadline = time.monotonic() + 20
        while "lease lost" not in dev.log():
            assert time.monotonic() < deadline, dev.log()[-3000:]
            await asyncio.sleep(0.1)
        assert (await client.runs.get(tid, run["run_id"]))["status"] == "success"
        attempts = _get(f"{dev.url}/threads/{tid}/runs/{run['run_id']}/dispatches")[0]["attempts"]
        assert [a["outcome"] for a in attempts][-1] == "success"
    finally:
        if pid:
            os.kill(pid, signal.SIGCONT)
        second.send_signal(signal.SIGTERM)
        second.wait(30)


def _solo_worker(dev, name: str, *extra: str) -> subprocess.Popen:
    """A worker of its own serving solo.json's graph (solo_sleeper), which the dev worker does not serve."""
    env = {**os.environ, "PYTHONPATH": str(WORKER_PY), "PYTHONDONTWRITEBYTECODE": "1"}
    log = open(f"{dev.tmp}/{name}.log", "wb")
    return subprocess.Popen([sys.executable, "-m", "weft_worker", "--config", str(PROJECT / "solo.json"),
                             "--url", dev.url, "--worker-id", name, *extra],
                            cwd=PROJECT, env=env, stdout=log, stderr=subprocess.STDOUT)


async def _start_solo_run(client, tid: str, wait: float) -> dict:
    run = await client.runs.create(tid, "solo_sleeper", input={"block": 0, "wait": wait})
    deadline = time.monotonic() + 30
    while (await client.threads.get_state(tid))["values"].get("steps") != ["blocked"]:
        assert time.monotonic() < deadline, "the run never reached its async node"
        await asyncio.sleep(0.05)
    return run


async def test_sigterm_drains_then_gives_unfinished_runs_back(dev):
    """SIGTERM: the worker stops claiming; a run that ends within the grace
    period ends there (drain); one that does not is given back (nack) and
    finished by the next worker."""
    client = get_client(url=dev.url)
    first = _solo_worker(dev, "drain-a")
    second = None
    try:
        wait_registered(dev.url, ["solo_sleeper"])
        tid = (await client.threads.create())["thread_id"]
        run = await _start_solo_run(client, tid, 1)
        first.send_signal(signal.SIGTERM)  # default grace 10 s: the run finishes
        assert first.wait(30) == 0
        assert (await client.runs.get(tid, run["run_id"]))["status"] == "success"
        attempts = _get(f"{dev.url}/threads/{tid}/runs/{run['run_id']}/dispatches")[0]["attempts"]
        assert [(a["worker"], a["outcome"]) for a in attempts] == [("drain-a", "success")]

        second = _solo_worker(dev, "drain-b", "--grace-ms", "300")
        tid = (await client.threads.create())["thread_id"]
        run = await _start_solo_run(client, tid, 3)
        second.send_signal(signal.SIGTERM)
        assert second.wait(30) == 0
        assert '"run given back"' in Path(f"{dev.tmp}/drain-b.log").read_text()
        first = _solo_worker(dev, "drain-c")
        out = await asyncio.wait_for(client.runs.join(tid, run["run_id"]), 90)
        assert out["steps"] == ["blocked", "waited"]  # resumed after the first step
        attempts = _get(f"{dev.url}/threads/{tid}/runs/{run['run_id']}/dispatches")[0]["attempts"]
        assert [(a["worker"], a["outcome"]) for a in attempts] == [("drain-b", "nacked"), ("drain-c", "success")]
    finally:
        for p in (first, second):
            if p is not None and p.poll() is None:
                p.send_signal(signal.SIGTERM)
                p.wait(30)


async def test_an_orphaned_worker_stops_by_itself(dev):
    """A worker whose weft dev (WEFT_PARENT_PID, here a shell standing in for
    it) is killed without a chance to stop it stops by itself instead of
    running on as an orphan."""
    env = {**os.environ, "PYTHONPATH": str(WORKER_PY), "PYTHONDONTWRITEBYTECODE": "1"}
    log = open(f"{dev.tmp}/orphan.log", "wb")
    parent = subprocess.Popen(
        ["sh", "-c", 'WEFT_PARENT_PID=$$ "$@" & echo $!; wait', "sh", sys.executable, "-m", "weft_worker",
         "--config", str(PROJECT / "solo.json"), "--url", dev.url, "--worker-id", "orphan"],
        cwd=PROJECT, env=env, stdout=subprocess.PIPE, stderr=log)
    worker = int(parent.stdout.readline())

    def running() -> bool:  # a zombie nobody reaped yet has stopped
        try:
            return ") Z " not in Path(f"/proc/{worker}/stat").read_text()
        except FileNotFoundError:
            return False

    try:
        wait_registered(dev.url, ["solo_sleeper"])
        parent.kill()
        parent.wait(10)
        deadline = time.monotonic() + 30
        while running():
            assert time.monotonic() < deadline, Path(f"{dev.tmp}/orphan.log").read_text()[-3000:]
            await asyncio.sleep(0.1)
        assert '"stopping"' in Path(f"{dev.tmp}/orphan.log").read_text()
    finally:
        if running():
            os.kill(worker, signal.SIGKILL)
