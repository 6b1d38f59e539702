"""Benchmark: the same graphs through langgraph dev, Aegra, Weft's Python worker and
Weft's in-process Go path, side by side in one run (issues 29 and 39).

  python worker-py/bench/bench.py                       # 3 rounds: the table of docs/performance.md
  python worker-py/bench/bench.py --quick               # CI: everything very briefly, proves the bench works
  python worker-py/bench/bench.py --long-chat           # also 1,000-turn chats: p50 of turns 11-100 vs 901-1000
  WEFT_BIN=/tmp/weft AEGRA_PYTHON=/path/venv/bin/python python worker-py/bench/bench.py

Servers (each its own, started here on loopback and stopped by PID at the end):
  langgraph:   langgraph dev (langgraph-cli[inmem], in memory, offline) serving sdk-tests/py/fixtures/pybench
  aegra:       Aegra (aegra-api 0.6.0, its own virtualenv: --aegra-python / AEGRA_PYTHON) serving the same
               project, on a PostgreSQL cluster of its own that the bench initdb's and stops (aegra.py)
  worker:      weft dev serving the same project: the Python worker (weft_worker, Python langgraph) runs the
               graph and commits its checkpoints to Weft, which persists every step in its PostgreSQL
  in-process:  plain weft: the built-in foo_bar and echo_chat, executed by the server's Go pool
Graphs: foo_bar (START -> node_a -> node_b -> END; foo the last value, bar an appended list: foo_bar_py in the
project, the built-in foo_bar in process) and echo_chat (a MessagesState chat answering "echo: <text>").
Measures, every answer checked:
  stateless:  POST /runs/wait of foo_bar, no thread (Aegra 0.6.0 has no stateless runs: n/a)
  thread:     POST /threads/{id}/runs/wait of foo_bar on a fresh thread created before the clock starts
              (c1: one client back to back, p50/p95; cN: N clients at once, runs/s; CPU ms per run at cN
              of each server's process tree from /proc: server, its PostgreSQL, the Python worker)
  chat:       one thread of echo_chat, --turns turns of POST /threads/{id}/runs/wait with one human message
              each (200 random characters), each turn timed: p50 over turns 1-30 and over 1-turns
  history:    POST /threads/{id}/history {"limit": 10} on the chat when it holds 60 messages (turn 30), c1
              (and c16 with --history-c16): requests/s and p50
The machine may be shared: the servers run interleaved in short slices (c1 0.5 s, cN 1 s, chat turn by
turn), their order rotating, so a slowdown falls on all alike; --rounds repeats everything and the summary
gives medians with their spread (min-max over rounds) and the ratios of each round's figures.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import math
import os
import platform
import random
import re
import statistics
import string
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

from aegra import aegra_python, start_aegra  # noqa: E402
from pyservers import Servers, free_port, project_copy, start_langgraph_dev, start_weft_dev  # noqa: E402

WANT = {"foo": "b", "bar": ["a", "b"]}
TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")
ALL_PATHS = ["langgraph", "aegra", "worker", "in-process"]  # the table's column order
LABEL = {"langgraph": "langgraph dev", "aegra": "Aegra", "worker": "Weft, Python worker", "in-process": "Weft, in process"}
HISTORY_AT = 30  # history(10) is read when the chat holds 60 messages
TEXT_CHARS = 200  # characters of each human message (as weft-load's long suite)


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

    async def once(self, stateless: bool, acc: "Acc | None" = None) -> float:
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
        if not isinstance(body, list) or len(body) != 10 or len(body[0]["values"]["messages"]) != messages:
            raise RuntimeError(f"{self.name}: POST /threads/{{id}}/history: {r.status_code} {r.text[:300]}")
        self.history_bytes = len(r.content)
        return ms


def run_id_of(r: httpx.Response) -> str:
    return r.headers.get("content-location", "").rsplit("/", 1)[-1]


class Acc:
    def __init__(self):
        self.runs, self.secs, self.lat, self.cpu = 0, 0.0, [], {}
        self.by_run: dict[str, float] = {}

    def result(self) -> dict:
        return {"runs": self.runs, "per_s": self.runs / self.secs if self.secs else 0, "p50": pct(self.lat, 0.5),
                "p95": pct(self.lat, 0.95), "cpu": {k: v / self.runs for k, v in self.cpu.items()} if self.runs else {}}


def pct(xs, p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")


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


async def history_phase(paths: list[Target], threads: dict[str, str], messages: int, conc: int, secs: float,
                        slice_s: float) -> dict:
    """POST /threads/{id}/history {"limit": 10} on each path's chat thread at concurrency conc, interleaved."""
    accs = {p.name: Acc() for p in paths}
    n = max(1, round(secs / slice_s))
    for i in range(n):
        for p in rotate(paths, i):
            await run_slice(accs[p.name], p, conc, secs / n, lambda p=p: p.history(threads[p.name], messages))
    return {name: a.result() for name, a in accs.items()}


