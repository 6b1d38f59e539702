"""HTTP clients of Weft's worker API: async (the worker's event loop) and sync (the heartbeat thread)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx

RETRY_STATUSES = (502, 503, 504)


class WeftHTTPError(Exception):
    """A non-2xx answer of the server: its status and its {"detail"}."""

    def __init__(self, status: int, detail: str, path: str):
        super().__init__(f"{path}: {status} {detail}")
        self.status = status
        self.detail = detail


def is_fenced(err: BaseException | None) -> bool:
    """True for an answer that means "this claim is gone" (409 fenced, 404)."""
    return isinstance(err, WeftHTTPError) and err.status in (409, 404)


def _answer(res: httpx.Response, path: str) -> Any:
    if res.status_code < 200 or res.status_code > 299:
        detail = res.text
        try:
            detail = res.json().get("detail", detail)
        except Exception:
            pass
        raise WeftHTTPError(res.status_code, str(detail), path)
    return res.json() if res.content else None


def _body(body: Any, raw: str | None) -> bytes | None:
    if raw is not None:
        return raw.encode()
    if body is None:
        return None
    return json.dumps(body).encode()


class WeftClient:
    """Sends JSON requests to one server. Connection failures, 502, 503 and
    504 are retried with backoff (the worker API calls are idempotent:
    commits carry a commit_id); any other non-2xx is a WeftHTTPError."""

    def __init__(self, url: str, *, api_key: str = "", retries: int = 8, timeout: float = 60.0):
        self.url = url.rstrip("/")
        self.retries = retries
        self.timeout = timeout
        self.headers = {"content-type": "application/json", "accept": "application/json"}
        if api_key:
            self.headers["x-api-key"] = api_key
        self._http = httpx.AsyncClient(base_url=self.url, headers=self.headers, timeout=timeout)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def request(self, method: str, path: str, body: Any = None, *, raw: str | None = None,
                      retries: int | None = None, timeout: float | None = None, headers: dict | None = None) -> Any:
        retries = self.retries if retries is None else retries
        delay = 0.1
        content = _body(body, raw)
        for attempt in range(retries + 1):
            try:
                res = await self._http.request(method, path, content=content, headers=headers,
                                               timeout=timeout or self.timeout)
            except httpx.TransportError:
                if attempt >= retries:
                    raise
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
                continue
            if res.status_code in RETRY_STATUSES and attempt < retries:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
                continue
            return _answer(res, path)
        raise RuntimeError("unreachable")

    async def post(self, path: str, body: Any = None, **kw) -> Any:
        return await self.request("POST", path, body, **kw)


class SyncWeftClient:
    """The same requests from a plain thread (the heartbeat thread, sync
    checkpoint reads): its own connection pool, independent of the event loop."""

    def __init__(self, url: str, *, api_key: str = "", retries: int = 2, timeout: float = 30.0):
        self.headers = {"content-type": "application/json", "accept": "application/json"}
        if api_key:
            self.headers["x-api-key"] = api_key
        self.retries = retries
        self._http = httpx.Client(base_url=url.rstrip("/"), headers=self.headers, timeout=timeout)

    def close(self) -> None:
        self._http.close()

    def request(self, method: str, path: str, body: Any = None, *, retries: int | None = None,
                headers: dict | None = None) -> Any:
        retries = self.retries if retries is None else retries
        delay = 0.1
        for attempt in range(retries + 1):
            try:
                res = self._http.request(method, path, content=_body(body, None), headers=headers)
            except httpx.TransportError:
                if attempt >= retries:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 2.0)
                continue
            if res.status_code in RETRY_STATUSES and attempt < retries:
                time.sleep(delay)
                continue
            return _answer(res, path)
        raise RuntimeError("unreachable")

    def post(self, path: str, body: Any = None, **kw) -> Any:
        return self.request("POST", path, body, **kw)
