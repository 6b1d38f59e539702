"""Worker: registers a project's Python graphs with Weft, claims their runs
and executes them."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
import time
import uuid
from datetime import datetime
from typing import Any

from . import delta
from .client import SyncWeftClient, WeftClient, is_fenced
from .describe import describe_graph
from .run import RunHandle, execute_run
from .saver import WeftSaver
from .store import WeftStore

log = logging.getLogger("weft_worker")


def _attrs(**kw) -> dict:
    return {"attrs": kw}


def _lease_seconds(dispatch: dict) -> float:
    try:
        exp = datetime.fromisoformat(dispatch["lease_expires_at"].replace("Z", "+00:00"))
        began = datetime.fromisoformat(dispatch["claimed_at"].replace("Z", "+00:00"))
        s = (exp - began).total_seconds()
        return s if s > 0 else 30.0
    except Exception:
        return 30.0


class Heartbeats(threading.Thread):
    """Renews the lease of every run in flight from a thread of its own, with
    its own HTTP client: a node that blocks (a sync node sleeping, even one
    holding the event loop) cannot stall it, so a slow run keeps its lease.
    A heartbeat that answers a cancellation, or 409 (lease lost), stops its
    run through the event loop."""

    def __init__(self, sync_client: SyncWeftClient):
        super().__init__(name="weft-heartbeats", daemon=True)
        self.client = sync_client
        self.runs: dict[str, tuple[RunHandle, float]] = {}  # dispatch id → (handle, interval)
        self.next: dict[str, float] = {}
        self.lock = threading.Lock()
        self.wake = threading.Event()
        self.stopping = False

    def add(self, handle: RunHandle, interval: float) -> None:
        with self.lock:
            self.runs[handle.dispatch_id] = (handle, interval)
            self.next[handle.dispatch_id] = time.monotonic() + interval
        self.wake.set()

    def remove(self, dispatch_id: str) -> None:
        with self.lock:
            self.runs.pop(dispatch_id, None)
            self.next.pop(dispatch_id, None)

    def stop(self) -> None:
        self.stopping = True
        self.wake.set()

    def run(self) -> None:
        while not self.stopping:
            now = time.monotonic()
            with self.lock:
                due = [(did, self.runs[did]) for did, t in self.next.items() if t <= now]
                for did, (_, interval) in due:
                    self.next[did] = now + interval
                wait = min((t for t in self.next.values()), default=now + 3600) - now
            for did, (handle, _) in due:
                headers = {"traceparent": handle.traceparent} if handle.traceparent else None
                try:
                    res = self.client.post(f"/dispatch/{did}/heartbeat", {"claim_token": handle.token}, headers=headers)
                    if res and res.get("cancel"):
                        handle.stop_threadsafe("cancel", f"run cancelled ({res['cancel']})", res["cancel"])
                except Exception as err:
                    if is_fenced(err):
                        log.warning("lease lost", extra=_attrs(dispatch_id=did, error=str(err)))
                        handle.stop_threadsafe("lease", "lease lost")
                        self.remove(did)
                    else:
                        log.warning("heartbeat failed", extra=_attrs(dispatch_id=did, error=str(err)))
            self.wake.wait(max(0.01, min(wait, 5.0)) if due == [] else 0.01)
            self.wake.clear()


class Worker:
    """Serves a project's graphs on a Weft server: start() registers them
    (POST /dispatch/graphs) and claims their runs (POST /dispatch/claim,
    long poll, up to concurrency at once), each executed by execute_run;
    stop() stops claiming, lets running runs finish for grace_s, then stops
    the rest and gives them back (nack), so another worker retries them."""

    def __init__(self, url: str, graphs: dict, *, worker_id: str | None = None, concurrency: int = 8,
                 wait_ms: int = 10_000, linger_s: float = 0.005, api_key: str = "", failures: list | None = None):
        self.client = WeftClient(url, api_key=api_key)
        self.sync_client = SyncWeftClient(url, api_key=api_key)
        self.hb_client = SyncWeftClient(url, api_key=api_key)
        self.graphs = graphs  # graph id → load.GraphSpec
        delta.install()  # delta channels Weft cannot replay store their values
        self.failures = failures or []  # graphs of the config that did not load: [{graph_id, error}]
        self.worker_id = worker_id or f"weft-worker-py-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.concurrency = concurrency
        self.wait_ms = wait_ms
        self.linger_s = linger_s
        self.saver = WeftSaver(self.client, self.sync_client)
        self.store = WeftStore(self.client, self.sync_client)
        self.heartbeats = Heartbeats(self.hb_client)
        self.active: dict[str, asyncio.Task] = {}
        self.handles: dict[str, RunHandle] = {}
        self.stopping = False
        self.run_started = asyncio.Event()
        self._loop_task: asyncio.Task | None = None
        self._watch_task: asyncio.Task | None = None

    async def register(self) -> None:
        for gid, spec in self.graphs.items():
            info = describe_graph(gid, spec.graph)
            res = await self.client.post("/dispatch/graphs", {**info, "worker_id": self.worker_id})
            log.info("graph registered", extra=_attrs(graph_id=gid, assistant_id=res.get("assistant_id"),
                                                       nodes=res.get("nodes")))
        # The server lists them in /info until a worker registers them.
        for f in self.failures:
            await self.client.post("/dispatch/graphs/errors", {**f, "worker_id": self.worker_id})

    async def start(self) -> None:
        await self.register()
        self.heartbeats.start()
        self._loop_task = asyncio.create_task(self._claim_loop())
        self._watch_task = asyncio.create_task(self._watch_cancellations())
        log.info("worker started", extra=_attrs(worker_id=self.worker_id, graphs=list(self.graphs),
                                                 concurrency=self.concurrency))

    async def _claim_loop(self) -> None:
        graph_ids = list(self.graphs)
        backoff = 0.1
        while not self.stopping:
            free = self.concurrency - len(self.active)
            if free <= 0:
                await asyncio.wait(list(self.active.values()), return_when=asyncio.FIRST_COMPLETED)
                continue
            try:
                got = await self.client.post("/dispatch/claim", {
                    "worker_id": self.worker_id, "graph_ids": graph_ids, "limit": min(free, 32),
                    "wait_ms": self.wait_ms}, timeout=self.wait_ms / 1000 + 30)
                backoff = 0.1
            except asyncio.CancelledError:
                return
            except Exception as err:
                if self.stopping:
                    return
                log.warning("claim failed", extra=_attrs(error=str(err)))
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 5.0)
                continue
            for c in got or []:
                self._start(c)

    async def _watch_cancellations(self) -> None:
        """Keeps one long-polling POST /dispatch/cancellations open while runs
        execute: a cancellation stops its run within milliseconds."""
        told: set[str] = set()
        backoff = 0.1
        while not self.stopping:
            if not self.handles:
                told.clear()
                self.run_started.clear()
                await self.run_started.wait()
                continue
            told &= set(self.handles)
            try:
                got = await self.client.post("/dispatch/cancellations", {
                    "worker_id": self.worker_id, "known": sorted(told), "wait_ms": self.wait_ms},
                    timeout=self.wait_ms / 1000 + 30)
                backoff = 0.1
            except asyncio.CancelledError:
                return
            except Exception as err:
                if self.stopping:
                    return
                log.warning("watching cancellations failed", extra=_attrs(error=str(err)))
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 5.0)
                continue
            for c in got or []:
                h = self.handles.get(c["dispatch_id"])
                if h is None:
                    continue
                told.add(c["dispatch_id"])
                h.stop("cancel", f"run cancelled ({c['cancel']})", c["cancel"])

    def _start(self, claimed: dict) -> None:
        did = claimed["dispatch"]["dispatch_id"]
        handle = RunHandle(did, claimed["claim_token"], asyncio.get_running_loop())
        handle.traceparent = claimed.get("traceparent") or ""
        self.handles[did] = handle
        self.heartbeats.add(handle, max(0.2, _lease_seconds(claimed["dispatch"]) / 3))
        self.run_started.set()
        task = asyncio.create_task(self._execute(claimed, handle))
        self.active[did] = task

        def done(_):
            self.active.pop(did, None)
            self.handles.pop(did, None)
            self.heartbeats.remove(did)

        task.add_done_callback(done)

    async def _execute(self, claimed: dict, handle: RunHandle) -> None:
        dispatch, run = claimed["dispatch"], claimed["run"]
        attrs = dict(run_id=run["run_id"], thread_id=run["thread_id"], graph_id=dispatch["graph_id"],
                     attempt=dispatch.get("attempt"))
        log.debug("run claimed", extra=_attrs(**attrs))
        spec = self.graphs.get(dispatch["graph_id"])
        try:
            if spec is None:
                raise RuntimeError(f"graph {dispatch['graph_id']} is not served by this worker")
            res = await execute_run(claimed, spec, self.saver, self.store, self.client, handle, self.linger_s)
        except Exception as err:
            res = {"outcome": "stopped", "reason": err}
        if res["outcome"] == "ended":
            log.debug("run ended", extra=_attrs(**attrs, status=res.get("status")))
            return
        reason = res.get("reason")
        if getattr(reason, "kind", "") == "lease" or is_fenced(reason):
            log.warning("run stopped: lease lost", extra=_attrs(**attrs, error=str(reason)))
            return
        try:
            headers = {"traceparent": claimed["traceparent"]} if claimed.get("traceparent") else None
            n = await self.client.post(f"/dispatch/{dispatch['dispatch_id']}/nack",
                                       {"claim_token": claimed["claim_token"], "error": str(reason)},
                                       retries=3, headers=headers)
            log.warning("run given back", extra=_attrs(**attrs, error=str(reason), dispatch_state=(n or {}).get("state")))
        except Exception as err:
            log.warning("nack failed", extra=_attrs(**attrs, error=str(err)))

    async def stop(self, grace_s: float = 10.0) -> None:
        """Stops claiming; runs get grace_s to finish, then are stopped and given back."""
        if self.stopping:
            return
        self.stopping = True
        self.run_started.set()
        for t in (self._loop_task, self._watch_task):
            if t is not None:
                t.cancel()
        if self.active:
            _, pending = await asyncio.wait(list(self.active.values()), timeout=grace_s)
            if pending:
                for h in list(self.handles.values()):
                    h.stop("shutdown", "worker shutting down")
                await asyncio.wait(pending, timeout=10)
        self.heartbeats.stop()
        await self.client.aclose()
        self.sync_client.close()
        log.info("worker stopped", extra=_attrs(worker_id=self.worker_id))
