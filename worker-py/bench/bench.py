"""Benchmark: the same graphs through langgraph dev, Aegra, Weft's Python worker and
Weft's in-process Go path, side by side in one run (issues 29 and 39).

  python worker-py/bench/bench.py                       # 3 rounds: the table of docs/performance.md
  python worker-py/bench/bench.py --quick               # CI: everything very briefly, proves the bench works
  python worker-py/bench/bench.py --long-chat           # also 1,000-turn chats: p50 of turns 11-100 vs 901-1000
  python worker-py/bench/bench.py --baseline-bin /tmp/weft-base --pg-stats 200   # issue 39's before/after
  WEFT_BIN=/tmp/weft AEGRA_PYTHON=/path/venv/bin/python python worker-py/bench/bench.py

Servers (each its own, started here on loopback and stopped by PID at the end):
  langgraph:   langgraph dev (langgraph-cli[inmem], in memory, offline) serving sdk-tests/py/fixtures/pybench
  aegra:       Aegra (aegra-api 0.6.0, its own virtualenv: --aegra-python / AEGRA_PYTHON) serving the same
               project, on a PostgreSQL cluster of its own that the bench initdb's and stops (aegra.py)
  worker:      weft dev serving the same project: the Python worker (weft_worker, Python langgraph) runs the
               graph and commits its checkpoints to Weft, which persists every step in its PostgreSQL
  in-process:  plain weft: the built-in foo_bar and echo_chat, executed by the server's Go pool
  baseline:    with --baseline-bin (or WEFT_BASELINE_BIN): the same plain weft from another binary (the commit
               a change starts from), run like in-process in every phase
Graphs: foo_bar (START -> node_a -> node_b -> END; foo the last value, bar an appended list: foo_bar_py in the
project, the built-in foo_bar in process) and echo_chat (a MessagesState chat answering "echo: <text>").
Measures, every answer checked:
  stateless:  POST /runs/wait of foo_bar, no thread (Aegra 0.6.0 has no stateless runs: n/a)
  thread:     POST /threads/{id}/runs/wait of foo_bar on a fresh thread created before the clock starts
              (c1: one client back to back, p50/p95; cN: N clients at once, runs/s; CPU ms per run at cN
              of each server's process tree from /proc: server, its PostgreSQL, the Python worker)
  chat:       one thread of echo_chat, --turns turns of POST /threads/{id}/runs/wait with one human message
              each (200 random characters), each turn timed: p50 over turns 1-30 and over 1-turns
  reads:      POST /threads/{id}/history {"limit": 10} and GET /threads/{id}/state on the chat when it holds
              60 messages (turn 30), c1 (and c16 with --history-c16): requests/s and p50
  long chat:  with --long-chat, one more chat of --long-turns turns per server, and LangGraph's library alone
              (the same graph with InMemorySaver in a subprocess, the same turns); p50 of turns 11-100 vs
              901-1000, and state / history(10) / GET /threads/{id} p50 at turn long_turns/10 and long_turns
  pg stats:   with --pg-stats N, for each Weft server N stateless foo_bar runs at c4 counted by PostgreSQL
              (pg_stat_statements, pg_stat_database, the WAL position, the tables' rows and sizes): pgstats.py
The machine may be shared: the servers run interleaved in short slices (c1 0.5 s, cN 1 s, chat turn by
turn), their order rotating, so a slowdown falls on all alike; --rounds repeats everything and the summary
gives medians with their spread (min-max over rounds) and the ratios of each round's figures.
"""

# This file: the command line (main), the servers' start-up and the measurement (CPU from /proc, the HTTP
# requests of each server, the phases of foo_bar runs, the chat's reads, --pg-stats). The chats, the long
# chat's reads and LangGraph's library alone are in longchat.py; everything printed at the end in report.py.

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import random
import re
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "sdk-tests" / "py"))
sys.path.insert(0, str(REPO / "sdk-tests" / "py" / "fixtures" / "pybench"))

import httpx  # noqa: E402
import pgstats  # noqa: E402
from aegra import aegra_python, start_aegra  # noqa: E402
from longchat import LibraryChat, chat, langgraph_run_times, library_chat_child, rotate  # noqa: E402
from pyservers import (  # noqa: E402
    Servers,
    free_port,
    project_copy,
    socket_dir,
    start_langgraph_dev,
    start_weft_dev,
)
from report import LABEL, pct, report  # noqa: E402

