"""The Agent Server's "messages" stream mode, made from LangGraph's.

LangGraph streams (message, metadata) pairs in its "messages" mode: each
token of a chat model as a message chunk, and each whole message a node
returns that no model streamed. A client asking for "messages-tuple" gets
those pairs as they are; one asking for "messages" gets the server's
older shape: messages/metadata the first time a message id appears (with
the pair's metadata), then messages/partial with the message so far for
each chunk, or messages/complete for a whole message.
"""

from __future__ import annotations

from typing import Any, Callable

from langchain_core.messages import BaseMessageChunk, convert_to_messages, message_chunk_to_message

from .serde import dumps_event


class MessageEvents:
    def __init__(self, emit: Callable[[str, str], None]):
        self.emit = emit
        self.sofar: dict[str, Any] = {}  # message id → the message so far (chunks added up)

    def add(self, pair: Any) -> None:
        msg, meta = pair
        if isinstance(msg, dict):
            msg = convert_to_messages([msg])[0]
        if msg.id is None:
            return
        if msg.id in self.sofar:
            self.sofar[msg.id] = self.sofar[msg.id] + msg
        else:
            self.sofar[msg.id] = msg
            self.emit("messages/metadata", dumps_event({msg.id: {"metadata": meta}}))
        if isinstance(msg, BaseMessageChunk):
            self.emit("messages/partial", dumps_event([self.sofar[msg.id]]))
        else:
            self.emit("messages/complete", dumps_event([message_chunk_to_message(self.sofar[msg.id])]))
