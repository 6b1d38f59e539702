"""The chats of bench.py: echo_chat turn by turn on every server, each round's chat and --long-chat's.

  chat              one echo_chat thread per server, the same random text on all at each turn, each turn timed;
                    langgraph dev's turns also without their queue wait (from its log)
  point_reads       the long chat's reads at a point: state, history(10) and GET /threads/{id}, c1
  LibraryChat       LangGraph's library alone taking the same turns (library_chat_child is its subprocess,
                    started as `bench.py --library-chat`)
  langgraph_run_times, rotate
                    langgraph dev's log of its runs and the servers' rotating order, which bench.py's phases use too
The servers are bench.py's Targets (new_thread, turn, state, history, get_thread); nothing here imports bench.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import statistics
import string
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bench import Target

HISTORY_AT = 30  # history(10) is read when the chat holds 60 messages
TEXT_CHARS = 200  # characters of each human message (as weft-load's long suite)


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def langgraph_run_times(log_path: str, offset: int) -> dict[str, tuple[float, float]]:
    """run_id -> (run_wait_time_ms, run_exec_ms) of the runs langgraph dev logged ("Background run
    succeeded") past offset."""
    with open(log_path, "rb") as f:
        f.seek(offset)
        text = f.read().decode("utf-8", "replace")
    out = {}
    for line in ANSI.sub("", text).splitlines():
        if "Background run succeeded" in line:
            w, e = re.search(r"run_wait_time_ms=(\d+)", line), re.search(r"run_exec_ms=(\d+)", line)
            i = re.search(r"run_id=([0-9a-f-]+)", line)
            if w and e and i:
                out[i.group(1)] = (float(w.group(1)), float(e.group(1)))
    return out


def rotate(paths: list, i: int) -> list:
    return paths[i % len(paths):] + paths[: i % len(paths)]


def random_text(rng: random.Random) -> str:
    return "".join(rng.choices(string.ascii_letters + string.digits, k=TEXT_CHARS))


async def chat(paths: list[Target], turns: int, rng: random.Random, lg_log: str | None = None,
               history: Callable[[dict[str, str], int], Awaitable[dict]] | None = None,
               label: str = "chat", library: LibraryChat | None = None, reads_at: tuple = (), reads: int = 30) -> dict:
    """One echo_chat thread per path, turns turns each, turn by turn across the paths (their order rotating),
    the same text for all at each turn. history(threads, messages) is awaited once the chats hold
    2*HISTORY_AT messages (bench.py's chat_reads: history(10) and state), its answer kept as "hist".
    library: LangGraph's library alone takes the same turns among the servers. reads_at: after each of
    these turns, point_reads of reads rounds."""
    threads = {p.name: await p.new_thread() for p in paths}
    talkers = [*paths, library] if library else list(paths)
    lat: dict[str, list[float]] = {p.name: [] for p in talkers}
    at_reads = {}
    lg_runs: dict[str, int] = {}
    log0 = os.path.getsize(lg_log) if lg_log else 0
    hist = {}
    t_start, t_note = time.monotonic(), time.monotonic()
    for i in range(1, turns + 1):
        text = random_text(rng)
        for p in rotate(talkers, i):
            ms, rid = await p.turn(threads.get(p.name, ""), i, text)
            lat[p.name].append(ms)
            if p.name == "langgraph" and rid:
                lg_runs[rid] = i - 1
        if history and i == min(HISTORY_AT, turns):
            hist = await history(threads, 2 * i)
        if i in reads_at:
            at_reads[2 * i] = await point_reads(paths, threads, 2 * i, reads)
        if time.monotonic() - t_note > 60:
            t_note = time.monotonic()
            print(f"  {label}: turn {i} of {turns} ({time.monotonic() - t_start:.0f} s)", file=sys.stderr)
    out = {"lat": lat, "hist": hist, "reads": at_reads}
    if lg_log and "langgraph" in lat:  # each langgraph dev turn minus the time its log says it waited in its queue
        logged = langgraph_run_times(lg_log, log0)
        no_queue = [None] * turns
        for rid, idx in lg_runs.items():
            if rid in logged:
                no_queue[idx] = lat["langgraph"][idx] - logged[rid][0]
        out["lg_no_queue"] = no_queue
    return out


async def point_reads(paths: list[Target], threads: dict[str, str], messages: int, count: int) -> dict:
    """count rounds of one GET /threads/{id}/state, one history(10) and one GET /threads/{id} per path (order
    rotating), c1: {path: {"state": p50, "history": p50, "thread": p50}}."""
    lat = {p.name: {"state": [], "history": [], "thread": []} for p in paths}
    for i in range(count):
        for p in rotate(paths, i):
            tid = threads[p.name]
            lat[p.name]["state"].append(await p.state(tid, messages))
            lat[p.name]["history"].append(await p.history(tid, messages))
            lat[p.name]["thread"].append(await p.get_thread(tid, messages))
    return {name: {k: statistics.median(v) for k, v in by.items()} for name, by in lat.items()}


class LibraryChat:
    """LangGraph's library alone: echo_chat of fixtures/pybench compiled with InMemorySaver, one thread, in a
    subprocess of this interpreter (`bench.py --library-chat`: its own process, so it shares neither this
    event loop nor its GIL); each turn's `invoke` is timed in the subprocess, the answer checked there."""

    name = "library"

    def __init__(self, proc):
        self.proc = proc

    @classmethod
    async def start(cls) -> LibraryChat:
        proc = await asyncio.create_subprocess_exec(sys.executable, str(Path(__file__).resolve().parent / "bench.py"), "--library-chat",
                                                    stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                                                    env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
        return cls(proc)

    async def new_thread(self) -> str:
        return "library"

    async def turn(self, tid: str, n: int, text: str) -> tuple[float, str]:
        self.proc.stdin.write((json.dumps({"n": n, "text": text}) + "\n").encode())
        await self.proc.stdin.drain()
        line = await self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"LangGraph library alone: the subprocess exited ({await self.proc.wait()})")
        out = json.loads(line)
        if "error" in out:
            raise RuntimeError(f"LangGraph library alone: turn {n}: {out['error']}")
        return out["ms"], ""

    async def close(self) -> None:
        if self.proc.returncode is None:
            self.proc.stdin.close()
            try:
                await asyncio.wait_for(self.proc.wait(), 30)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()


def library_chat_child() -> None:
    """The subprocess of LibraryChat: one JSON line {"n", "text"} in, one {"ms"} (or {"error"}) out, per turn."""
    from graphs import echo_chat
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    graph = echo_chat.copy(update={"checkpointer": InMemorySaver()})
    config = {"configurable": {"thread_id": str(uuid.uuid4())}}
    for line in sys.stdin:
        req = json.loads(line)
        t0 = time.perf_counter()
        out = graph.invoke({"messages": [HumanMessage(content=req["text"])]}, config)
        ms = (time.perf_counter() - t0) * 1000
        msgs = out["messages"]
        ok = len(msgs) == 2 * req["n"] and msgs[-1].type == "ai" and msgs[-1].content == "echo: " + req["text"]
        print(json.dumps({"ms": ms} if ok else {"error": f"{len(msgs)} messages, last {msgs[-1]!r}"[:500]}), flush=True)
