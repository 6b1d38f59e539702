"""A Python http.app beside a JS ui: routes that show who called, as
LangGraph's server hands the authenticated user to a Starlette app
(request.user, request.auth.scopes), and a middleware of the app's own."""

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


class Seen:
    """Marks the app's answers (its routes' refusals included)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        async def mark(message):
            if message["type"] == "http.response.start":
                message.setdefault("headers", []).append((b"x-app-middleware", b"seen"))
            await send(message)

        await self.app(scope, receive, mark if scope["type"] == "http" else send)


async def whoami(request: Request):
    if "user" not in request.scope:
        return JSONResponse(None)
    u = request.user
    return JSONResponse({"identity": u.identity, "display_name": u.display_name, "is_authenticated": u.is_authenticated,
                         "team": u.get("team"), "scopes": list(request.auth.scopes)})


async def echo(request: Request):
    return JSONResponse({"got": await request.json(), "by": request.user.identity})


app = Starlette(routes=[Route("/custom/whoami", whoami), Route("/custom/echo", echo, methods=["POST"])],
                middleware=[Middleware(Seen)])
