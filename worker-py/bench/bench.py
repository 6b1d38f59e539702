"""Benchmark: the same two-node graph through Weft's Python worker, Weft's
in-process Go path and LangGraph's own server (issue 29, part 5).

  python worker-py/bench/bench.py                 # 3 rounds, 5 s per path and phase
  python worker-py/bench/bench.py --rounds 1 --duration 2 --warmup 3
  WEFT_BIN=/tmp/weft python worker-py/bench/bench.py   # a prebuilt ./cmd/server (else go build)

Paths (each its own server, started here on loopback and stopped by PID):
  worker:      foo_bar_py (sdk-tests/py/fixtures/pybench) served by `weft dev`: the Python worker
               (weft_worker, Python langgraph) claims the run and commits its checkpoints to Weft,
               which persists every step in its PostgreSQL
  in-process:  Weft's built-in foo_bar on plain `weft`, executed by the server's Go pool (same shape:
               START -> node_a -> node_b -> END, foo the last value, bar an appended list)
  langgraph:   foo_bar_py served by `langgraph dev` (langgraph-cli[inmem], in memory, offline)
Modes: stateless (POST /runs/wait, no thread) and thread (POST /threads/{id}/runs/wait on a fresh thread,
created before the clock starts). Every answer is checked. c1: one client back to back (latency p50/p95);
cN: N clients at once (throughput). The machine may be shared: each phase runs the three paths interleaved
in short slices (c1 0.5 s, cN 1 s, their order rotating), so a slowdown falls on all alike; --rounds repeats
the phases and the summary gives median ratios with their spread. CPU ms per run at cN (from /proc) of each
path's process tree: server (weft or langgraph dev), postgres, Python worker. At c1 it also times the graph
alone in this process (ainvoke with LangGraph's InMemorySaver, no HTTP) and reads the commit coordinator's
timing of the worker's commits from weft dev's /metrics, for the closing note on where the time goes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "sdk-tests" / "py"))
sys.path.insert(0, str(REPO / "sdk-tests" / "py" / "fixtures" / "pybench"))

import httpx  # noqa: E402

from pyservers import Servers, project_copy, start_langgraph_dev, start_weft_dev  # noqa: E402

WANT = {"foo": "b", "bar": ["a", "b"]}
TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")


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


# --- the paths


class Target:
    def __init__(self, name: str, url: str, graph: str, roots: list[int], split: bool = True):
        self.name, self.url, self.graph, self.roots, self.split = name, url, graph, roots, split
        self.client = httpx.AsyncClient(base_url=url, timeout=60, limits=httpx.Limits(max_connections=64, max_keepalive_connections=64))

    async def once(self, stateless: bool, acc: "Acc | None" = None) -> float:
        path = "/runs/wait"
        if not stateless:
            r = await self.client.post("/threads", json={})
            r.raise_for_status()
            path = f"/threads/{r.json()['thread_id']}/runs/wait"
        t0 = time.perf_counter()
        r = await self.client.post(path, json={"assistant_id": self.graph, "input": {}})
        ms = (time.perf_counter() - t0) * 1000
        if r.status_code != 200 or r.json() != WANT:
            raise RuntimeError(f"{self.name}: POST {path}: {r.status_code} {r.text[:300]}")
        if acc is not None:  # the run's id, to pair the latency with what the server logged of the run
            acc.by_run[r.headers.get("content-location", "").rsplit("/", 1)[-1]] = ms
        return ms


class Acc:
    def __init__(self):
        self.runs, self.secs, self.lat, self.cpu = 0, 0.0, [], {}
        self.by_run: dict[str, float] = {}

    def result(self) -> dict:
        lat = sorted(self.lat)
        q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] if lat else float("nan")  # noqa: E731
        return {"runs": self.runs, "per_s": self.runs / self.secs if self.secs else 0, "p50": q(0.5), "p95": q(0.95),
                "cpu": {k: v / self.runs for k, v in self.cpu.items()} if self.runs else {}}


async def run_slice(acc: Acc, path: Target, conc: int, secs: float, stateless: bool) -> None:
    before, c0 = tree_cpu(path.roots, proc_table(), path.split), self_cpu()
    end = time.perf_counter() + secs
    start = time.perf_counter()
    runs = 0

    async def client():
        nonlocal runs
        while time.perf_counter() < end:
            acc.lat.append(await path.once(stateless, acc if path.name == "langgraph" else None))
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


async def commit_totals(url: str) -> dict[str, tuple[float, float]]:
    """weft_commit_duration_seconds sum and count by source, from /metrics."""
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


async def phase(paths: list[Target], conc: int, secs: float, slice_s: float, stateless: bool, alone: bool, worker_url: str,
                lg_log: str | None = None):
    accs = {p.name: Acc() for p in paths}
    lone = Acc()
    n = max(1, round(secs / slice_s))
    commits0 = await commit_totals(worker_url) if alone else {}
    log0 = os.path.getsize(lg_log) if lg_log else 0
    for i in range(n):
        order = paths[i % len(paths):] + paths[: i % len(paths)]
        for p in order:
            await run_slice(accs[p.name], p, conc, secs / n, stateless)
        if alone:
            await graph_alone(lone, secs / n / 2)
    out = {name: a.result() for name, a in accs.items()}
    if lg_log:
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
        if c1 > c0:
            out["commits"] = {"ms": (s1 - s0) * 1000 / (c1 - c0), "per_run": (c1 - c0) / max(1, accs["worker"].runs)}
    return out


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def spread(xs):
    return f"{min(xs):.2f}-{max(xs):.2f}" if xs else "-"


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=5, help="seconds per path, mode and phase (default 5)")
    ap.add_argument("--warmup", type=float, default=10, help="seconds of warm-up at c4, per mode, paths interleaved (default 10)")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--jobs", type=int, default=32,
                    help="runs at once per server: the Python worker's --concurrency and langgraph dev's --n-jobs-per-worker (default 32)")
    ap.add_argument("--modes", default="stateless,thread")
    args = ap.parse_args()
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]

    global ALONE
    from graphs import foo_bar_py  # the fixture project's graph, imported here for the alone timing
    from langgraph.checkpoint.memory import InMemorySaver

    ALONE = foo_bar_py.copy(update={"checkpointer": InMemorySaver()})

    servers = Servers()
    lgdev = None
    paths: list[Target] = []
    rounds = []
    try:
        tmp = tempfile.mkdtemp(prefix="bench-", dir=servers.root)
        project = project_copy(tmp)
        inproc = servers.start()
        dev = start_weft_dev(servers, project, env={"WEFT_WORKER_CONCURRENCY": str(args.jobs), "WEFT_CACHE_DIR": os.path.join(tmp, "cache")})
        lgdev = start_langgraph_dev(project, tmp, jobs=args.jobs)
        paths = [Target("worker", dev.url, "foo_bar_py", [dev.proc.pid, *postmasters(dev.env["WEFT_DATA_DIR"])]),
                 Target("in-process", inproc.url, "foo_bar", [inproc.proc.pid, *postmasters(inproc.env["WEFT_DATA_DIR"])]),
                 Target("langgraph", lgdev.url, "foo_bar_py", [lgdev.proc.pid], split=False)]
        for mode in modes:
            await phase(paths, 4, args.warmup, 1.0, mode == "stateless", False, dev.url)
        for _ in range(10 if args.warmup else 0):
            await graph_alone(Acc(), 0.2)
        for r in range(args.rounds):
            res = {}
            for mode in modes:
                c1 = await phase(paths, 1, args.duration, 0.5, mode == "stateless", True, dev.url, lgdev.log_path)
                cn = await phase(paths, args.concurrency, args.duration, 1.0, mode == "stateless", False, dev.url)
                res[mode] = {"c1": c1, "cn": cn}
            rounds.append(res)
            print(f"round {r + 1} of {args.rounds} done", file=sys.stderr)
    finally:
        for p in paths:
            await p.client.aclose()
        if lgdev:
            lgdev.stop()
        servers.stop_all()

    report(args, modes, rounds)


def report(args, modes, rounds) -> None:
    C = args.concurrency
    print(f"""What is measured: a foo_bar-shaped graph (START -> node_a -> node_b -> END; foo the last value, bar an appended
list), every answer checked, through three servers on this machine (loopback), each started by the bench:
  worker:     foo_bar_py (sdk-tests/py/fixtures/pybench/graphs.py) on `weft dev`: Weft's Python worker (Python langgraph,
              --concurrency {args.jobs}) claims each run and commits every checkpoint to Weft's PostgreSQL
  in-process: Weft's built-in foo_bar on plain `weft` (its own PostgreSQL), executed by the server's Go pool
  langgraph:  the same foo_bar_py on `langgraph dev` (langgraph-cli[inmem], in memory, --n-jobs-per-worker {args.jobs}, offline)
