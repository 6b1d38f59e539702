"""The report of bench.py: everything it prints once the servers are stopped, from the figures it measured.

  report(...)       what was measured (the servers, the settings, the machine's load), each round's detail, and
                    the sections below; with --json also every raw figure to a file
  report_rounds     the table (medians over rounds, min-max), the ratios Weft / the other server, in process
                    beside the baseline, and the CPU ms per run of each server's process tree
  report_long       --long-chat: p50 of the early and late turns, of each block of turns, and the reads at two points
  report_time       where the time goes: langgraph dev's queue wait, the graph alone, the worker's commits
  report_issue39    issue 39's table and each of its targets: the measured ratio, the target, met or not
The statistics (pct, med, window, ratios) and the servers' labels are here too; bench.py measures with them.
PostgreSQL's count (--pg-stats) is printed by pgstats.report.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import platform
import statistics

import pgstats
from longchat import HISTORY_AT, TEXT_CHARS

LABEL = {"langgraph": "langgraph dev", "aegra": "Aegra", "worker": "Weft, Python worker", "in-process": "Weft, in process",
         "baseline": "Weft, in process @ baseline", "library": "LangGraph library alone"}


def pct(xs, p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")


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
            cpu = cn["cpu"] if cn else {}
            out.setdefault(f"{mode} cpu", {})[name] = cpu["server"] + cpu.get("postgres", 0) if cpu else None
    ch = res["chat"]
    for name in names:
        out.setdefault("chat 30", {})[name] = window(ch["lat"][name], 1, w30)
        out.setdefault("chat all", {})[name] = window(ch["lat"][name], 1, args.turns)
        for conc in (1, C):
            for kind, key in (("history", conc), ("state", f"state {conc}")):
                h = ch["hist"].get(key, {}).get(name)
                out.setdefault(f"{kind} c{conc} req/s", {})[name] = h["per_s"] if h else None
                out.setdefault(f"{kind} c{conc} p50", {})[name] = h["p50"] if h else None
    return out


def ratio_of(xs, ys) -> float | None:
    """The median over rounds of each round's x / y."""
    return med([a / b if a is not None and b else None for a, b in zip(xs, ys)])


def fx(r: float | None, n_rounds: int = 1, rs=None) -> str:
    if r is None:
        return "n/a"
    return f"{r:.2f}x" + (f" ({spread(rs)})" if rs and n_rounds > 1 else "")


def report(args, modes, names, rounds, long, pg, load0, load1, elapsed) -> None:
    C, R = args.concurrency, len(rounds)
    w30 = min(HISTORY_AT, args.turns)
    hist_msgs = 2 * w30
    now = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    base = f"\n  Weft, in process @ baseline: plain weft from {args.baseline_bin}, run exactly like Weft, in process" \
        if "baseline" in names else ""
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
  Weft, in process:     plain weft, the built-in foo_bar and echo_chat run by the server's Go pool (its own PostgreSQL){base}
