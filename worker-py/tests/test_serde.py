"""What the worker commits reads back through LangGraph's own serializer
(JsonPlusSerializer, "json" rows) as the objects LangGraph wrote."""

import dataclasses
import datetime
import json
import uuid

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.types import Command, Interrupt, Send
from pydantic import BaseModel

from weft_worker.load import is_python_spec, parse_dotenv
from weft_worker.saver import next_version
from weft_worker.serde import dumps, dumps_event, to_json

SERDE = JsonPlusSerializer()


def roundtrip(v):
    return SERDE.loads_typed(("json", dumps(v).encode()))


def test_messages_revive_as_messages():
    msgs = [HumanMessage("hi", id="1"), AIMessage("yo", id="2", tool_calls=[{"name": "t", "args": {}, "id": "c"}]),
            ToolMessage("done", tool_call_id="c", id="3")]
    back = roundtrip({"messages": msgs})["messages"]
    assert [type(m) for m in back] == [HumanMessage, AIMessage, ToolMessage]
    assert back[1].tool_calls[0]["name"] == "t" and back[2].tool_call_id == "c"


def test_langgraph_types_revive():
    back = roundtrip([Send("node", {"x": 1}), Interrupt(value={"q": "?"}, id="abc"), Command(resume="r", goto="n")])
    assert back[0] == Send("node", {"x": 1})
    assert isinstance(back[1], Interrupt) and back[1].value == {"q": "?"} and back[1].id == "abc"
    assert isinstance(back[2], Command) and back[2].resume == "r" and back[2].goto == "n"


def test_events_are_plain():
    """As the Agent Server streams them: an Interrupt with its
    response_schema, a Command with every field."""
    data = {"__interrupt__": (Interrupt(value=1, id="i"),), "send": Send("n", 2), "cmd": Command(update={"a": 1})}
    assert json.loads(dumps_event(data)) == {
        "__interrupt__": [{"value": 1, "id": "i", "response_schema": None}], "send": {"node": "n", "arg": 2},
        "cmd": {"graph": None, "update": {"a": 1}, "resume": None, "goto": []}}


def test_stored_interrupt_leaves_out_an_unset_response_schema():
    assert to_json(Interrupt(value=1, id="i"))["kwargs"] == {"value": 1, "id": "i"}


def test_other_values_take_their_json_form():
    class M(BaseModel):
        a: int
        when: datetime.date

    @dataclasses.dataclass
    class D:
        m: M
        tags: tuple

    u = uuid.UUID(int=1)
    v = {"d": D(M(a=1, when=datetime.date(2026, 1, 2)), ("x",)), "u": u, "s": {3}, "b": b"\x00", "nan": float("nan"),
         1: "int key"}
    assert to_json(v) == {"d": {"m": {"a": 1, "when": "2026-01-02"}, "tags": ["x"]}, "u": str(u), "s": [3],
                          "b": "AA==", "nan": None, "1": "int key"}
    assert json.loads(dumps(v))["u"] == str(u)


def test_next_version_orders_as_text_and_as_numbers():
    v1 = next_version(None)
    v2 = next_version(v1)
    assert v1.startswith("0" * 31 + "1.") and v2.startswith("0" * 31 + "2.")
    assert v1 < v2 and next_version(7).startswith("0" * 31 + "8.")
    # PostgresSaver's own versions of the same channel order with these by the counter.
    assert "0" * 31 + "1.0.9876543210987654" < v2 < next_version("0" * 31 + "2.0.5") and len(v2) == 41
    assert len({next_version(1) for _ in range(10000)}) == 10000


def test_graph_references():
    assert is_python_spec("./agent.py:graph") and is_python_spec("pkg.mod:make") and is_python_spec("mod:g")
    assert not is_python_spec("./src/agent.ts:graph") and not is_python_spec("./x.js")


def test_parse_dotenv():
    assert parse_dotenv('A=1\n# c\nexport B="two words"\nC=3 # note\nbad line\n') == {
        "A": "1", "B": "two words", "C": "3"}


def test_a_message_is_dumped_again_only_when_a_field_was_set_anew():
    """A long thread writes the same message objects at every put and values
    event of a turn: each is dumped once, and again once a field is set."""
    from langchain_core.load import dumpd

    m = AIMessage(content="first", id="m1", tool_calls=[{"name": "f", "args": {"x": 1}, "id": "c1"}])
    first = to_json([m])[0]
    assert first == dumpd(m)
    assert to_json({"messages": [m]})["messages"][0] is first  # remembered, not dumped again
    assert json.loads(dumps_event({"messages": [m]}))["messages"][0] == first
    m.content = "second"
    again = to_json([m])[0]
    assert again is not first and again == dumpd(m) and again["kwargs"]["content"] == "second"
    other = HumanMessage(content="first", id="m1")
    assert to_json(other) == dumpd(other) and to_json(other)["id"][-1] == "HumanMessage"