stateless: POST /runs/wait (no thread); thread: POST /threads/{{id}}/runs/wait on a fresh thread created before the clock
starts. c1: one client back to back (latency); c{C}: {C} clients at once (throughput). {args.duration:g} s per path, mode and
phase, the paths interleaved in slices (c1 0.5 s, c{C} 1 s, order rotating), after {args.warmup:g} s of warm-up per mode at c4;
{args.rounds} round(s). The client is this Python process (httpx). CPU ms per run at c{C} (/proc) of each path's process tree:
server / postgres / Python worker, and this client. Graph alone: foo_bar_py.ainvoke in this process with InMemorySaver.
""")
    cols = ["server", "postgres", "worker", "client"]
    print(f"{'round':>5}  {'mode':<9} {'path':<11} {'c1 p50 ms':>10} {'c1 p95 ms':>10} {'c1 runs/s':>10} "
          f"{'c' + str(C) + ' runs/s':>11} {'c' + str(C) + ' p50 ms':>11}  CPU ms/run: {' / '.join(cols)}")
    for i, res in enumerate(rounds, 1):
        for mode in modes:
            for name in ("worker", "in-process", "langgraph"):
                c1, cn = res[mode]["c1"][name], res[mode]["cn"][name]
                cpu = " / ".join(f"{cn['cpu'][k]:.1f}" if k in cn["cpu"] else "-" for k in cols)
                print(f"{i:>5}  {mode:<9} {name:<11} {c1['p50']:>10.1f} {c1['p95']:>10.1f} {c1['per_s']:>10.1f} "
                      f"{cn['per_s']:>11.1f} {cn['p50']:>11.1f}  {cpu}")
            print(f"{i:>5}  {mode:<9} {'alone':<11} {res[mode]['c1']['alone']['p50']:>10.2f}  (graph alone, this process)")

    print(f"\nRatios, median of {len(rounds)} round(s) [min-max]  (issue 29 target: worker/langgraph c1 p50 <= 1.00x, "
          f"c{C} throughput >= 1.00x)")
    notes = []
    for mode in modes:
        get = lambda ph, name, k: [r[mode][ph][name][k] for r in rounds]  # noqa: E731
        w50, l50, i50 = get("c1", "worker", "p50"), get("c1", "langgraph", "p50"), get("c1", "in-process", "p50")
        wt, lt, it = get("cn", "worker", "per_s"), get("cn", "langgraph", "per_s"), get("cn", "in-process", "per_s")
        r50 = [a / b for a, b in zip(w50, l50)]
        rt = [a / b for a, b in zip(wt, lt)]
        ri50 = [a / b for a, b in zip(w50, i50)]
        rit = [a / b for a, b in zip(wt, it)]
        lq = [r[mode]["c1"]["langgraph"].get("queue_ms") for r in rounds]
        le = [r[mode]["c1"]["langgraph"].get("exec_ms") for r in rounds]
        lnq = [r[mode]["c1"]["langgraph"].get("p50_no_queue") for r in rounds]
        rnq = [a / b for a, b in zip(w50, lnq) if b]
        ok = lambda good: "PASS" if good else "MISS"  # noqa: E731
        print(f"  {mode:<9} worker/langgraph:  c1 p50 {med(r50):.2f}x [{spread(r50)}] ({ok(med(r50) <= 1.0)}), "
              f"c{C} throughput {med(rt):.2f}x [{spread(rt)}] ({ok(med(rt) >= 1.0)})")
        if rnq:
            print(f"  {mode:<9} worker/langgraph without its queue wait (each run's latency minus the run_wait_time_ms "
                  f"langgraph dev logged for it): c1 p50 {med(rnq):.2f}x [{spread(rnq)}]")
        print(f"  {mode:<9} worker/in-process: c1 p50 {med(ri50):.2f}x [{spread(ri50)}], c{C} throughput {med(rit):.2f}x [{spread(rit)}]")
        alone = med([r[mode]["c1"]["alone"]["p50"] for r in rounds])
        commits = [r[mode]["c1"]["commits"] for r in rounds if "commits" in r[mode]["c1"]]
        cm = f"; the worker's commits in the commit coordinator {med([c['ms'] for c in commits]):.2f} ms each, " \
             f"{med([c['per_run'] for c in commits]):.2f} a run (/metrics)" if commits else ""
        wcpu = {k: med([r[mode]["cn"]["worker"]["cpu"].get(k, 0) for r in rounds]) for k in cols}
        lcpu = med([r[mode]["cn"]["langgraph"]["cpu"].get("server", 0) for r in rounds])
        lgq = f" (medians a run, from its log: {med([q for q in lq if q is not None]):.0f} ms waiting in its queue, " \
              f"{med([e for e in le if e is not None]):.1f} ms running; without the wait its p50 is {med([x for x in lnq if x]):.1f} ms)" \
            if any(q is not None for q in lq) else ""
        notes.append(f"  {mode}: c1 p50 worker {med(w50):.1f} ms, in-process {med(i50):.1f} ms, langgraph dev {med(l50):.1f} ms{lgq}, "
                     f"the graph alone {alone:.2f} ms{cm}. At c{C}, CPU a run: worker path server {wcpu['server']:.1f} + postgres "
                     f"{wcpu['postgres']:.1f} + Python worker {wcpu['worker']:.1f} ms; langgraph dev {lcpu:.1f} ms.")
    print("\nWhere the time goes (medians):")
    print("\n".join(notes))
    print("  The worker's c1 p50 minus in-process minus the graph alone is the worker path's own cost: the claim's answer, "
          "the worker's code (Python langgraph around the graph, serialising checkpoints), the commit's HTTP request and "
          "its transaction; langgraph dev's p50 minus the graph alone is its API and in-memory queue.")
    print("  langgraph dev's latency is its queue's: langgraph-runtime-inmem's Runs.next, when its last poll found no run,\n"
          "  sleeps 0.5 s and then takes only runs created before the poll began, so a run waits 0.5-1 s for a worker\n"
          "  whatever the graph, and its throughput is about the clients in flight per second. The plain worker/langgraph\n"
          "  ratios measure that poll; the ratio without its queue wait compares the two servers' work on a run (HTTP,\n"
          "  run bookkeeping, the graph, persisting: in memory there, every step in PostgreSQL here).")


ALONE = None

if __name__ == "__main__":
    asyncio.run(main())
