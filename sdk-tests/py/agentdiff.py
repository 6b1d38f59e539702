"""Field-by-field comparison of two servers' answers (the side-by-side
agent suites).

What differs between any two runs of the same requests is masked, and
nothing else: ISO-8601 timestamps (`normalize`), and ids (UUIDs, also
inside strings such as "lc_run--<uuid>-0" or "tools:<uuid>", and 32-digit
hex ids such as an interrupt's), which `diff` pairs rather than compares:
an id of one side must stand for the same id of the other everywhere in
the comparison (`Pairing`), dict keys included. `diff(a, b)` lists every
path where they differ; `unexplained` drops those `ALLOWED` explains.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Any

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
HEX32 = re.compile(r"\b[0-9a-f]{32}\b")
TIME = re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?\b")
_IDS = re.compile(f"{UUID.pattern}|{HEX32.pattern}")

ANY = object()
MISSING = "<missing>"

# The differences the suites accept, each with its reason. An entry is
# (path pattern, the official server's answer there, Weft's, the labels it
# applies to (None: every one), why). Patterns are fnmatch's ("*" crosses
# "/"); ANY matches any value, MISSING an absent key.
_SELF = "what the official server writes about itself (its address, versions, plan, host, request id)"
_WEFT_THREAD = "Weft's own thread fields (hierarchy, run pointers): a superset of the official Thread"
_LATE = ("LangGraph gives a message its id (and LangGraph.js a model's message its name) in the reducer, after the "
         "event that carries it; the official server serializes events when it sends them, by which time the "
         "reducer ran, Weft when they happen")
ALLOWED: list[tuple[str, Any, Any, tuple[str, ...] | None, str]] = [
    *[(f"*/{k}", ANY, MISSING, None, _SELF) for k in (
        "langgraph_api_url", "langgraph_api_version", "langgraph_version", "langgraph_plan", "langgraph_host",
        "langgraph_request_id")],
    *[(f"*/configurable/{k}", ANY, MISSING, None, "the official server's own run bookkeeping in the run's config")
      for k in ("__after_seconds__", "__request_start_time_ms__")],
    *[(f"*/{k}", MISSING, ANY, None, _WEFT_THREAD)
      for k in ("active_run_id", "latest_run_id", "parent_thread_id", "resource_id")],
    ("*/additional_kwargs/invalid_tool_calls", [], MISSING, None,
     "the official server rebuilds a delta channel's messages from writes it stored as dicts, through LangChain's "
     "convert_to_messages, which copies an AI message's invalid_tool_calls and usage_metadata into its "
     "additional_kwargs; its streams and runs.wait show the message as written, as Weft shows it everywhere"),
    ("*/additional_kwargs/usage_metadata", None, MISSING, None, "see */additional_kwargs/invalid_tool_calls"),
    ("/checkpoint/checkpoint_ns", MISSING, "", ("update's checkpoint",),
     "the official dev server's in-memory saver answers a state read by checkpoint id with the request's own "
     "config, which names no namespace; LangGraph's PostgresSaver, as Weft, answers the checkpoint's address"),
    *[(p, ANY, v, ("events",), _LATE) for p, v in (("*/data/output/id", None), ("*/data/output/id", MISSING),
                                                   ("*/data/output/messages/*/id", MISSING),
                                                   ("*/data/output/name", MISSING))],
    *[(f"*/{k}", MISSING, ANY, None, "Thread fields LangGraph's Python server answers and LangGraph.js's leaves out")
      for k in ("error", "state_updated_at")],
    *[(p, ANY, MISSING, ("all modes",), _LATE) for p in ("*/payload/tasks/*/error", "*/payload/tasks/*/result")],
    ("*/1/0/name", ANY, MISSING, ("plan: stream", "fork: stream"), _LATE),
    ("/0/description", None, ANY, ("assistant",),
     "a graphs entry's description is its system assistant's (the issue asks it; LangGraph's Python server does so, "
     "LangGraph.js's dev server 1.5.1 ignores it with a warning)"),
    ("/status", 500, ANY, ("update",), "a client's mistake is a 4xx on Weft, never a 5xx (the SDKs retry 5xx); "
                                       "LangGraph.js's dev server answers a value its reducer refuses with 500"),
    ("/__error__", "InternalServerError", ANY, ("update",), "see /status of update"),
    ("/message", "500 Internal Server Error", ANY, ("update",), "see /status of update"),
    ("/message", ANY, ANY, ("rounds: wait",),
     "a failed run's error as runs.wait raises it: LangGraph.js's server answers the error as JSON text in the "
     "message of an error named \"Error\" (Error: {\"error\": \"GraphRecursionError\", …}), Weft as the error's own "
     "name and message (GraphRecursionError: …), as LangGraph's Python server does"),
    ("*/values/messages/*", ANY, ANY, ("rounds: thread", "rounds: search by metadata"),
     "a run that fails (LangGraph.js: the recursion limit): LangGraph.js's server keeps as the thread's values "
     "those of the last checkpoint its stream reported before the failing step, and its tasks with no "
     "interrupts; Weft's thread holds the state get_state answers"),
    ("*/interrupts/*", ANY, MISSING, ("rounds: thread", "rounds: search by metadata"), "see /values/messages/* of rounds: thread"),
    ("/values/structuredResponse", ANY, MISSING, ("thread",),
     "LangGraph.js's server keeps as the thread's values those of the last checkpoint its stream reported "
     "(structuredResponse included), which get_state answers without structuredResponse; Weft's thread holds the "
     "state get_state answers"),
    ("/values/*", ANY, ANY, ("plan: thread",),
     "a run that streams subgraphs and stops at an interrupt inside one: the official server keeps the last "
     "values event it streamed, the subgraph's, as the thread's values, and files its interrupts under the "
     "subgraph's task; Weft's thread holds the root state, as get_state shows it"),
    ("/interrupts/*", ANY, ANY, ("plan: thread",), "see /values/* of plan: thread"),
]


def allowed(path: str, a: Any, b: Any, label: str = "") -> str | None:
    """Why the difference (path, official a, Weft b) in the answer recorded
    under label is accepted, or None."""
    for pattern, va, vb, labels, why in ALLOWED:
        if (fnmatch.fnmatchcase(path, pattern) and (va is ANY or va == a) and (vb is ANY or vb == b)
                and (labels is None or label in labels)):
            return why
    return None


def normalize(value: Any) -> Any:
    """value with timestamps masked and keys sorted (ids are left for diff
    to pair)."""
    if isinstance(value, dict):
        return {k: normalize(value[k]) for k in sorted(value)}
    if isinstance(value, (list, tuple)):
        return [normalize(x) for x in value]
    if isinstance(value, str):
        return TIME.sub("<time>", value)
    return value


class Pairing:
    """The ids of two transcripts, paired as they are met: an id of the
    left side stands for one id of the right side and no other, both ways.
    One Pairing spans a whole comparison, so an id the official server
    answered in one call must be answered as the same id everywhere."""

    def __init__(self) -> None:
        self.left: dict[str, str] = {}
        self.right: dict[str, str] = {}

    def same(self, a: str, b: str) -> bool:
        ia, ib = _IDS.findall(a), _IDS.findall(b)
        if len(ia) != len(ib) or _IDS.sub("<id>", a) != _IDS.sub("<id>", b):
            return False
        for x, y in zip(ia, ib):
            if self.left.get(x, y) != y or self.right.get(y, x) != x:
                return False
        for x, y in zip(ia, ib):
            self.left[x], self.right[y] = y, x
        return True


def _pair_keys(a: dict, b: dict, ids: Pairing) -> list[tuple[Any, Any]]:
    """The keys of two dicts side by side: equal keys together, and keys
    holding ids (a dict by task id, say) paired as ids are, in sorted
    order; a key without a partner stands beside None."""
    pairs = [(k, k) for k in sorted(set(a) & set(b), key=str)]
    rest_a = sorted((k for k in a if k not in b), key=str)
    rest_b = sorted((k for k in b if k not in a), key=str)
    for ka in list(rest_a):
        if not (isinstance(ka, str) and _IDS.search(ka)):
            continue
        for kb in rest_b:
            if isinstance(kb, str) and ids.same(ka, kb):
                pairs.append((ka, kb))
                rest_a.remove(ka)
                rest_b.remove(kb)
                break
    return pairs + [(k, None) for k in rest_a] + [(None, k) for k in rest_b]


def diff(a: Any, b: Any, path: str = "", ids: Pairing | None = None) -> list[tuple[str, Any, Any]]:
    """Every (path, a's, b's) where a and b differ; a key only one side has
    is compared with MISSING; ids are paired (Pairing), not compared."""
    ids = ids if ids is not None else Pairing()
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for ka, kb in _pair_keys(a, b, ids):
            out += diff(a.get(ka, MISSING), b.get(kb, MISSING), f"{path}/{ka if ka is not None else kb}", ids)
        return out
    if isinstance(a, list) and isinstance(b, list):
        out = []
        for i in range(max(len(a), len(b))):
            out += diff(a[i] if i < len(a) else MISSING, b[i] if i < len(b) else MISSING, f"{path}/{i}", ids)
        return out
    if isinstance(a, str) and isinstance(b, str) and a != MISSING and b != MISSING and _IDS.search(a):
        return [] if ids.same(a, b) else [(path, a, b)]
    if a == b and type(a) is type(b):
        return []
    return [(path, a, b)]


def unexplained(a: Any, b: Any, ids: Pairing | None = None, label: str = "") -> list[tuple[str, Any, Any]]:
    """The differences of a (the official server's answer) and b (Weft's)
    that ALLOWED does not explain."""
    return [d for d in diff(normalize(a), normalize(b), ids=ids) if allowed(*d, label) is None]


def report(diffs: list[tuple[str, Any, Any]], left: str = "official", right: str = "weft", limit: int = 60) -> str:
    lines = [f"{len(diffs)} difference(s) ({left} | {right}):"]
    for path, a, b in diffs[:limit]:
        lines.append(f"  {path}: {_short(a)} | {_short(b)}")
    if len(diffs) > limit:
        lines.append(f"  … {len(diffs) - limit} more")
    return "\n".join(lines)


def _short(v: Any, n: int = 160) -> str:
    s = repr(v)
    return s if len(s) <= n else s[:n] + "…"