def random_text(rng: random.Random) -> str:
    return "".join(rng.choices(string.ascii_letters + string.digits, k=TEXT_CHARS))


async def chat(paths: list[Target], turns: int, rng: random.Random, lg_log: str | None = None, history: dict | None = None,
               label: str = "chat") -> dict:
    """One echo_chat thread per path, turns turns each, turn by turn across the paths (their order rotating),
    the same text for all at each turn. history: {"concs": [...], "secs": s} reads history(10) once the
    chats hold 2*HISTORY_AT messages."""
    threads = {p.name: await p.new_thread() for p in paths}
    lat: dict[str, list[float]] = {p.name: [] for p in paths}
    lg_runs: dict[str, int] = {}
    log0 = os.path.getsize(lg_log) if lg_log else 0
    hist = {}
    t_start, t_note = time.monotonic(), time.monotonic()
    for i in range(1, turns + 1):
        text = random_text(rng)
        for p in rotate(paths, i):
            ms, rid = await p.turn(threads[p.name], i, text)
            lat[p.name].append(ms)
            if p.name == "langgraph" and rid:
                lg_runs[rid] = i - 1
        if history and i == min(HISTORY_AT, turns):
            for conc in history["concs"]:
                hist[conc] = await history_phase(paths, threads, 2 * i, conc, history["secs"], 0.5 if conc == 1 else 1.0)
            hist["messages"] = 2 * i
            hist["bytes"] = {p.name: p.history_bytes for p in paths}
        if time.monotonic() - t_note > 60:
            t_note = time.monotonic()
            print(f"  {label}: turn {i} of {turns} ({time.monotonic() - t_start:.0f} s)", file=sys.stderr)
    out = {"lat": lat, "hist": hist}
    if lg_log and "langgraph" in lat:  # each langgraph dev turn minus the time its log says it waited in its queue
        logged = langgraph_run_times(lg_log, log0)
        no_queue = [None] * turns
        for rid, idx in lg_runs.items():
            if rid in logged:
                no_queue[idx] = lat["langgraph"][idx] - logged[rid][0]
        out["lg_no_queue"] = no_queue
    return out


