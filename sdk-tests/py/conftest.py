"""Fixtures for the Python suites: one Weft server per test session.

With WEFT_URL set the suite uses that server and starts nothing. Otherwise it
builds ./cmd/server into a temp dir, starts it on a free loopback port with a
fresh WEFT_DATA_DIR (the server runs its own PostgreSQL there), waits for
GET /ok, and at the end stops it by its PID (SIGTERM, then SIGKILL after a
timeout) and removes the temp dir. Every step is bounded in time.

`start_weft(args, env, cwd, data_dir)` starts a further server the same way
(for tests that need other flags, e.g. `dev --config …` or API keys; data_dir
from `servers.data_dir()` when something must be prepared in it first); it is
stopped when the session ends.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
BUILD_TIMEOUT = 120
READY_TIMEOUT = 60
TERM_TIMEOUT = 20


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Weft:
    """A running server: its URL, its process and the lines it logged."""

    url: str
    proc: subprocess.Popen | None = None
    tmp: str | None = None
    log_path: str | None = None
    external: bool = False
    env: dict = field(default_factory=dict)

    def log(self) -> str:
        if not self.log_path:
            return ""
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(TERM_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None


_binary: str | None = None


def weft_binary(tmp_root: str) -> str:
    """Builds bin/weft once per session (WEFT_BIN overrides)."""
    global _binary
    if os.environ.get("WEFT_BIN"):
        return os.environ["WEFT_BIN"]
    if _binary is None:
        out = os.path.join(tmp_root, "weft")
        subprocess.run(["go", "build", "-o", out, "./cmd/server"], cwd=REPO_ROOT, check=True, timeout=BUILD_TIMEOUT)
        _binary = out
    return _binary


def wait_ready(w: Weft, deadline: float) -> None:
    while time.monotonic() < deadline:
        if w.proc and w.proc.poll() is not None:
            raise RuntimeError(f"weft exited with {w.proc.returncode}:\n{w.log()[-4000:]}")
        try:
            with urllib.request.urlopen(w.url + "/ok", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"weft at {w.url} not ready within {READY_TIMEOUT}s:\n{w.log()[-4000:]}")


class Servers:
    """Starts servers for the session and stops them all at its end."""

    def __init__(self) -> None:
        self.root = tempfile.mkdtemp(prefix="weft-py-")
        os.chmod(self.root, 0o755)  # the managed PostgreSQL runs as another user when we are root
        self.started: list[Weft] = []

    def data_dir(self) -> str:
        """A data directory for start(data_dir=…), to prepare (e.g. `weft keys create`) before the server starts."""
        tmp = tempfile.mkdtemp(prefix="data-", dir=self.root)
        os.chmod(tmp, 0o755)
        return os.path.join(tmp, "data")

    def start(self, args: list[str] | None = None, env: dict | None = None, cwd: str | None = None,
              data_dir: str | None = None) -> Weft:
        binary = weft_binary(self.root)
        tmp = tempfile.mkdtemp(prefix="srv-", dir=self.root)
        os.chmod(tmp, 0o755)
        port = free_port()
        log_path = os.path.join(tmp, "server.log")
        full_env = {
            **os.environ,
            **(env or {}),
            "WEFT_ADDR": f"127.0.0.1:{port}",
            "WEFT_DATA_DIR": data_dir or os.path.join(tmp, "data"),
        }
        with open(log_path, "wb") as log:
            proc = subprocess.Popen([binary, *(args or [])], cwd=cwd or tmp, env=full_env, stdout=log, stderr=subprocess.STDOUT)
        w = Weft(url=f"http://127.0.0.1:{port}", proc=proc, tmp=tmp, log_path=log_path, env=full_env)
        self.started.append(w)
        wait_ready(w, time.monotonic() + READY_TIMEOUT)
        return w

    def stop_all(self) -> None:
        for w in reversed(self.started):
            w.stop()
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="session")
def servers():
    s = Servers()
    try:
        yield s
    finally:
        s.stop_all()


@pytest.fixture(scope="session")
def weft(servers) -> Weft:
    """The session's default server (plain `weft`, built-in graphs, no auth), or WEFT_URL."""
    if os.environ.get("WEFT_URL"):
        return Weft(url=os.environ["WEFT_URL"].rstrip("/"), external=True)
    return servers.start()


@pytest.fixture
def start_weft(servers):
    """Starts another server: start_weft(args=[...], env={...}, cwd=...)."""
    return servers.start
