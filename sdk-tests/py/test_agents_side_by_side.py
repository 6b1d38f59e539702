"""Real agents side by side with LangGraph's official servers (issue 36).

Python: LangChain's create_agent (tools, HumanInTheLoopMiddleware,
structured output, a context schema), deepagents' create_deep_agent
(todos, files, a subagent that interrupts inside its own graph) and a graph
factory taking (config, runtime), all on a scripted model
(fixtures/pyagents), served by `weft dev` (the Python worker, PostgreSQL)
and by `langgraph dev` (LangGraph's own server, in memory). JavaScript: the
same agents in LangChain.js and deepagents.js (../agents-js), served by
`weft dev` (the JS worker) and by LangGraph.js's own dev server.

Every scenario of agentscenarios runs on both servers of a language, at the
same time, through the official Python SDK, and their answers are compared
field by field (agentdiff): ids are paired, timestamps masked, and the only
differences accepted are agentdiff.ALLOWED, each with its reason.

The tests after the comparison check on Weft alone what the comparison
would also catch, one issue item each, so that a regression names itself.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import threading
from pathlib import Path

import pytest
from langgraph_sdk import get_client

from agentdiff import Pairing, report, unexplained
from agentscenarios import GRAPHS, SCENARIOS, Transcript
from jsservers import js_project_copy, start_langgraphjs_dev
from pyservers import conninfo, langgraph_cli, start_langgraph_dev, start_weft_dev

HERE = Path(__file__).resolve().parent


def _py_project(tmp: Path) -> Path:
    out = tmp / "pyagents"
    shutil.copytree(HERE / "fixtures" / "pyagents", out, ignore=shutil.ignore_patterns("__pycache__", ".langgraph_api"))
    return out


async def _run_all(url: str, lang: str) -> dict[str, dict]:
    client = get_client(url=url, timeout=120)
    out = {}
    for name, scenario in SCENARIOS.items():
        rec = Transcript()
        await scenario(client, rec, lang)
        out[name] = rec.entries
    return out


def _side_by_side(lang: str, servers, tmp_path_factory) -> dict:
    """Starts both servers of a language on copies of its project (at once),
    runs every scenario on both at the same time and stops the official
    one: {"official": transcripts, "weft": transcripts, "weft_server": …}."""
    if lang == "py":
        langgraph_cli()  # fails loudly without langgraph-cli[inmem]: the comparison needs it
        official = lambda: start_langgraph_dev(_py_project(tmp_path_factory.mktemp("lgdev")),  # noqa: E731
                                               str(tmp_path_factory.mktemp("lgdev-log")), graphs=GRAPHS)
        project = _py_project(tmp_path_factory.mktemp("weft"))
    else:
        official = lambda: start_langgraphjs_dev(js_project_copy(tmp_path_factory.mktemp("lgjs")),  # noqa: E731
                                                 str(tmp_path_factory.mktemp("lgjs-log")), graphs=GRAPHS)
        project = js_project_copy(tmp_path_factory.mktemp("weft-js"))
    started: dict = {}

    def start_official():
        try:
            started["official"] = official()
        except Exception as e:  # noqa: BLE001 — reported below
            started["error"] = e

    t = threading.Thread(target=start_official)
    t.start()
    weft = start_weft_dev(servers, project, graphs=GRAPHS, env={"WEFT_CACHE_DIR": str(tmp_path_factory.mktemp("cache"))})
    t.join()
    if "error" in started:
        raise started["error"]
    try:
        async def both():
            return await asyncio.gather(_run_all(started["official"].url, lang), _run_all(weft.url, lang))

        official_t, weft_t = asyncio.run(both())
    finally:
        started["official"].stop()
    return {"official": official_t, "weft": weft_t, "weft_server": weft}


@pytest.fixture(scope="module")
def py_run(servers, tmp_path_factory):
    """The Python agents (fixtures/pyagents) on weft dev and langgraph dev."""
    return _side_by_side("py", servers, tmp_path_factory)


@pytest.fixture(scope="module")
def js_run(servers, tmp_path_factory):
    """The JS agents (../agents-js) on weft dev and LangGraph.js's dev server."""
    return _side_by_side("js", servers, tmp_path_factory)


@pytest.mark.parametrize("scenario", list(SCENARIOS))
@pytest.mark.parametrize("lang", ["py", "js"])
def test_same_answers(request, lang, scenario):
    run = request.getfixturevalue(f"{lang}_run")
    official, weft = run["official"][scenario], run["weft"][scenario]
    assert list(weft) == list(official)
    ids = Pairing()  # one pairing for the scenario: an id must stay the same id across its calls
    problems = []
    for label in official:
        d = unexplained(official[label], weft[label], ids, label)
        if d:
            problems.append(f"{label}: {report(d, limit=20)}")
    assert not problems, "\n".join(problems)