# --- main


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
    ap.add_argument("--history-c16", action="store_true", help="also history(10) at concurrency --concurrency")
    ap.add_argument("--long-chat", action="store_true",
                    help="after the rounds, one chat of --long-turns turns per server: p50 of turns 11-100 vs the last 100")
    ap.add_argument("--long-turns", type=int, default=1000)
    ap.add_argument("--paths", default=",".join(ALL_PATHS), help=f"servers to run (default {','.join(ALL_PATHS)})")
    ap.add_argument("--aegra-python", help="the interpreter of Aegra's virtualenv (aegra-requirements.txt); else "
                                           "$AEGRA_PYTHON, else worker-py/bench/.venv-aegra/bin/python")
    ap.add_argument("--aegra-env", action="append", default=[], metavar="KEY=VALUE",
                    help="extra environment for Aegra (e.g. SQLALCHEMY_POOL_SIZE=16); repeatable")
    ap.add_argument("--seed", type=int, default=39)
    ap.add_argument("--json", metavar="FILE", help="also write every raw figure (each turn's latency too) to FILE")
    ap.add_argument("--quick", action="store_true",
                    help="CI: 1 round, 1 s per phase, 0.5 s warm-up, a 10-turn chat (history(10) on its 20 messages): proves the bench works")
    args = ap.parse_args()
    if args.quick:  # langgraph dev's 0.5-1 s a run (its queue's poll) makes the chat the longest part
        args.rounds, args.duration, args.warmup, args.turns = 1, 1.0, 0.5, min(args.turns, 10)
        args.long_turns = min(args.long_turns, 40)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    wanted = [p.strip() for p in args.paths.split(",") if p.strip()]
    if unknown := set(wanted) - set(ALL_PATHS):
        raise SystemExit(f"--paths: unknown {sorted(unknown)} (known: {', '.join(ALL_PATHS)})")
    wanted = [p for p in ALL_PATHS if p in wanted]
    apy = aegra_python(args.aegra_python) if "aegra" in wanted else None
    rng = random.Random(args.seed)
    t_begin = time.monotonic()
    load0 = os.getloadavg()

    global ALONE
    from graphs import foo_bar_py  # the fixture project's graph, imported here for the alone timing
    from langgraph.checkpoint.memory import InMemorySaver

    ALONE = foo_bar_py.copy(update={"checkpointer": InMemorySaver()})

    servers = Servers()
    started: list = []
    paths: list[Target] = []
    rounds: list[dict] = []
    long = None
    dev = lgdev = None
    try:
        tmp = tempfile.mkdtemp(prefix="bench-", dir=servers.root)
        os.chmod(tmp, 0o755)
        by_name = {}
        if "in-process" in wanted:
            inproc = servers.start()
            by_name["in-process"] = Target("in-process", inproc.url, "foo_bar", [inproc.proc.pid, *postmasters(inproc.env["WEFT_DATA_DIR"])])
        if "worker" in wanted:
            dev = start_weft_dev(servers, project_copy(os.path.join(tmp, "weft-dev")),
                                 env={"WEFT_WORKER_CONCURRENCY": str(args.jobs), "WEFT_CACHE_DIR": os.path.join(tmp, "cache")})
            by_name["worker"] = Target("worker", dev.url, "foo_bar_py", [dev.proc.pid, *postmasters(dev.env["WEFT_DATA_DIR"])])
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
            res["chat"] = await chat(paths, args.turns, rng, lg_log, {"concs": concs, "secs": args.duration},
                                     label=f"round {r + 1} chat")
            rounds.append(res)
            print(f"round {r + 1} of {args.rounds} done ({time.monotonic() - t_begin:.0f} s)", file=sys.stderr)
        if args.long_chat:
            long = await chat(paths, args.long_turns, rng, lg_log, label="long chat")
    finally:
        for p in paths:
            await p.client.aclose()
        for s in reversed(started):
            s.stop()
        servers.stop_all()

    report(args, modes, [p.name for p in paths], rounds, long, load0, os.getloadavg(), time.monotonic() - t_begin)


# --- the report


def med(xs):
    xs = [x for x in xs if x is not None and not math.isnan(x)]
    return statistics.median(xs) if xs else None


def spread(xs, f: str = ".2f"):
    xs = [x for x in xs if x is not None and not math.isnan(x)]
    return f"{min(xs):{f}}-{max(xs):{f}}" if xs else "-"


def cell(xs, f: str, n_rounds: int) -> str:
    m = med(xs)
    if m is None:
        return "n/a"
    return f"{m:{f}}" + (f" ({spread(xs, f)})" if n_rounds > 1 else "")


def window(lat: list[float], a: int, b: int) -> float | None:
    """p50 of turns a..b (1-based, inclusive)."""
    xs = [x for x in lat[a - 1: b] if x is not None]
    return statistics.median(xs) if xs else None


def metrics(args, modes, names, res) -> dict[str, dict[str, float | None]]:
    """One round's figures: metric -> path -> value."""
    C = args.concurrency
    w30 = min(HISTORY_AT, args.turns)
    out: dict[str, dict] = {}
    for mode in modes:
        for name in names:
            c1, cn = res[mode]["c1"].get(name), res[mode]["cn"].get(name)
            out.setdefault(f"{mode} c1 p50", {})[name] = c1["p50"] if c1 else None
            out.setdefault(f"{mode} c{C} runs/s", {})[name] = cn["per_s"] if cn else None
    ch = res["chat"]
    for name in names:
        out.setdefault("chat 30", {})[name] = window(ch["lat"][name], 1, w30)
        out.setdefault("chat all", {})[name] = window(ch["lat"][name], 1, args.turns)
        for conc in (1, C):
            h = ch["hist"].get(conc, {}).get(name)
            out.setdefault(f"history c{conc} req/s", {})[name] = h["per_s"] if h else None
            out.setdefault(f"history c{conc} p50", {})[name] = h["p50"] if h else None
    return out