foo_bar: START -> node_a -> node_b -> END. stateless: POST /runs/wait (no thread; Aegra 0.6.0 has none: n/a); thread: POST
/threads/{{id}}/runs/wait on a fresh thread created before the clock starts. c1: one client back to back (latency p50);
c{C}: {C} clients at once (runs/s). {args.duration:g} s per server, mode and phase, interleaved in slices (c1 0.5 s, c{C} 1 s,
order rotating), after {args.warmup:g} s of warm-up per mode at c4. Chat: one thread of echo_chat per server and round,
{args.turns} turns of POST /threads/{{id}}/runs/wait with one human message of {TEXT_CHARS} random characters each (the same
text on every server), turn by turn across the servers; p50 of each turn's latency over turns 1-{w30}{f" and 1-{args.turns}" if args.turns > w30 else ""}.
Reads: history(10), POST /threads/{{id}}/history {{"limit": 10}}, and state, GET /threads/{{id}}/state, on that chat when it
holds {hist_msgs} messages (after turn {w30}), {args.duration:g} s of each per server at c1{f" and c{C}" if args.history_c16 else ""}, interleaved. {R} round(s); a
cell is the median over rounds (min-max in brackets when more than one). The client is this Python process (httpx, asyncio).
CPU ms per run at c{C} (/proc) of each server's process tree: server / its PostgreSQL / Python worker, and this client.""")
    if long:
        t1, t2 = max(1, args.long_turns // 10), args.long_turns
        print(f"Long chat (--long-chat, after the rounds): one more echo_chat thread per server, {args.long_turns} turns the same way,\n"
              f"and LangGraph's library alone taking the same turns among them (echo_chat with InMemorySaver, `invoke` timed in a\n"
              f"subprocess); after turns {t1} and {t2}, {args.long_reads} rounds of state, history(10) and GET /threads/{{id}} per server, c1.")
    if pg:
        print(f"PostgreSQL's count (--pg-stats {args.pg_stats}, after the rounds): see its section below.")
    print()
    # per-round detail
    cols = ["server", "postgres", "worker", "client"]
    W = max(20, *(len(LABEL[n]) for n in names))
    if rounds:
        print(f"{'round':>5}  {'mode':<9} {'server':<{W}} {'c1 p50 ms':>10} {'c1 p95 ms':>10} {'c1 runs/s':>10} "
              f"{'c' + str(C) + ' runs/s':>11} {'c' + str(C) + ' p50 ms':>11}  CPU ms/run at c{C}: {' / '.join(cols)}")
    for i, res in enumerate(rounds, 1):
        for mode in modes:
            for name in names:
                c1, cn = res[mode]["c1"].get(name), res[mode]["cn"].get(name)
                if not c1:
                    print(f"{i:>5}  {mode:<9} {LABEL[name]:<{W}} {'n/a':>10}")
                    continue
                cpu = " / ".join(f"{cn['cpu'][k]:.1f}" if k in cn["cpu"] else "-" for k in cols)
                print(f"{i:>5}  {mode:<9} {LABEL[name]:<{W}} {c1['p50']:>10.1f} {c1['p95']:>10.1f} {c1['per_s']:>10.1f} "
                      f"{cn['per_s']:>11.1f} {cn['p50']:>11.1f}  {cpu}")
            if "alone" in res[mode]["c1"]:
                print(f"{i:>5}  {mode:<9} {'graph alone':<{W}} {res[mode]['c1']['alone']['p50']:>10.2f}  (foo_bar_py.ainvoke, this process)")
        ch = res["chat"]
        for name in names:
            lat = ch["lat"][name]
            h = "; ".join(f"{kind} c{c}: {ch['hist'][key][name]['per_s']:.1f} req/s, p50 {ch['hist'][key][name]['p50']:.1f} ms"
                          for c in ch["hist"] if isinstance(c, int)
                          for kind, key in (("history", c), ("state", f"state {c}")) if key in ch["hist"])
            if "bytes" in ch["hist"]:
                h += f"; history(10) answer {ch['hist']['bytes'][name]:,} bytes"
            w = f"1-{w30} {window(lat, 1, w30):.1f} ms" + (f", 1-{args.turns} {window(lat, 1, args.turns):.1f} ms" if args.turns > w30 else "")
            print(f"{i:>5}  {'chat':<9} {LABEL[name]:<{W}} turns p50 {w}, p95 {pct(lat, 0.95):.1f} ms, last turn {lat[-1]:.1f} ms; {h}")

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "names": names, "rounds": rounds, "long": long, "pg_stats": pg}, f)
        print(f"\n(raw figures: {args.json})")
    per_round = [metrics(args, modes, names, res) for res in rounds]
    get = lambda key, name: [m[key].get(name) for m in per_round]  # noqa: E731
    if rounds:
        report_rounds(args, modes, names, rounds, get)
    if pg:
        pgstats.report(pg, [n for n in names if n in pg], LABEL, args.pg_stats)
    if long:
        report_long(args, names, long)
    if rounds:
        report_time(args, modes, names, rounds)
    report_issue39(args, modes, names, rounds, long, get)


