"""A project's langgraph.json auth.path (a langgraph_sdk.Auth), served to the
Weft server over a unix socket with the protocol of the JS worker's
auth.mjs: POST /authenticate, /authorize and /check (both), JSON in and out,
always 200 (a refusal is {status, detail, headers}). The server asks it to
authenticate each API request and to authorize each resource:action with
the value the Agent Server passes to the handler; many requests are in
flight at once (one asyncio task per connection, keep-alive).

The same socket serves POST /embed ({texts} -> {vectors}) when the project's
store.index.embed names a Python function or Embeddings object (embed.py).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import os
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from .embed import load_embedder
from .load import is_python_path, load_object
from .user import User, jsonable, user_dict

log = logging.getLogger("weft_worker")


def load_auth(spec: str, base: str):
    from langgraph_sdk import Auth

    auth = load_object(spec, base, "auth.path")
    if not isinstance(auth, Auth):
        raise ValueError(f"auth.path {spec}: expected a langgraph_sdk.Auth, got {type(auth).__name__}")
    return auth


async def _call(fn, **kwargs):
    """Calls a handler, async or sync (a sync one in a thread, off the loop)."""
    if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None)):
        return await fn(**kwargs)
    out = await asyncio.to_thread(lambda: fn(**kwargs))
    if inspect.isawaitable(out):
        out = await out
    return out


def _failure(err: BaseException, default: int = 500) -> dict:
    from langgraph_sdk import Auth

    if isinstance(err, Auth.exceptions.HTTPException):
        headers = {str(k).lower(): str(v) for k, v in dict(err.headers or {}).items()}
        return {"status": err.status_code, "detail": str(err.detail), "headers": headers}
    if isinstance(err, AssertionError):  # as langgraph_api: an assert in a handler is a 403
        return {"status": 403, "detail": str(err) or "Forbidden"}
    return {"status": default, "detail": f"auth handler failed: {type(err).__name__}: {err}"}


def containment(filters: dict | None) -> dict | None:
    """Filters as PostgreSQL jsonb containment: {k: v} and {k: {"$eq": v}} are
    k = v; {k: {"$contains": x}} is an array k holding x (or all of x)."""
    if filters is None:
        return None
    out = {}
    for k, v in filters.items():
        if isinstance(v, dict) and ("$eq" in v or "$contains" in v):
            if "$eq" in v:
                out[k] = v["$eq"]
            else:
                c = v["$contains"]
                out[k] = c if isinstance(c, list) else [c]
        else:
            out[k] = v
    return jsonable(out)


class _Request:
    """The request authenticate may ask for (request=) when Starlette is not
    installed: method, url, headers, path_params, query_params."""

    def __init__(self, method: str, url: str, headers: dict[str, str]):
        self.method = method
        self.url = urlsplit(url)
        self.headers = headers
        self.query_params = dict(parse_qsl(self.url.query))
        self.path_params: dict = {}


class AuthHandlers:
    """Runs an Auth's authenticate and on() handlers."""

    def __init__(self, auth):
        self.auth = auth
        fn = auth._authenticate_handler
        self.authn = fn
        self.params = set(inspect.signature(fn).parameters) if fn is not None else set()

    def _args(self, method: str, url: str, headers: dict[str, str]) -> dict:
        parts = urlsplit(url)
        raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
        scope = {"type": "http", "method": method, "path": parts.path, "raw_path": parts.path.encode(),
                 "query_string": parts.query.encode(), "headers": raw, "path_params": {},
                 "scheme": parts.scheme or "http", "server": (parts.hostname or "localhost", parts.port or 80)}
        p = self.params
        args: dict[str, Any] = {}
        if "request" in p:
            try:
                from starlette.requests import Request

                args["request"] = Request(scope)
            except ImportError:
                args["request"] = _Request(method, url, headers)
        if "scope" in p:
            args["scope"] = scope
        if "path" in p:
            args["path"] = parts.path
        if "method" in p:
            args["method"] = method
        if "headers" in p:
            args["headers"] = dict(raw)
        if "authorization" in p:
            args["authorization"] = headers.get("authorization")
        if "path_params" in p:
            args["path_params"] = {}
        if "query_params" in p:
            try:
                from starlette.datastructures import QueryParams

                args["query_params"] = QueryParams(parts.query)
            except ImportError:
                args["query_params"] = dict(parse_qsl(parts.query))
        if "user" in p:
            args["user"] = None
        if "scopes" in p:
            args["scopes"] = []
        return args

    async def authenticate(self, req: dict) -> dict:
        """{user, scopes, obj} or {status, detail}; no authenticate handler: anonymous."""
        if self.authn is None:
            return {"user": None, "scopes": []}
        try:
            headers = {str(k).lower(): str(v) for k, v in (req.get("headers") or {}).items()}
            res = await _call(self.authn, **self._args(req.get("method", "GET"), req.get("url", "http://localhost/"), headers))
            if isinstance(res, tuple):
                if len(res) != 2:
                    raise ValueError("authenticate returned a tuple that is not (permissions, user)")
                perms, res = res
            elif isinstance(res, dict) and "permissions" in res:
                perms = res["permissions"]
            else:
                perms = getattr(res, "permissions", None) or []
            d = user_dict(res)
            d["permissions"] = list(perms or [])
            return {"user": d, "scopes": list(perms or []), "obj": res}
        except Exception as err:  # noqa: BLE001 - each failure is the request's answer
            from langgraph_sdk import Auth

            if isinstance(err, Auth.exceptions.HTTPException):
                return _failure(err)
            if isinstance(err, ValueError):
                return {"status": 500, "detail": str(err)}
            return _failure(err)

    def _handler(self, resource: str, action: str):
        h = self.auth._handlers
        for key in ((resource, action), (resource, "*"), ("*", action), ("*", "*")):
            if key in h and h[key]:
                return h[key][-1]
        g = self.auth._global_handlers
        return g[-1] if g else None

    async def authorize(self, body: dict, user_obj: Any = None) -> dict:
        """{filters, value} (filters None: none) or {status, detail}."""
        from langgraph_sdk import Auth

        resource, action = body.get("resource"), body.get("action")
        value = body.get("value") or {}
        if action in ("create", "update", "create_run") and resource in ("threads", "assistants", "crons") \
                and not isinstance(value.get("metadata"), dict):
            value["metadata"] = {}  # as LangGraph's server passes it: a dict to stamp in place
        user = body.get("user")
        fn = self._handler(resource, action)
        if fn is None or user is None:
            return {"filters": None, "value": value}
        scopes = list(body.get("scopes") or [])
        ctx = Auth.types.AuthContext(resource=resource, action=action, user=User(user_obj if user_obj is not None else user),
                                     permissions=scopes)
        try:
            res = await _call(fn, ctx=ctx, value=value)
        except Exception as err:  # noqa: BLE001
            return _failure(err)
        if res is None or res is True:
            return {"filters": None, "value": jsonable(value)}
        if res is False:
            return {"status": 403, "detail": "Forbidden"}
        if not isinstance(res, dict):
            return {"status": 500, "detail": f"auth handler for {resource}:{action} returned {type(res).__name__}; "
                                             "expected a filter dict, None, or a bool"}
        return {"filters": containment(res), "value": jsonable(value)}

    async def check(self, body: dict) -> dict:
        """authenticate, then authorize as that user: one call per API request."""
        who = await self.authenticate(body.get("request") or {})
        if who.get("status"):
            return who
        out = await self.authorize({"user": who["user"], "scopes": who["scopes"], "resource": body.get("resource"),
                                    "action": body.get("action"), "value": body.get("value")}, who.get("obj"))
        if out.get("status"):
            return out
        return {**out, "user": who["user"], "scopes": who["scopes"]}


