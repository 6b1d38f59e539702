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
unless langgraph.json's checkpointer.serde is set: then Pydantic models,
dataclasses and enums in channel values and writes keep their class, as
its allowlists decide (ext_envelope, WeftSerializer below).

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
import os
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


def to_json(v: Any, revive: bool = True, depth: int = 0, typed: bool = False) -> Any:
    """v as JSON-compatible data (see the module's doc); typed (with revive)
    writes custom classes as envelopes that keep their type (ext_envelope)."""
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
        return {k if isinstance(k, str) else str(to_json(k, revive, d)): to_json(x, revive, d, typed) for k, x in v.items()}
    if isinstance(v, (list, set, frozenset, deque)):
        return [to_json(x, revive, d, typed) for x in v]
    if isinstance(v, tuple):
        if hasattr(v, "_asdict"):  # namedtuple
            return {k: to_json(x, revive, d, typed) for k, x in v._asdict().items()}
        return [to_json(x, revive, d, typed) for x in v]
    if isinstance(v, Interrupt):
        kw = {"value": to_json(v.value, revive, d, typed), "id": v.id}
        # LangGraph ≥ 1.2's response_schema: streamed always (None unless
        # set), as the Agent Server streams an Interrupt; stored when set.
        schema = getattr(v, "response_schema", None)
        if hasattr(v, "response_schema") and (schema is not None or not revive):
            kw["response_schema"] = to_json(schema, revive, d, typed)
        return _lc2("Interrupt", kw) if revive else kw
    if isinstance(v, Send):
        kw = {"node": v.node, "arg": to_json(v.arg, revive, d, typed)}
        return _lc2("Send", kw) if revive else kw
    if isinstance(v, Command):
        if not revive:  # every field, as the Agent Server streams a Command
            return {f: to_json(getattr(v, f, None), revive, d, typed) for f in ("graph", "update", "resume", "goto")}
        kw = {}
        for f in ("graph", "update", "resume", "goto"):
            x = getattr(v, f, None)
            if x is not None and x != ():
                kw[f] = to_json(x, revive, d, typed)
        return _lc2("Command", kw)
    if Overwrite is not None and isinstance(v, Overwrite):
        kw = {"value": to_json(v.value, revive, d, typed)}
        return _lc2("Overwrite", kw) if revive else kw
    if isinstance(v, Serializable):
        try:
            return _dumpd(v)
        except Exception:
            pass
    if BaseModel is not None and isinstance(v, BaseModel):
        fields = to_json(v.model_dump(), revive, d, typed)
        return ext_envelope(v, EXT_PYDANTIC_V2, kwargs=fields) if typed and revive else fields
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        fields = {f.name: to_json(getattr(v, f.name), revive, d, typed) for f in dataclasses.fields(v)}
        return ext_envelope(v, EXT_CONSTRUCTOR_KW_ARGS, kwargs=fields) if typed and revive else fields
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, datetime.timedelta):
        return v.total_seconds()
    if isinstance(v, enum.Enum):
        value = to_json(v.value, revive, d, typed)
        return ext_envelope(v, EXT_CONSTRUCTOR_SINGLE_ARG, args=[value]) if typed and revive else value
    if isinstance(v, (uuid.UUID, decimal.Decimal, pathlib.PurePath)):
        return str(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(v)).decode()
    if isinstance(v, BaseException):
        return {"error": type(v).__name__, "message": str(v)}
    if hasattr(v, "model_dump"):
        try:
            return to_json(v.model_dump(), revive, d, typed)
        except Exception:
            pass
    if hasattr(v, "to_json") and callable(v.to_json):
        try:
            return to_json(v.to_json(), revive, d, typed)
        except Exception:
            pass
    return str(v)


# LangChain's dumpd of a message costs a run more than anything else on a long
# thread: a turn writes the conversation several times (each checkpoint put, its
# values events, the end's complete checkpoint), the same message objects each
# time. _dumpd remembers each object's dumpd with the identities of its field
# values, so a message is dumped again only when one of its fields was set
# anew (it holds the object, so its id is not reused while remembered). A
# field changed in place (a dict of additional_kwargs edited) is not seen.
_DUMPD_MAX = 50_000
_dumpd_memo: dict[int, tuple[Any, tuple, Any]] = {}


def _fingerprint(v: Any) -> tuple:
    fields = getattr(v, "__dict__", None)
    return (type(v), *map(id, fields.values())) if fields is not None else (type(v), id(v))


def _dumpd(v: Any) -> Any:
    key, fp = id(v), _fingerprint(v)
    hit = _dumpd_memo.get(key)
    if hit is not None and hit[0] is v and hit[1] == fp:
        return hit[2]
    out = dumpd(v)
    if len(_dumpd_memo) >= _DUMPD_MAX:
        _dumpd_memo.clear()
    _dumpd_memo[key] = (v, fp, out)
    return out


