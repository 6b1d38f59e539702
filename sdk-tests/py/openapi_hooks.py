"""Schemathesis hooks for test_openapi_clients.py (loaded through SCHEMATHESIS_HOOKS=openapi_hooks).

A run or cron with a `webhook` makes the server POST to that URL when the run ends, and the fuzzer would pick
the URL: so no generated request may carry one. `before_load_schema` removes the `webhook` property from every
schema a request body reaches (response schemas keep theirs, so answers are still checked against the spec as
written), and `before_call` drops any `webhook` key left in a body all the same, just before it is sent (a
second guard: an example or a negative case could bring one back).

Time bounds, in `before_call` too: a run delayed by `after_seconds` (up to a year by the spec) keeps
/runs/wait and the streams of its thread open, sending keep-alive newlines or comments, so no read timeout ever
fires; and `wait_ms` long-polls the worker API up to 30 s. Numbers above CAPS are lowered to the cap (other
values, negative cases included, are sent as generated). And each stream's `x-itemSchema` is handed over as
`itemSchema` (sse_item_schemas). Nothing else is changed.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import schemathesis

FIELD = "webhook"
CAPS = {"after_seconds": 1, "wait_ms": 500}


def _walk_request_schemas(raw: dict[str, Any]):
    """Every schema object reachable from a request body, each once ($refs into #/components followed)."""
    components = (raw.get("components") or {}).get("schemas") or {}
    seen: set[int] = set()
    stack: list[Any] = []
    for item in (raw.get("paths") or {}).values():
        for op in (item or {}).values():
            if isinstance(op, dict):
                for media in ((op.get("requestBody") or {}).get("content") or {}).values():
                    stack.append((media or {}).get("schema"))
    while stack:
        s = stack.pop()
        if not isinstance(s, dict) or id(s) in seen:
            continue
        seen.add(id(s))
        yield s
        ref = s.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            stack.append(components.get(ref.rsplit("/", 1)[1]))
        stack.extend((s.get("properties") or {}).values())
        for key in ("items", "additionalProperties", "not"):
            stack.append(s.get(key))
        for key in ("allOf", "anyOf", "oneOf"):
            stack.extend(s.get(key) or [])


def strip_webhook_fields(raw: dict[str, Any]) -> list[str]:
    """Removes `webhook` from the request schemas of raw (in place); returns where it was found."""
    found = []
    for s in _walk_request_schemas(raw):
        props = s.get("properties")
        if isinstance(props, dict) and FIELD in props:
            del props[FIELD]
            if isinstance(s.get("required"), list) and FIELD in s["required"]:
                s["required"] = [r for r in s["required"] if r != FIELD]
            found.append(s.get("title") or ",".join(sorted(props)) or "?")
    return found


def _capped(key: str, v: Any) -> Any:
    cap = CAPS.get(key)
    if cap is not None and isinstance(v, (int, float)) and not isinstance(v, bool) and v > cap:
        return cap
    return v


def bound(body: Any) -> Any:
    """body without any `webhook` key and with CAPS applied, at any depth."""
    if isinstance(body, dict):
        return {k: _capped(k, bound(v)) for k, v in body.items() if k != FIELD}
    if isinstance(body, list):
        return [bound(v) for v in body]
    return body


def sse_item_schemas(raw: dict[str, Any]) -> int:
    """Hands each text/event-stream body's `x-itemSchema` (the schema of one event; the document is OpenAPI 3.0,
    which has no itemSchema) to Schemathesis as OpenAPI 3.2's `itemSchema`, which it validates every event of a
    stream against. Returns how many it found."""
    n = 0
    for item in (raw.get("paths") or {}).values():
        for op in (item or {}).values():
            if not isinstance(op, dict):
                continue
            for resp in (op.get("responses") or {}).values():
                media = ((resp or {}).get("content") or {}).get("text/event-stream")
                if isinstance(media, dict) and "x-itemSchema" in media:
                    media["itemSchema"] = media["x-itemSchema"]
                    n += 1
    return n


@schemathesis.hook
def before_load_schema(context, raw_schema: dict[str, Any]) -> None:
    strip_webhook_fields(raw_schema)
    sse_item_schemas(raw_schema)


@schemathesis.hook
def before_call(context, case, **kwargs) -> None:
    if isinstance(case.body, (dict, list)):
        case.body = bound(case.body)
    trace = os.environ.get("OPENAPI_HOOKS_TRACE")  # a file: one line per request about to be sent
    if trace:
        with open(trace, "a") as f:
            f.write(json.dumps({"t": round(time.time(), 3), "op": f"{case.method} {case.path}",
                                "path": case.path_parameters, "query": case.query,
                                "body": case.body if not isinstance(case.body, bytes) else "<bytes>"},
                               default=str, ensure_ascii=False)[:2000] + "\n")
