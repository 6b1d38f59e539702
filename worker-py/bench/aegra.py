"""Aegra (aegra-api on PyPI) for the worker bench: its own PostgreSQL cluster and
its API server on loopback, serving a copy of sdk-tests/py/fixtures/pybench.

Aegra's dependencies do not fit sdk-tests/py/requirements.txt, so it runs on the
interpreter of its own virtualenv, made from worker-py/bench/aegra-requirements.txt
(pinned: aegra-api 0.6.0, the newest on PyPI here, plus greenlet, which SQLAlchemy
2.1's asyncio extension needs and aegra-api does not require):

    python3 -m venv worker-py/bench/.venv-aegra
    worker-py/bench/.venv-aegra/bin/pip install -r worker-py/bench/aegra-requirements.txt

`aegra_python(flag)` finds it: --aegra-python, else $AEGRA_PYTHON, else that
default path. Nothing here installs anything.

How Aegra 0.6.0 is configured and started (read from its package: aegra_api/settings.py,
config.py, main.py, core/database.py, core/migrations.py):
- `python -m uvicorn aegra_api.main:app --host 127.0.0.1 --port P` (what its Dockerfile
  and `aegra dev` run), one process; runs are asyncio tasks in it (no Redis, no worker);
- AEGRA_CONFIG names the langgraph.json it serves (graphs, dependencies);
- DATABASE_URL: PostgreSQL, used through SQLAlchemy/asyncpg (its own tables, migrated by
  Alembic at startup) and psycopg (LangGraph's AsyncPostgresSaver and AsyncPostgresStore);
  here a cluster of its own, initdb'd in a temp dir with the installed server binaries,
  reached through a unix socket only, with the settings Weft's managed cluster uses;
- offline: AUTH_TYPE=noop, OTEL_TARGETS empty (no tracing export), LangSmith tracing off,
  no API keys in its environment;
- everything else at its defaults: SQLAlchemy pool 2 (no overflow), LangGraph pool 1-6,
  LOG_LEVEL INFO, ENV_MODE LOCAL (console logs, to a file here). `extra_env` overrides.
It has no GET /ok: readiness is GET /health answering "healthy" and the graphs listed
by POST /assistants/search. It has no stateless runs (POST /runs/wait answers 404).
"""

from __future__ import annotations

import glob
import json
import os
import pwd
import shutil
import signal
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_VENV_PYTHON = HERE / ".venv-aegra" / "bin" / "python"
READY_TIMEOUT = 120
TERM_TIMEOUT = 20
# What Weft's managed cluster runs with (internal/postgres/cluster.go), so both stores start alike.
PG_OPTIONS = "-c listen_addresses='' -c unix_socket_directories='{sock}' -c max_connections=200 " \
             "-c fsync=on -c shared_buffers=128MB -c deadlock_timeout=200ms"
OFFLINE_ENV = {
    "AUTH_TYPE": "noop",
    "OTEL_TARGETS": "",
    "OTEL_CONSOLE_EXPORT": "false",
    "LANGSMITH_TRACING": "false",
    "LANGSMITH_TRACING_V2": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "PYTHONDONTWRITEBYTECODE": "1",
}
SECRET_ENV = ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "LANGGRAPH_CLOUD_LICENSE_KEY", "LANGSMITH_CONTROL_PLANE_API_KEY",
              "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "PHOENIX_API_KEY",
              "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS", "DATABASE_URL", "REDIS_URL",
              "REDIS_BROKER_ENABLED", "VIRTUAL_ENV")


def aegra_python(flag: str | None) -> str:
    """The interpreter of the virtualenv holding aegra-requirements.txt."""
    for cand in (flag, os.environ.get("AEGRA_PYTHON"), str(DEFAULT_VENV_PYTHON)):
        if cand:
            if Path(cand).exists():
                return cand
            if cand != str(DEFAULT_VENV_PYTHON):
                raise RuntimeError(f"no Python interpreter at {cand} (--aegra-python / AEGRA_PYTHON)")
    raise RuntimeError(
        "no interpreter for Aegra: make its virtualenv (python3 -m venv worker-py/bench/.venv-aegra && "
        "worker-py/bench/.venv-aegra/bin/pip install -r worker-py/bench/aegra-requirements.txt) or pass "
        "--aegra-python / AEGRA_PYTHON; --paths without aegra leaves it out")


def pg_bin_dir() -> str:
    for d in ["/usr/lib/postgresql/15/bin", *sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)]:
        if os.path.exists(os.path.join(d, "pg_ctl")):
            return d
    found = shutil.which("pg_ctl")
    if found:
        return os.path.dirname(found)
    raise RuntimeError("PostgreSQL server binaries (initdb, pg_ctl) not found")


