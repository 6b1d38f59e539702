"""The four-server bench (worker-py/bench/bench.py) works: one very short run of every path but Aegra.

Benchmarks are not timed tests: this proves the bench runs, not its figures. It runs bench.py as a
subprocess, as `make bench-servers` does, with `--quick` and the shortest settings that still go
through every phase: langgraph dev, weft dev (the Python worker), plain weft and plain weft again as
the baseline (the same binary: --baseline-bin), the stateless and thread phases, the chat with its
reads, --pg-stats (PostgreSQL's counters, which take about 30 s of waiting: see pgstats.py) and
--long-chat with LangGraph's library alone and the reads at both points. Aegra is left out: its
virtualenv (worker-py/bench/aegra-requirements.txt) is not part of the test environment.

The binary is the one every test here uses (conftest's weft_binary: WEFT_BIN, else built once).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from conftest import REPO_ROOT, weft_binary

TIMEOUT = 240
ARGS = ["--quick", "--paths", "langgraph,worker,in-process", "--rounds", "1", "--duration", "0.3", "--warmup", "0.3",
        "--turns", "3", "--long-chat", "--long-turns", "10", "--long-reads", "5", "--pg-stats", "10"]
# Rows of every section of the output, each one path of the bench.
ROWS = [
    "| stateless `runs/wait`, c1 p50 (ms) |",
    "| `runs/wait` on a fresh thread, c16 runs/s |",
    "| a chat turn on a thread, c1 p50 (ms), turns 1-3 |",
    "| `history(10)` of a 6-message chat, c1 req/s |",
    "| `state` of a 6-message chat, c1 req/s |",
    "| stateless runs, server + PostgreSQL CPU ms per run at c16 |",
    "| stateless | Weft, in process @ baseline |",
    "| statements (calls, nested included) / top-level |",
    "| WAL bytes: pg_stat_statements / the WAL position moved |",
    "Top 12 statements by time, Weft, Python worker",
    "| LangGraph library alone |",
    "| Weft, in process @ baseline | ",
    "| Weft, Python worker | ",
    "Issue 39's table",
    "| 1. Weft, in process, stateless c16 / langgraph dev |",
    "| 4. Weft, Python worker, state of the 6-message chat c1 / langgraph dev |",
]


def test_bench_runs_every_path_but_aegra(servers):
    binary = weft_binary(servers.root)
    env = {**os.environ, "WEFT_BIN": binary, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("WEFT_BASELINE_BIN", None)
    proc = subprocess.Popen([sys.executable, str(REPO_ROOT / "worker-py" / "bench" / "bench.py"), *ARGS,
                             "--baseline-bin", binary], cwd=REPO_ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)  # the bench stops its servers on the way out
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        raise AssertionError(f"bench.py still running after {TIMEOUT}s:\n{err[-4000:]}\n{out[-4000:]}") from None
    assert proc.returncode == 0, f"bench.py exited with {proc.returncode}:\n{err[-6000:]}\n{out[-3000:]}"
    missing = [row for row in ROWS if row not in out]
    assert not missing, f"rows missing from the bench's output: {missing}\n{out}"