WANT = {"foo": "b", "bar": ["a", "b"]}
TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")
ALL_PATHS = ["langgraph", "aegra", "worker", "in-process", "baseline"]  # the table's column order
WEFT_PATHS = ("worker", "in-process", "baseline")  # the servers --pg-stats counts


# --- CPU from /proc


def proc_table() -> dict[int, tuple[int, str, int]]:
    """pid -> (ppid, comm, CPU ticks of the process and its waited-for children)."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            s = open(f"/proc/{d}/stat").read()
        except OSError:
            continue
        comm = s[s.index("(") + 1: s.rindex(")")]
        f = s[s.rindex(")") + 2:].split()
        out[int(d)] = (int(f[1]), comm, int(f[11]) + int(f[12]) + int(f[13]) + int(f[14]))
    return out


def postmasters(data_dir: str) -> list[int]:
    """The managed PostgreSQL's postmaster(s): postgres processes whose command line names data_dir."""
    out = []
    for pid, (_, comm, _) in proc_table().items():
        try:
            if comm.startswith("postgres") and data_dir in open(f"/proc/{pid}/cmdline").read():
                out.append(pid)
        except OSError:
            pass
    return out


def tree_cpu(roots: list[int], table, split: bool = True) -> dict[str, float]:
    """CPU ms of the roots' process trees, grouped: postgres, worker (a Python child of the server),
    server (the rest; everything when not split)."""
    kids: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        kids.setdefault(ppid, []).append(pid)
    out = {"server": 0.0, "postgres": 0.0, "worker": 0.0} if split else {"server": 0.0}
    root = roots[0]
    stack, seen = list(roots), set()
    while stack:
        pid = stack.pop()
        if pid not in table or pid in seen:
            continue
        seen.add(pid)
        _, comm, ticks = table[pid]
        group = "server"
        if split:
            group = "postgres" if comm.startswith("postgres") else "worker" if pid != root and comm.startswith("python") else "server"
        out[group] += ticks * TICK_MS
        stack.extend(kids.get(pid, []))
    return out


def self_cpu() -> float:
    t = os.times()
    return (t.user + t.system) * 1000


# --- the servers


