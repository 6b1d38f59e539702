"""`weft dev` for projects with Python graphs: a project mixing JS and Python
graphs served side by side, and the message when the interpreter lacks
langgraph."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_sync_client

from conftest import REPO_ROOT, weft_binary

JS_MODULES = REPO_ROOT / "worker-js" / "node_modules"


def test_mixed_js_and_python_project(servers, tmp_path):
    if not (JS_MODULES / "@langchain" / "langgraph").exists():
        pytest.skip("worker-js's packages are missing (cd worker-js && npm ci)")
    shutil.copy(REPO_ROOT / "internal" / "cli" / "dev" / "testdata" / "devproject" / "foo_bar.ts", tmp_path / "foo_bar.ts")
    (tmp_path / "node_modules").symlink_to(JS_MODULES)
    (tmp_path / "py_graph.py").write_text(textwrap.dedent('''
        from typing_extensions import TypedDict
        from langgraph.graph import START, StateGraph

        class S(TypedDict):
            text: str

        graph = StateGraph(S).add_node("py", lambda s: {"text": s["text"] + " from python"}).add_edge(START, "py").compile()
    '''))
    (tmp_path / "langgraph.json").write_text(
        '{"graphs": {"js_graph": "./foo_bar.ts:graph", "py_graph": "./py_graph.py:graph"}}')
    w = servers.start(["dev", "--config", str(tmp_path / "langgraph.json")],
                      env={"WEFT_PYTHON": sys.executable, "PYTHONDONTWRITEBYTECODE": "1",
                           "WEFT_CACHE_DIR": str(tmp_path / "cache")})
    client = get_sync_client(url=w.url)
    deadline = time.monotonic() + 90
    while {a["graph_id"] for a in client.assistants.search(limit=100)} < {"js_graph", "py_graph"}:
        assert time.monotonic() < deadline, w.log()[-4000:]
        time.sleep(0.2)
    assert client.runs.wait(None, "py_graph", input={"text": "hi"}) == {"text": "hi from python"}
    out = client.runs.wait(None, "js_graph", input={"foo": ""})
    assert out["bar"] == ["project-a", "project-b"]
    log = w.log()
    assert "JS worker started" in log and "Python worker started" in log


def test_a_python_without_langgraph_is_told_what_to_run(servers, tmp_path):
    python = shutil.which("python3") or "/usr/bin/python3"
    if subprocess.run([python, "-c", "import langgraph"], capture_output=True).returncode == 0:
        pytest.skip(f"{python} has langgraph")
    (tmp_path / "agent.py").write_text("graph = None\n")
    (tmp_path / "langgraph.json").write_text('{"graphs": {"agent": "./agent.py:graph"}}')
    env = {**os.environ, "WEFT_PYTHON": python, "WEFT_ADDR": "127.0.0.1:0", "WEFT_DATA_DIR": str(tmp_path / "data")}
    res = subprocess.run([weft_binary(servers.root), "dev", "--config", str(tmp_path / "langgraph.json")],
                         env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode != 0
    assert f"{python} -m pip install langgraph" in res.stdout + res.stderr, res.stdout + res.stderr


def test_python_graphs_with_api_keys(servers, tmp_path):
    """With WEFT_AUTH=keys the Python worker authenticates with weft dev's own
    worker key, and a graph's store writes land in the run's tenant."""
    data = servers.data_dir()
    env = {**os.environ, "WEFT_DATA_DIR": data}
    key = subprocess.run([weft_binary(servers.root), "keys", "create", "--tenant", "acme"], env=env,
                         capture_output=True, text=True, timeout=120, check=True).stdout.strip()
    project = Path(__file__).resolve().parent / "fixtures" / "pyproject"
    w = servers.start(["dev", "--config", str(project / "langgraph.json")], data_dir=data,
                      env={"WEFT_AUTH": "keys", "WEFT_PYTHON": sys.executable, "PYTHONDONTWRITEBYTECODE": "1",
                           "WEFT_CACHE_DIR": str(tmp_path / "cache")})
    client = get_sync_client(url=w.url, api_key=key)
    deadline = time.monotonic() + 90
    while "memory" not in {a["graph_id"] for a in client.assistants.search(limit=100)}:
        assert time.monotonic() < deadline, w.log()[-4000:]
        time.sleep(0.2)
    out = client.runs.wait(None, "memory", input={"user": "keyed", "note": "tenant note"})
    assert out["notes"] == ["tenant note"]
    items = client.store.search_items(["notes", "keyed"])["items"]
    assert [i["value"]["text"] for i in items] == ["tenant note"]


def test_a_graph_that_fails_to_import_is_reported_and_the_others_served(servers, tmp_path):
    """A module that throws at import keeps only its own graph out: the log and
    /info say which graph and why, and errors are JSON ({"detail"}) for a
    Python project, as on LangGraph's Python server."""
    (tmp_path / "good.py").write_text(textwrap.dedent('''
        from typing_extensions import TypedDict
        from langgraph.graph import START, StateGraph

        class S(TypedDict):
            text: str

        graph = StateGraph(S).add_node("ok", lambda s: {"text": "served"}).add_edge(START, "ok").compile()
    '''))
    (tmp_path / "broken.py").write_text('raise RuntimeError("broken on purpose")\n')
    (tmp_path / "langgraph.json").write_text(
        '{"graphs": {"good": "./good.py:graph", "broken": "./broken.py:graph"}}')
    w = servers.start(["dev", "--config", str(tmp_path / "langgraph.json")],
                      env={"WEFT_PYTHON": sys.executable, "PYTHONDONTWRITEBYTECODE": "1",
                           "WEFT_CACHE_DIR": str(tmp_path / "cache")})
    client = get_sync_client(url=w.url)
    deadline = time.monotonic() + 90
    info = {}
    while not info.get("graph_errors"):
        assert time.monotonic() < deadline, w.log()[-4000:]
        time.sleep(0.2)
        info = httpx.get(f"{w.url}/info").json()
    assert [(e["graph_id"], e["error"]) for e in info["graph_errors"]] == [("broken", "RuntimeError: broken on purpose")]
    assert client.runs.wait(None, "good", input={"text": ""}) == {"text": "served"}
    assert "graph failed to load; serving the others" in w.log()
    missing = httpx.get(f"{w.url}/assistants/broken")
    assert missing.status_code == 422 and "broken" in missing.json()["detail"]
