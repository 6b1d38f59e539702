"""One claimed run: its Committer (the only way its writes reach Weft) and
its execution by LangGraph's own Pregel loop (graph.astream)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import uuid
from typing import Any

from langgraph.types import Command, Send

from .client import WeftClient, is_fenced
from .messages import MessageEvents
from .serde import dumps, dumps_event

log = logging.getLogger("weft_worker")

# The run metadata key with which Weft hands an update_state to a worker.
UPDATE_STATE_KEY = "__weft_update_state__"

# Stream modes the SSE layer knows, and what LangGraph calls them.
MODE_MAP = {
    "values": "values", "updates": "updates", "custom": "custom", "debug": "debug",
    "checkpoints": "checkpoints", "tasks": "tasks", "messages-tuple": "messages", "messages": "messages",
}


def default_recursion_limit() -> int:
    """The recursion limit of a run that sets none: the official server's
    (LANGGRAPH_DEFAULT_RECURSION_LIMIT, else 10011), not LangGraph's 25, so
    an agent's many tool rounds run as they do there."""
    try:
        return int(os.environ.get("LANGGRAPH_DEFAULT_RECURSION_LIMIT", "10011"))
    except ValueError:
        return 10011


class Stop(Exception):
    """Why a run was stopped: kind is "cancel", "lease", "commit" or "shutdown"."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class _LastRoot:
    """The run's newest root checkpoint: where its put sits in the pending
    list, how to render it complete, and the writes filed under it."""

    def __init__(self, index: int, complete, checkpoint_id: str):
        self.index, self.complete, self.id = index, complete, checkpoint_id
        self.writes: list[str] = []
        self.sent, self.sent_writes = False, 0


class Committer:
    """Batches a run's checkpoints, pending writes and events into commits
    (POST /dispatch/{id}/commit), one at a time and in order: what piles up
    while a commit is in flight goes in the next one. Every commit presents
    the claim token (409 once the lease is lost) and carries a commit_id, so
    a retried request is applied once. With sync durability a put resolves
    only once committed; otherwise when queued (sent linger_s later), and
    the run ends only after every commit succeeded.

    LangGraph emits a step's values event just before it saves the step's
    checkpoint; Weft stores such an event as a reference to that checkpoint
    only when both arrive in one commit, else whole (the state again, a
    copy per turn on a long thread). The put comes once LangGraph's
    previous put is done and this one is encoded (milliseconds on a long
    thread). So unless puts never follow (exit durability) a commit due
    while a root values event waits for its checkpoint is held, a linger at
    a time, up to HOLD_MAX_S (a values event no put follows, as a fork's,
    is held no longer)."""

    HOLD_MAX_S = 0.1

    def __init__(self, client: WeftClient, dispatch_id: str, token: str, *,
                 sync: bool = False, linger_s: float = 0.005, on_cancel=None, on_fail=None, traceparent: str = "",
                 puts_follow_values: bool = True):
        self.client = client
        self.dispatch_id = dispatch_id
        self.token = token
        self.sync = sync
        self.linger_s = linger_s
        self.on_cancel = on_cancel or (lambda action: None)
        self.on_fail = on_fail or (lambda err: None)
        self.headers = {"traceparent": traceparent} if traceparent else None
        self.checkpoints: list[str] = []
        self.writes: list[str] = []
        self.events: list[str] = []
        self.seq = 0
        self.lock = asyncio.Lock()
        self.failed: BaseException | None = None
        self.ended = False
        self.thread_empty = False
        self.last_root: _LastRoot | None = None
        self.puts_follow_values = puts_follow_values
        self.values_waiting = False  # a root values event queued after the last root put
        self._held = 0
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task] = set()

    def _check(self) -> None:
        if self.failed:
            raise self.failed
        if self.ended:
            raise RuntimeError("run already ended")

    def add_checkpoint(self, put_json: str, complete=None, checkpoint_id: str = "") -> None:
        """Queues a checkpoint put. complete (root checkpoints) renders it
        with every channel's value: the end's commit carries the run's last
        root checkpoint complete, with the writes under it, in place of its
        put when that is unsent, else once more (puts and writes are
        idempotent), so Weft projects the thread and references the run's
        result from the commit whatever was sent before."""
        self._check()
        self.thread_empty = False
        self.checkpoints.append(put_json)
        if complete is not None:
            self.last_root = _LastRoot(len(self.checkpoints) - 1, complete, checkpoint_id)
            self.values_waiting = False

    def add_writes(self, batch_json: str, ns: str = "", checkpoint_id: str = "") -> None:
        self._check()
        self.thread_empty = False
        self.writes.append(batch_json)
        if ns == "" and self.last_root is not None and checkpoint_id == self.last_root.id:
            self.last_root.writes.append(batch_json)

    def emit(self, event: str, data_json: str) -> None:
        if self.failed or self.ended:
            return
        self.events.append(f'{{"event":{json.dumps(event)},"data":{data_json}}}')
        if event == "values" and self.puts_follow_values:
            self.values_waiting = True
        self.soon()

    def soon(self) -> None:
        if self._timer is not None:
            return
        loop = asyncio.get_running_loop()

        def go():
            self._timer = None
            t = loop.create_task(self._flush_due())
            self._tasks.add(t)
            t.add_done_callback(self._tasks.discard)

        self._timer = loop.call_later(self.linger_s, go)

    async def _flush_due(self) -> None:
        """The linger's flush (its failure is the next call's to report),
        unless a values event waits for its checkpoint (decided as the
        batch is taken: the event may have come since the timer fired)."""
        try:
            async with self.lock:
                if self.values_waiting and self._held * self.linger_s < self.HOLD_MAX_S:
                    self._held += 1
                    self.soon()
                    return
                await self._send(None)
        except Exception:
            pass

    async def persist(self) -> None:
        if self.sync:
            await self.flush()
            return
        self._check()
        self.soon()

    async def flush(self) -> None:
        async with self.lock:
            await self._send(None)

    async def end(self, end: dict) -> Any:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        async with self.lock:
            self.ended = True
            self.events.append(f'{{"event":"end","data":{json.dumps({"status": end["status"]})}}}')
            return await self._send(end)

    async def _send(self, end: dict | None) -> Any:
        if self.failed:
            raise self.failed
        if end is None and not (self.checkpoints or self.writes or self.events):
            return None
        last = self.last_root
        if end is not None and last is not None:
            if not last.sent:
                self.checkpoints[last.index] = last.complete()
            else:
                self.checkpoints.append(last.complete())
                self.writes.extend(last.writes[:last.sent_writes])
        if last is not None:
            last.sent, last.sent_writes = True, len(last.writes)
        self.values_waiting, self._held = False, 0
        self.seq += 1
        commit_id = f"end:{self.token}" if end is not None else f"{self.token}:{self.seq}"
        parts = [f'"claim_token":{json.dumps(self.token)}', f'"commit_id":{json.dumps(commit_id)}',
                 f'"checkpoints":[{",".join(self.checkpoints)}]', f'"writes":[{",".join(self.writes)}]',
                 f'"events":[{",".join(self.events)}]']
        if end is not None:
            parts.append(f'"end":{end["json"]}')
        self.checkpoints, self.writes, self.events = [], [], []
        try:
            res = await self.client.request("POST", f"/dispatch/{self.dispatch_id}/commit",
                                            raw="{" + ",".join(parts) + "}", headers=self.headers)
        except Exception as err:
            self.failed = err
            self.on_fail(err)
            raise
        if res and res.get("cancel"):
            self.on_cancel(res["cancel"])
        return res


def checkpoint_ref(config: dict | None) -> dict | None:
    """A checkpoint's address as the Agent Server shows it, from a config:
    thread and checkpoint ids, and its namespace and map when the config
    names them; None without both ids."""
    c = (config or {}).get("configurable") or {}
    if not c.get("thread_id") or not c.get("checkpoint_id"):
        return None
    ref = {"checkpoint_id": c["checkpoint_id"], "thread_id": c["thread_id"]}
    if "checkpoint_ns" in c:
        ref["checkpoint_ns"] = c["checkpoint_ns"] or ""
    if "checkpoint_map" in c:
        ref["checkpoint_map"] = c["checkpoint_map"]
    return ref


def with_checkpoint_refs(payload: Any) -> Any:
    """A debug checkpoint payload with its checkpoint and parent's
    addresses beside their configs, as the Agent Server streams it."""
    if not isinstance(payload, dict):
        return payload
    return {**payload, "checkpoint": checkpoint_ref(payload.get("config")),
            "parent_checkpoint": checkpoint_ref(payload.get("parent_config"))}


def command_of(c: dict) -> Command:
    """A run's command ({resume, update, goto}) as LangGraph's Command."""
    kw: dict[str, Any] = {}
    if c.get("resume") is not None:
        kw["resume"] = c["resume"]
    if c.get("update") is not None:
        kw["update"] = c["update"]
    if c.get("goto") is not None:
        gotos = c["goto"] if isinstance(c["goto"], list) else [c["goto"]]
        kw["goto"] = [g if isinstance(g, str) else Send(g["node"], g.get("input")) for g in gotos]
    return Command(**kw)


class RunHandle:
    """What the worker knows of a run in flight: how to stop it."""

    def __init__(self, dispatch_id: str, token: str, loop: asyncio.AbstractEventLoop):
        self.dispatch_id = dispatch_id
        self.token = token
        self.loop = loop
        self.reason: Stop | None = None
        self.cancel_action = ""
        self.task: asyncio.Task | None = None  # the graph's stream
        self.traceparent = ""

    def stop(self, kind: str, message: str, action: str = "") -> None:
        """Stops the run (from the event loop's thread)."""
        if self.reason is not None:
            return
        self.reason = Stop(kind, message)
        if action:
            self.cancel_action = action
        if self.task is not None and not self.task.done():
            self.task.cancel()

    def stop_threadsafe(self, kind: str, message: str, action: str = "") -> None:
        self.loop.call_soon_threadsafe(self.stop, kind, message, action)


async def execute_run(claimed: dict, spec: Any, saver: Any, store: Any, client: WeftClient, handle: RunHandle,
                      linger_s: float = 0.005) -> dict:
    """Runs one claimed run to its end. Returns {"outcome": "ended", "status"}
    or {"outcome": "stopped", "reason"}: not ended here (lease lost,
    shutdown); the caller gives it back."""
    dispatch, run, token = claimed["dispatch"], claimed["run"], claimed["claim_token"]
    kwargs = run.get("kwargs") or {}
    config_in = kwargs.get("config") or {}
    # The run config's metadata and configurable, as LangGraph's server
    # hands them to the graph (and its saver to each checkpoint's metadata):
    # the run's metadata (its assistant's and thread's merged in when the
    # run was created), the attempt, and the caller's ids ("" without auth).
    run_md = {**(run.get("metadata") or {}), **(config_in.get("metadata") or {}),
              "run_id": run["run_id"], "thread_id": run["thread_id"], "graph_id": dispatch["graph_id"],
              "assistant_id": run.get("assistant_id"), "run_attempt": dispatch.get("attempt", 1)}
    update = (run.get("metadata") or {}).get(UPDATE_STATE_KEY)
    run_md.pop(UPDATE_STATE_KEY, None)
    committer = Committer(
        client, dispatch["dispatch_id"], token, sync=kwargs.get("durability") == "sync", puts_follow_values=kwargs.get("durability") != "exit",
        linger_s=linger_s, traceparent=claimed.get("traceparent") or "",
        on_cancel=lambda action: handle.stop("cancel", f"run cancelled ({action})", action),
        on_fail=lambda err: handle.stop("lease" if is_fenced(err) else "commit", f"commit failed: {err}"),
    )
    committer.thread_empty = claimed.get("thread_empty") is True
    saver.attach(run["thread_id"], committer)
    try:
        configurable = {**(config_in.get("configurable") or {}), "thread_id": run["thread_id"],
                        "run_id": run["run_id"], "graph_id": dispatch["graph_id"],
                        "assistant_id": run.get("assistant_id")}
        configurable.pop("checkpoint_id", None)
        configurable.pop("checkpoint_ns", None)  # the root's: LangGraph's loop sets it
        for k, v in (("langgraph_auth_user", None), ("langgraph_auth_user_id", ""), ("langgraph_auth_permissions", [])):
            configurable.setdefault(k, v)
        configurable.setdefault("user_id", configurable["langgraph_auth_user_id"])
        config: dict[str, Any] = {"configurable": configurable, "metadata": run_md,
                                  "recursion_limit": config_in.get("recursion_limit") or default_recursion_limit()}
        if config_in.get("tags"):
            config["tags"] = config_in["tags"]
        run_store = store.for_run(dispatch["dispatch_id"], token) if store else None
        async with spec.for_run(config, "threads.update" if update is not None else "threads.create_run",
                                run_store, kwargs.get("context")) as graph:
            # As LangGraph's server: its graph named after the graph id
            # unless it has a name of its own (the root of astream_events).
            attach = {"checkpointer": saver, "store": run_store}
            if graph.name == "LangGraph":
                attach["name"] = dispatch["graph_id"]
            graph = graph.copy(update=attach)
            if update is not None:
                return await _apply_update(update, run, dispatch["graph_id"], graph, committer, handle)
            return await _stream(claimed, kwargs, graph, config, committer, saver, handle)
    except Exception as err:
        if handle.reason is not None:
            return {"outcome": "stopped", "reason": handle.reason}
        return {"outcome": "stopped", "reason": err}
    finally:
        saver.detach(run["thread_id"], committer)


async def _stream(claimed, kwargs, graph, config, committer: Committer, saver, handle: RunHandle) -> dict:
    dispatch, run = claimed["dispatch"], claimed["run"]
    raw_modes = set(kwargs.get("stream_mode") or ["values"])
    requested = {MODE_MAP[m] for m in raw_modes if m in MODE_MAP}
    # "messages" asks for the older messages/* events (MessageEvents),
    # "messages-tuple" for LangGraph's pairs; "events" for LangChain's
    # astream_events, whose root on_chain_stream events carry the chunks.
    legacy_messages = MessageEvents(committer.emit) if "messages" in raw_modes else None
    tuple_messages = "messages-tuple" in raw_modes
    # values and updates are always recorded (the result, interrupts, the
    # thread stream need them); custom too, as the in-process pool does.
    modes = ["values", "updates", "custom", *sorted(requested - {"values", "updates", "custom"})]
    inp: Any = command_of(kwargs["command"]) if kwargs.get("command") else kwargs.get("input")
    checkpoint_id = kwargs.get("checkpoint_id") or None
    if dispatch.get("attempt", 1) > 1:
        # A retry: continue from the last checkpoint this run committed, if
        # any (its input was applied there already); LangGraph then reuses
        # the pending writes of tasks that completed.
        async for t in saver.alist({"configurable": {"thread_id": run["thread_id"], "checkpoint_ns": ""}},
                                   filter={"run_id": run["run_id"]}, limit=1):
            inp = None
            checkpoint_id = t.config["configurable"]["checkpoint_id"]
    if checkpoint_id:
        config["configurable"]["checkpoint_id"] = checkpoint_id
    committer.emit("metadata", json.dumps({"run_id": run["run_id"], "attempt": dispatch.get("attempt", 1)}))
    # Only the graph's output channels are streamed and returned, as on
    # LangGraph's server (no private state such as a middleware's).
    opts: dict[str, Any] = {"stream_mode": modes, "subgraphs": bool(kwargs.get("subgraphs")),
                            "output_keys": graph.output_channels}
    if kwargs.get("context") is not None:
        opts["context"] = kwargs["context"]
    if kwargs.get("interrupt_before"):
        opts["interrupt_before"] = kwargs["interrupt_before"]
    if kwargs.get("interrupt_after"):
        opts["interrupt_after"] = kwargs["interrupt_after"]
    if kwargs.get("durability"):
        opts["durability"] = kwargs["durability"]
    state: dict[str, Any] = {"last_json": "null", "latest": None}
    # The result is what LangGraph's ainvoke returns: the last values, with
    # every interrupt the run's updates reported (the last values chunk of a
    # step that interrupted need not carry them).
    interrupts: list = []

    def on_chunk(chunk):
        if opts["subgraphs"]:
            ns, mode, data = chunk
        else:
            ns, (mode, data) = (), chunk
        if mode == "messages":
            if legacy_messages is not None:
                legacy_messages.add(data)
            if not tuple_messages:
                return
        if mode == "debug" and isinstance(data, dict) and data.get("type") == "checkpoint":
            data = {**data, "payload": with_checkpoint_refs(data.get("payload"))}
        data_json = dumps_event(data)
        committer.emit(mode if not ns else f"{mode}|{'|'.join(ns)}", data_json)
        if ns:
            return
        if mode == "values":
            state["last_json"] = data_json
            state["latest"] = data
        elif mode == "updates" and isinstance(data, dict) and data.get("__interrupt__") is not None:
            interrupts.extend(data["__interrupt__"])

    async def consume():
        if "events" not in raw_modes:
            async for chunk in graph.astream(inp, config, **opts):
                on_chunk(chunk)
            return
        root = uuid.UUID(run["run_id"])
        async for ev in graph.astream_events(inp, {**config, "run_id": root}, version="v2", **opts):
            if "langsmith:hidden" in (ev.get("tags") or []):
                continue
            if ev["event"] == "on_chain_stream" and ev["run_id"] == str(root):
                on_chunk(ev["data"]["chunk"])
            else:
                committer.emit("events", dumps_event(ev))

    failure: BaseException | None = None
    handle.task = asyncio.get_running_loop().create_task(consume())
    try:
        await handle.task
    except asyncio.CancelledError:
        if handle.reason is None:
            raise
    except Exception as err:
        failure = err
    finally:
        handle.task = None
    reason = handle.reason
    if reason is not None and reason.kind != "cancel":
        return {"outcome": "stopped", "reason": reason}
    if reason is not None:
        await committer.end({"status": "interrupted",
                             "json": f'{{"status":"interrupted","result":{state["last_json"]}}}'})
        log.info("run cancelled", extra={"attrs": {"run_id": run["run_id"], "action": handle.cancel_action}})
        return {"outcome": "ended", "status": "interrupted"}
    if failure is not None:
        e = {"error": type(failure).__name__, "message": str(failure)}
        committer.emit("error", dumps_event(e))
        await committer.end({"status": "error", "json": dumps_event({"status": "error", "error": e})})
        log.info("run failed", extra={"attrs": {"run_id": run["run_id"], "error": e["message"]}})
        return {"outcome": "ended", "status": "error"}
    result = state["last_json"]
    if interrupts and isinstance(state["latest"], dict):
        result = dumps_event({**state["latest"], "__interrupt__": interrupts})
    await committer.end({"status": "success", "json": f'{{"status":"success","result":{result}}}'})
    return {"outcome": "ended", "status": "success"}


async def _apply_update(update: dict, run: dict, graph_id: str, graph, committer: Committer, handle: RunHandle) -> dict:
    """Applies an update_state ({values, as_node, checkpoint_id}) with
    LangGraph's own aupdate_state (its reducers, as_node's writers and
    edges; an older checkpoint_id forks) and ends the run with the new
    checkpoint's config as {"__update_state__": …}, or LangGraph's refusal
    as {"__update_error__": {error, message}}. A list of values is applied
    as successive updates."""
    # The update's checkpoint metadata names the graph, as on LangGraph's server.
    config: dict = {"configurable": {"thread_id": run["thread_id"], "checkpoint_ns": ""},
                    "metadata": {"graph_id": graph_id}}
    if update.get("checkpoint_id"):
        config["configurable"]["checkpoint_id"] = update["checkpoint_id"]
    values = update.get("values")
    try:
        for v in values if isinstance(values, list) else [values]:
            out = await graph.aupdate_state(config, v, as_node=update.get("as_node") or None)
            config = {**out, "metadata": config["metadata"]}
        result = {"__update_state__": dict(config["configurable"])}
    except Exception as err:
        if handle.reason is not None:
            raise
        result = {"__update_error__": {"error": type(err).__name__, "message": str(err)}}
    await committer.end({"status": "success", "json": dumps_event({"status": "success", "result": result})})
    return {"outcome": "ended", "status": "success"}
