"""WeftSaver: LangGraph's checkpointer (BaseCheckpointSaver), backed by Weft.

Reads go to POST /dispatch/checkpoints/list (the rows as stored, blobs
undecoded with their serializer type) and are decoded by LangGraph's own
JsonPlusSerializer, as PostgresSaver decodes its rows. Writes never touch
the database: they go to the claimed run's Committer, which sends them
through the fenced commit (POST /dispatch/{id}/commit), so a worker that
lost its lease cannot write a single checkpoint. A thread may be written
only while this worker holds a claimed run on it (attach/detach).
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    get_serializable_checkpoint_metadata,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)

from .client import SyncWeftClient, WeftClient
from .serde import dumps, dumps_value, load_value


def next_version(current: Any) -> str:
    """A channel's next version: "{counter:032}.{8 random characters}". The
    zero-padded counter is PostgresSaver's, so versions of either order as
    text by their counter, and PostgresSaver can continue a thread written
    here (it reads the counter before the "."). The suffix keeps versions of
    branches forked from one checkpoint apart (about 48 bits, against the
    16 to 20 characters of PostgresSaver's random float: a version is stored
    about six times a step, in the checkpoint and its blob rows)."""
    if current is None:
        n = 0
    elif isinstance(current, int):
        n = current
    else:
        try:
            n = int(str(current).split(".")[0])
        except ValueError:
            n = 0
    return f"{n + 1:032}.{''.join(random.choices(_SUFFIX, k=8))}"


_SUFFIX = string.digits + string.ascii_letters


def _text(v: Any) -> str:
    return str(v)


# configurable keys a checkpoint's metadata never takes (they name the
# checkpoint itself), and the request-scoped ones that are not kept at all.
_NOT_METADATA = {"checkpoint_ns", "checkpoint_id", "run_id", "thread_id"}
_TRANSIENT = {"langgraph_request_id", "langgraph_auth_user", "langgraph_auth_user_id", "langgraph_auth_permissions"}


def checkpoint_metadata(config: RunnableConfig, metadata: CheckpointMetadata) -> dict:
    """A checkpoint's metadata as LangGraph's server saves it: the run's
    configurable keys (but LangGraph's own, the checkpoint's ids and the
    request-scoped auth keys), under the run config's metadata (the run's,
    its thread's and assistant's, the graph's own with_config metadata),
    under the step's metadata (source, step, parents, …); then, as every
    LangGraph saver does, the scalar keys of both again where missing. So
    a history filtered on a configurable key or on thread metadata finds
    the run's checkpoints."""
    conf = config.get("configurable") or {}
    md = {k: v for k, v in conf.items() if not k.startswith("__") and k not in _NOT_METADATA and k not in _TRANSIENT}
    md.update((k, v) for k, v in (config.get("metadata") or {}).items() if k not in _TRANSIENT)
    md.update((k, v) for k, v in (metadata or {}).items() if k not in _TRANSIENT)
    return get_serializable_checkpoint_metadata(config, md)


