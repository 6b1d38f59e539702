"""Values as JSON: what the worker commits, and how it reads them back.

The worker commits values as JSON text, the form worker-js commits and
Weft stores, streams and shows without a Python decoder. What plain JSON
cannot say is written as LangChain serialization envelopes that
LangGraph's own JsonPlusSerializer revives from a "json" blob:

- LangChain objects (messages, documents) as LangChain writes them
  (``{"lc": 1, "type": "constructor", ...}``, langchain_core's ``dumpd``);
- LangGraph's ``Send``, ``Interrupt``, ``Command`` and ``Overwrite`` as
  ``{"lc": 2, "type": "constructor", "id": ["langgraph", "types", ...],
  "kwargs": {...}}`` (in LangGraph's safe list, revived without an
  allowlist), so a resumed run gets them back as objects.

Weft turns both into the plain dicts its reads return (serde.NormalizeLC).
Everything else becomes its JSON form: Pydantic models and dataclasses
their fields, tuples and sets lists, datetimes ISO text, UUIDs text,
enums their value, bytes base64, exceptions {"error", "message"}. Those
come back as the JSON form (a model in a channel reads back as a dict),
which is where the msgpack encoding of issue 29 item 2 will do better.

Events and results use the plain form (``revive=False``): an Interrupt
is {"value", "id"}, a Send {"node", "arg"}, as the Agent Server streams
them.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import decimal
import enum
import json
import math
import pathlib
import uuid
from collections import deque
from typing import Any

from langchain_core.load import dumpd
from langchain_core.load.serializable import Serializable
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.types import Command, Interrupt, Send

try:
    from langgraph.types import Overwrite
except ImportError:  # older langgraph
    Overwrite = None  # type: ignore[assignment,misc]

try:
    from pydantic import BaseModel
except ImportError:  # pragma: no cover
    BaseModel = None  # type: ignore[assignment,misc]


def _lc2(name: str, kwargs: dict) -> dict:
    return {"lc": 2, "type": "constructor", "id": ["langgraph", "types", name], "kwargs": kwargs}


def to_json(v: Any, revive: bool = True, depth: int = 0) -> Any:
    """v as JSON-compatible data (see the module's doc)."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if depth > 200:
        return str(v)
    d = depth + 1
    if isinstance(v, dict):
        return {k if isinstance(k, str) else str(to_json(k, revive, d)): to_json(x, revive, d) for k, x in v.items()}
    if isinstance(v, (list, set, frozenset, deque)):
        return [to_json(x, revive, d) for x in v]
    if isinstance(v, tuple):
        if hasattr(v, "_asdict"):  # namedtuple
            return {k: to_json(x, revive, d) for k, x in v._asdict().items()}
        return [to_json(x, revive, d) for x in v]
    if isinstance(v, Interrupt):
        kw = {"value": to_json(v.value, revive, d), "id": v.id}
        # LangGraph ≥ 1.2's response_schema: streamed always (None unless
        # set), as the Agent Server streams an Interrupt; stored when set.
        schema = getattr(v, "response_schema", None)
        if hasattr(v, "response_schema") and (schema is not None or not revive):
            kw["response_schema"] = to_json(schema, revive, d)
        return _lc2("Interrupt", kw) if revive else kw
    if isinstance(v, Send):
        kw = {"node": v.node, "arg": to_json(v.arg, revive, d)}
        return _lc2("Send", kw) if revive else kw
    if isinstance(v, Command):
        if not revive:  # every field, as the Agent Server streams a Command
            return {f: to_json(getattr(v, f, None), revive, d) for f in ("graph", "update", "resume", "goto")}
        kw = {}
        for f in ("graph", "update", "resume", "goto"):
            x = getattr(v, f, None)
            if x is not None and x != ():
                kw[f] = to_json(x, revive, d)
        return _lc2("Command", kw)
    if Overwrite is not None and isinstance(v, Overwrite):
        kw = {"value": to_json(v.value, revive, d)}
        return _lc2("Overwrite", kw) if revive else kw
    if isinstance(v, Serializable):
        try:
            return dumpd(v)
        except Exception:
            pass
    if BaseModel is not None and isinstance(v, BaseModel):
        return to_json(v.model_dump(), revive, d)
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: to_json(getattr(v, f.name), revive, d) for f in dataclasses.fields(v)}
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, datetime.timedelta):
        return v.total_seconds()
    if isinstance(v, enum.Enum):
        return to_json(v.value, revive, d)
    if isinstance(v, (uuid.UUID, decimal.Decimal, pathlib.PurePath)):
        return str(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(v)).decode()
    if isinstance(v, BaseException):
        return {"error": type(v).__name__, "message": str(v)}
    if hasattr(v, "model_dump"):
        try:
            return to_json(v.model_dump(), revive, d)
        except Exception:
            pass
    if hasattr(v, "to_json") and callable(v.to_json):
        try:
            return to_json(v.to_json(), revive, d)
        except Exception:
            pass
    return str(v)


def dumps(v: Any, revive: bool = True) -> str:
    """JSON text of v (see to_json); plain data takes json.dumps's fast path."""
    try:
        return json.dumps(v, allow_nan=False, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        return json.dumps(to_json(v, revive), allow_nan=False, separators=(",", ":"), ensure_ascii=False)


def dumps_event(v: Any) -> str:
    """JSON text of a stream chunk or a result (the plain form)."""
    return dumps(v, revive=False)


# Reading: LangGraph's own serializer decodes what Weft stores ("json",
# and "msgpack" / "bytes" / "null" rows other writers left).
SERDE = JsonPlusSerializer()


def load_value(type_: str | None, b64: str | None) -> Any:
    data = base64.b64decode(b64 or "")
    return SERDE.loads_typed((type_ or "json", data))
