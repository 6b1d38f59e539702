"""The authenticated user: what a langgraph.json auth.path's authenticate
returned, in its JSON form (user_dict: the user the Weft server keeps and
sends back with each request) and as the object the Agent Server hands to
code (User: an auth handler's ctx.user, a graph factory's ServerRuntime.user,
and, through http_app.py, an http.app route's request.user)."""

from __future__ import annotations

import json
from typing import Any


class User:
    """The authenticated user as the Agent Server hands it to handlers
    (ctx.user): attributes and mapping access, identity, display_name,
    is_authenticated and permissions, and whatever else authenticate returned."""

    __slots__ = ("_obj", "_d")

    def __init__(self, obj: Any):
        self._obj = obj
        self._d = user_dict(obj)

    @property
    def identity(self) -> str:
        return self._d["identity"]

    @property
    def display_name(self) -> str:
        return self._d.get("display_name", self.identity)

    @property
    def is_authenticated(self) -> bool:
        return self._d.get("is_authenticated", True)

    @property
    def permissions(self):
        return self._d.get("permissions", [])

    def __getattr__(self, name: str):
        if isinstance(self._obj, dict):
            try:
                return self._obj[name]
            except KeyError:
                raise AttributeError(name) from None
        return getattr(self._obj, name)

    def __getitem__(self, key):
        return self._d[key]

    def __contains__(self, key) -> bool:
        return key in self._d

    def __iter__(self):
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def get(self, key, default=None):
        return self._d.get(key, default)

    def keys(self):
        return self._d.keys()

    def values(self):
        return self._d.values()

    def items(self):
        return self._d.items()

    def dict(self) -> dict:
        return dict(self._d)

    def model_dump(self, **_):
        return dict(self._d)

    def __repr__(self) -> str:
        return f"User({self._d!r})"


def jsonable(v: Any) -> Any:
    """v itself when it is JSON, else its JSON form (what JSON lacks as str)."""
    try:
        json.dumps(v)
        return v
    except (TypeError, ValueError):
        return json.loads(json.dumps(v, default=str))


def user_dict(obj: Any) -> dict:
    """The JSON form of what authenticate returned (identity required)."""
    if isinstance(obj, User):
        return dict(obj._d)
    if isinstance(obj, str):
        d: dict = {"identity": obj}
    elif isinstance(obj, dict):
        d = dict(obj)
    elif hasattr(obj, "model_dump") and callable(obj.model_dump):
        d = dict(obj.model_dump(mode="json"))
    elif hasattr(obj, "identity"):
        d = {}
        if hasattr(obj, "dict") and callable(obj.dict):
            d.update(obj.dict())
        elif hasattr(obj, "__dict__"):
            d.update({k: v for k, v in vars(obj).items() if not k.startswith("_")})
        for k in ("identity", "display_name", "is_authenticated", "permissions"):
            if hasattr(obj, k):
                d[k] = getattr(obj, k)
    else:
        raise ValueError(
            "authenticate must return a string, a dict with an identity (MinimalUserDict), "
            f"or an object with an identity; got {type(obj).__name__}")
    if not isinstance(d.get("identity"), str):
        raise ValueError("authenticate's user has no identity (str)")
    d.setdefault("display_name", d["identity"])
    d.setdefault("is_authenticated", True)
    d["permissions"] = list(d.get("permissions") or [])
    return {k: jsonable(v) for k, v in d.items()}