class Target:
    def __init__(self, name: str, url: str, graph: str, roots: list[int], split: bool = True, stateless: bool = True):
        self.name, self.url, self.graph, self.roots, self.split, self.stateless = name, url, graph, roots, split, stateless
        self.client = httpx.AsyncClient(base_url=url, timeout=120, limits=httpx.Limits(max_connections=64, max_keepalive_connections=64))
        self.history_bytes = 0  # the size of the last history(10) answer

    async def new_thread(self) -> str:
        r = await self.client.post("/threads", json={})
        if r.status_code != 200:
            raise RuntimeError(f"{self.name}: POST /threads: {r.status_code} {r.text[:300]}")
        return r.json()["thread_id"]

    async def once(self, stateless: bool, acc: Acc | None = None) -> float:
        path = "/runs/wait" if stateless else f"/threads/{await self.new_thread()}/runs/wait"
        t0 = time.perf_counter()
        r = await self.client.post(path, json={"assistant_id": self.graph, "input": {}})
        ms = (time.perf_counter() - t0) * 1000
        if r.status_code != 200 or r.json() != WANT:
            raise RuntimeError(f"{self.name}: POST {path}: {r.status_code} {r.text[:300]}")
        if acc is not None:  # the run's id, to pair the latency with what the server logged of the run
            acc.by_run[run_id_of(r)] = ms
        return ms

    async def turn(self, tid: str, n: int, text: str) -> tuple[float, str]:
        """Turn n of the chat on thread tid: (ms, the run's id when the server gives it)."""
        body = {"assistant_id": "echo_chat", "input": {"messages": [{"type": "human", "content": text}]}}
        t0 = time.perf_counter()
        r = await self.client.post(f"/threads/{tid}/runs/wait", json=body)
        ms = (time.perf_counter() - t0) * 1000
        msgs = r.json().get("messages") if r.status_code == 200 else None
        if not msgs or len(msgs) != 2 * n or msgs[-1].get("type") != "ai" or msgs[-1].get("content") != "echo: " + text:
            raise RuntimeError(f"{self.name}: chat turn {n}: {r.status_code} {r.text[:300]} ... {r.text[-300:]}")
        return ms, run_id_of(r)

    async def history(self, tid: str, messages: int) -> float:
        t0 = time.perf_counter()
        r = await self.client.post(f"/threads/{tid}/history", json={"limit": 10})
        ms = (time.perf_counter() - t0) * 1000
        body = r.json() if r.status_code == 200 else None
        want = 10 if messages >= 8 else len(body or []) or 1  # a chat of 4 turns or more has 10 checkpoints to give
        if r.headers.get("x-pagination-next") and isinstance(body, list) and body:
            want = len(body)  # Weft cuts a page at 4 MiB (10 states of a 2,000-message chat are 5 MB) and says so
        if not isinstance(body, list) or len(body) != want or len(body[0]["values"]["messages"]) != messages:
            raise RuntimeError(f"{self.name}: POST /threads/{{id}}/history: {r.status_code} {r.text[:300]}")
        self.history_bytes = len(r.content)
        return ms

    async def state(self, tid: str, messages: int) -> float:
        t0 = time.perf_counter()
        r = await self.client.get(f"/threads/{tid}/state")
        ms = (time.perf_counter() - t0) * 1000
        body = r.json() if r.status_code == 200 else None
        if not isinstance(body, dict) or len(body["values"]["messages"]) != messages:
            raise RuntimeError(f"{self.name}: GET /threads/{{id}}/state: {r.status_code} {r.text[:300]}")
        return ms

    async def get_thread(self, tid: str, messages: int) -> float:
        t0 = time.perf_counter()
        r = await self.client.get(f"/threads/{tid}")
        ms = (time.perf_counter() - t0) * 1000
        body = r.json() if r.status_code == 200 else None
        values = body.get("values") if isinstance(body, dict) else None
        if (not isinstance(body, dict) or body.get("thread_id") != tid
                or isinstance(values, dict) and "messages" in values and len(values["messages"]) != messages):
            raise RuntimeError(f"{self.name}: GET /threads/{{id}}: {r.status_code} {r.text[:300]}")
        return ms

    async def count_runs(self, n: int, conc: int) -> float:
        """n stateless foo_bar runs by conc clients; their wall time in s."""
        left = n

        async def client():
            nonlocal left
            while left > 0:
                left -= 1
                await self.once(True)

        t0 = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(conc)))
        return time.perf_counter() - t0



def run_id_of(r: httpx.Response) -> str:
    return r.headers.get("content-location", "").rsplit("/", 1)[-1]


class Acc:
    def __init__(self):
        self.runs, self.secs, self.lat, self.cpu = 0, 0.0, [], {}
        self.by_run: dict[str, float] = {}

    def result(self) -> dict:
        return {"runs": self.runs, "per_s": self.runs / self.secs if self.secs else 0, "p50": pct(self.lat, 0.5),
                "p95": pct(self.lat, 0.95), "cpu": {k: v / self.runs for k, v in self.cpu.items()} if self.runs else {}}



async def run_slice(acc: Acc, path: Target, conc: int, secs: float, op) -> None:
    """conc clients calling op() (which returns its latency in ms) back to back for secs; CPU of the
    server's process tree and of this client over the slice."""
    before, c0 = tree_cpu(path.roots, proc_table(), path.split), self_cpu()
    end = time.perf_counter() + secs
    start = time.perf_counter()
    runs = 0

    async def client():
        nonlocal runs
        while time.perf_counter() < end:
            acc.lat.append(await op())
            runs += 1

    await asyncio.gather(*(client() for _ in range(conc)))
    acc.secs += time.perf_counter() - start
    acc.runs += runs
    after = tree_cpu(path.roots, proc_table(), path.split)
    for k in after:
        acc.cpu[k] = acc.cpu.get(k, 0) + after[k] - before[k]
    acc.cpu["client"] = acc.cpu.get("client", 0) + self_cpu() - c0


async def graph_alone(acc: Acc, secs: float) -> None:
    """The fixture graph invoked in this process with InMemorySaver (no HTTP, no server)."""
    end = time.perf_counter() + secs
    while time.perf_counter() < end:
        tid = str(uuid.uuid4())
        t0 = time.perf_counter()
        out = await ALONE.ainvoke({}, {"configurable": {"thread_id": tid}})
        acc.lat.append((time.perf_counter() - t0) * 1000)
        assert out == WANT, out
        ALONE.checkpointer.delete_thread(tid)
        acc.runs += 1


