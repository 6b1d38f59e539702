"""The cost of a Python project's auth.path per request: GET /threads/{id} at
concurrency 1 and 16 against `weft dev` serving sdk-tests/py/fixtures/pyauth
with and without its auth.path (a langgraph_sdk.Auth: its authenticate and
global handler, one call to the Python worker per request), in one run.
Prints requests/s and mean latency of each and the ratios (with / without).
The mirror of worker-js/bench/auth.mjs.

    python worker-py/bench/auth.py [--weft bin/weft] [--seconds 5] [--python-client]

The load runs in Node (fetch, as worker-js/bench/auth.mjs) when node is on
PATH, else in httpx (which caps the rate at about 1,000 requests/s).

Run with an interpreter that has langgraph, langgraph-sdk and httpx
(sdk-tests/py/requirements.txt); it is also the project's Python.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
FIXTURE = ROOT / "sdk-tests" / "py" / "fixtures" / "pyauth"
HEADERS = {"Authorization": "Bearer token-alice"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_dev(weft: str, with_auth: bool, tmp: Path):
    project = tmp / ("with" if with_auth else "without")
    shutil.copytree(FIXTURE, project, ignore=shutil.ignore_patterns("__pycache__", ".langgraph_api"))
    cfg = json.loads((project / "langgraph.json").read_text())
    if not with_auth:
        del cfg["auth"]
    (project / "langgraph.json").write_text(json.dumps(cfg))
    port = free_port()
    env = {**os.environ, "WEFT_ADDR": f"127.0.0.1:{port}", "WEFT_DATA_DIR": str(project / ".weft"),
           "WEFT_LOG_LEVEL": "warn", "WEFT_PYTHON": sys.executable, "WEFT_CACHE_DIR": str(tmp / "cache")}
    proc = subprocess.Popen([weft, "dev", "--config", str(project / "langgraph.json")], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            r = httpx.post(url + "/threads", json={}, headers=HEADERS, timeout=5)
            if r.status_code == 200:
                return proc, url, r.json()["thread_id"]
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    stop(proc)
    raise RuntimeError(f"weft dev on {project} did not serve within 120 s")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


async def load(url: str, thread_id: str, concurrency: int, seconds: float) -> tuple[float, float]:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, headers=HEADERS, limits=limits, timeout=30) as client:
        end = time.monotonic() + seconds
        n, total = 0, 0.0

        async def one():
            nonlocal n, total
            while time.monotonic() < end:
                t0 = time.perf_counter()
                r = await client.get(f"/threads/{thread_id}")
                if r.status_code != 200:
                    raise RuntimeError(f"GET /threads/{{id}}: {r.status_code} {r.text}")
                total += time.perf_counter() - t0
                n += 1

        await asyncio.gather(*(one() for _ in range(concurrency)))
    return n / seconds, total / n * 1000


# The load in Node (its fetch keeps up with the server; Python's httpx is the
# bottleneck at about 1,000 requests/s on a shared core), when node is on PATH.
NODE_LOAD = r"""
const [url, tid, c, seconds] = process.argv.slice(1);
const headers = { authorization: "Bearer token-alice" };
const end = Date.now() + Number(seconds) * 1000;
let n = 0, total = 0;
const one = async () => {
  while (Date.now() < end) {
    const t0 = performance.now();
    const r = await fetch(`${url}/threads/${tid}`, { headers });
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`GET /threads/{id}: ${r.status}`);
    total += performance.now() - t0; n++;
  }
};
await Promise.all(Array.from({ length: Number(c) }, one));
console.log(JSON.stringify([n / Number(seconds), total / n]));
"""


def node_load(url: str, thread_id: str, concurrency: int, seconds: float) -> tuple[float, float]:
    out = subprocess.run(["node", "--input-type=module", "-e", NODE_LOAD, url, thread_id, str(concurrency), str(seconds)],
                         capture_output=True, text=True, check=True, timeout=seconds + 60)
    rps, ms = json.loads(out.stdout)
    return rps, ms


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--weft", default=str(ROOT / "bin" / "weft"))
    p.add_argument("--seconds", type=float, default=5)
    p.add_argument("--python-client", action="store_true", help="load with httpx even when node is on PATH")
    args = p.parse_args()
    results: dict[str, dict[int, tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="weft-bench-pyauth-") as d:
        for name, with_auth in (("without auth.path", False), ("with auth.path", True)):
            proc, url, tid = start_dev(args.weft, with_auth, Path(d))
            try:
                if shutil.which("node") and not args.python_client:
                    node_load(url, tid, 4, 1)  # warm up
                    results[name] = {c: node_load(url, tid, c, args.seconds) for c in (1, 16)}
                else:
                    asyncio.run(load(url, tid, 4, 1))
                    results[name] = {c: asyncio.run(load(url, tid, c, args.seconds)) for c in (1, 16)}
            finally:
                stop(proc)
    for name, by_c in results.items():
        for c, (rps, ms) in by_c.items():
            print(f"{name:18s} c{c:<3d} {rps:8.0f} req/s  {ms:7.2f} ms mean")
    for c in (1, 16):
        w, wo = results["with auth.path"][c], results["without auth.path"][c]
        print(f"ratio c{c:<3d} throughput {w[0] / wo[0]:.2f}  latency {w[1] / wo[1]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