class PgCluster:
    """A throw-away PostgreSQL cluster in dir (unix socket only), user and database `aegra`.
    As root it runs as the `postgres` user (or nobody), as Weft's managed cluster does."""

    def __init__(self, dir: str):
        self.dir = dir
        self.data = os.path.join(dir, "pgdata")
        self.sock = os.path.join(dir, "sock")
        self.log_path = os.path.join(dir, "postgres.log")
        self.bin = pg_bin_dir()
        self.user = None
        if os.geteuid() == 0:
            for name in ("postgres", "nobody"):
                try:
                    self.user = pwd.getpwnam(name)
                    break
                except KeyError:
                    pass
        self.started = False

    def _run(self, *args: str, timeout: float = 120) -> None:
        kw = {}
        if self.user:
            kw = {"user": self.user.pw_uid, "group": self.user.pw_gid, "extra_groups": []}
        out = subprocess.run([os.path.join(self.bin, args[0]), *args[1:]], check=False, capture_output=True, text=True,
                             timeout=timeout, cwd=self.dir, **kw)
        if out.returncode != 0:
            raise RuntimeError(f"{args[0]} failed ({out.returncode}): {out.stdout[-2000:]}{out.stderr[-2000:]}")

    def start(self) -> None:
        os.makedirs(self.sock, exist_ok=True)
        os.chmod(self.dir, 0o755)
        if self.user:
            for d in (self.dir, self.sock):
                os.chown(d, self.user.pw_uid, self.user.pw_gid)
        self._run("initdb", "-D", self.data, "-U", "aegra", "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync")
        self._run("pg_ctl", "start", "-w", "-t", "60", "-D", self.data, "-l", self.log_path,
                  "-o", PG_OPTIONS.format(sock=self.sock))
        self.started = True
        self._run("createdb", "-h", self.sock, "-U", "aegra", "aegra")

    def postmaster_pid(self) -> int:
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            return int(f.readline().strip())

    def url(self) -> str:
        return f"postgresql://aegra@/aegra?host={self.sock}"

    def stop(self) -> None:
        if self.started:
            self.started = False
            try:
                self._run("pg_ctl", "stop", "-w", "-t", "60", "-m", "fast", "-D", self.data)
            except Exception:  # noqa: BLE001  (last resort: the postmaster by its own PID)
                try:
                    os.kill(self.postmaster_pid(), signal.SIGQUIT)
                except OSError:
                    pass


@dataclass
class Aegra:
    url: str
    proc: subprocess.Popen
    log_path: str
    pg: PgCluster

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
        self.pg.stop()


def _ready(url: str, graphs: list[str]) -> bool:
    try:
        with urllib.request.urlopen(url + "/health", timeout=2) as r:
            if json.loads(r.read()).get("status") != "healthy":
                return False
        req = urllib.request.Request(url + "/assistants/search", data=b'{"limit": 100}',
                                     headers={"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=5) as r:
            return set(graphs) <= {a["graph_id"] for a in json.loads(r.read())}
    except OSError:
        return False


def start_aegra(python: str, project: Path, work_dir: str, port: int, graphs: list[str],
                extra_env: dict | None = None) -> Aegra:
    """Starts Aegra's PostgreSQL cluster in work_dir/pg and Aegra on 127.0.0.1:port serving
    project/langgraph.json; stops both and raises if it is not ready in READY_TIMEOUT."""
    pg = PgCluster(os.path.join(work_dir, "pg"))
    os.makedirs(pg.dir, exist_ok=True)
    try:
        pg.start()
    except Exception:
        pg.stop()
        raise
    env = {k: v for k, v in os.environ.items() if k not in SECRET_ENV}
    env.update(OFFLINE_ENV)
    env.update({"DATABASE_URL": pg.url(), "AEGRA_CONFIG": str(project / "langgraph.json"),
                "HOST": "127.0.0.1", "PORT": str(port)})
    env.update(extra_env or {})
    log_path = os.path.join(work_dir, f"aegra-{port}.log")
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([python, "-m", "uvicorn", "aegra_api.main:app", "--host", "127.0.0.1", "--port", str(port)],
                                cwd=project, env=env, stdout=log, stderr=subprocess.STDOUT)
    srv = Aegra(url=f"http://127.0.0.1:{port}", proc=proc, log_path=log_path, pg=pg)
    deadline = time.monotonic() + READY_TIMEOUT
    while not _ready(srv.url, graphs):
        if proc.poll() is not None or time.monotonic() > deadline:
            srv.stop()
            why = f"exited with {proc.returncode}" if proc.returncode is not None else f"not ready within {READY_TIMEOUT}s"
            raise RuntimeError(f"Aegra {why}:\n{srv.log()[-4000:]}")
        time.sleep(0.2)
    return srv
