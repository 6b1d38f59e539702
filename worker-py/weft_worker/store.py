"""WeftStore: LangGraph's BaseStore over Weft's store API (/store/items),
what a node's ``get_store()`` / ``store`` argument reads and writes in a
worker graph, so memory graphs work unchanged."""

from __future__ import annotations

import asyncio
import urllib.parse
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from .client import SyncWeftClient, WeftClient


def _ts(s: str | None) -> datetime:
    if not s:
        return datetime.now()
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


def _item(it: dict | None, search: bool = False) -> Item | None:
    if not it:
        return None
    kw = dict(namespace=tuple(it["namespace"]), key=it["key"], value=it["value"],
              created_at=_ts(it.get("created_at")), updated_at=_ts(it.get("updated_at")))
    if search:
        return SearchItem(score=it.get("score"), **kw)
    return Item(**kw)


def _request(op: Op) -> tuple[str, str, Any, str]:
    """(method, path, body, kind) of one operation."""
    if isinstance(op, GetOp):
        q = urllib.parse.urlencode({"namespace": ".".join(op.namespace), "key": op.key})
        return "GET", f"/store/items?{q}", None, "get"
    if isinstance(op, SearchOp):
        return "POST", "/store/items/search", {"namespace_prefix": list(op.namespace_prefix), "filter": op.filter,
                                               "limit": op.limit, "offset": op.offset, "query": op.query}, "search"
    if isinstance(op, ListNamespacesOp):
        body: dict[str, Any] = {"limit": op.limit, "offset": op.offset}
        for c in op.match_conditions or ():
            body["suffix" if c.match_type == "suffix" else "prefix"] = list(c.path)
        if op.max_depth is not None:
            body["max_depth"] = op.max_depth
        return "POST", "/store/namespaces", body, "namespaces"
    if isinstance(op, PutOp):
        if op.value is None:
            return "DELETE", "/store/items", {"namespace": list(op.namespace), "key": op.key}, "put"
        body = {"namespace": list(op.namespace), "key": op.key, "value": op.value}
        if op.index is not None:
            body["index"] = op.index
        if op.ttl is not None:
            body["ttl"] = op.ttl
        return "PUT", "/store/items", body, "put"
    raise ValueError(f"WeftStore: unknown operation {op!r}")


def _result(kind: str, res: Any) -> Result:
    if kind == "get":
        return _item(res)
    if kind == "search":
        return [_item(it, True) for it in (res or {}).get("items", [])]
    if kind == "namespaces":
        return [tuple(ns) for ns in (res or {}).get("namespaces", [])]
    return None


class WeftStore(BaseStore):
    """get, put (index, ttl), delete, search (filter, query, limit, offset)
    and list_namespaces on Weft's store. A run's store (for_run) sends the
    run's dispatch id and claim token, so the server files its items in the
    run's tenant."""

    supports_ttl = True

    def __init__(self, client: WeftClient, sync_client: SyncWeftClient | None = None, headers: dict | None = None):
        self.client = client
        self.sync_client = sync_client
        self.headers = headers or {}

    def for_run(self, dispatch_id: str, claim_token: str) -> "WeftStore":
        return WeftStore(self.client, self.sync_client,
                         {"x-weft-dispatch-id": dispatch_id, "x-weft-claim-token": claim_token})

    async def _one(self, op: Op) -> Result:
        method, path, body, kind = _request(op)
        try:
            res = await self.client.request(method, path, body, headers=self.headers)
        except Exception as err:
            if kind == "get" and getattr(err, "status", 0) == 404:
                return None
            raise
        return _result(kind, res)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return list(await asyncio.gather(*(self._one(op) for op in ops)))

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        # A sync node runs in a thread of its own: the sync client serves it.
        if self.sync_client is None:
            raise NotImplementedError("WeftStore: no sync client")
        out = []
        for op in ops:
            method, path, body, kind = _request(op)
            try:
                res = self.sync_client.request(method, path, body, headers=self.headers)
            except Exception as err:
                if kind == "get" and getattr(err, "status", 0) == 404:
                    out.append(None)
                    continue
                raise
            out.append(_result(kind, res))
        return out