def report_rounds(args, modes, names, rounds, get) -> None:
    C, R = args.concurrency, len(rounds)
    w30 = min(HISTORY_AT, args.turns)
    hist_msgs = 2 * w30
    rows = []
    for mode in modes:
        what = "stateless `runs/wait`" if mode == "stateless" else "`runs/wait` on a fresh thread"
        rows.append((f"{what}, c1 p50 (ms)", f"{mode} c1 p50", ".1f", "lat"))
        rows.append((f"{what}, c{C} runs/s", f"{mode} c{C} runs/s", ".1f", "thr"))
    if args.turns > w30:
        rows.append((f"a chat turn on a thread, c1 p50 (ms), turns 1-{w30} / 1-{args.turns}", ("chat 30", "chat all"), ".1f", "lat"))
    else:
        rows.append((f"a chat turn on a thread, c1 p50 (ms), turns 1-{w30}", "chat 30", ".1f", "lat"))
    for conc in ([1, C] if args.history_c16 else [1]):
        rows.append((f"`history(10)` of a {hist_msgs}-message chat, c{conc} req/s", f"history c{conc} req/s", ".1f", "thr"))
        rows.append((f"`state` of a {hist_msgs}-message chat, c{conc} req/s", f"state c{conc} req/s", ".1f", "thr"))

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
                    cells.append(fx(med(rs), R, rs))
                print(f"| {lab} ({'latency' if kind == 'lat' else 'throughput'}) | " + " | ".join(cells) + " |")

    if "baseline" in names and "in-process" in names:
        print(f"\n{LABEL['in-process']} beside {LABEL['baseline']} ({args.baseline_bin}): medians over rounds, the ratio "
              "in process / baseline of each round's figures (median). Issue 39's target: server + PostgreSQL CPU per run "
              "at most 1/3 of the baseline's.\n")
        print(f"| | {LABEL['in-process']} | {LABEL['baseline']} | in process / baseline |")
        print("|---|---|---|---|")
        brows = []
        for mode in modes:
            what = "stateless runs" if mode == "stateless" else "runs on a fresh thread"
            brows += [(f"{what}, c{C} runs/s (throughput)", f"{mode} c{C} runs/s", ".1f"),
                      (f"{what}, c1 p50 ms", f"{mode} c1 p50", ".1f"),
                      (f"{what}, server + PostgreSQL CPU ms per run at c{C}", f"{mode} cpu", ".2f")]
        brows += [(f"chat turn, c1 p50 ms, turns 1-{w30}", "chat 30", ".1f"),
                  (f"`history(10)` of a {hist_msgs}-message chat, c1 req/s", "history c1 req/s", ".1f"),
                  (f"`state` of a {hist_msgs}-message chat, c1 req/s", "state c1 req/s", ".1f")]
        for label, key, f in brows:
            rs = [a / b if a is not None and b else None for a, b in zip(get(key, "in-process"), get(key, "baseline"))]
            print(f"| {label} | {cell(get(key, 'in-process'), f, R)} | {cell(get(key, 'baseline'), f, R)} | {fx(med(rs), R, rs)} |")

    cols = ["server", "postgres", "worker", "client"]
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


def report_time(args, modes, names, rounds) -> None:
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


