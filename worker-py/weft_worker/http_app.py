"""A Python project's langgraph.json "http.app" (a Starlette / FastAPI app,
any ASGI app), served to the Weft server on a unix socket with uvicorn.

The server sends this worker every request but its worker API, health probes
and WebSocket upgrades. A request one of the app's routes matches (or, for an
app without a route table, any request) is the app's; the others go on to
the Weft API at the server's own URL, with the pass header (WEFT_APP_PASS)
that tells the server's front the request comes back from the app. The
answer streams through as it comes.

With http.enable_custom_route_auth (WEFT_APP_ROUTE_AUTH), each route of the
app is wrapped in an authentication middleware, as LangGraph's server wraps
them (inside the app's own middleware, GET /ui… left alone): with an
auth.path ("server") the Weft server runs its authenticate handler on the
request (its method, URL and headers sent back with the pass and
x-weft-app-authenticate) and answers the user, which the route reads as
request.user (request.auth.scopes: its permissions), or the API's answer to
a request that failed authentication, which goes to the client as it is;
without one ("anonymous") request.user is an unauthenticated user (identity
"") and nobody is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from typing import Any

import httpx

from . import app_openapi
from .load import load_object
from .user import User

log = logging.getLogger("weft_worker")

PASS_HEADER = "x-weft-app-pass"
AUTHENTICATE_HEADER = "x-weft-app-authenticate"  # with the pass: authenticate this request, do not serve it
HOST_HEADER = "x-weft-app-host"  # with AUTHENTICATE_HEADER: the Host the client called
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


_user_class = None


def _route_user(user: dict | None):
    """request.user of an authenticated route: a Starlette BaseUser with the
    identity, display_name, is_authenticated and permissions of what
    authenticate returned, its other fields as attributes and keys (as
    LangGraph's server proxies it); None: unauthenticated (identity "")."""
    global _user_class
    if _user_class is None:
        from starlette.authentication import BaseUser

        class RouteUser(User, BaseUser):
            __slots__ = ()

        _user_class = RouteUser
    if user is None:
        user = {"identity": "", "display_name": "", "is_authenticated": False}
    return _user_class(user)


class RouteAuth:
    """The authentication middleware of one route (or of an app without a
    route table): request.user and request.auth set, or the server's refusal
    answered."""

    def __init__(self, app: Any, front: "AppFront"):
        self.app, self.front = app, front

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or (scope["method"] == "GET" and scope["path"].startswith("/ui")):
            return await self.app(scope, receive, send)
        from starlette.authentication import AuthCredentials

        user, scopes = None, []
        if self.front.route_auth == "server":
            who = await self.front.authenticate(scope, send)
            if who is None:
                return  # refused: the server's answer went to the client
            user, scopes = who.get("user"), who.get("scopes") or []
        scope["user"], scope["auth"] = _route_user(user), AuthCredentials(scopes)
        await self.app(scope, receive, send)


class AppFront:
    """The ASGI app uvicorn serves: the project's app, the API behind it."""

    def __init__(self, app: Any, api_url: str, pass_: str, route_auth: str = ""):
        self.app, self.routes = app, _routes(app)
        self.described = app  # the app as loaded, for its OpenAPI description
        self.api_url, self.pass_ = api_url.rstrip("/"), pass_
        self.client = httpx.AsyncClient(timeout=None)
        self.route_auth = route_auth
        if route_auth in ("server", "anonymous"):
            if self.routes is None:
                self.app = RouteAuth(app, self)
            else:
                for route in self.routes:
                    if not hasattr(route, "app"):
                        raise ValueError(f"http.enable_custom_route_auth: route {route!r} has no app to authenticate")
                    route.app = RouteAuth(route.app, self)

    async def __call__(self, scope, receive, send):
        if scope["type"] == "lifespan":
            return await self.app(scope, receive, send)
        if await app_openapi.answer(scope, send, self.described, self.pass_):
            return  # the server asked for the app's routes (app_openapi.py)
        if scope["type"] != "http" or self.routes is None or _matches(self.routes, scope):
            return await self.app(scope, receive, send)
        await self.forward(scope, receive, send)

    def _request(self, scope, extra: list, body: bytes | None = None) -> httpx.Request:
        """scope's request to the API (its headers but hop-by-hop ones, the pass, extra)."""
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"] if k not in HOP_HEADERS]
        headers.append((PASS_HEADER, self.pass_))
        headers.extend(extra)
        url = self.api_url + scope["path"] + ("?" + scope["query_string"].decode() if scope.get("query_string") else "")
        return self.client.build_request(scope["method"], url, headers=headers, content=body or None)

    async def forward(self, scope, receive, send):
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        res = await self.client.send(self._request(scope, [], body), stream=True)
        await _relay(res, send)

    async def authenticate(self, scope, send) -> dict | None:
        """The server's authentication of scope's request: {user, scopes}, or
        None once its refusal went to the client."""
        host = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), "")
        res = await self.client.send(self._request(scope, [(AUTHENTICATE_HEADER, "1"), (HOST_HEADER, host)]), stream=True)
        if res.status_code == 200:
            try:
                return json.loads(await res.aread())
            finally:
                await res.aclose()
        await _relay(res, send)
        return None


async def _relay(res: httpx.Response, send) -> None:
    """Sends the API's answer res (streamed) as this request's."""
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
    route_auth = os.environ.get("WEFT_APP_ROUTE_AUTH", "")
    front = AppFront(app, api_url, os.environ.get("WEFT_APP_PASS", ""), route_auth)
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
    log.info("serving the project's http.app", extra={"attrs": {"app": spec, "socket": socket_path,
                                                               "route_auth": route_auth or None}})
    task.server = server  # type: ignore[attr-defined]
    return task