def _values_events(parts: list) -> list[dict]:
    return [data for event, data in parts if event.split("|")[0] == "values"]


# --- issue 36, item by item, on Weft (Python agents) ------------------------

def test_many_tool_rounds_run_past_25_steps(py_run):
    """Item 1: the worker no longer caps a run at 25 steps; 30 tool rounds
    (91 steps) end as the script says."""
    wait = py_run["weft"]["agent_tool_rounds"]["rounds: wait"]
    assert wait["messages"][-1]["content"] == "done after 30 rounds"
    deep = py_run["weft"]["deep_agent_rounds"]["wait"]
    assert deep["messages"][-1]["content"] == "done after 15 rounds"
    assert len(wait["messages"]) == 62


def test_deep_agent_state_is_resolved(py_run):
    """Item 2: a deep agent's delta channels (messages, files) read back
    whole from state, history, the thread and search, never a marker."""
    deep = py_run["weft"]["deep_agent"]
    for label in ("plan: state", "plan: state without subgraphs", "resume: state"):
        values = deep[label]["values"]
        assert "__weft_unresolved__" not in json.dumps(values), label
        assert values["files"]["/notes.md"]["content"] == "# cats\nstarted\n", label
        assert values["messages"][0]["content"] == "plan cats", label
    assert [len(h["values"]["messages"]) for h in deep["plan: history"]] == [6, 6, 5]
    assert deep["resume: thread"]["values"]["files"]
    assert [t["thread_id"] for t in deep["search by values"]] == [deep["resume: thread"]["thread_id"]]


def test_history_filters_on_run_and_thread_metadata(py_run):
    """Item 3: checkpoints carry the run's configurable keys and the
    thread's metadata, as LangGraph's savers merge them."""
    rounds = py_run["weft"]["agent_tool_rounds"]
    # 30 rounds of model, review, tools; the last model call and its
    # review; the input's two checkpoints: 94, every one of the run's
    assert len(rounds["rounds: history by configurable"]) == 94
    assert all(h["metadata"]["user_tier"] == "pro" for h in rounds["rounds: history by configurable"])
    assert len(rounds["rounds: history by thread metadata"]) == 94


def test_private_state_is_not_streamed_or_returned(py_run):
    """Item 4: the middleware's private hitl_edited_tool_calls stays out of
    values and updates events and runs.wait answers (output channels only)."""
    hitl = py_run["weft"]["agent_hitl"]
    for label in ("book: stream", "approve: stream", "edit: stream"):
        for event, data in hitl[label]:
            assert "hitl_edited_tool_calls" not in json.dumps(data), (label, event)
    for label in ("edit: interrupt", "reject: interrupt", "reject: wait"):
        assert "hitl_edited_tool_calls" not in hitl[label], label
    # it is state all the same: get_state shows it, as LangGraph's does
    assert hitl["edit: state"]["values"]["hitl_edited_tool_calls"] == {
        "call_book_flight_0": {"args": {"city": "Milan"}, "name": "book_flight"}}


def test_shapes_as_the_python_server_answers(py_run):
    """Item 5: a PUSH task's path ends with False; a task that finished
    without output has result {}; null fields are kept (a tool message's
    artifact, a chunk's chunk_position and tool_call_chunks, an interrupt's
    response_schema, the first checkpoint's parent_checkpoint_id); no
    checkpoint_map on a root checkpoint."""
    weft = py_run["weft"]
    deep = weft["deep_agent"]["plan: state"]
    assert deep["tasks"][0]["path"] == ["__pregel_push", 0, False]
    assert "checkpoint_map" not in deep["checkpoint"] and "checkpoint_map" not in deep["parent_checkpoint"]
    history = weft["agent_hitl"]["history"]
    assert history[-1]["parent_checkpoint_id"] is None
    done = [t for h in history for t in h["tasks"] if t["name"] == "HumanInTheLoopMiddleware.after_model"
            and t["result"] is not None]
    assert {} in [t["result"] for t in done]
    tool = next(m for m in weft["agent_tool_rounds"]["rounds: wait"]["messages"] if m["type"] == "tool")
    assert "artifact" in tool and tool["artifact"] is None and tool["status"] == "success"
    chunk = next(data[0] for event, data in weft["agent_hitl"]["book: stream"] if event == "messages")
    assert chunk["chunk_position"] is None and chunk["tool_call_chunks"] == []
    assert weft["agent_hitl"]["edit: interrupt"]["__interrupt__"][0]["response_schema"] is None


