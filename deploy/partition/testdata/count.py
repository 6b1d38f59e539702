"""The partition suite's Python graph (deploy/partition): it counts its executions.

    START -> a -> b -> c -> END

Every node execution first appends one JSON line to the file named by
WEFT_PARTITION_EXEC_LOG ({exec, run_id, thread_id, step, node, worker}; one
write of one line, so it is in the file before the node can return), then
sleeps `ms` and writes its exec id into the appended `execs` channel. A
thread's state therefore names the executions that were committed, the log
every execution: a step committed twice shows as two exec ids of one node in
a run's state. The JS twin is worker-js/test/fixtures/soak/count.mjs.
"""

import asyncio
import itertools
import json
import operator
import os
import time
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict, total=False):
    ms: int
    execs: Annotated[list, operator.add]


WORKER = os.environ.get("WEFT_PARTITION_WORKER") or f"py-{os.getpid()}"
LOG = os.environ.get("WEFT_PARTITION_EXEC_LOG")
_count = itertools.count(1)


def _record(node: str, config: dict) -> str:
    exec_id = f"{WORKER}:{next(_count)}"
    if LOG:
        md = config.get("metadata") or {}
        conf = config.get("configurable") or {}
        line = {"exec": exec_id, "run_id": str(conf.get("run_id") or md.get("run_id") or ""),
                "thread_id": str(conf.get("thread_id") or ""), "step": md.get("langgraph_step", -1),
                "node": node, "worker": WORKER, "t_ms": int(time.time() * 1000)}
        fd = os.open(LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (json.dumps(line) + "\n").encode())
        finally:
            os.close(fd)
    return exec_id


def _node(name: str):
    async def run(state: State, config) -> dict:
        exec_id = _record(name, config)
        await asyncio.sleep(state.get("ms", 50) / 1000)
        return {"execs": [f"{name}@{exec_id}"]}

    run.__name__ = name
    return run


builder = StateGraph(State)
for n in ("a", "b", "c"):
    builder.add_node(n, _node(n))
builder.add_edge(START, "a")
builder.add_edge("a", "b")
builder.add_edge("b", "c")
builder.add_edge("c", END)
graph = builder.compile()
