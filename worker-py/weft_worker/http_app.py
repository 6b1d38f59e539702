"""A Python project's langgraph.json "http.app" (a Starlette / FastAPI app,
any ASGI app), served to the Weft server on a unix socket with uvicorn.

The server sends this worker every request but its worker API, health probes
and WebSocket upgrades. A request one of the app's routes matches (or, for an
app without a route table, any request) is the app's; the others go on to
the Weft API at the server's own URL, with the pass header (WEFT_APP_PASS)
that tells the server's front the request comes back from the app. The
answer streams through as it comes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from typing import Any

import httpx

from .auth import load_object

log = logging.getLogger("weft_worker")

PASS_HEADER = "x-weft-app-pass"
HOP_HEADERS = {b"connection", b"keep-alive", b"transfer-encoding", b"upgrade", b"host", b"content-length"}


def _routes(app: Any) -> list | None:
    """The app's route table (Starlette, FastAPI), or None for another ASGI app."""
    router = getattr(app, "router", None)
    routes = getattr(router, "routes", None)
    return routes if isinstance(routes, list) else None


def _matches(routes: list, scope: dict) -> bool:
    from starlette.routing import Match

    for route in routes:
        match, _ = route.matches(scope)
        if match != Match.NONE:
            return True
    return False


class AppFront:
    """The ASGI app uvicorn serves: the project's app, the API behind it."""

    def __init__(self, app: Any, api_url: str, pass_: str):
        self.app, self.routes = app, _routes(app)
        self.api_url, self.pass_ = api_url.rstrip("/"), pass_
        self.client = httpx.AsyncClient(timeout=None)

    async def __call__(self, scope, receive, send):
        if scope["type"] == "lifespan":
            return await self.app(scope, receive, send)
        if scope["type"] != "http" or self.routes is None or _matches(self.routes, scope):
            return await self.app(scope, receive, send)
        await self.forward(scope, receive, send)

    async def forward(self, scope, receive, send):
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"] if k not in HOP_HEADERS]
        headers.append((PASS_HEADER, self.pass_))
        url = self.api_url + scope["path"] + ("?" + scope["query_string"].decode() if scope.get("query_string") else "")
        req = self.client.build_request(scope["method"], url, headers=headers, content=body or None)
        res = await self.client.send(req, stream=True)
        try:
            out = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in res.headers.multi_items()
                   if k.encode("latin-1") not in HOP_HEADERS and k.lower() != "content-encoding"]
            await send({"type": "http.response.start", "status": res.status_code, "headers": out})
            async for chunk in res.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            await res.aclose()


async def start_http_app(config_path: str, socket_path: str, api_url: str) -> asyncio.Task:
    """Serves the http.app of the langgraph.json at config_path on socket_path; returns uvicorn's task."""
    try:
        import uvicorn
    except ImportError as e:
        raise RuntimeError("langgraph.json's http.app needs uvicorn in the project's environment "
                           "(pip install uvicorn)") from e
    base = os.path.dirname(os.path.abspath(config_path))
    with open(config_path) as f:
        spec = (json.load(f).get("http") or {}).get("app")
    if not spec:
        raise ValueError(f"--http-socket: {config_path} has no http.app")
    app = load_object(spec, base, "http.app")
    if os.path.exists(socket_path):
        os.unlink(socket_path)
    front = AppFront(app, api_url, os.environ.get("WEFT_APP_PASS", ""))
    server = uvicorn.Server(uvicorn.Config(front, uds=socket_path, log_level="warning", lifespan="auto",
                                           access_log=False))
    server.capture_signals = contextlib.nullcontext  # the worker's own signal handlers stop it
    task = asyncio.get_running_loop().create_task(server.serve())
    for _ in range(200):
        if server.started or task.done():
            break
        await asyncio.sleep(0.025)
    if task.done():
        task.result()  # uvicorn's failure to start
    log.info("serving the project's http.app", extra={"attrs": {"app": spec, "socket": socket_path}})
    task.server = server  # type: ignore[attr-defined]
    return task
