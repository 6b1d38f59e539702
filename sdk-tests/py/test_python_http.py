"""A Python project's langgraph.json http.app (a Starlette app) served beside
the API, by `weft dev` and by `langgraph dev` alike (fixtures/pyhttp): its
routes answer theirs, the API answers the rest, and a run's config carries
the caller's x- headers on both.

With http.enable_custom_route_auth and an auth.path (fixtures/pyhttp/auth.py),
the app's routes are authenticated first, refused as the API refuses, and
read the user as request.user and request.auth; with the flag and no
auth.path nobody is refused and request.user is unauthenticated; without
the flag the routes have no user at all. The same checks on both servers."""

from __future__ import annotations

import json
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


ALICE = {"Authorization": "Bearer token-alice"}


def serve(kind: str, project: Path, servers, tmp_path_factory, headers: dict | None = None):
    """Yields the URL of `weft dev` or `langgraph dev` serving project."""
    if kind == "weft-dev":
        w = start_weft_dev(servers, project, env={"WEFT_CACHE_DIR": str(tmp_path_factory.mktemp("cache"))},
                           graphs=["echo"], headers=headers)
        yield w.url
        return
    langgraph_cli()
    srv = start_langgraph_dev(project, str(tmp_path_factory.mktemp("lgdev")), graphs=["echo"], headers=headers)
    try:
        yield srv.url
    finally:
        srv.stop()


def configured(tmp_path_factory, auth_path: bool) -> Path:
    """A copy of fixtures/pyhttp with http.enable_custom_route_auth, and auth.py as auth.path or none."""
    out = tmp_path_factory.mktemp("pyhttp-routeauth") / "pyhttp"
    shutil.copytree(HERE / "fixtures" / "pyhttp", out, ignore=shutil.ignore_patterns("__pycache__", ".langgraph_api"))
    cfg = json.loads((out / "langgraph.json").read_text())
    cfg["http"]["enable_custom_route_auth"] = True
    if auth_path:
        cfg["auth"] = {"path": "./auth.py:auth"}
    (out / "langgraph.json").write_text(json.dumps(cfg, indent=2))
    return out


@pytest.fixture(scope="module", params=["weft-dev", "langgraph-dev"])
def server(request, project, servers, tmp_path_factory):
    yield from serve(request.param, project, servers, tmp_path_factory)


@pytest.fixture(scope="module", params=["weft-dev", "langgraph-dev"])
def route_auth_server(request, servers, tmp_path_factory):
    """The app's routes authenticated by auth.path."""
    yield from serve(request.param, configured(tmp_path_factory, auth_path=True), servers, tmp_path_factory, ALICE)


@pytest.fixture(scope="module", params=["weft-dev", "langgraph-dev"])
def route_anon_server(request, servers, tmp_path_factory):
    """http.enable_custom_route_auth without an auth.path."""
    yield from serve(request.param, configured(tmp_path_factory, auth_path=False), servers, tmp_path_factory)


def test_custom_routes(server):
    res = httpx.get(f"{server}/custom/hello", params={"name": "ada"}, headers={"x-in": "hey"})
    assert res.status_code == 200 and res.json() == {"hello": "ada"} and res.headers["x-echo"] == "hey"
    res = httpx.post(f"{server}/custom/echo", json={"a": 1})
    assert res.json() == {"got": {"a": 1}}
    with httpx.stream("GET", f"{server}/custom/stream") as res:
        assert "".join(res.iter_text()) == "line 0\nline 1\nline 2\n"
    # Without http.enable_custom_route_auth a route has no user.
    res = httpx.get(f"{server}/custom/whoami")
    assert res.json() == {"user": None} and res.headers["x-app-middleware"] == "seen"


async def test_the_api_beside_the_routes(server):
    assert httpx.get(f"{server}/ok").status_code == 200
    assert "version" in httpx.get(f"{server}/info").json()
    assert httpx.get(f"{server}/does/not/exist").status_code == 404
    client = get_client(url=server, headers={"x-caller": "ada"})
    out = await client.runs.wait(None, "echo", input={"text": "hi"})
    assert out == {"text": "hi (caller ada)"}


def test_route_auth_refuses_as_the_api(route_auth_server):
    api = httpx.post(f"{route_auth_server}/threads/search", json={})
    assert api.status_code == 401 and api.json() == {"detail": "Invalid token"}
    for headers in ({}, {"Authorization": "Bearer nobody"}):
        res = httpx.get(f"{route_auth_server}/custom/whoami", headers=headers)
        assert (res.status_code, res.json()) == (api.status_code, api.json())
        assert res.headers["x-app-middleware"] == "seen"  # refused inside the app's middleware
    res = httpx.post(f"{route_auth_server}/custom/echo", json={"a": 1})
    assert res.status_code == 401


def test_route_auth_user(route_auth_server):
    res = httpx.get(f"{route_auth_server}/custom/whoami", headers=ALICE)
    assert res.status_code == 200
    assert res.json() == {"identity": "alice", "display_name": "Alice", "is_authenticated": True, "team": "red",
                          "scopes": ["read", "write"]}
    res = httpx.get(f"{route_auth_server}/custom/whoami", headers={"Authorization": "Bearer token-bob"})
    assert res.json() == {"identity": "bob", "display_name": "bob", "is_authenticated": True, "team": None, "scopes": []}
    # The route gets the request's body, and streams as without authentication.
    assert httpx.post(f"{route_auth_server}/custom/echo", json={"a": 1}, headers=ALICE).json() == {"got": {"a": 1}}
    with httpx.stream("GET", f"{route_auth_server}/custom/stream", headers=ALICE) as res:
        assert "".join(res.iter_text()) == "line 0\nline 1\nline 2\n"


async def test_route_auth_leaves_the_api_its_own(route_auth_server):
    assert httpx.get(f"{route_auth_server}/ok").status_code == 200
    client = get_client(url=route_auth_server, headers={**ALICE, "x-caller": "ada"})
    assert await client.runs.wait(None, "echo", input={"text": "hi"}) == {"text": "hi (caller ada)"}
    with pytest.raises(httpx.HTTPStatusError) as e:
        await get_client(url=route_auth_server).runs.wait(None, "echo", input={"text": "hi"})
    assert e.value.response.status_code == 401


def test_route_auth_without_auth_path(route_anon_server):
    res = httpx.get(f"{route_anon_server}/custom/whoami")
    assert res.status_code == 200
    assert res.json() == {"identity": "", "display_name": "", "is_authenticated": False, "team": None, "scopes": []}
    assert httpx.post(f"{route_anon_server}/custom/echo", json={"a": 1}).json() == {"got": {"a": 1}}
    assert httpx.post(f"{route_anon_server}/threads/search", json={}).status_code == 200