def test_factory_with_a_runtime(py_run):
    """Item 6: a factory taking (config, runtime: ServerRuntime) loads and
    is called with the execution runtime for a run."""
    wait = py_run["weft"]["factory_runtime"]["wait"]
    assert wait["messages"][-1]["content"] == "system: made for threads.create_run"


def test_graph_description_reaches_the_assistant(py_run):
    """Item 7: a graphs entry's description is its system assistant's."""
    [assistant] = py_run["weft"]["factory_runtime"]["assistant"]
    assert assistant["description"] == "A graph factory taking (config, runtime)."


def test_postgres_saver_reads_a_deep_agent(py_run):
    """LangGraph's own PostgresSaver, on Weft's database (schema langgraph
    alone on its search_path), rebuilds the deep agent's state as Weft
    answers it: delta messages from their writes, files from the values
    the worker stored."""
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg import Connection
    from psycopg.rows import dict_row

    import sys
    sys.path.insert(0, str(HERE / "fixtures" / "pyagents"))
    try:
        from agents import deep
    finally:
        sys.path.pop(0)
    with Connection.connect(conninfo(py_run["weft_server"], "langgraph"), autocommit=True, prepare_threshold=0,
                            row_factory=dict_row) as conn:
        graph = deep.copy(update={"checkpointer": PostgresSaver(conn)})
        for label in ("resume: state", "update: state"):
            state = py_run["weft"]["deep_agent"][label]
            _same_state(graph.get_state({"configurable": {k: state["checkpoint"][k] for k in (
                "thread_id", "checkpoint_ns", "checkpoint_id")}}), state)


def _same_state(snap, state: dict) -> None:
    assert snap.config["configurable"]["checkpoint_id"] == state["checkpoint"]["checkpoint_id"]
    messages = [(m.type, m.content, m.id) for m in snap.values["messages"]]
    assert messages == [(m["type"], m["content"], m["id"]) for m in state["values"]["messages"]]
    assert {k: dict(v) for k, v in snap.values["files"].items()} == state["values"]["files"]
    assert snap.values["todos"] == state["values"]["todos"]


# --- issue 36 item 8, the same agents in JS, on Weft ------------------------

def test_js_deep_agent_runs_past_25_steps(js_run):
    """No recursion limit forced on a run: the deep agent's bound limit
    (10000) lets a 15-round task end (createAgent binds none: LangGraph.js's
    25, as on its server)."""
    deep = js_run["weft"]["deep_agent_rounds"]["wait"]
    assert deep["messages"][-1]["content"] == "done after 15 rounds"
    assert js_run["weft"]["agent_tool_rounds"]["rounds: wait"]["message"].startswith("GraphRecursionError")


def test_js_subagent_history_under_its_task(js_run):
    """A tool call's task id hashed as LangGraph.js hashes it: the namespace
    get_state's task names holds the subagent's checkpoints."""
    deep = js_run["weft"]["deep_agent"]
    task = deep["plan: state"]["tasks"][0]
    assert task["path"] == ["__pregel_push", 0, False]
    history = deep["subagent: history"]
    assert history and history[0]["checkpoint"]["checkpoint_ns"] == f"{task['name']}:{task['id']}"
    assert history[0]["values"]["messages"][0]["content"] == "find facts about cats"


def test_js_metadata_defaults_and_shapes(js_run):
    """Checkpoint metadata with the run's configurable keys and the thread's
    metadata; channel defaults from the first checkpoint on (the compiled
    graph inside createAgent's wrapper); chunks typed "ai"; no undefined
    channel (jumpTo, structuredResponse) in values; runs.wait at an interrupt
    answers the interrupt alone; states shaped as LangGraph.js's server
    answers them."""
    weft = js_run["weft"]
    rounds = weft["agent_tool_rounds"]
    assert rounds["rounds: history by configurable"] and rounds["rounds: history by thread metadata"]
    first = weft["agent_update_and_fork"]["history before"][-1]
    assert first["metadata"]["step"] == -1 and first["values"] == {"messages": []}
    chunks = [d[0] for e, d in weft["agent_hitl"]["book: stream"] if e == "messages"]
    assert chunks and {c["type"] for c in chunks} == {"ai"}
    for label in ("rounds: state", "rounds: thread"):
        assert not {"jumpTo", "structuredResponse"} & set(rounds[label]["values"]), label
    assert list(weft["agent_hitl"]["edit: interrupt"]) == ["__interrupt__"]
    state = weft["agent_hitl"]["book: state"]
    assert not {"interrupts", "checkpoint_id", "parent_checkpoint_id"} & set(state)
    assert state["checkpoint"]["checkpoint_map"] is None and state["metadata"]["thread_id"] == state["checkpoint"]["thread_id"]