def report(args, modes, names, rounds, long, load0, load1, elapsed) -> None:
    C, R = args.concurrency, len(rounds)
    w30 = min(HISTORY_AT, args.turns)
    hist_msgs = 2 * w30
    now = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    print(f"""What is measured ({now}; {platform.node()}, {os.cpu_count()} CPUs; load average {load0[0]:.2f} / {load0[1]:.2f} / {load0[2]:.2f}
(1/5/15 min) at the start, {load1[0]:.2f} / {load1[1]:.2f} / {load1[2]:.2f} at the end; {elapsed:.0f} s{"; --quick: a check that the bench works, not figures" if args.quick else ""}).
Servers, each started by the bench on this machine (loopback), every answer checked:
  langgraph dev:        langgraph-cli[inmem] serving sdk-tests/py/fixtures/pybench (foo_bar_py, echo_chat), in memory,
                        --n-jobs-per-worker {args.jobs}, offline
  Aegra:                aegra-api 0.6.0 (uvicorn, one process; runs as asyncio tasks in it) serving the same project, on
                        a PostgreSQL cluster of its own (initdb'd by the bench, unix socket); its default pools (SQLAlchemy 2,
                        LangGraph 1-6){"; extra env " + " ".join(args.aegra_env) if args.aegra_env else ""}
  Weft, Python worker:  weft dev serving the same project: Weft's Python worker (Python langgraph, --concurrency {args.jobs}) runs
                        the graph and commits every checkpoint to Weft's PostgreSQL
  Weft, in process:     plain weft, the built-in foo_bar and echo_chat run by the server's Go pool (its own PostgreSQL)
foo_bar: START -> node_a -> node_b -> END. stateless: POST /runs/wait (no thread; Aegra 0.6.0 has none: n/a); thread: POST
/threads/{{id}}/runs/wait on a fresh thread created before the clock starts. c1: one client back to back (latency p50);
c{C}: {C} clients at once (runs/s). {args.duration:g} s per server, mode and phase, interleaved in slices (c1 0.5 s, c{C} 1 s,
order rotating), after {args.warmup:g} s of warm-up per mode at c4. Chat: one thread of echo_chat per server and round,
{args.turns} turns of POST /threads/{{id}}/runs/wait with one human message of {TEXT_CHARS} random characters each (the same
text on every server), turn by turn across the servers; p50 of each turn's latency over turns 1-{w30}{f" and 1-{args.turns}" if args.turns > w30 else ""}.
history(10): POST /threads/{{id}}/history {{"limit": 10}} on that chat when it holds {hist_msgs} messages (after turn {w30}),
{args.duration:g} s per server at c1{f" and c{C}" if args.history_c16 else ""}, interleaved. {R} round(s); a cell is the median
over rounds (min-max in brackets when more than one). The client is this Python process (httpx, asyncio).
CPU ms per run at c{C} (/proc) of each server's process tree: server / its PostgreSQL / Python worker, and this client.""")
    if long:
        print(f"Long chat (--long-chat, after the rounds): one more echo_chat thread per server, {args.long_turns} turns the same way.")
    print()
    # per-round detail
    cols = ["server", "postgres", "worker", "client"]
    if rounds:
        print(f"{'round':>5}  {'mode':<9} {'server':<20} {'c1 p50 ms':>10} {'c1 p95 ms':>10} {'c1 runs/s':>10} "
              f"{'c' + str(C) + ' runs/s':>11} {'c' + str(C) + ' p50 ms':>11}  CPU ms/run at c{C}: {' / '.join(cols)}")
    for i, res in enumerate(rounds, 1):
        for mode in modes:
            for name in names:
                c1, cn = res[mode]["c1"].get(name), res[mode]["cn"].get(name)
                if not c1:
                    print(f"{i:>5}  {mode:<9} {LABEL[name]:<20} {'n/a':>10}")
                    continue
                cpu = " / ".join(f"{cn['cpu'][k]:.1f}" if k in cn["cpu"] else "-" for k in cols)
                print(f"{i:>5}  {mode:<9} {LABEL[name]:<20} {c1['p50']:>10.1f} {c1['p95']:>10.1f} {c1['per_s']:>10.1f} "
                      f"{cn['per_s']:>11.1f} {cn['p50']:>11.1f}  {cpu}")
            if "alone" in res[mode]["c1"]:
                print(f"{i:>5}  {mode:<9} {'graph alone':<20} {res[mode]['c1']['alone']['p50']:>10.2f}  (foo_bar_py.ainvoke, this process)")
        ch = res["chat"]
        for name in names:
            lat = ch["lat"][name]
            h = " ".join(f"history c{c}: {ch['hist'][c][name]['per_s']:.1f} req/s, p50 {ch['hist'][c][name]['p50']:.1f} ms"
                         for c in ch["hist"] if isinstance(c, int))
            if "bytes" in ch["hist"]:
                h += f"; history(10) answer {ch['hist']['bytes'][name]:,} bytes"
            w = f"1-{w30} {window(lat, 1, w30):.1f} ms" + (f", 1-{args.turns} {window(lat, 1, args.turns):.1f} ms" if args.turns > w30 else "")
            print(f"{i:>5}  {'chat':<9} {LABEL[name]:<20} turns p50 {w}, p95 {pct(lat, 0.95):.1f} ms, last turn {lat[-1]:.1f} ms; {h}")

    if long and not rounds:
        report_long(args, names, long)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "names": names, "rounds": rounds, "long": long}, f)
        print(f"\n(raw figures: {args.json})")
    if not rounds:
        return
    per_round = [metrics(args, modes, names, res) for res in rounds]
    get = lambda key, name: [m[key].get(name) for m in per_round]  # noqa: E731
    rows = []
    for mode in modes:
        what = "stateless `runs/wait`" if mode == "stateless" else "`runs/wait` on a fresh thread"
        rows.append((f"{what}, c1 p50 (ms)", f"{mode} c1 p50", ".1f", "lat"))
        rows.append((f"{what}, c{C} runs/s", f"{mode} c{C} runs/s", ".1f", "thr"))
    if args.turns > w30:
        rows.append((f"a chat turn on a thread, c1 p50 (ms), turns 1-{w30} / 1-{args.turns}", ("chat 30", "chat all"), ".1f", "lat"))
    else:
        rows.append((f"a chat turn on a thread, c1 p50 (ms), turns 1-{w30}", "chat 30", ".1f", "lat"))
    rows.append((f"`history(10)` of a {hist_msgs}-message chat, c1 req/s", "history c1 req/s", ".1f", "thr"))
    if args.history_c16:
        rows.append((f"`history(10)` of a {hist_msgs}-message chat, c{C} req/s", f"history c{C} req/s", ".1f", "thr"))

    print(f"\nThe table (medians over {R} round(s){', min-max in brackets' if R > 1 else ''}):\n")
    print("| | " + " | ".join(LABEL[n] for n in names) + " |")
    print("|---|" + "---|" * len(names))
    for label, key, f, _ in rows:
        if isinstance(key, tuple):
            cells = [" / ".join(cell(get(k, n), f, R) for k in key) for n in names]
        else:
            cells = [cell(get(key, n), f, R) for n in names]
        print(f"| {label} | " + " | ".join(cells) + " |")

    pairs = [(w, o) for w in ("worker", "in-process") for o in ("langgraph", "aegra") if w in names and o in names]
    if pairs:
        print(f"\nRatios: Weft / the other server, each round's figures, median ({'min-max' if R > 1 else 'one round'}). "
              "Latency rows: below 1.00 Weft is faster; throughput rows: above 1.00 Weft is faster.\n")
        print("| | " + " | ".join(f"{LABEL[w]} / {LABEL[o]}" for w, o in pairs) + " |")
        print("|---|" + "---|" * len(pairs))
        for label, key, _, kind in rows:
            for k in (key if isinstance(key, tuple) else (key,)):
                lab = label.replace(" (ms)", "") if not isinstance(key, tuple) else \
                    f"a chat turn on a thread, c1 p50, turns 1-{w30 if k == 'chat 30' else args.turns}"
                cells = []
                for w, o in pairs:
                    rs = [a / b if a is not None and b else None for a, b in zip(get(k, w), get(k, o))]
                    cells.append(f"{med(rs):.2f}x" + (f" ({spread(rs)})" if R > 1 else "") if med(rs) is not None else "n/a")
                print(f"| {lab} ({'latency' if kind == 'lat' else 'throughput'}) | " + " | ".join(cells) + " |")

    print(f"\nCPU ms per run at c{C} (median over rounds): server + its PostgreSQL + Python worker = total; and this client\n")
    print("| mode | | server process | its PostgreSQL | Python worker | total | client (the bench) |")
    print("|---|---|---|---|---|---|---|")
    for mode in modes:
        for name in names:
            cpus = [r[mode]["cn"][name]["cpu"] for r in rounds if name in r[mode]["cn"]]
            if not cpus:
                print(f"| {mode} | {LABEL[name]} | n/a | | | | |")
                continue
            m = {k: med([c.get(k, 0) for c in cpus]) for k in cols}
            pg = f"{m['postgres']:.1f}" if name != "langgraph" else "- (in memory)"
            wk = f"{m['worker']:.1f}" if name == "worker" else "-"
            total = m["server"] + m["postgres"] + m["worker"]
            print(f"| {mode} | {LABEL[name]} | {m['server']:.1f} | {pg} | {wk} | {total:.1f} | {m['client']:.1f} |")

    if long:
        report_long(args, names, long)
    print("\nWhere the time goes (medians over rounds):")
    for mode in modes:
        lg = [r[mode]["c1"].get("langgraph", {}) for r in rounds]
        parts = []
        if any("queue_ms" in x for x in lg):
            parts.append(f"langgraph dev c1 p50 {med([x.get('p50') for x in lg]):.1f} ms, of which its queue wait "
                         f"{med([x.get('queue_ms') for x in lg]):.0f} ms (from its log, paired by run id) and running "
                         f"{med([x.get('exec_ms') for x in lg]):.1f} ms; without the wait its p50 is "
                         f"{med([x.get('p50_no_queue') for x in lg]):.1f} ms")
        alone = med([r[mode]["c1"]["alone"]["p50"] for r in rounds if "alone" in r[mode]["c1"]])
        if alone is not None:
            parts.append(f"the graph alone (foo_bar_py.ainvoke with InMemorySaver, this process) {alone:.2f} ms")
        commits = [r[mode]["c1"]["commits"] for r in rounds if "commits" in r[mode]["c1"]]
        if commits:
            parts.append(f"the Python worker's commits in Weft's commit coordinator {med([c['ms'] for c in commits]):.2f} ms "
                         f"each, {med([c['per_run'] for c in commits]):.2f} a run (/metrics)")
        if parts:
            print(f"  {mode}: " + "; ".join(parts) + ".")
    lgc = [window(r["chat"].get("lg_no_queue") or [], 1, args.turns) for r in rounds]
    if "langgraph" in names and any(lgc):
        print(f"  chat: langgraph dev's turns without their queue wait: p50 {med(lgc):.1f} ms over turns 1-{args.turns}.")
    print("  langgraph dev's latency is its queue's: langgraph-runtime-inmem's Runs.next, when its last poll found no run,\n"
          "  sleeps 0.5 s and then takes only runs created before the poll began, so a run waits 0.5-1 s for a worker\n"
          "  whatever the graph, and its throughput is about the clients in flight per second. Ratios to langgraph dev\n"
          "  measure that poll; its figures without the wait compare the servers' own work on a run. Aegra runs each\n"
          "  run as an asyncio task of its API process right away (no queue to poll) and persists it in PostgreSQL\n"
          "  (its thread and run rows, each values event in run_events, LangGraph's AsyncPostgresSaver checkpoints);\n"
          "  Weft persists every step in PostgreSQL too (the in-process path without leaving the server, the\n"
          "  Python worker's through the worker API).")



