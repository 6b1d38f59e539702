"""A Python project's langgraph.json http.app (a Starlette app) served beside
the API, by `weft dev` and by `langgraph dev` alike (fixtures/pyhttp): its
routes answer theirs, the API answers the rest, and a run's config carries
the caller's x- headers on both."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_client

from pyservers import langgraph_cli, start_langgraph_dev, start_weft_dev

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("pyhttp") / "pyhttp"
    shutil.copytree(HERE / "fixtures" / "pyhttp", out, ignore=shutil.ignore_patterns("__pycache__", ".langgraph_api"))
    return out


@pytest.fixture(scope="module", params=["weft-dev", "langgraph-dev"])
def server(request, project, servers, tmp_path_factory):
    if request.param == "weft-dev":
        w = start_weft_dev(servers, project, env={"WEFT_CACHE_DIR": str(tmp_path_factory.mktemp("cache"))},
                           graphs=["echo"])
        yield w.url
        return
    langgraph_cli()
    srv = start_langgraph_dev(project, str(tmp_path_factory.mktemp("lgdev")), graphs=["echo"])
    try:
        yield srv.url
    finally:
        srv.stop()


def test_custom_routes(server):
    res = httpx.get(f"{server}/custom/hello", params={"name": "ada"}, headers={"x-in": "hey"})
    assert res.status_code == 200 and res.json() == {"hello": "ada"} and res.headers["x-echo"] == "hey"
    res = httpx.post(f"{server}/custom/echo", json={"a": 1})
    assert res.json() == {"got": {"a": 1}}
    with httpx.stream("GET", f"{server}/custom/stream") as res:
        assert "".join(res.iter_text()) == "line 0\nline 1\nline 2\n"


async def test_the_api_beside_the_routes(server):
    assert httpx.get(f"{server}/ok").status_code == 200
    assert "version" in httpx.get(f"{server}/info").json()
    assert httpx.get(f"{server}/does/not/exist").status_code == 404
    client = get_client(url=server, headers={"x-caller": "ada"})
    out = await client.runs.wait(None, "echo", input={"text": "hi"})
    assert out == {"text": "hi (caller ada)"}
