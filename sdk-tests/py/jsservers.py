"""LangGraph.js's own dev server for the side-by-side JavaScript agent suites.

- `AGENTS_JS`: sdk-tests/agents-js, the JavaScript agents project (its
  node_modules installed by `npm ci` there; `langgraphjs` is
  @langchain/langgraph-cli, pinned in its package.json).
- `js_project_copy(dest)`: a copy of that project's own files, its
  node_modules a symlink to the installed one (`langgraphjs dev` appends to
  the project's .gitignore and writes `.langgraph_api/` into it, so it never
  serves the fixture directory itself).
- `start_langgraphjs_dev(project_dir, log_dir)`: `langgraphjs dev` (in
  memory) on a free loopback port, offline: no browser, no reload, no
  tunnel, no CLI analytics, no LangSmith tracing or keys, the Studio URL
  given so nothing derives it. Started in a session of its own (the CLI
  runs the server as its child) and stopped by that session's id: SIGTERM,
  then SIGKILL after a timeout.
- `start_weft_dev` (re-exported from pyservers): `weft dev --config` on the
  same project; pass `graphs=JS_GRAPHS`.

Importable without pytest running.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from pyservers import OFFLINE_ENV, SECRET_ENV, TERM_TIMEOUT, free_port, start_weft_dev, wait_up  # noqa: F401

HERE = Path(__file__).resolve().parent
AGENTS_JS = HERE.parent / "agents-js"
JS_GRAPHS = ["agent", "reporter", "deep", "factory"]
# The project's own files (what js_project_copy copies).
PROJECT_FILES = ("langgraph.json", "package.json", "agents.ts", "model.ts")

JS_OFFLINE_ENV = {
    **OFFLINE_ENV,
    "LANGCHAIN_TRACING": "false",
    "BROWSER": "none",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "NO_COLOR": "1",
    "FORCE_COLOR": "0",
}


def langgraphjs_cli(project_dir: str | os.PathLike = AGENTS_JS) -> str:
    """The `langgraphjs` CLI of the project (@langchain/langgraph-cli)."""
    cli = Path(project_dir) / "node_modules" / ".bin" / "langgraphjs"
    if not cli.exists():
        raise RuntimeError(f"no {cli}: run `npm ci` in {AGENTS_JS}")
    return str(cli)


def js_project_copy(dest: str | os.PathLike, source: Path = AGENTS_JS) -> Path:
    """Copies the agents project's files to dest/agents-js (node_modules a
    symlink to the installed one) and returns that directory."""
    out = Path(dest) / "agents-js"
    out.mkdir(parents=True)
    for name in PROJECT_FILES:
        shutil.copy2(source / name, out / name)
    os.symlink(source / "node_modules", out / "node_modules")
    return out


@dataclass
class LangGraphJSDev:
    """A running `langgraphjs dev`: its URL, process (a session leader) and log."""

    url: str
    proc: subprocess.Popen
    log_path: str

    def log(self) -> str:
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def _signal(self, sig: int) -> None:
        try:
            os.killpg(self.proc.pid, sig)  # the CLI and the server it spawned
        except ProcessLookupError:
            pass

    def stop(self) -> None:
        if self.proc.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                self.proc.wait(TERM_TIMEOUT)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.proc.wait(5)
        # the server child may outlive the CLI
        self._signal(signal.SIGKILL)


def start_langgraphjs_dev(project_dir: str | os.PathLike, log_dir: str, env: dict | None = None,
                          graphs=JS_GRAPHS, headers: dict | None = None, jobs: int | None = None) -> LangGraphJSDev:
    """Starts `langgraphjs dev` on project_dir (use js_project_copy: it writes
    into the project) and waits until it answers /ok and lists graphs."""
    project = Path(project_dir)
    port = free_port()
    full_env = {k: v for k, v in os.environ.items() if k not in SECRET_ENV}
    full_env.update(JS_OFFLINE_ENV)
    full_env.update(env or {})
    args = [langgraphjs_cli(project), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", str(port),
            "--config", str(project / "langgraph.json"), "--studio-url", "http://127.0.0.1"]
    if jobs:
        args += ["--n-jobs-per-worker", str(jobs)]
    log_path = os.path.join(log_dir, f"langgraphjs-dev-{port}.log")
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(args, cwd=project, env=full_env, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
    srv = LangGraphJSDev(url=f"http://127.0.0.1:{port}", proc=proc, log_path=log_path)
    wait_up(srv, "langgraphjs dev", graphs, headers)
    return srv
