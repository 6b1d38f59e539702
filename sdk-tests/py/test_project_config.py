"""langgraph.json's checkpointer.serde under `weft dev`: a Python graph's
state keeps a custom class listed in allowed_msgpack_modules as itself from
one run to the next, and gives back another as its fields, as LangGraph's
serializer does with that allowlist; pickle_fallback: true is refused at
start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from langgraph_sdk import get_sync_client

from conftest import weft_binary
from pyservers import start_weft_dev

MODELS = '''
import dataclasses
from pydantic import BaseModel

class Listed(BaseModel):
    n: int

class Unlisted(BaseModel):
    n: int

@dataclasses.dataclass
class Point:
    x: int
    y: int
'''

GRAPH = '''
from typing import Any
from typing_extensions import TypedDict
from langgraph.graph import START, StateGraph
from models import Listed, Point, Unlisted

class S(TypedDict, total=False):
    op: str
    listed: Any
    unlisted: Any
    point: Any
    seen: dict

def node(s: S):
    if s.get("op") == "put":
        return {"listed": Listed(n=1), "unlisted": Unlisted(n=2), "point": Point(x=1, y=2)}
    return {"seen": {k: type(s.get(k)).__name__ for k in ("listed", "unlisted", "point")}}

graph = StateGraph(S).add_node("node", node).add_edge(START, "node").compile()
'''


def write_project(dir, serde: dict) -> None:
    (dir / "models.py").write_text(textwrap.dedent(MODELS))
    (dir / "graph.py").write_text(textwrap.dedent(GRAPH))
    (dir / "langgraph.json").write_text(json.dumps({"graphs": {"serde": "./graph.py:graph"},
                                                    "checkpointer": {"serde": serde}}))


def test_allowed_msgpack_modules_keep_listed_classes(servers, tmp_path):
    write_project(tmp_path, {"allowed_msgpack_modules": [["models", "Listed"], ["models", "Point"]],
                             "pickle_fallback": False})
    w = start_weft_dev(servers, tmp_path, env={"WEFT_CACHE_DIR": str(tmp_path / "cache")}, graphs=["serde"])
    client = get_sync_client(url=w.url)
    thread = client.threads.create()
    client.runs.wait(thread["thread_id"], "serde", input={"op": "put"})
    out = client.runs.wait(thread["thread_id"], "serde", input={"op": "check"})
    assert out["seen"] == {"listed": "Listed", "unlisted": "dict", "point": "Point"}, w.log()[-3000:]
    # Weft's own reads show the objects' fields.
    values = client.threads.get_state(thread["thread_id"])["values"]
    assert values["listed"] == {"n": 1} and values["unlisted"] == {"n": 2} and values["point"] == {"x": 1, "y": 2}


def test_pickle_fallback_is_refused_at_start(servers, tmp_path):
    write_project(tmp_path, {"pickle_fallback": True})
    env = {**os.environ, "WEFT_PYTHON": sys.executable, "WEFT_ADDR": "127.0.0.1:0",
           "DATABASE_URL": "postgres://127.0.0.1:1/none", "WEFT_CACHE_DIR": str(tmp_path / "cache")}
    res = subprocess.run([weft_binary(servers.root), "dev", "--config", str(tmp_path / "langgraph.json")],
                         env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "checkpointer.serde.pickle_fallback: true is refused" in res.stderr, res.stderr