async def commit_totals(url: str | None) -> dict[str, tuple[float, float]]:
    """weft_commit_duration_seconds sum and count by source, from /metrics."""
    if not url:
        return {}
    try:
        async with httpx.AsyncClient(timeout=5) as c:
            text = (await c.get(url + "/metrics")).text
    except httpx.HTTPError:
        return {}
    out: dict[str, list[float]] = {}
    for kind, src, v in re.findall(r'^weft_commit_duration_seconds_(sum|count)\{source="(\w+)"\} (\S+)$', text, re.M):
        out.setdefault(src, [0.0, 0.0])[0 if kind == "sum" else 1] = float(v)
    return {k: (v[0], v[1]) for k, v in out.items()}



async def phase(paths: list[Target], conc: int, secs: float, slice_s: float, stateless: bool, alone: bool,
                worker_url: str | None, lg_log: str | None = None):
    """foo_bar runs (stateless, or each on a fresh thread) at concurrency conc, the paths interleaved."""
    paths = [p for p in paths if p.stateless or not stateless]
    accs = {p.name: Acc() for p in paths}
    lone = Acc()
    n = max(1, round(secs / slice_s))
    commits0 = await commit_totals(worker_url) if alone else {}
    log0 = os.path.getsize(lg_log) if lg_log else 0
    for i in range(n):
        for p in rotate(paths, i):
            acc = accs[p.name]
            op = (lambda p=p, acc=acc: p.once(stateless, acc if p.name == "langgraph" else None))
            await run_slice(acc, p, conc, secs / n, op)
        if alone:
            await graph_alone(lone, secs / n / 2)
    out = {name: a.result() for name, a in accs.items()}
    if lg_log and "langgraph" in accs:
        logged = langgraph_run_times(lg_log, log0)
        paired = [(ms, logged[rid]) for rid, ms in accs["langgraph"].by_run.items() if rid in logged]
        if paired:
            out["langgraph"]["queue_ms"] = statistics.median(w for _, (w, _) in paired)
            out["langgraph"]["exec_ms"] = statistics.median(e for _, (_, e) in paired)
            out["langgraph"]["p50_no_queue"] = statistics.median(ms - w for ms, (w, _) in paired)
    if alone:
        out["alone"] = lone.result()
        commits1 = await commit_totals(worker_url)
        s0, c0 = commits0.get("worker", (0.0, 0.0))
        s1, c1 = commits1.get("worker", (0.0, 0.0))
        if c1 > c0 and "worker" in accs:
            out["commits"] = {"ms": (s1 - s0) * 1000 / (c1 - c0), "per_run": (c1 - c0) / max(1, accs["worker"].runs)}
    return out


async def reads_phase(paths: list[Target], threads: dict[str, str], messages: int, conc: int, secs: float,
                      slice_s: float) -> dict:
    """POST /threads/{id}/history {"limit": 10} and GET /threads/{id}/state on each path's chat thread at
    concurrency conc, secs of each per path, interleaved: {"history": {path: result}, "state": {...}}."""
    accs = {kind: {p.name: Acc() for p in paths} for kind in ("history", "state")}
    n = max(1, round(secs / slice_s))
    for i in range(n):
        for p in rotate(paths, i):
            tid = threads[p.name]
            await run_slice(accs["history"][p.name], p, conc, secs / n, lambda p=p, tid=tid: p.history(tid, messages))
            await run_slice(accs["state"][p.name], p, conc, secs / n, lambda p=p, tid=tid: p.state(tid, messages))
    return {kind: {name: a.result() for name, a in by.items()} for kind, by in accs.items()}


async def chat_reads(paths: list[Target], threads: dict[str, str], messages: int, concs: list[int], secs: float) -> dict:
    """The round chat's reads, awaited by longchat.chat once the chats hold 2*HISTORY_AT messages: reads_phase
    at each concurrency of concs, {conc: history, "state <conc>": state, "messages": n, "bytes": {path: size of
    its last history(10) answer}}."""
    hist = {}
    for conc in concs:
        got = await reads_phase(paths, threads, messages, conc, secs, 0.5 if conc == 1 else 1.0)
        hist[conc], hist[f"state {conc}"] = got["history"], got["state"]
    hist["messages"] = messages
    hist["bytes"] = {p.name: p.history_bytes for p in paths}
    return hist