def report_long(args, names, long) -> None:
    n = args.long_turns
    a, b = (11, 100) if n >= 200 else (1, n // 2)
    c, d = (n - 99, n) if n >= 200 else (n // 2 + 1, n)
    series = [(LABEL[name], long["lat"][name]) for name in names]
    if long.get("lg_no_queue") and any(long["lg_no_queue"]):
        series.append(("langgraph dev without its queue wait", long["lg_no_queue"]))
    print(f"\nLong chat: one thread per server, {n} turns; p50 of turns {a}-{b} vs {c}-{d} (ms) and their ratio\n")
    print(f"| | turns {a}-{b} | turns {c}-{d} | late / early |")
    print("|---|---|---|---|")
    for label, lat in series:
        e, l_ = window(lat, a, b), window(lat, c, d)
        print(f"| {label} | {e:.1f} | {l_:.1f} | {l_ / e:.2f}x |" if e and l_ else f"| {label} | n/a | n/a | |")
    step = 100 if n >= 500 else max(1, n // 5)
    blocks = [(s0, min(n, s0 + step - 1)) for s0 in range(1, n + 1, step)]
    print(f"\np50 of each {step} turns (ms):\n")
    print("| | " + " | ".join(f"{x}-{y}" for x, y in blocks) + " |")
    print("|---|" + "---|" * len(blocks))
    for label, lat in series:
        print(f"| {label} | " + " | ".join(f"{v:.1f}" if (v := window(lat, x, y)) else "n/a" for x, y in blocks) + " |")

ALONE = None

if __name__ == "__main__":
    asyncio.run(main())