class Server:
    """HTTP/1.1 (keep-alive, Content-Length bodies) on a unix socket: each
    connection is a task, so requests on different connections run at once."""

    def __init__(self, handlers: AuthHandlers | None, embedder=None):
        self.handlers = handlers
        self.embedder = embedder
        self.server: asyncio.AbstractServer | None = None

    async def start(self, socket: str) -> None:
        if os.path.exists(socket):
            os.unlink(socket)
        self.server = await asyncio.start_unix_server(self._conn, path=socket, limit=1 << 24)

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()

    async def _route(self, path: str, body: dict) -> dict:
        h = self.handlers
        if path == "/embed" and self.embedder is not None:
            return await self.embedder.embed(body)
        if h is None:
            return {"status": 404, "detail": f"no {path}: the project has no Python auth.path"}
        if path == "/authenticate":
            out = await h.authenticate(body)
            out.pop("obj", None)
            return out
        if path == "/authorize":
            return await h.authorize(body)
        if path == "/check":
            return await h.check(body)
        return {"status": 404, "detail": f"no {path}"}

    async def _conn(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                _method, path, _ = lines[0].split(" ", 2)
                length, close = 0, False
                for line in lines[1:]:
                    k, _, v = line.partition(":")
                    k = k.strip().lower()
                    if k == "content-length":
                        length = int(v.strip())
                    elif k == "connection" and v.strip().lower() == "close":
                        close = True
                raw = await reader.readexactly(length) if length else b""
                try:
                    out = await self._route(path, json.loads(raw or b"{}"))
                except Exception as err:  # noqa: BLE001
                    log.error("auth request failed", exc_info=True)
                    out = {"status": 500, "detail": str(err)}
                text = json.dumps(out, default=str).encode()
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                             + str(len(text)).encode() + b"\r\n\r\n" + text)
                await writer.drain()
                if close:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()


async def start_project_socket(config: str, socket: str) -> Server:
    """Loads the auth.path (Python) and store.index.embed (Python) of the
    langgraph.json at config and serves them on socket."""
    path = os.path.abspath(config)
    with open(path) as f:
        cfg = json.load(f)
    base = os.path.dirname(path)
    handlers = None
    spec = (cfg.get("auth") or {}).get("path")
    if spec and is_python_path(spec):
        handlers = AuthHandlers(load_auth(spec, base))
        log.info("serving auth.path", extra={"attrs": {"path": spec, "socket": socket}})
    embedder = load_embedder(cfg, base)
    server = Server(handlers, embedder)
    await server.start(socket)
    return server