async def pg_stats_phase(paths: list[Target], counters: dict[str, pgstats.Counter], n: int, conc: int = 4) -> dict:
    """N stateless foo_bar runs at c conc per Weft server, counted by its PostgreSQL (pgstats.py). The servers
    share the waits: counting on everywhere, a warm-up of each, PostgreSQL's counters left to settle, the
    readings before; each server's runs in turn; settle; the readings after; then IDLE_S of nothing, read
    again: the servers' background work (pollers) per second, subtracted from the window of the runs."""
    targets = [p for p in paths if p.name in counters]
    for c in counters.values():
        c.track(True)
    await asyncio.sleep(0.3)  # backends take the reload at their next command
    for p in targets:
        await p.count_runs(max(10, n // 4), conc)
    await asyncio.sleep(pgstats.FLUSH_S)
    t0 = {p.name: counters[p.name].tables() for p in targets}
    await asyncio.sleep(0.3)  # the counting connection's backend reports as it exits
    db0 = {}
    for p in targets:
        counters[p.name].reset()
        db0[p.name] = counters[p.name].database()
    secs = {}
    for p in targets:
        secs[p.name] = await p.count_runs(n, conc)
        print(f"  pg stats: {n} runs of {LABEL[p.name]} in {secs[p.name]:.1f} s", file=sys.stderr)
    await asyncio.sleep(pgstats.FLUSH_S)
    db1, stmts, t1, idle0 = {}, {}, {}, {}
    for p in targets:
        db1[p.name], stmts[p.name] = counters[p.name].database(), counters[p.name].statements()
    for p in targets:
        t1[p.name] = counters[p.name].tables()
    await asyncio.sleep(0.3)
    for p in targets:
        counters[p.name].reset()
        idle0[p.name] = counters[p.name].database()
    await asyncio.sleep(pgstats.IDLE_S)
    out = {}
    for p in targets:
        c = counters[p.name]
        idle1 = c.database()
        idle = {"db0": idle0[p.name], "db1": idle1, "stmts": c.statements(),
                "wal_lsn": c.wal_bytes(idle0[p.name]["lsn"], idle1["lsn"])}
        out[p.name] = pgstats.summarize(n, db0[p.name], db1[p.name], c.wal_bytes(db0[p.name]["lsn"], db1[p.name]["lsn"]),
                                        stmts[p.name], t0[p.name], t1[p.name], idle)
        out[p.name]["runs_secs"] = secs[p.name]
        c.track(False)
    return out


# --- main


def start_weft_binary(servers: Servers, binary: str, data_dir: str | None):
    """Plain weft from another binary, started as servers.start starts WEFT_BIN (which it reads at each start)."""
    before = os.environ.get("WEFT_BIN")
    os.environ["WEFT_BIN"] = binary
    try:
        return servers.start(data_dir=data_dir)
    finally:
        if before is None:
            del os.environ["WEFT_BIN"]
        else:
            os.environ["WEFT_BIN"] = before


def parse_env(items: list[str]) -> dict[str, str]:
    out = {}
    for it in items:
        k, sep, v = it.partition("=")
        if not sep:
            raise SystemExit(f"--aegra-env {it!r}: want KEY=VALUE")
        out[k] = v
    return out


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=5, help="seconds per server, mode and phase (default 5)")
    ap.add_argument("--warmup", type=float, default=10, help="seconds of warm-up at c4, per mode, servers interleaved (default 10)")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--jobs", type=int, default=32,
                    help="runs at once per server: the Python worker's --concurrency and langgraph dev's --n-jobs-per-worker (default 32)")
    ap.add_argument("--modes", default="stateless,thread", help="foo_bar modes (default stateless,thread)")
    ap.add_argument("--turns", type=int, default=100, help="turns of each round's chat (default 100); history(10) at turn 30")
    ap.add_argument("--history-c16", action="store_true", help="also history(10) and state at concurrency --concurrency")
    ap.add_argument("--long-chat", action="store_true",
                    help="after the rounds, one chat of --long-turns turns per server and LangGraph's library alone: p50 of "
                         "turns 11-100 vs the last 100; state, history(10) and GET /threads/{id} at two points")
    ap.add_argument("--long-turns", type=int, default=1000,
                    help="turns of the long chat (default 1000); its reads at turn long_turns/10 and long_turns")
    ap.add_argument("--long-reads", type=int, default=30,
                    help="requests of each read (state, history(10), GET /threads/{id}) at each of the long chat's read points (default 30)")
    ap.add_argument("--paths", default=",".join(ALL_PATHS[:4]),
                    help=f"servers to run (default {','.join(ALL_PATHS[:4])}; baseline comes with --baseline-bin)")
    ap.add_argument("--baseline-bin", default=os.environ.get("WEFT_BASELINE_BIN"), metavar="PATH",
                    help="also run plain weft from this binary (default $WEFT_BASELINE_BIN), like in-process in every phase, "
                         "and compare in-process with it")
    ap.add_argument("--pg-stats", type=int, default=0, metavar="N",
                    help="for each Weft server, N stateless foo_bar runs at c4 counted by its PostgreSQL "
                         "(pg_stat_statements, pg_stat_database, WAL, the rows they leave); default off")
    ap.add_argument("--aegra-python", help="the interpreter of Aegra's virtualenv (aegra-requirements.txt); else "
                                           "$AEGRA_PYTHON, else worker-py/bench/.venv-aegra/bin/python")
    ap.add_argument("--aegra-env", action="append", default=[], metavar="KEY=VALUE",
                    help="extra environment for Aegra (e.g. SQLALCHEMY_POOL_SIZE=16); repeatable")
    ap.add_argument("--seed", type=int, default=39)
    ap.add_argument("--json", metavar="FILE", help="also write every raw figure (each turn's latency too) to FILE")
    ap.add_argument("--quick", action="store_true",
                    help="CI: defaults of 1 round, 1 s per phase, 0.5 s warm-up, a 10-turn chat (history(10) on its 20 "
                         "messages), a 40-turn long chat with 10 reads a point; flags given override them: proves the bench works")
    if ap.parse_known_args()[0].quick:  # langgraph dev's 0.5-1 s a run (its queue's poll) makes the chats the longest part
        ap.set_defaults(rounds=1, duration=1.0, warmup=0.5, turns=10, long_turns=40, long_reads=10)
    args = ap.parse_args()
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    wanted = [p.strip() for p in args.paths.split(",") if p.strip()]
    if unknown := set(wanted) - set(ALL_PATHS):
        raise SystemExit(f"--paths: unknown {sorted(unknown)} (known: {', '.join(ALL_PATHS)})")
    if args.baseline_bin:
        if not os.access(args.baseline_bin, os.X_OK):
            raise SystemExit(f"--baseline-bin / WEFT_BASELINE_BIN: no executable at {args.baseline_bin}")
        args.baseline_bin = os.path.abspath(args.baseline_bin)
        wanted.append("baseline")
    elif "baseline" in wanted:
        raise SystemExit("--paths baseline: give its binary with --baseline-bin or WEFT_BASELINE_BIN")
    wanted = [p for p in ALL_PATHS if p in wanted]
    if args.pg_stats and not set(wanted) & set(WEFT_PATHS):
        raise SystemExit("--pg-stats: no Weft server in --paths")
    apy = aegra_python(args.aegra_python) if "aegra" in wanted else None
    rng = random.Random(args.seed)
    t_begin = time.monotonic()
    load0 = os.getloadavg()

    global ALONE
    from graphs import (
        foo_bar_py,  # the fixture project's graph, imported here for the alone timing
    )
    from langgraph.checkpoint.memory import InMemorySaver

    ALONE = foo_bar_py.copy(update={"checkpointer": InMemorySaver()})

    servers = Servers()
    started: list = []
    paths: list[Target] = []
    rounds: list[dict] = []
    long = pg = None
    dev = lgdev = library = None
    counters: dict[str, pgstats.Counter] = {}
    weft: dict = {}
    try:
        tmp = tempfile.mkdtemp(prefix="bench-", dir=servers.root)
        os.chmod(tmp, 0o755)
        by_name = {}

        def data_dir() -> str | None:
            """With --pg-stats, the server's cluster made beforehand with pg_stat_statements preloaded (pgstats.py)."""
            if not args.pg_stats:
                return None
            d = servers.data_dir()
            pgstats.prepare_data_dir(d)
            return d

        if "in-process" in wanted:
            weft["in-process"] = servers.start(data_dir=data_dir())
        if "baseline" in wanted:
            weft["baseline"] = start_weft_binary(servers, args.baseline_bin, data_dir())
        for name in ("in-process", "baseline"):
            if name in weft:
                w = weft[name]
                by_name[name] = Target(name, w.url, "foo_bar", [w.proc.pid, *postmasters(w.env["WEFT_DATA_DIR"])])
        if "worker" in wanted:
            dev = start_weft_dev(servers, project_copy(os.path.join(tmp, "weft-dev")),
                                 env={"WEFT_WORKER_CONCURRENCY": str(args.jobs), "WEFT_CACHE_DIR": os.path.join(tmp, "cache")},
                                 data_dir=data_dir())
            weft["worker"] = dev
            by_name["worker"] = Target("worker", dev.url, "foo_bar_py", [dev.proc.pid, *postmasters(dev.env["WEFT_DATA_DIR"])])
        if args.pg_stats:
            counters = {name: pgstats.Counter(socket_dir(w.log()), LABEL[name]) for name, w in weft.items()}
        if "langgraph" in wanted:
            lg_dir = os.path.join(tmp, "langgraph-dev")
            os.makedirs(lg_dir)
            lgdev = start_langgraph_dev(project_copy(lg_dir), lg_dir, jobs=args.jobs)
            started.append(lgdev)
            by_name["langgraph"] = Target("langgraph", lgdev.url, "foo_bar_py", [lgdev.proc.pid], split=False)
        if "aegra" in wanted:
            ae_dir = os.path.join(tmp, "aegra")
            os.makedirs(ae_dir)
            aegra = start_aegra(apy, project_copy(ae_dir), ae_dir, free_port(), ["echo_chat", "foo_bar_py"], parse_env(args.aegra_env))
            started.append(aegra)
            by_name["aegra"] = Target("aegra", aegra.url, "foo_bar_py", [aegra.proc.pid, aegra.pg.postmaster_pid()], stateless=False)
        paths = [by_name[n] for n in wanted]
        print(f"servers up in {time.monotonic() - t_begin:.0f} s: " + ", ".join(f"{LABEL[p.name]} {p.url}" for p in paths), file=sys.stderr)
        worker_url = dev.url if dev else None
        lg_log = lgdev.log_path if lgdev else None
        for mode in modes:
            await phase(paths, 4, args.warmup, 1.0, mode == "stateless", False, worker_url)
        if args.warmup and not args.quick:
            for _ in range(10):
                await graph_alone(Acc(), 0.2)
            await chat(paths, 3, rng)
        for r in range(args.rounds):
            res = {}
            for mode in modes:
                c1 = await phase(paths, 1, args.duration, 0.5, mode == "stateless", True, worker_url, lg_log)
                cn = await phase(paths, args.concurrency, args.duration, 1.0, mode == "stateless", False, worker_url)
                res[mode] = {"c1": c1, "cn": cn}
            concs = [1, args.concurrency] if args.history_c16 else [1]
            reads = functools.partial(chat_reads, paths, concs=concs, secs=args.duration)
            res["chat"] = await chat(paths, args.turns, rng, lg_log, reads, label=f"round {r + 1} chat")
            rounds.append(res)
            print(f"round {r + 1} of {args.rounds} done ({time.monotonic() - t_begin:.0f} s)", file=sys.stderr)
        if args.pg_stats:
            pg = await pg_stats_phase(paths, counters, args.pg_stats)
            print(f"pg stats done ({time.monotonic() - t_begin:.0f} s)", file=sys.stderr)
        if args.long_chat:
            library = await LibraryChat.start()
            long = await chat(paths, args.long_turns, rng, lg_log, label="long chat", library=library,
                              reads_at=(max(1, args.long_turns // 10), args.long_turns), reads=args.long_reads)
    finally:
        if library:
            await library.close()
        for c in counters.values():
            c.close()
        for p in paths:
            await p.client.aclose()
        for s in reversed(started):
            s.stop()
        servers.stop_all()

    report(args, modes, [p.name for p in paths], rounds, long, pg, load0, os.getloadavg(), time.monotonic() - t_begin)


ALONE = None

if __name__ == "__main__":
    if sys.argv[1:2] == ["--library-chat"]:
        library_chat_child()
    else:
        asyncio.run(main())
