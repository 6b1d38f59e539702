"""python -m weft_worker --config langgraph.json --url http://127.0.0.1:8123"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
import traceback
from datetime import datetime, timezone

USAGE = """Serves the Python graphs of a langgraph.json on a Weft server: registers them,
claims their runs over the worker API and executes them with LangGraph."""


class JSONFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out = {"time": datetime.now(timezone.utc).isoformat(), "level": record.levelname.lower(),
               "msg": record.getMessage(), "worker": "py"}
        out.update(getattr(record, "attrs", {}) or {})
        if record.exc_info:
            out["error"] = "".join(traceback.format_exception(*record.exc_info))
        return json.dumps(out, default=str)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="weft_worker", description=USAGE)
    p.add_argument("--config", default="langgraph.json", help="langgraph.json (default: ./langgraph.json)")
    p.add_argument("--url", default=os.environ.get("WEFT_URL", "http://127.0.0.1:8123"),
                   help="Weft server (default: $WEFT_URL or http://127.0.0.1:8123)")
    p.add_argument("--graphs", default="", help="serve only these graph ids (a,b; default: every Python graph)")
    p.add_argument("--concurrency", type=int, default=int(os.environ.get("WEFT_WORKER_CONCURRENCY", "8")))
    p.add_argument("--worker-id", default=None)
    p.add_argument("--wait-ms", type=int, default=10_000, help="claim long-poll (default 10000)")
    p.add_argument("--linger-ms", type=int, default=5,
                   help="wait this long before committing what piled up (default 5; sync durability never waits)")
    p.add_argument("--grace-ms", type=int, default=10_000,
                   help="on SIGTERM/SIGINT, how long running runs may finish before they are given back")
    p.add_argument("--socket", default="",
                   help="serve the config's Python auth.path and store.index.embed on this unix socket (weft dev)")
    p.add_argument("--http-socket", default="",
                   help="serve the config's Python http.app on this unix socket; what it does not route goes to "
                        "--url with the pass of WEFT_APP_PASS (weft dev)")
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warn", "error"])
    args = p.parse_args(argv)

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JSONFormatter())
    root = logging.getLogger("weft_worker")
    root.addHandler(handler)
    root.setLevel({"warn": "WARNING"}.get(args.log_level, args.log_level.upper()))
    root.propagate = False

    try:
        import langgraph  # noqa: F401
    except ImportError:
        root.error("the Python graphs need the langgraph package in this interpreter",
                   extra={"attrs": {"python": sys.executable, "fix": f"{sys.executable} -m pip install langgraph"}})
        return 3
    return asyncio.run(_serve(args, root))


async def _serve(args, log: logging.Logger) -> int:
    from .load import load_config
    from .worker import Worker

    only = [g.strip() for g in args.graphs.split(",") if g.strip()] or None
    sock = http_task = None
    try:
        if args.socket:
            from .auth import start_project_socket

            sock = await start_project_socket(args.config, args.socket)
        if args.http_socket:
            from .http_app import start_http_app

            http_task = await start_http_app(args.config, args.http_socket, args.url)
        project = await load_config(args.config, only)
        worker = Worker(args.url, project.graphs, worker_id=args.worker_id, concurrency=max(1, args.concurrency),
                        wait_ms=min(max(args.wait_ms, 0), 30_000), linger_s=max(args.linger_ms, 0) / 1000,
                        api_key=os.environ.get("WEFT_API_KEY", ""), failures=project.failures)
        if project.graphs:
            await worker.start()
        else:
            # Nothing to serve: report the failures, then stay up (a restart
            # would fail the same way) until stopped.
            log.error("no graph of the config loaded; fix the modules and restart",
                      extra={"attrs": {"failed": [f["graph_id"] for f in project.failures]}})
            await worker.register()
    except Exception:
        log.error("weft_worker failed to start", exc_info=True)
        return 1
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    signals = 0

    def on_signal(sig):
        nonlocal signals
        signals += 1
        if signals > 1:
            os._exit(1)
        log.info("stopping", extra={"attrs": {"signal": signal.Signals(sig).name}})
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal, sig)
    watcher = asyncio.ensure_future(_watch_parent(lambda: on_signal(signal.SIGTERM)))
    await stop.wait()
    watcher.cancel()
    await worker.stop(args.grace_ms / 1000)
    if sock is not None:
        await sock.close()
    if http_task is not None:
        http_task.server.should_exit = True
        await asyncio.wait([http_task], timeout=5)
    return 0


async def _watch_parent(stop) -> None:
    """Started by weft dev (WEFT_PARENT_PID): stop as on SIGTERM once it is
    gone (even killed, with no chance to stop this process), instead of
    running on as an orphan."""
    parent = int(os.environ.get("WEFT_PARENT_PID") or 0)
    if not parent:
        return
    while os.getppid() == parent:
        await asyncio.sleep(1)
    stop()


if __name__ == "__main__":
    sys.exit(main())