class WeftSaver(BaseCheckpointSaver[str]):
    def __init__(self, client: WeftClient, sync_client: SyncWeftClient | None = None):
        super().__init__()
        self.client = client
        self.sync_client = sync_client
        self.committers: dict[str, Any] = {}  # thread id → the Committer of the run executing on it

    def attach(self, thread_id: str, committer: Any) -> None:
        self.committers[thread_id] = committer

    def detach(self, thread_id: str, committer: Any) -> None:
        if self.committers.get(thread_id) is committer:
            del self.committers[thread_id]

    def _committer(self, thread_id: str):
        c = self.committers.get(str(thread_id))
        if c is None:
            raise RuntimeError(f"WeftSaver: no run of thread {thread_id} is claimed by this worker; "
                               "checkpoints are written only through a claimed run")
        return c

    # --- reads ---

    def _load(self, raw: dict) -> CheckpointTuple:
        values = {}
        for channel, type_, b64 in raw.get("channel_values") or []:
            if type_ == "empty" or b64 is None:
                continue
            values[channel] = load_value(type_, b64)
        writes = [(t, ch, load_value(type_, b64)) for t, ch, type_, b64 in raw.get("pending_writes") or []]
        c = raw["config"]
        cp = dict(raw["checkpoint"])
        cp["channel_values"] = values
        cp.setdefault("channel_versions", {})
        cp.setdefault("versions_seen", {})
        cp.setdefault("updated_channels", None)
        conf = {"configurable": {"thread_id": c["thread_id"], "checkpoint_ns": c["checkpoint_ns"],
                                 "checkpoint_id": c["checkpoint_id"]}}
        parent = None
        if raw.get("parent_checkpoint_id"):
            parent = {"configurable": {"thread_id": c["thread_id"], "checkpoint_ns": c["checkpoint_ns"],
                                       "checkpoint_id": raw["parent_checkpoint_id"]}}
        return CheckpointTuple(config=conf, checkpoint=cp, metadata=raw.get("metadata") or {},
                               parent_config=parent, pending_writes=writes)

    @staticmethod
    def _get_body(config: RunnableConfig) -> dict | None:
        c = config.get("configurable") or {}
        return {"thread_id": str(c.get("thread_id")), "checkpoint_ns": c.get("checkpoint_ns", "") or "",
                "checkpoint_id": c.get("checkpoint_id") or "", "limit": 1}

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        body = self._get_body(config)
        committer = self.committers.get(body["thread_id"])
        if committer is not None and committer.thread_empty:
            return None  # a new thread: Weft said so at the claim, and this run wrote nothing yet
        rows = await self.client.post("/dispatch/checkpoints/list", body)
        return self._load(rows[0]) if rows else None

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        if self.sync_client is None:
            raise NotImplementedError("WeftSaver: use the async API")
        rows = self.sync_client.post("/dispatch/checkpoints/list", self._get_body(config))
        return self._load(rows[0]) if rows else None

    @staticmethod
    def _list_body(config, filter, before, limit) -> dict:
        c = (config or {}).get("configurable") or {}
        body = {"thread_id": str(c.get("thread_id")), "checkpoint_ns": c.get("checkpoint_ns"),
                "checkpoint_id": c.get("checkpoint_id") or "",
                "before": ((before or {}).get("configurable") or {}).get("checkpoint_id") or "",
                "limit": min(limit or 1000, 1000)}
        if filter:
            body["filter"] = filter
        return body

    async def alist(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
                    before: RunnableConfig | None = None, limit: int | None = None) -> AsyncIterator[CheckpointTuple]:
        rows = await self.client.post("/dispatch/checkpoints/list", self._list_body(config, filter, before, limit))
        for raw in rows:
            yield self._load(raw)

    def list(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
             before: RunnableConfig | None = None, limit: int | None = None) -> Iterator[CheckpointTuple]:
        if self.sync_client is None:
            raise NotImplementedError("WeftSaver: use the async API")
        for raw in self.sync_client.post("/dispatch/checkpoints/list", self._list_body(config, filter, before, limit)):
            yield self._load(raw)

    async def aget_delta_channel_history(self, *, config: RunnableConfig, channels: Sequence[str]):
        if not channels:
            return {}
        c = config.get("configurable") or {}
        raw = await self.client.post("/dispatch/checkpoints/delta-history", {
            "thread_id": str(c.get("thread_id")), "checkpoint_ns": c.get("checkpoint_ns", "") or "",
            "checkpoint_id": c.get("checkpoint_id") or "", "channels": list(channels)})
        out = {}
        for ch in channels:
            h = raw.get(ch) or {"writes": []}
            entry: dict[str, Any] = {"writes": [(t, c2, load_value(ty, b)) for t, c2, ty, b in h.get("writes") or []]}
            if h.get("seed"):
                entry["seed"] = load_value(h["seed"][0], h["seed"][1])
            out[ch] = entry
        return out

    # --- writes (through the run's committer) ---

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
                   new_versions: ChannelVersions) -> RunnableConfig:
        c = config.get("configurable") or {}
        thread_id = str(c.get("thread_id"))
        ns = c.get("checkpoint_ns", "") or ""
        committer = self._committer(thread_id)
        values = checkpoint.get("channel_values") or {}
        head = {k: v for k, v in checkpoint.items() if k != "channel_values"}
        head["channel_versions"] = {k: _text(v) for k, v in (checkpoint.get("channel_versions") or {}).items()}
        head["versions_seen"] = {n: {k: _text(v) for k, v in m.items()}
                                 for n, m in (checkpoint.get("versions_seen") or {}).items()}
        head["channel_values"] = "\x00"
        head_json = json.dumps(head, separators=(",", ":"))
        # The run's metadata (run_id, thread_id, graph_id, assistant_id)
        # goes with every checkpoint: retries and rollbacks find a run's
        # checkpoints by it.
        md = dumps(checkpoint_metadata(config, metadata))
        versions = json.dumps({k: _text(v) for k, v in new_versions.items()})

        def render(complete: bool) -> str:
            """The put's JSON: the new versions' values, or (complete)
            every channel's value, marked so."""
            channels = values if complete else new_versions
            parts = [f"{json.dumps(ch)}:{dumps_value(values[ch])}" for ch in channels if ch in values]
            cp = head_json.replace('"\\u0000"', "{" + ",".join(parts) + "}")
            flag = ',"complete":true' if complete else ""
            return (f'{{"parent_checkpoint_id":{json.dumps(c.get("checkpoint_id") or "")},"checkpoint_ns":{json.dumps(ns)},'
                    f'"checkpoint":{cp},"metadata":{md},"new_versions":{versions}{flag}}}')

        # A root checkpoint can be sent complete if it turns out to be the
        # run's last: the end's commit then carries it, so Weft projects
        # the thread and stores the run's result as a reference to it.
        committer.add_checkpoint(render(False), (lambda: render(True)) if ns == "" else None, checkpoint["id"])
        await committer.persist()
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint["id"]}}

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        c = config.get("configurable") or {}
        committer = self._committer(str(c.get("thread_id")))
        items = []
        for i, (channel, value) in enumerate(writes):
            items.append(f'{{"task_id":{json.dumps(task_id)},"channel":{json.dumps(channel)},'
                         f'"idx":{WRITES_IDX_MAP.get(channel, i)},"task_path":{json.dumps(task_path or "")},'
                         f'"value":{dumps_value(value)}}}')
        ns = c.get("checkpoint_ns", "") or ""
        committer.add_writes(f'{{"checkpoint_ns":{json.dumps(ns)},'
                             f'"checkpoint_id":{json.dumps(c.get("checkpoint_id"))},"writes":[{",".join(items)}]}}',
                             ns, c.get("checkpoint_id") or "")
        await committer.persist()

    def put(self, config, checkpoint, metadata, new_versions):
        raise NotImplementedError("WeftSaver writes only from the worker's event loop (aput)")

    def put_writes(self, config, writes, task_id, task_path=""):
        raise NotImplementedError("WeftSaver writes only from the worker's event loop (aput_writes)")

    async def adelete_thread(self, thread_id: str) -> None:
        raise NotImplementedError(f"WeftSaver.adelete_thread({thread_id}): delete threads through Weft's API "
                                  "(DELETE /threads/{thread_id})")

    def get_next_version(self, current: Any, channel: None = None) -> str:
        return next_version(current)
