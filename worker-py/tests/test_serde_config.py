"""langgraph.json's checkpointer.serde in the worker: custom classes keep
their type through a checkpoint as LangGraph's serializer allows them
(allowed_msgpack_modules), and a checkpoint reads the same through
LangGraph's own JsonPlusSerializer and Weft's server."""

import dataclasses
import enum
import json

import pytest
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from pydantic import BaseModel

from weft_worker import serde


class Listed(BaseModel):
    n: int


class Unlisted(BaseModel):
    n: int


@dataclasses.dataclass
class Pair:
    a: int
    inner: Listed


class Color(enum.Enum):
    RED = "red"


MOD = __name__


@pytest.fixture(autouse=True)
def unconfigured():
    yield
    serde.configure(None)


def roundtrip(settings, v):
    serde.configure(settings)
    return serde.SERDE.loads_typed(("json", serde.dumps_value(v).encode()))


VALUE = {"l": Listed(n=1), "u": Unlisted(n=2), "p": Pair(a=1, inner=Listed(n=3)), "c": Color.RED, "plain": [1]}


def test_listed_classes_come_back_as_themselves_others_as_their_fields():
    allow = [[MOD, "Listed"], [MOD, "Pair"], [MOD, "Color"]]
    back = roundtrip({"allowed_msgpack_modules": allow}, VALUE)
    assert back == {"l": Listed(n=1), "u": {"n": 2}, "p": Pair(a=1, inner=Listed(n=3)), "c": Color.RED, "plain": [1]}
    assert type(back["l"]) is Listed and type(back["p"]) is Pair and type(back["p"].inner) is Listed


def test_null_allows_only_langgraphs_safe_types_and_absent_allows_any():
    assert roundtrip({"allowed_msgpack_modules": None}, VALUE) == {
        "l": {"n": 1}, "u": {"n": 2}, "p": {"a": 1, "inner": {"n": 3}}, "c": "red", "plain": [1]}
    back = roundtrip({}, VALUE)  # LangGraph's default: any class, with a warning
    assert type(back["u"]) is Unlisted and back["c"] is Color.RED


def test_without_serde_values_are_written_as_before():
    serde.configure(None)
    assert json.loads(serde.dumps_value(VALUE)) == {
        "l": {"n": 1}, "u": {"n": 2}, "p": {"a": 1, "inner": {"n": 3}}, "c": "red", "plain": [1]}


def test_allowed_json_modules_govern_unmarked_envelopes():
    legacy = json.dumps({"lc": 2, "type": "constructor", "id": [*MOD.split("."), "Listed"], "kwargs": {"n": 5}}).encode()
    serde.configure({"allowed_json_modules": [[*MOD.split("."), "Listed"]], "allowed_msgpack_modules": None})
    assert serde.SERDE.loads_typed(("json", legacy)) == Listed(n=5)
    serde.configure({"allowed_msgpack_modules": True})
    assert not isinstance(serde.SERDE.loads_typed(("json", legacy)), Listed)


def test_langgraphs_own_serializer_reads_the_envelopes():
    """What PostgresSaver (LangGraph's JsonPlusSerializer) makes of the rows:
    the classes its allowed_json_modules list."""
    serde.configure({})
    text = serde.dumps_value({"l": Listed(n=1)}).encode()
    lg = JsonPlusSerializer(allowed_json_modules=[(*MOD.split("."), "Listed")])
    assert lg.loads_typed(("json", text)) == {"l": Listed(n=1)}


def test_msgpack_ext_encoding():
    import ormsgpack

    for n in (1, 2, 3, 4, 8, 16, 17, 255, 256, 70000):
        data = bytes(range(256)) * (n // 256) + bytes(range(n % 256))
        assert serde._msgpack_ext(5, data) == ormsgpack.packb(ormsgpack.Ext(5, data))
