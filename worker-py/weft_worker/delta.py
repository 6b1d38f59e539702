"""LangGraph's delta channels (DeltaChannel) as Weft stores and reads them.

A DeltaChannel stores no value at a normal step: its writes are the deltas
and its value is rebuilt by replaying them through its reducer, a Python
function. Weft rebuilds one reducer itself, the messages delta reducer
(LangGraph's own and deepagents' copy of it: ids replace in place,
RemoveMessage drops, REMOVE_ALL_MESSAGES clears), so such channels are
stored as LangGraph stores them and registered as "delta:messages".

Any other reducer (deepagents' files, a project's own) is one Weft cannot
run, so its value is stored as well: install() makes such a channel's
checkpoint() answer its value, which LangGraph then stores like any other
channel's (a list once per element in Weft's element log). LangGraph reads
a plain stored value of a delta channel as its base (its from_checkpoint
takes it as is), so LangGraph's own PostgresSaver still reads these
threads, and Weft's state, history and thread reads show the value
LangGraph's server shows, never a placeholder.
"""

from __future__ import annotations

from typing import Any

# The reducers Weft replays itself (Go: deltareducer.MessagesDeltaReduce).
MESSAGES_REDUCERS = {
    "langgraph.pregel._messages._messages_delta_reducer",
    "deepagents._messages_reducer._messages_delta_reducer",
}

DELTA_MESSAGES = "delta:messages"
DELTA_STORED = "delta"


def _name(fn: Any) -> str:
    return f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', '')}"


def replayed_by_weft(channel: Any) -> bool:
    """Whether Weft rebuilds this delta channel from its writes."""
    return _name(getattr(channel, "reducer", None)) in MESSAGES_REDUCERS


def channel_kinds(graph: Any) -> dict[str, str]:
    """The graph's delta channels, as registered: "delta:messages" when
    Weft replays them, "delta" when the worker stores their values."""
    try:
        from langgraph.channels.delta import DeltaChannel
    except ImportError:  # a LangGraph without delta channels
        return {}
    out = {}
    for name, ch in (getattr(graph, "channels", None) or {}).items():
        if isinstance(ch, DeltaChannel) and not name.startswith("__"):
            out[name] = DELTA_MESSAGES if replayed_by_weft(ch) else DELTA_STORED
    return out


_installed = False


def install() -> None:
    """Makes every DeltaChannel whose reducer Weft cannot replay store its
    value (see the module's doc). Idempotent; a no-op without delta
    channels in this LangGraph."""
    global _installed
    if _installed:
        return
    try:
        from langgraph.channels.delta import DeltaChannel
    except ImportError:
        return
    plain = DeltaChannel.checkpoint

    def checkpoint(self):
        if replayed_by_weft(self):
            return plain(self)
        return self.value  # MISSING while unset: stored as nothing, as before

    DeltaChannel.checkpoint = checkpoint
    _installed = True