def long_windows(n: int) -> tuple[int, int, int, int]:
    """The long chat's early and late windows: turns 11-100 and the last 100, or halves of a short chat."""
    a, b = (11, 100) if n >= 200 else (1, n // 2)
    c, d = (n - 99, n) if n >= 200 else (n // 2 + 1, n)
    return a, b, c, d


def long_growth(long, name: str, n: int) -> float | None:
    a, b, c, d = long_windows(n)
    lat = long["lg_no_queue"] if name == "langgraph-no-queue" else long["lat"].get(name)
    e, l_ = (window(lat, a, b), window(lat, c, d)) if lat else (None, None)
    return l_ / e if e and l_ else None


READS = (("state", "state"), ("history", "history(10)"), ("thread", "GET /threads/{id}"))


def report_long(args, names, long) -> None:
    n = args.long_turns
    a, b, c, d = long_windows(n)
    series = [(LABEL[name], long["lat"][name]) for name in [*names, "library"] if name in long["lat"]]
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
    reads = long.get("reads") or {}
    if len(reads) == 2:
        m1, m2 = sorted(reads)
        print(f"\nReads of the long chat's thread, c1, p50 of {args.long_reads} requests each (ms), when it holds {m1} messages "
              f"(after turn {m1 // 2}) and {m2} (after turn {m2 // 2}), and the ratio {m2} / {m1} (issue 39: at most 1.2x):\n")
        print("| | " + " | ".join(f"{what} @{m1} | @{m2} | {m2}/{m1}" for _, what in READS) + " |")
        print("|---|" + "---|---|---|" * len(READS))
        for name in names:
            r1, r2 = reads[m1].get(name), reads[m2].get(name)
            if r1 and r2:
                print(f"| {LABEL[name]} | " + " | ".join(f"{r1[k]:.1f} | {r2[k]:.1f} | {r2[k] / r1[k]:.2f}x" for k, _ in READS) + " |")


def report_issue39(args, modes, names, rounds, long, get) -> None:
    """Issue 39's table and each of its targets: the measured ratio, the target, met or not."""
    C, R = args.concurrency, len(rounds)
    w30 = min(HISTORY_AT, args.turns)
    hist_msgs = 2 * w30
    has = lambda *ns: all(n in names for n in ns)  # noqa: E731
    if rounds:
        print(f"\nIssue 39's table (medians over {R} round(s)). Aegra 0.6.0 has no stateless runs: in the stateless rows its "
              "cells (marked *) are its runs on a fresh thread.\n")
        print("| | " + " | ".join(LABEL[n] for n in names) + " |")
        print("|---|" + "---|" * len(names))

        def row(label, key, f, unit, aegra_key=None):
            cells = []
            for n in names:
                k = aegra_key if n == "aegra" and aegra_key else key
                m = med(get(k, n))
                cells.append(f"{m:{f}}{unit}" + (" *" if n == "aegra" and aegra_key else "") if m is not None else "n/a")
            print(f"| {label} | " + " | ".join(cells) + " |")

        if "stateless" in modes:
            th = "thread" in modes
            row("stateless `runs/wait`, c1 p50", "stateless c1 p50", ".1f", " ms", "thread c1 p50" if th else None)
            row(f"stateless `runs/wait`, c{C}", f"stateless c{C} runs/s", ".1f", " /s", f"thread c{C} runs/s" if th else None)
        turns = f"over {w30} turns" + (f" / over {args.turns} turns" if args.turns > w30 else "")
        cells = []
        for n in names:
            v = [med(get("chat 30", n))] + ([med(get("chat all", n))] if args.turns > w30 else [])
            cells.append(" / ".join(f"{x:.1f}" if x is not None else "n/a" for x in v) + " ms")
        print(f"| a chat turn on a thread, c1 p50, {turns} | " + " | ".join(cells) + " |")
        for conc in ([1, C] if args.history_c16 else [1]):
            row(f"`history(10)` of a {hist_msgs}-message chat, c{conc}", f"history c{conc} req/s", ".1f", " /s")
            row(f"`state` of a {hist_msgs}-message chat, c{conc}", f"state c{conc} req/s", ".1f", " /s")

    targets = []  # (label, measured text, value, target text, bound, at most?)

    def ratio(key_a, a, key_b, b):
        if not rounds or not has(a, b):
            return None
        return ratio_of(get(key_a, a), get(key_b, b))

    stl, thr = f"stateless c{C} runs/s", f"thread c{C} runs/s"
    if rounds and "stateless" in modes:
        for w, lg_min, ae_min in (("in-process", 5, 15), ("worker", 1.5, 4)):
            if w not in names:
                continue
            num = "1" if w == "in-process" else "2"
            targets.append((f"{num}. {LABEL[w]}, stateless c{C} / langgraph dev", ratio(stl, w, stl, "langgraph"), f">= {lg_min}x", lg_min, False, ""))
            both = ratio(thr, w, thr, "aegra") if "thread" in modes else None
            targets.append((f"{num}. {LABEL[w]}, stateless c{C} / Aegra* (fresh thread)",
                            ratio(stl, w, thr, "aegra") if "thread" in modes else None, f">= {ae_min}x", ae_min, False,
                            f" (fresh thread / fresh thread {fx(both)})" if both is not None else ""))
            if w == "worker":
                both = ratio("thread c1 p50", w, "thread c1 p50", "aegra") if "thread" in modes else None
                targets.append((f"2. {LABEL[w]}, stateless c1 p50 / Aegra* (fresh thread)",
                                ratio("stateless c1 p50", w, "thread c1 p50", "aegra") if "thread" in modes else None,
                                "<= 0.3x", 0.3, True, f" (fresh thread / fresh thread {fx(both)})" if both is not None else ""))
            if w == "in-process":
                for mode in modes:
                    what = "stateless run" if mode == "stateless" else "run on a fresh thread"
                    targets.append((f"1. {LABEL[w]}, server + PostgreSQL CPU per {what} at c{C} / @ baseline",
                                    ratio(f"{mode} cpu", w, f"{mode} cpu", "baseline"), "<= 0.33x", 1 / 3, True, ""))
    if long:
        n = args.long_turns
        a, b, c, d = long_windows(n)
        if "in-process" in names:
            targets.append((f"3. {LABEL['in-process']}, long chat p50 turns {c}-{d} / {a}-{b}", long_growth(long, "in-process", n),
                            "<= 1.2x", 1.2, True, ""))
        lib = long_growth(long, "library", n)
        if "worker" in names and lib is not None:
            g = long_growth(long, "worker", n)
            targets.append((f"3. {LABEL['worker']}, long chat growth (p50 turns {c}-{d} / {a}-{b}: "
                            + (f"{g:.2f}x" if g is not None else "n/a") + f") / LangGraph library alone's ({lib:.2f}x)",
                            g / lib if g is not None else None, "<= 1.0x", 1.0, True, ""))
        reads = long.get("reads") or {}
        if len(reads) == 2:
            m1, m2 = sorted(reads)
            for w in ("worker", "in-process"):
                r1, r2 = reads[m1].get(w), reads[m2].get(w)
                if r1 and r2:
                    rs = {k: r2[k] / r1[k] for k, _ in READS}
                    targets.append((f"3. {LABEL[w]}, reads at message {m2} / {m1}, the worst of "
                                    + ", ".join(f"{what} {rs[k]:.2f}x" for k, what in READS), max(rs.values()),
                                    "<= 1.2x", 1.2, True, ""))
    if rounds:
        for conc in ([1, C] if args.history_c16 else [1]):
            for kind in ("history", "state"):
                what = "history(10)" if kind == "history" else "state"
                targets.append((f"4. {LABEL['worker']}, {what} of the {hist_msgs}-message chat c{conc} / langgraph dev",
                                ratio(f"{kind} c{conc} req/s", "worker", f"{kind} c{conc} req/s", "langgraph"),
                                ">= 2x", 2, False, ""))
    if not targets:
        return
    print("\nIssue 39's targets, each a ratio of figures of this run (the median of each round's ratio; * Aegra 0.6.0 has no "
          "stateless runs: its runs on a fresh thread instead). Not measured here: the JS worker's targets.\n")
    print("| target | measured | target | |")
    print("|---|---|---|---|")
    for label, v, want, bound, at_most, note in targets:
        if v is None:
            verdict = "n/a (not run)"
        else:
            verdict = "met" if (v <= bound if at_most else v >= bound) else "not met"
        print(f"| {label} | {fx(v)}{note} | {want} | {verdict} |")
