"""What the worker tells Weft about a graph when it registers it: its
drawing, JSON Schemas and channel defaults (what /assistants/{id}/graph,
/schemas and /subgraphs answer, and what state reads show for unset
channels)."""

from __future__ import annotations

import json
from typing import Any

from .delta import channel_kinds
from .serde import to_json


def _safe(fn) -> Any:
    try:
        return fn()
    except Exception:
        return None


def _channel_schema(graph: Any, title: str) -> dict:
    props = {name: {} for name in getattr(graph, "channels", {}) if not name.startswith("__") and ":" not in name}
    return {"title": title, "type": "object", "properties": props}


def graph_schemas(graph: Any, title: str) -> dict:
    state = _safe(lambda: _state_schema(graph)) or _channel_schema(graph, title)
    return {
        "input_schema": _safe(graph.get_input_jsonschema) or state,
        "output_schema": _safe(graph.get_output_jsonschema) or state,
        "state_schema": state,
        "config_schema": _safe(graph.get_config_jsonschema) if hasattr(graph, "get_config_jsonschema") else None,
        "context_schema": _safe(graph.get_context_jsonschema) if hasattr(graph, "get_context_jsonschema") else None,
    }


def _state_schema(graph: Any) -> dict | None:
    builder = getattr(graph, "builder", None)
    schema = getattr(builder, "state_schema", None) if builder is not None else None
    if schema is None:
        return None
    from pydantic import TypeAdapter

    return TypeAdapter(schema).json_schema()


def channel_defaults(graph: Any) -> dict:
    """What each state channel reads as while unset (a reducer's default,
    e.g. [] for a list); channels that start empty are left out."""
    out = {}
    for name, ch in (getattr(graph, "channels", None) or {}).items():
        if name.startswith("__") or ":" in name:
            continue
        try:
            from langgraph._internal._typing import MISSING  # type: ignore

            fresh = ch.from_checkpoint(MISSING)
            v = fresh.get()
        except Exception:
            continue
        try:
            out[name] = json.loads(json.dumps(to_json(v, revive=False)))
        except Exception:
            continue
    return out


def _drawable(graph: Any, **kw) -> dict:
    return to_json(graph.get_graph(**kw).to_json(), revive=False)


def describe_graph(graph_id: str, graph: Any) -> dict:
    """The registration body of POST /dispatch/graphs for a compiled graph."""
    drawable = _drawable(graph)
    xray = []
    x = _safe(lambda: _drawable(graph, xray=True))
    if x and x != drawable:
        xray.append(x)
    subgraphs = {}
    try:
        for ns, sub in graph.get_subgraphs(recurse=True):
            subgraphs[ns] = graph_schemas(sub, ns)
    except Exception:
        pass
    return {"graph_id": graph_id, "drawable": drawable, "xray_drawables": xray, "subgraphs": subgraphs,
            **graph_schemas(graph, graph_id), "channel_defaults": channel_defaults(graph),
            "channel_kinds": channel_kinds(graph),
            # Python LangGraph's task ids (xxh3-128), not LangGraph.js's.
            "language": "python"}
