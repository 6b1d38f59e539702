"""langgraph.json's http server knobs, side by side with the official Python
server (issue 37): `weft dev` and `langgraph dev` serve copies of
fixtures/pybench whose langgraph.json sets the knobs, and the same requests
get the same status codes and CORS headers from both.

- "prefixed": http.mount_prefix /api, an http.cors policy (origins, a
  regex, methods, headers, credentials, exposed headers, max_age), and
  disable_store, _meta, _mcp, _a2a, _runs, _ui: the official SDK works with
  base URL .../api; outside the prefix only the health checks answer; the
  turned-off groups answer 404, the others serve; preflights and answers
  carry the same CORS headers.
- "no-assistants-threads": disable_assistants and disable_threads.

Not compared, on purpose: Private Network Access (LangGraph's dev server
fails such a preflight with 400 while adding Access-Control-Allow-Private-
Network to it; Weft allows it for the policy's origins, docs/frontends.md),
and GET /metrics outside the prefix.

`langgraph dev` needs langgraph-cli[inmem] (pinned in requirements.txt); the
langgraph-dev half is skipped, saying so, when it is not installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_sync_client

from pyservers import (
    OFFLINE_ENV,
    READY_TIMEOUT,
    SECRET_ENV,
    LangGraphDev,
    free_port,
    langgraph_cli,
    project_copy,
)

CORS = {
    "allow_origins": ["https://app.example.com"],
    "allow_origin_regex": r"https://[a-z0-9]+\.preview\.example\.com",
    "allow_methods": ["GET", "POST"],
    "allow_headers": ["authorization", "x-custom"],
    "allow_credentials": True,
    "expose_headers": ["content-location", "x-pagination-total"],
    "max_age": 123,
}
CONFIGS = {
    "prefixed": {"mount_prefix": "/api", "cors": CORS, "disable_store": True, "disable_meta": True, "disable_mcp": True,
                 "disable_a2a": True, "disable_runs": True, "disable_ui": True},
    "no-assistants-threads": {"disable_assistants": True, "disable_threads": True},
}
CORS_HEADERS = ("access-control-allow-origin", "access-control-allow-credentials", "access-control-allow-methods",
                "access-control-allow-headers", "access-control-max-age", "access-control-expose-headers")


def configured(tmp: Path, http: dict) -> Path:
    """A copy of fixtures/pybench whose langgraph.json has http."""
    project = project_copy(tmp)
    cfg = json.loads((project / "langgraph.json").read_text())
    cfg["http"] = http
    (project / "langgraph.json").write_text(json.dumps(cfg, indent=2))
    return project


def wait_ok(url: str, proc: subprocess.Popen, log) -> None:
    """Waits until GET url answers 200 (the root's health check)."""
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}:\n{log()[-4000:]}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"not ready within {READY_TIMEOUT}s:\n{log()[-4000:]}")


def wait_graphs(api: str) -> None:
    """Waits until the project's graphs are registered (their system assistants listed)."""
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        r = httpx.post(api + "/assistants/search", json={"limit": 100}, timeout=5)
        if r.status_code == 200 and "echo_chat" in {a["graph_id"] for a in r.json()}:
            return
        time.sleep(0.2)
    raise RuntimeError(f"graphs not registered at {api}")


def serve(kind: str, name: str, servers, tmp_path_factory):
    """Yields the root URL of a server (weft-dev or langgraph-dev) serving a
    project with the http config name; stops it after."""
    project = configured(tmp_path_factory.mktemp(f"cfg-{name}"), CONFIGS[name])
    if kind == "weft-dev":
        w = servers.start(["dev", "--config", str(project / "langgraph.json")],
                          env={"WEFT_PYTHON": sys.executable, "PYTHONDONTWRITEBYTECODE": "1",
                               "WEFT_CACHE_DIR": str(tmp_path_factory.mktemp("cache"))})
        yield w.url
        w.stop()
        return
    try:
        cli = langgraph_cli()
    except RuntimeError as e:
        pytest.skip(str(e))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in SECRET_ENV} | OFFLINE_ENV
    log_path = str(tmp_path_factory.mktemp("lgdev") / "langgraph-dev.log")
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([cli, "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", str(port),
                                 "--config", str(project / "langgraph.json")], cwd=project, env=env, stdout=log,
                                stderr=subprocess.STDOUT)
    srv = LangGraphDev(url=f"http://127.0.0.1:{port}", proc=proc, log_path=log_path)
    try:
        wait_ok(srv.url + "/ok", proc, srv.log)
        yield srv.url
    finally:
        srv.stop()


