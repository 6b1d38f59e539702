"""The OpenAPI description of a project's Python http.app, which weft dev
merges into the document it serves (GET /openapi.json): the server asks for
it on the app's socket, at OPENAPI_PATH with the app's pass.

As LangGraph's server describes a custom app: a FastAPI app by its own
openapi(); a Starlette app by Starlette's schema generator, which lists the
routes whose docstrings hold an OpenAPI YAML block (after a "---" line); any
other ASGI app has no route table, and nothing is described."""

from __future__ import annotations

import json
from typing import Any

OPENAPI_PATH = "/__weft/openapi.json"


def app_document(app: Any) -> dict:
    """The OpenAPI document of app's routes (empty paths when it has none to tell)."""
    empty = {"openapi": "3.0.3", "info": {"title": "http.app", "version": "0"}, "paths": {}}
    # A FastAPI app describes itself (openapi(), its cached openapi_schema);
    # recognised by that rather than imported: FastAPI is the project's.
    if callable(getattr(app, "openapi", None)) and hasattr(app, "openapi_schema"):
        return app.openapi()
    routes = getattr(getattr(app, "router", None), "routes", None)
    if not isinstance(routes, list):
        return empty
    from starlette.schemas import SchemaGenerator  # noqa: PLC0415

    return SchemaGenerator({**empty, "paths": {}}).get_schema(routes=routes)


async def answer(scope, send, app: Any, pass_: str) -> bool:
    """Answers the server's request for the description; False for any other request."""
    if scope["type"] != "http" or scope["method"] != "GET" or scope["path"] != OPENAPI_PATH or not pass_:
        return False
    given = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"x-weft-app-pass"), "")
    if given != pass_:
        return False  # the app's, then
    body = json.dumps(app_document(app), default=str).encode()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
    return True
