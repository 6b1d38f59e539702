"""Servers for the side-by-side suite, the long-chat test and the worker bench.

- `project_copy(dest)`: a copy of fixtures/pybench, the project every server
  here serves (`langgraph dev` writes `.langgraph_api/` into the project it
  serves, so it never serves the fixture directory itself).
- `start_langgraph_dev(project, root)`: LangGraph's own server (`langgraph
  dev`, in memory, from langgraph-cli[inmem]) on a free loopback port,
  offline: no browser, no reload, no tracing, no version check, no CLI
  analytics, no LangSmith keys in its environment. Stopped by its PID.
- `start_weft_dev(servers, project)`: `weft dev --config` on the same project
  (conftest's Servers: built binary, its own PostgreSQL; `data_dir` from
  `servers.data_dir()` when it must be prepared first), the Python worker
  run by this interpreter.
- `socket_dir(log)`: the managed PostgreSQL's socket directory, from a Weft
  server's log (user and database `weft`).

Importable without pytest running (the bench imports it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from conftest import Servers, Weft, free_port  # noqa: F401  (re-exported for the bench)

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "fixtures" / "pybench"
GRAPHS = ["echo_chat", "foo_bar_py", "ask", "memory"]
READY_TIMEOUT = 90
TERM_TIMEOUT = 20

# What keeps `langgraph dev` offline.
OFFLINE_ENV = {
    "LANGSMITH_TRACING": "false",
    "LANGSMITH_TRACING_V2": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
}
SECRET_ENV = ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "LANGGRAPH_CLOUD_LICENSE_KEY", "LANGSMITH_CONTROL_PLANE_API_KEY",
              "OPENAI_API_KEY", "ANTHROPIC_API_KEY")


def project_copy(dest: str | os.PathLike) -> Path:
    """Copies fixtures/pybench to dest/pybench and returns that directory."""
    out = Path(dest) / "pybench"
    shutil.copytree(PROJECT, out, ignore=shutil.ignore_patterns("__pycache__", ".langgraph_api"))
    return out


def _post(url: str, body: dict, timeout: float = 10, headers: dict | None = None):
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json", **(headers or {})})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def wait_registered(url: str, graphs=GRAPHS, timeout: float = 60, headers: dict | None = None) -> None:
    deadline = time.monotonic() + timeout
    found: set = set()
    while time.monotonic() < deadline:
        try:
            found = {a["graph_id"] for a in _post(url + "/assistants/search", {"limit": 100}, headers=headers)}
            if set(graphs) <= found:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"graphs {graphs} not registered within {timeout}s at {url} (found {sorted(found)})")


@dataclass
class LangGraphDev:
    """A running `langgraph dev`: its URL, process and log."""

    url: str
    proc: subprocess.Popen
    log_path: str

    def log(self) -> str:
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(TERM_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def langgraph_cli() -> str:
    """The `langgraph` CLI next to this interpreter (langgraph-cli[inmem])."""
    cli = Path(sys.executable).parent / "langgraph"
    if not cli.exists():
        raise RuntimeError(f"no {cli}: pip install the pinned langgraph-cli[inmem] (sdk-tests/py/requirements.txt)")
    return str(cli)


def start_langgraph_dev(project: Path, log_dir: str, jobs: int | None = None, env: dict | None = None,
                        graphs=GRAPHS, headers: dict | None = None) -> LangGraphDev:
    port = free_port()
    full_env = {k: v for k, v in os.environ.items() if k not in SECRET_ENV}
    full_env.update(OFFLINE_ENV)
    full_env.update(env or {})
    args = [langgraph_cli(), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", str(port),
            "--config", str(project / "langgraph.json")]
    if jobs:
        args += ["--n-jobs-per-worker", str(jobs)]
    log_path = os.path.join(log_dir, f"langgraph-dev-{port}.log")
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(args, cwd=project, env=full_env, stdout=log, stderr=subprocess.STDOUT)
    srv = LangGraphDev(url=f"http://127.0.0.1:{port}", proc=proc, log_path=log_path)
    wait_up(srv, "langgraph dev", graphs, headers)
    return srv


def wait_up(srv, what: str, graphs, headers: dict | None = None) -> None:
    """Waits until a server started as srv (url, proc, log(), stop())
    answers GET /ok and lists graphs; stops it and raises when it exits or
    is not ready in READY_TIMEOUT."""
    deadline = time.monotonic() + READY_TIMEOUT
    while True:
        if srv.proc.poll() is not None:
            srv.stop()
            raise RuntimeError(f"{what} exited with {srv.proc.returncode}:\n{srv.log()[-4000:]}")
        try:
            with urllib.request.urlopen(srv.url + "/ok", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if time.monotonic() > deadline:
            srv.stop()
            raise RuntimeError(f"{what} not ready within {READY_TIMEOUT}s:\n{srv.log()[-4000:]}")
        time.sleep(0.1)
    try:
        wait_registered(srv.url, graphs, headers=headers)
    except Exception:
        srv.stop()
        raise


def start_weft_dev(servers: Servers, project: Path, args: list[str] | None = None, env: dict | None = None,
                   graphs=GRAPHS, headers: dict | None = None, data_dir: str | None = None) -> Weft:
    full_env = {"WEFT_PYTHON": sys.executable, "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
    w = servers.start(["dev", "--config", str(project / "langgraph.json"), *(args or [])], env=full_env, data_dir=data_dir)
    wait_registered(w.url, graphs, headers=headers)
    return w


def socket_dir(log: str) -> str:
    """The managed PostgreSQL's socket directory, as a Weft server logged it."""
    m = re.search(r'msg="local PostgreSQL cluster started".* socket_dir=("(?:[^"\\]|\\.)*"|\S+)', log)
    if not m:
        raise RuntimeError("the server's log names no socket_dir")
    return json.loads(m.group(1)) if m.group(1).startswith('"') else m.group(1)


def conninfo(w: Weft, search_path: str = "public") -> str:
    return f"host={socket_dir(w.log())} user=weft dbname=weft options='-c search_path={search_path}'"