@pytest.fixture(scope="module", params=["weft-dev", "langgraph-dev"])
def prefixed(request, servers, tmp_path_factory):
    """The root URL of a server serving the "prefixed" config."""
    yield from serve(request.param, "prefixed", servers, tmp_path_factory)


@pytest.fixture(scope="module", params=["weft-dev", "langgraph-dev"])
def no_assistants_threads(request, servers, tmp_path_factory):
    """The root URL of a server serving the "no-assistants-threads" config."""
    yield from serve(request.param, "no-assistants-threads", servers, tmp_path_factory)


def status(method: str, url: str, **kw) -> int:
    return httpx.request(method, url, timeout=10, **kw).status_code


def test_prefixed(prefixed):
    root = prefixed
    api = root + "/api"
    wait_graphs(api)
    # The official SDK, with the prefix in its base URL.
    client = get_sync_client(url=api)
    assistants = {a["graph_id"]: a["assistant_id"] for a in client.assistants.search(limit=100)}
    assert "echo_chat" in assistants
    thread = client.threads.create(metadata={"knobs": "yes"})
    assert (client.threads.get(thread["thread_id"]))["metadata"]["knobs"] == "yes"
    assert [t["thread_id"] for t in client.threads.search(metadata={"knobs": "yes"})] == [thread["thread_id"]]
    tid = thread["thread_id"]

    # Outside the prefix: the health checks only.
    assert status("GET", root + "/") == 200
    assert status("GET", root + "/ok") == 200
    for method, path in [("POST", "/threads"), ("POST", "/assistants/search"), ("GET", f"/threads/{tid}"),
                         ("GET", "/info"), ("GET", "/apix/ok")]:
        assert status(method, root + path, json={}) == 404, (method, path)
    r = httpx.get(api, timeout=10)
    assert r.status_code == 307 and r.headers["location"].endswith("/api/")
    assert httpx.get(api + "/ok", timeout=10).json()["ok"] is True  # meta off: /ok stays

    # The groups turned off answer 404; the others serve.
    for method, path in [("POST", "/store/items/search"), ("PUT", "/store/items"), ("GET", "/info"),
                         ("GET", "/openapi.json"), ("GET", "/docs"), ("GET", "/metrics"), ("POST", "/mcp"),
                         ("GET", "/.well-known/agent-card.json"), ("POST", "/a2a/echo_chat"), ("POST", "/runs/wait"),
                         ("POST", "/runs"), ("POST", f"/threads/{tid}/runs/wait"), ("GET", f"/threads/{tid}/runs"),
                         ("POST", "/runs/crons/search"), ("POST", "/ui/echo_chat"), ("GET", "/")]:
        assert status(method, api + path, json={}) == 404, (method, path)
    for method, path in [("POST", "/threads/search"), ("GET", f"/threads/{tid}"), ("GET", f"/threads/{tid}/state"),
                         ("POST", "/assistants/search"), ("GET", f"/assistants/{assistants['echo_chat']}")]:
        assert status(method, api + path, json={}) == 200, (method, path)


def cors_of(r: httpx.Response) -> dict:
    return {k: r.headers.get(k) for k in CORS_HEADERS}


# What both servers answer to CORS requests under the http.cors policy.
ALLOWED = {"access-control-allow-origin": "https://app.example.com", "access-control-allow-credentials": "true",
           "access-control-allow-methods": "GET, POST",
           "access-control-allow-headers": "Accept, Accept-Language, Content-Language, Content-Type, authorization, x-custom",
           "access-control-max-age": "123", "access-control-expose-headers": None}