def dumps(v: Any, revive: bool = True, typed: bool = False) -> str:
    """JSON text of v (see to_json); plain data takes json.dumps's fast path."""
    try:
        return json.dumps(v, allow_nan=False, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        return json.dumps(to_json(v, revive, 0, typed), allow_nan=False, separators=(",", ":"), ensure_ascii=False)


def dumps_value(v: Any) -> str:
    """JSON text of a channel's value or a task's write: custom classes keep
    their type (ext_envelope) when checkpointer.serde is set (configure)."""
    return dumps(v, typed=_TYPED)


def dumps_event(v: Any) -> str:
    """JSON text of a stream chunk or a result (the plain form)."""
    return dumps(v, revive=False)


# --- custom classes (langgraph.json's checkpointer.serde) ---
#
# Where LangGraph's serializer writes a custom class's instance as a msgpack
# extension (module, class, fields), governed on reading by
# allowed_msgpack_modules, the worker writes its JSON counterpart: an lc:2
# constructor envelope (what LangGraph revives under allowed_json_modules,
# and Weft's server reads as the fields) marked with the extension's code.
# WeftSerializer revives such an envelope through LangGraph's own msgpack
# reader, so allowed_msgpack_modules decides exactly as it does for
# LangGraph's savers: an allowed class comes back as itself, another as its
# fields (its value for an enum).

EXT_CONSTRUCTOR_SINGLE_ARG = 0  # LangGraph's msgpack extension codes (jsonplus)
EXT_CONSTRUCTOR_KW_ARGS = 2
EXT_PYDANTIC_V2 = 5
_EXT_CODES = (EXT_CONSTRUCTOR_SINGLE_ARG, EXT_CONSTRUCTOR_KW_ARGS, EXT_PYDANTIC_V2)


def ext_envelope(v: Any, code: int, kwargs: dict | None = None, args: list | None = None) -> dict:
    """v's class as a marked lc:2 constructor envelope (see above)."""
    cls = type(v)
    env: dict[str, Any] = {"lc": 2, "type": "constructor", "id": [*cls.__module__.split("."), cls.__name__], "ext": code}
    if kwargs is not None:
        env["kwargs"] = kwargs
    if args is not None:
        env["args"] = args
    return env


class WeftSerializer(JsonPlusSerializer):
    """JsonPlusSerializer reading the worker's marked envelopes (ext_envelope)
    as the msgpack extensions they stand for."""

    def _reviver(self, value: dict[str, Any]) -> Any:
        code = value.get("ext")
        ident = value.get("id")
        if (value.get("lc") == 2 and value.get("type") == "constructor" and type(code) is int and code in _EXT_CODES
                and isinstance(ident, list) and len(ident) >= 2 and all(isinstance(x, str) for x in ident)):
            module, name = ".".join(ident[:-1]), ident[-1]
            if code == EXT_CONSTRUCTOR_SINGLE_ARG:
                args = value.get("args") or [None]
                payload: tuple = (module, name, args[0])
            elif code == EXT_PYDANTIC_V2:
                payload = (module, name, value.get("kwargs") or {}, "model_validate_json")
            else:
                payload = (module, name, value.get("kwargs") or {})
            try:
                _, inner = self.dumps_typed(payload)
                return self.loads_typed(("msgpack", _msgpack_ext(code, inner)))
            except Exception:
                return payload[2]  # as LangGraph gives back what it cannot rebuild
        return super()._reviver(value)


def _msgpack_ext(code: int, data: bytes) -> bytes:
    """The msgpack encoding of the extension value (code, data)."""
    n = len(data)
    fixed = {1: 0xD4, 2: 0xD5, 4: 0xD6, 8: 0xD7, 16: 0xD8}
    if n in fixed:
        head = bytes([fixed[n], code])
    elif n < 1 << 8:
        head = bytes([0xC7, n, code])
    elif n < 1 << 16:
        head = b"\xc8" + n.to_bytes(2, "big") + bytes([code])
    else:
        head = b"\xc9" + n.to_bytes(4, "big") + bytes([code])
    return head + data


def make_serializer(settings: dict | None) -> JsonPlusSerializer:
    """The serializer of checkpointer.serde's settings (None: LangGraph's
    defaults): allowed_msgpack_modules and allowed_json_modules as lists of
    [module..., class], true, false or null; pickle_fallback false (weft dev
    refuses true: Weft never pickles)."""
    if settings is None:
        return JsonPlusSerializer()
    kw: dict[str, Any] = {}
    for key in ("allowed_msgpack_modules", "allowed_json_modules"):
        if key in settings:  # absent: LangGraph's default (msgpack: any class, with a warning)
            v = settings[key]
            kw[key] = [tuple(e) for e in v] if isinstance(v, list) else (True if v is True else None)
    return WeftSerializer(pickle_fallback=False, **kw)


_TYPED = False
SERDE: JsonPlusSerializer = JsonPlusSerializer()


def configure(settings: dict | None) -> None:
    """Reads checkpoints with make_serializer(settings) and, with settings,
    writes custom classes as typed envelopes."""
    global SERDE, _TYPED
    SERDE, _TYPED = make_serializer(settings), settings is not None


# weft dev passes langgraph.json's checkpointer.serde (checked) as JSON.
if os.environ.get("WEFT_CHECKPOINTER_SERDE"):
    configure(json.loads(os.environ["WEFT_CHECKPOINTER_SERDE"]))


def load_value(type_: str | None, b64: str | None) -> Any:
    data = base64.b64decode(b64 or "")
    return SERDE.loads_typed((type_ or "json", data))