def test_cors_policy(prefixed):
    url = prefixed + "/api/threads/search"

    def preflight(origin: str, method: str = "POST", headers: str | None = None) -> httpx.Response:
        h = {"Origin": origin, "Access-Control-Request-Method": method}
        if headers:
            h["Access-Control-Request-Headers"] = headers
        return httpx.options(url, headers=h, timeout=10)

    r = preflight("https://app.example.com", headers="authorization, content-type")
    assert (r.status_code, r.text, cors_of(r)) == (200, "OK", ALLOWED)
    r = preflight("https://pr7.preview.example.com", method="GET")
    assert (r.status_code, cors_of(r)) == (200, {**ALLOWED, "access-control-allow-origin": "https://pr7.preview.example.com"})
    for origin, method, headers, body in [
        ("https://evil.example", "POST", None, "Disallowed CORS origin"),
        ("http://localhost:3000", "POST", None, "Disallowed CORS origin"),
        ("https://pr7.preview.example.com.evil.io", "GET", None, "Disallowed CORS origin"),
        ("https://app.example.com", "DELETE", None, "Disallowed CORS method"),
        ("https://app.example.com", "GET", "x-other", "Disallowed CORS headers"),
        ("https://evil.example", "PUT", "x-other", "Disallowed CORS origin, method, headers"),
    ]:
        r = preflight(origin, method, headers)
        want = {**ALLOWED, "access-control-allow-origin": None if "origin" in body else origin}
        assert (r.status_code, r.text, cors_of(r)) == (400, body, want), (origin, method, headers)

    # Answers: the allowed origin named, with credentials and the exposed headers.
    r = httpx.post(url, json={}, headers={"Origin": "https://app.example.com"}, timeout=10)
    assert r.status_code == 200
    assert cors_of(r) == {"access-control-allow-origin": "https://app.example.com", "access-control-allow-credentials": "true",
                          "access-control-allow-methods": None, "access-control-allow-headers": None,
                          "access-control-max-age": None, "access-control-expose-headers": "content-location, x-pagination-total"}
    r = httpx.post(url, json={}, headers={"Origin": "https://evil.example"}, timeout=10)
    assert r.status_code == 200 and r.headers.get("access-control-allow-origin") is None
    assert "Origin" in r.headers.get("vary", "")


def test_no_assistants_threads(no_assistants_threads):
    root = no_assistants_threads
    tid = "00000000-0000-0000-0000-000000000001"
    for method, path in [("POST", "/assistants/search"), ("POST", "/assistants"), ("GET", f"/assistants/{tid}"),
                         ("POST", "/threads"), ("POST", "/threads/search"), ("GET", f"/threads/{tid}"),
                         ("GET", f"/threads/{tid}/state"), ("POST", f"/threads/{tid}/history")]:
        assert status(method, root + path, json={}) == 404, (method, path)
    for method, path, body, want in [("GET", "/ok", None, 200), ("GET", "/info", None, 200),
                                     ("PUT", "/store/items", {"namespace": ["knobs"], "key": "k", "value": {"v": 1}}, 204),
                                     ("POST", "/store/items/search", {"namespace_prefix": ["knobs"]}, 200),
                                     ("POST", "/runs/crons/search", {}, 200)]:
        assert status(method, root + path, json=body) == want, (method, path)
    # Runs are on: a stateless run of a graph by its id.
    deadline = time.monotonic() + READY_TIMEOUT
    while True:
        r = httpx.post(root + "/runs/wait", json={"assistant_id": "echo_chat",
                                                  "input": {"messages": [{"role": "user", "content": "hi"}]}}, timeout=30)
        if r.status_code == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.5)  # the graph is registered when the worker is up
    assert r.status_code == 200, r.text
    assert r.json()["messages"][-1]["content"] == "echo: hi"
